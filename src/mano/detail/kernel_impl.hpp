#pragma once
// The per-row MaNo kernel, written once against xsimd::batch<float, Arch>. Each file in kernels/
// includes this header, compiled with its architecture's flags, and instantiates it for one Arch.
// Everything here has internal linkage so that code built with wider instruction sets can never
// be picked by the linker for a narrower architecture's entry point.
//
// Two passes per row. Pass 1 streams the row from memory: its maximum and, when the Taylor branch
// is wanted, the minimum and maximum of the Taylor polynomial and where the minimum is. On the
// common paths it runs inside the previous row's pass 2 (look_ahead), whose arithmetic then
// hides its loads. Pass 2 reads the row again from cache and does all the arithmetic in float
// lanes, with float partial sums flushed into double every few vectors: exp(q - max) and its
// sums (softmax, entropy, the criterion), and the min-shifted Taylor values, evaluated as a
// polynomial in (q - q0) around the minimum's position so that no large value is subtracted.
// Rows of float64 logits are scanned in double and handed to pass 2 as float(q - max). A scalar
// double path takes the Taylor branch of the rare rows (and orders) where float could lose
// accuracy. Rows of at most 128 classes go a row per lane instead (rows_in_lanes), where per-row
// work would otherwise dominate.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>
#if !defined(__wasm__)
#include <xmmintrin.h>
#endif

#include "mano/detail/kernel.hpp"

namespace mano {
namespace detail {
namespace {

template <class Arch>
struct row_kernel_impl {
    using fbatch = xsimd::batch<float, Arch>;
    using ibatch = xsimd::batch<std::int32_t, Arch>;
    static constexpr std::size_t fsize = fbatch::size;
    // no float partial sum takes more than this many terms (bounds rounding growth)
    static constexpr std::size_t flush_vectors = 16;
    // exp's argument floor: exp(-86) = 4.5e-38 is still a normal float, so 2^n can be written
    // into the exponent bits, and it is negligible next to the row maximum's exact 1.
    static constexpr float exp_floor = -86.0f;
    // Taylor orders up to this run in float lanes; higher ones take the scalar double path.
    static constexpr int max_float_order = 8;

    struct scan_result {
        double m = 0;   // row maximum
        double vmin = std::numeric_limits<double>::infinity(), vmax = -vmin;  // Taylor range
        double q0 = 0;  // where the Taylor polynomial is smallest (a logit, or its mirror image)
    };

    struct pass2_sums {
        double s = 0, sp = 0, sx = 0, xr = 0, w = 0, wp = 0;
        float wmax = 0;
    };

    // Pass 1 of the next row, done inside this row's pass 2 where it can be: its loads then
    // overlap this row's arithmetic instead of stalling a pass of their own.
    struct look_ahead {
        const float* q = nullptr;      // the next row (float rows), or null
        const float* after = nullptr;  // the row after it, to prefetch, or null
        int kind = 0;                  // its scan_kind
        bool done = false;             // whether `result` holds its pass 1
        scan_result result;
    };

    // ---- vector helpers ------------------------------------------------------------------

    // e^x for x in [exp_floor, 0]: Cody-Waite reduction with a two-part ln 2 (exact without FMA),
    // a degree-5 polynomial (relative error < 2e-7 in float), and 2^n added to the exponent bits.
    // n is read from the low bits of x * log2(e) + 1.5 * 2^23, which rounds it to an integer.
    static fbatch exp_nonpositive(fbatch x) {
        const fbatch magic(12582912.0f);
        const fbatch t = xsimd::fma(x, fbatch(1.44269504f), magic);
        const fbatch n = t - magic;
#ifdef __FMA__
        // a fused multiply-add keeps n * ln 2 exact enough with one float ln 2 (|n| <= 125)
        const fbatch r = xsimd::fma(n, fbatch(-0.693147182f), x);
#else
        fbatch r = xsimd::fma(n, fbatch(-0.693359375f), x);
        r = xsimd::fma(n, fbatch(2.12194440e-4f), r);
#endif
        fbatch p = xsimd::fma(fbatch(8.290314002e-03f), r, fbatch(4.189793105e-02f));
        p = xsimd::fma(p, r, fbatch(1.666763622e-01f));
        p = xsimd::fma(p, r, fbatch(4.999914952e-01f));
        p = xsimd::fma(p, r, fbatch(9.999997072e-01f));
        p = xsimd::fma(p, r, fbatch(1.0f));
        const ibatch scale = xsimd::bitwise_cast<ibatch>(t) << 23;
        return xsimd::bitwise_cast<fbatch>(xsimd::bitwise_cast<ibatch>(p) + scale);
    }

    // exp_nonpositive on two vectors, step by step interleaved (two independent chains)
    static void exp_nonpositive2(fbatch x0, fbatch x1, fbatch& e0, fbatch& e1) {
        const fbatch magic(12582912.0f), log2e(1.44269504f);
        const fbatch t0 = xsimd::fma(x0, log2e, magic), t1 = xsimd::fma(x1, log2e, magic);
        const fbatch n0 = t0 - magic, n1 = t1 - magic;
#ifdef __FMA__
        const fbatch r0 = xsimd::fma(n0, fbatch(-0.693147182f), x0), r1 = xsimd::fma(n1, fbatch(-0.693147182f), x1);
#else
        const fbatch hi(-0.693359375f), lo(2.12194440e-4f);
        fbatch r0 = xsimd::fma(n0, hi, x0), r1 = xsimd::fma(n1, hi, x1);
        r0 = xsimd::fma(n0, lo, r0);
        r1 = xsimd::fma(n1, lo, r1);
#endif
        const fbatch c5(8.290314002e-03f), c4(4.189793105e-02f), c3(1.666763622e-01f), c2(4.999914952e-01f),
            c1(9.999997072e-01f), one(1.0f);
        fbatch p0 = xsimd::fma(c5, r0, c4), p1 = xsimd::fma(c5, r1, c4);
        p0 = xsimd::fma(p0, r0, c3);
        p1 = xsimd::fma(p1, r1, c3);
        p0 = xsimd::fma(p0, r0, c2);
        p1 = xsimd::fma(p1, r1, c2);
        p0 = xsimd::fma(p0, r0, c1);
        p1 = xsimd::fma(p1, r1, c1);
        p0 = xsimd::fma(p0, r0, one);
        p1 = xsimd::fma(p1, r1, one);
        e0 = xsimd::bitwise_cast<fbatch>(xsimd::bitwise_cast<ibatch>(p0) + (xsimd::bitwise_cast<ibatch>(t0) << 23));
        e1 = xsimd::bitwise_cast<fbatch>(xsimd::bitwise_cast<ibatch>(p1) + (xsimd::bitwise_cast<ibatch>(t1) << 23));
    }

    // x^P for a compile-time P >= 1, by squaring
    template <int P>
    static fbatch ipow(fbatch x) {
        if constexpr (P == 1) return x;
        else if constexpr (P % 2 == 0) { const fbatch h = ipow<P / 2>(x); return h * h; }
        else return ipow<P - 1>(x) * x;
    }

    // acc + x^P, the last multiply fused
    template <int P>
    static fbatch add_pow(fbatch x, fbatch acc) {
        if constexpr (P == 1) return acc + x;
        else if constexpr (P % 2 == 0) { const fbatch h = ipow<P / 2>(x); return xsimd::fma(h, h, acc); }
        else return xsimd::fma(ipow<P - 1>(x), x, acc);
    }

    // x^n for a run-time n >= 1; B is a batch or a plain double
    template <class B>
    static B ipow_rt(B x, int n) {
        B r(1);
        for (;;) {
            if (n & 1) r *= x;
            n >>= 1;
            if (n == 0) return r;
            x *= x;
        }
    }

    // The Taylor polynomial sum_j c_j x^j (Horner); B is a batch or a plain number
    template <class B, class C>
    static B poly(B x, const C* c, int order) {
        B v(c[order]);
        for (int j = order - 1; j >= 0; --j) {
            if constexpr (std::is_arithmetic_v<B>) v = v * x + c[j];  // std::fma may be a libm call
            else v = xsimd::fma(v, x, B(c[j]));
        }
        return v;
    }

    // sum_{j>=1} b_j d^j: the polynomial re-expanded around its minimum, without the constant.
    // O = 2 computes (d + b_1) d, i.e. the value divided by b_2 (the caller sets b_1 = b_1 / b_2):
    // sigma = w / sum w does not see the scale, and this saves a multiply.
    template <int O>
    static fbatch shifted_poly(fbatch d, const float* b, int order) {
        if constexpr (O == 2) {
            return (d + fbatch(b[1])) * d;
        } else {
            fbatch u(b[order]);
            for (int j = order - 1; j >= 1; --j) u = xsimd::fma(u, d, fbatch(b[j]));
            return u * d;
        }
    }

    static fbatch iota() {
        alignas(64) float lanes[fsize];
        for (std::size_t i = 0; i < fsize; ++i) lanes[i] = static_cast<float>(i);
        return fbatch::load_aligned(lanes);
    }

    // ---- pass 1 --------------------------------------------------------------------------

    // Calls update(u, at) for every whole vector of a row, consecutive vectors going to `Sets`
    // independent sets of running values (their compare chains overlap); returns where the
    // elements left over begin.
    template <class B, std::size_t Sets, class T, class Update>
    static std::size_t over_vectors(const T* q, std::size_t k, Update&& update) {
        constexpr std::size_t n = B::size;
        const std::size_t end = k - k % n, wide_end = k - k % (n * Sets);
        std::size_t i = 0;
        for (; i < wide_end; i += n * Sets)
            for (std::size_t u = 0; u < Sets; ++u) update(u, q + i + u * n);
        for (; i < end; i += n) update(0, q + i);
        return i;
    }

    // The running values of pass 1 over a row: its maximum and, with Quadratic (an order-2
    // polynomial c2 (x + h)^2 + const with c2 > 0, the paper's 1 + x + x^2/2), the minimum and
    // maximum of |x + h|: the polynomial is smallest where |x + h| is, so no compare-and-select
    // chain and no multiply is needed. Used by scan_simple() and, for the next row, inside pass 2.
    template <class T, bool Quadratic>
    struct scanner {
        using B = xsimd::batch<T, Arch>;
        static constexpr T inf = std::numeric_limits<T>::infinity();
        B m = B(-inf), amin = B(inf), amax = B(T(0));
        T h = 0;

        explicit scanner(const kernel_params& kp) {
            if constexpr (Quadratic) h = static_cast<T>(kp.taylor_coeffs[1] / (2 * kp.taylor_coeffs[2]));
        }
        void update(B x) {
            m = xsimd::max(m, x);
            if constexpr (Quadratic) {
                const B a = xsimd::abs(x + B(h));
                amin = xsimd::min(amin, a);
                amax = xsimd::max(amax, a);
            }
        }
        void merge(const scanner& o) {
            m = xsimd::max(m, o.m);
            amin = xsimd::min(amin, o.amin);
            amax = xsimd::max(amax, o.amax);
        }
        // The row's scan_result: the lanes, and the elements q[from, k) no vector took.
        // q0 = a |x + h|-minimizing point: -h + min|x + h| has the same polynomial value
        // whether the row's element lies left or right of -h.
        scan_result result(const T* q, std::size_t from, std::size_t k, const kernel_params& kp) const {
            alignas(64) T lanes_m[B::size], lanes_amin[B::size], lanes_amax[B::size];
            m.store_aligned(lanes_m);
            amin.store_aligned(lanes_amin);
            amax.store_aligned(lanes_amax);
            T mx = lanes_m[0], lo = lanes_amin[0], hi = lanes_amax[0];
            for (std::size_t l = 1; l < B::size; ++l) {
                mx = std::max(mx, lanes_m[l]);
                lo = std::min(lo, lanes_amin[l]);
                hi = std::max(hi, lanes_amax[l]);
            }
            for (std::size_t i = from; i < k; ++i) {
                mx = std::max(mx, q[i]);
                if constexpr (Quadratic) {
                    const T a = std::abs(q[i] + h);
                    lo = std::min(lo, a);
                    hi = std::max(hi, a);
                }
            }
            scan_result out;
            out.m = mx;
            if constexpr (Quadratic) {
                const double c0 = kp.taylor_coeffs[0], c2 = kp.taylor_coeffs[2];
                const double base = c0 - c2 * static_cast<double>(h) * h;
                out.vmin = c2 * static_cast<double>(lo) * lo + base;
                out.vmax = c2 * static_cast<double>(hi) * hi + base;
                out.q0 = static_cast<T>(lo - h);
                if (!std::isfinite(static_cast<double>(lo)) || !std::isfinite(static_cast<double>(hi)))
                    out.vmin = out.vmax = std::numeric_limits<double>::quiet_NaN();  // the exact path decides
            }
            return out;
        }
    };

    // Pass 1 with a scanner: two independent sets of running values, so that the compare chains
    // overlap.
    template <class T, bool Quadratic>
    static scan_result scan_simple(const T* q, std::size_t k, const kernel_params& kp) {
        using B = xsimd::batch<T, Arch>;
        scanner<T, Quadratic> sets[2] = {scanner<T, Quadratic>(kp), scanner<T, Quadratic>(kp)};
        const std::size_t end =
            over_vectors<B, 2>(q, k, [&](std::size_t u, const T* from) { sets[u].update(B::load_unaligned(from)); });
        sets[0].merge(sets[1]);
        return sets[0].result(q, end, k, kp);
    }

    // Pass 1 for any other Taylor polynomial: its range, and where its minimum is.
    template <class T>
    static scan_result scan_taylor(const T* q, std::size_t k, const kernel_params& kp) {
        using B = xsimd::batch<T, Arch>;
        constexpr std::size_t n = B::size, sets = 2;
        constexpr T inf = std::numeric_limits<T>::infinity();
        T c[max_float_order + 1] = {};
        const int order = kp.taylor_order;
        for (int j = 0; j <= order; ++j) c[j] = static_cast<T>(kp.taylor_coeffs[j]);
        B bm[sets], vmin[sets], vmax[sets], at[sets];
        for (std::size_t u = 0; u < sets; ++u) {
            bm[u] = B(-inf);
            vmin[u] = B(inf);
            vmax[u] = B(-inf);
            at[u] = B(T(0));
        }
        const auto update = [&](std::size_t u, const T* from) {
            const B x = B::load_unaligned(from);
            bm[u] = xsimd::max(bm[u], x);
            const B v = poly(x, c, order);
            const auto lower = v < vmin[u];
            vmin[u] = xsimd::select(lower, v, vmin[u]);
            at[u] = xsimd::select(lower, x, at[u]);
            vmax[u] = xsimd::max(vmax[u], v);
        };
        const std::size_t end = over_vectors<B, sets>(q, k, update);
        for (std::size_t u = 1; u < sets; ++u) {
            bm[0] = xsimd::max(bm[0], bm[u]);
            const auto lower = vmin[u] < vmin[0];
            vmin[0] = xsimd::select(lower, vmin[u], vmin[0]);
            at[0] = xsimd::select(lower, at[u], at[0]);
            vmax[0] = xsimd::max(vmax[0], vmax[u]);
        }
        alignas(64) T lanes_m[n], lanes_vmin[n], lanes_vmax[n], lanes_at[n];
        bm[0].store_aligned(lanes_m);
        vmin[0].store_aligned(lanes_vmin);
        vmax[0].store_aligned(lanes_vmax);
        at[0].store_aligned(lanes_at);
        T m = lanes_m[0], lo = lanes_vmin[0], hi = lanes_vmax[0], q0 = lanes_at[0];
        for (std::size_t l = 1; l < n; ++l) {  // branch-free: which lane wins is data, not a pattern
            m = std::max(m, lanes_m[l]);
            const bool lower = lanes_vmin[l] < lo;
            lo = lower ? lanes_vmin[l] : lo;
            q0 = lower ? lanes_at[l] : q0;
            hi = std::max(hi, lanes_vmax[l]);
        }
        for (std::size_t i = end; i < k; ++i) {
            m = std::max(m, q[i]);
            const T v = poly(q[i], c, order);
            const bool lower = v < lo;
            lo = lower ? v : lo;
            q0 = lower ? q[i] : q0;
            hi = std::max(hi, v);
        }
        scan_result out;
        out.m = m;
        out.vmin = lo;
        out.vmax = hi;
        out.q0 = q0;
        return out;
    }

    // The first column holding m (the maximum, so it is there).
    template <class T>
    static std::size_t find_first(const T* q, std::size_t k, T m) {
        using B = xsimd::batch<T, Arch>;
        std::size_t i = 0;
        const B bm(m);
        for (; i + 4 * B::size <= k; i += 4 * B::size)  // four vectors per test
            if (xsimd::any((B::load_unaligned(q + i) == bm) | (B::load_unaligned(q + i + B::size) == bm) |
                           (B::load_unaligned(q + i + 2 * B::size) == bm) |
                           (B::load_unaligned(q + i + 3 * B::size) == bm)))
                break;
        for (; i + B::size <= k; i += B::size)
            if (xsimd::any(B::load_unaligned(q + i) == bm)) break;
        while (i < k && q[i] != m) ++i;
        return i;
    }

    template <class T>
    static std::int64_t first_nonfinite(const T* q, std::size_t k) {
        for (std::size_t i = 0; i < k; ++i)
            if (!std::isfinite(q[i])) return static_cast<std::int64_t>(i);
        return -2;  // all finite: the sums overflowed
    }

    // ---- the Taylor branch's scalar double path ------------------------------------------

    // The exact range of the Taylor polynomial in double (rows where float overflows or cannot
    // tell the values apart, and orders above max_float_order).
    template <class T>
    static scan_result taylor_range_exact(const T* q, std::size_t k, const kernel_params& kp) {
        scan_result out;
        for (std::size_t i = 0; i < k; ++i) {
            const double v = poly(static_cast<double>(q[i]), kp.taylor_coeffs.data(), kp.taylor_order);
            if (v < out.vmin) { out.vmin = v; out.q0 = q[i]; }
            out.vmax = v > out.vmax ? v : out.vmax;
        }
        return out;
    }

    // sum w^p and sum w over w = (v - vmin) / range, in double, one element at a time.
    template <class T>
    static void taylor_exact(const T* q, std::size_t k, const kernel_params& kp, const scan_result& tr, row_stats& out,
                             double* taylor_out) {
        const double inv_range = 1.0 / (tr.vmax - tr.vmin);
        double sw = 0, swp = 0, wmax = 0;
        for (std::size_t j = 0; j < k; ++j) {
            double w = (poly(static_cast<double>(q[j]), kp.taylor_coeffs.data(), kp.taylor_order) - tr.vmin) * inv_range;
            w = w > 0 ? w : 0;
            sw += w;
            wmax = w > wmax ? w : wmax;
            swp += kp.p_int ? ipow_rt(w, kp.p_int) : std::pow(w, kp.p);
            if (taylor_out) taylor_out[j] = w;
        }
        out.taylor = swp / (kp.p_int ? ipow_rt(sw, kp.p_int) : std::pow(sw, kp.p));
        out.taylor_max = wmax / sw;
        if (taylor_out)
            for (std::size_t j = 0; j < k; ++j) taylor_out[j] /= sw;
    }

    // The polynomial's coefficients around q0, divided by the range (so every value is in
    // [0, 1] and no power overflows; the scale cancels in sigma = w / sum w), rounded to float.
    // False when one would lose its precision in float (a subnormal or zero coefficient).
    static bool shifted_coefficients(const kernel_params& kp, double q0, double inv_range, float* b) {
        double a[max_float_order + 1];
        const int n = kp.taylor_order;
        for (int j = 0; j <= n; ++j) a[j] = kp.taylor_coeffs[j];
        for (int i = 0; i < n; ++i)  // Taylor shift by synthetic division: P(q0 + d) = sum a_j d^j
            for (int j = n - 1; j >= i; --j) a[j] += q0 * a[j + 1];
        b[0] = 0;
        for (int j = 1; j <= n; ++j) {
            const double v = a[j] * inv_range;
            if (v != 0 && !(std::abs(v) >= 1e-30 && std::abs(v) <= 1e30)) return false;
            b[j] = static_cast<float>(v);
        }
        return true;
    }

    // ---- pass 2 --------------------------------------------------------------------------

    // Everything that needs an exp or a Taylor value, over a float row y: x = y - m (the softmax
    // exponent), d = y - q0 (the Taylor offset). The maximum's own lane is left out (its terms
    // are exact and go in later in double: summed in a float lane, its 1 would swallow every
    // e < 6e-8, which is all of them in a confident row), and so is the padding of the last vector.
    // Next (a scan_kind, or 0 for none): pass 1 of next->q runs in this loop too.
    template <bool Soft, bool Taylor, int P, int O, bool Extras, int Next = 0>
    static pass2_sums pass2(const float* y, std::size_t k, float m, float q0, std::size_t argmax, const float* b,
                            const kernel_params& kp, float* e_out, float* w_out, look_ahead* next = nullptr) {
        const fbatch bm(m), bq0(q0), lo(exp_floor), zero(0.0f), lanes = iota();
        const auto at_max = lanes == fbatch(static_cast<float>(argmax % fsize));
        const std::size_t full = k / fsize, rem = k % fsize, max_vector = argmax / fsize;
        const float fp = static_cast<float>(kp.p);
#if defined(__wasm__)
        const fbatch pow_cut(-80.0f / fp);
#endif
        pass2_sums out;
        fbatch as(0.0f), asp(0.0f), asx(0.0f), axr(0.0f), aw(0.0f), awp(0.0f), awmax(0.0f);
        // one transposed horizontal add for all six sums (lane i of the result sums sums[i])
        double* totals[6] = {&out.s, &out.sx, &out.xr, &out.sp, &out.w, &out.wp};
        constexpr std::size_t groups = (6 + fsize - 1) / fsize;
        // Two levels of float sums: each block of flush_vectors vectors goes into a second set of
        // vectors (so no float sum takes more than flush_vectors terms), and those go into double
        // (horizontally, which is the slow part) every flush_vectors blocks and at the end.
        fbatch bs(0.0f), bsp(0.0f), bsx(0.0f), bxr(0.0f), bw(0.0f), bwp(0.0f);
        const auto end_block = [&] {
            bs += as, bsx += asx, bxr += axr, bsp += asp, bw += aw, bwp += awp;
            as = asx = axr = asp = aw = awp = zero;
        };
        const auto flush = [&] {
            end_block();
            fbatch sums[groups * fsize];
            sums[0] = bs, sums[1] = bsx, sums[2] = bxr, sums[3] = bsp, sums[4] = bw, sums[5] = bwp;
            for (std::size_t i = 6; i < groups * fsize; ++i) sums[i] = zero;
            if constexpr (fsize <= 8) {
                alignas(64) float lanes_sum[groups * fsize];
                for (std::size_t g = 0; g < groups; ++g)
                    xsimd::haddp(sums + g * fsize).store_aligned(lanes_sum + g * fsize);
                for (std::size_t i = 0; i < 6; ++i) *totals[i] += lanes_sum[i];
            } else {  // xsimd 8.1's AVX-512 haddp orders its lanes differently: one hadd each
                for (std::size_t i = 0; i < 6; ++i) *totals[i] += xsimd::hadd(sums[i]);
            }
            bs = bsx = bxr = bsp = bw = bwp = zero;
        };
        // xr: y - m as is (the criterion's mean); x: the exponent, floored (and at the floor where
        // a lane is left out); d: the Taylor offset (0 where a lane is left out: w = 0)
        const auto add = [&](fbatch xr, fbatch x, fbatch e, fbatch d, std::size_t at) __attribute__((always_inline)) {
            as += e;
            if constexpr (Extras) asx = xsimd::fma(e, x, asx);
            axr += xr;
            if constexpr (Soft) {
#if defined(__wasm__)
                // e^p below 1e-35 is nothing next to the maximum's 1. It is 0 here because a
                // product that underflows costs the x86 host a microcode assist, and WASM cannot
                // flush subnormals to zero (natively, run() sets the flush-to-zero mode).
                const fbatch ep = xsimd::select(x > pow_cut, e, zero);
#else
                const fbatch ep = e;
#endif
                if constexpr (P > 0) asp = add_pow<P>(ep, asp);
                else asp += kp.p_int ? ipow_rt(ep, kp.p_int) : exp_nonpositive(xsimd::max(x * fbatch(fp), lo));
            }
            if constexpr (Taylor) {
                const fbatch w = shifted_poly<O>(d, b, kp.taylor_order);
                aw += w;
                if constexpr (P > 0) awp = add_pow<P>(w, awp);
                else awp += kp.p_int ? ipow_rt(w, kp.p_int) : xsimd::pow(xsimd::max(w, zero), fbatch(fp));
                if constexpr (Extras) awmax = xsimd::max(awmax, w);
                if (w_out) w.store_unaligned(w_out + at);
            }
            if (e_out) e.store_unaligned(e_out + at);
        };
        scanner<float, Next == 2> ahead(kp);
        const auto scan_ahead = [&](std::size_t v) __attribute__((always_inline)) {
            if constexpr (Next != 0) {
                ahead.update(fbatch::load_unaligned(next->q + v * fsize));
                // the row after next, a cache line at a time
                if (next->after && (v * fsize * sizeof(float)) % 64 == 0)
                    __builtin_prefetch(next->after + v * fsize, 0, 2);
            }
        };
        const auto step = [&](fbatch xr, fbatch x, fbatch d, std::size_t at) __attribute__((always_inline)) { add(xr, x, exp_nonpositive(x), d, at); };
        const auto one = [&](std::size_t v) __attribute__((always_inline)) {
            scan_ahead(v);
            const fbatch row = fbatch::load_unaligned(y + v * fsize);
            const fbatch xr = row - bm;
            fbatch x = xsimd::max(xr, lo);
            if (v == max_vector) x = xsimd::select(at_max, lo, x);
            step(xr, x, row - bq0, v * fsize);
        };
        for (std::size_t v = 0, blocks = 0;;) {
            const std::size_t stop = std::min(full, v + flush_vectors);
            // 4-lane vectors (SSE, WASM) two at a time, their exps interleaved: one exp is a chain
            // of ~11 dependent operations, and the scheduler cannot look far enough ahead to
            // overlap iterations (1.38 -> 1.21 ns per logit on SSE4.2; AVX2 and AVX-512 lose by it)
            for (; fsize <= 4 && v + 2 <= stop; v += 2) {
                if (v == max_vector || v + 1 == max_vector) {
                    one(v);
                    one(v + 1);
                    continue;
                }
                scan_ahead(v);
                scan_ahead(v + 1);
                const fbatch row0 = fbatch::load_unaligned(y + v * fsize);
                const fbatch row1 = fbatch::load_unaligned(y + (v + 1) * fsize);
                const fbatch xr0 = row0 - bm, xr1 = row1 - bm;
                const fbatch x0 = xsimd::max(xr0, lo), x1 = xsimd::max(xr1, lo);
                fbatch e0, e1;
                exp_nonpositive2(x0, x1, e0, e1);
                add(xr0, x0, e0, row0 - bq0, v * fsize);
                add(xr1, x1, e1, row1 - bq0, (v + 1) * fsize);
            }
            for (; v < stop; ++v) one(v);
            if (v == full) break;
            if (++blocks % flush_vectors == 0) flush();
            else end_block();
        }
        if (rem) {
            alignas(64) float tail[fsize] = {};
            std::copy(y + full * fsize, y + k, tail);
            const fbatch row = fbatch::load_aligned(tail);
            const auto valid = lanes < fbatch(static_cast<float>(rem));
            const fbatch xr = xsimd::select(valid, row - bm, zero);
            fbatch x = xsimd::select(valid, xsimd::max(xr, lo), lo);
            if (full == max_vector) x = xsimd::select(at_max, lo, x);
            step(xr, x, xsimd::select(valid, row - bq0, zero), full * fsize);
        }
        flush();
        if constexpr (Next != 0) {
            next->result = ahead.result(next->q, full * fsize, k, kp);
            next->done = true;
        }
        if constexpr (Taylor) {
            alignas(64) float lanes_max[fsize];
            awmax.store_aligned(lanes_max);
            out.wmax = *std::max_element(lanes_max, lanes_max + fsize);
        }
        return out;
    }

    template <bool Soft, bool Taylor, int O, int Next>
    static pass2_sums pass2_p(int p_int, const float* y, std::size_t k, float m, float q0, std::size_t argmax,
                              const float* b, const kernel_params& kp, float* e_out, float* w_out, look_ahead* next) {
        if (!Soft && !Taylor) return pass2<false, false, 0, 0, true>(y, k, m, q0, argmax, b, kp, e_out, w_out);
        const bool extras = kp.want_extras;
        if (p_int == 4)
            return extras ? pass2<Soft, Taylor, 4, O, true, Next>(y, k, m, q0, argmax, b, kp, e_out, w_out, next)
                          : pass2<Soft, Taylor, 4, O, false, Next>(y, k, m, q0, argmax, b, kp, e_out, w_out, next);
        if (p_int == 2)
            return extras ? pass2<Soft, Taylor, 2, O, true, Next>(y, k, m, q0, argmax, b, kp, e_out, w_out, next)
                          : pass2<Soft, Taylor, 2, O, false, Next>(y, k, m, q0, argmax, b, kp, e_out, w_out, next);
        return pass2<Soft, Taylor, 0, O, true>(y, k, m, q0, argmax, b, kp, e_out, w_out);
    }

    // `next`: the next row's pass 1 is done here (next->done) when this row takes one of the
    // common paths (integer p; no Taylor branch, or the quadratic one unscaled) and the next row
    // wants the matching scan; otherwise the caller scans it on its own.
    static pass2_sums pass2_any(bool soft, bool taylor, const float* y, std::size_t k, float m, float q0,
                                std::size_t argmax, const float* b, double range, const kernel_params& kp,
                                float* e_out, float* w_out, look_ahead* next) {
        const int p = kp.p_int;
        const int ahead = next && next->q && p != 0 ? next->kind : 0;
        // order 2 unscaled: values up to range / b_2, whose p-th power must stay far from overflow;
        // a fractional power goes through log and exp, accurate only for values near 1 (scaled)
        if (taylor && kp.taylor_order == 2 && p != 0 && range / kp.taylor_coeffs[2] < kp.power_limit) {
            const float unscaled[3] = {0.0f, static_cast<float>(static_cast<double>(b[1]) / b[2]), 1.0f};
            if (ahead == 2)
                return soft ? pass2_p<true, true, 2, 2>(p, y, k, m, q0, argmax, unscaled, kp, e_out, w_out, next)
                            : pass2_p<false, true, 2, 2>(p, y, k, m, q0, argmax, unscaled, kp, e_out, w_out, next);
            return soft ? pass2_p<true, true, 2, 0>(p, y, k, m, q0, argmax, unscaled, kp, e_out, w_out, next)
                        : pass2_p<false, true, 2, 0>(p, y, k, m, q0, argmax, unscaled, kp, e_out, w_out, next);
        }
        if (taylor) {
            return soft ? pass2_p<true, true, 0, 0>(p, y, k, m, q0, argmax, b, kp, e_out, w_out, next)
                        : pass2_p<false, true, 0, 0>(p, y, k, m, q0, argmax, b, kp, e_out, w_out, next);
        }
        if (ahead == 1 && soft) return pass2_p<true, false, 0, 1>(p, y, k, m, q0, argmax, b, kp, e_out, w_out, next);
        return soft ? pass2_p<true, false, 0, 0>(p, y, k, m, q0, argmax, b, kp, e_out, w_out, next)
                    : pass2_p<false, false, 0, 0>(p, y, k, m, q0, argmax, b, kp, e_out, w_out, next);
    }

    // A row's statistics from its sums (s, sp, sx without the maximum's exact terms; xr the sum
    // of q - max), for both paths. `taylor`: the Taylor sums are in s.
    static void finish(row_stats& out, double m, double log_s, const pass2_sums& s, std::size_t k,
                       const kernel_params& kp, bool taylor) {
        const double sum = s.s + 1;
        out.lse = m + log_s;
        out.phi = log_s - s.xr / static_cast<double>(k);  // LSE - mean q = log s - mean (q - max)
        out.max_prob = 1.0 / sum;                         // the maximum's exp(q - m) is exactly 1
        // H = LSE - sum_k p_k q_k = log s - sum_k p_k (q_k - m); never below 0 mathematically
        out.entropy = kp.want_extras ? std::max(0.0, log_s - s.sx / sum) : 0.0;
        // sum_k sigma^p lies in [K^(1-p), 1] for rows that sum to 1; float rounding must not
        // push it out (a score outside [1/K, K^(-1/p)] would break the paper's bounds)
        const auto power = [&](double x) { return kp.p_int ? ipow_rt(x, kp.p_int) : std::pow(x, kp.p); };
        const auto bounded = [&](double v) { return std::min(1.0, std::max(kp.power_floor, v)); };
        if (kp.want_softmax) out.softmax = bounded((s.sp + 1) / power(sum));
        if (taylor) {
            out.taylor = bounded(s.wp / power(s.w));
            out.taylor_max = s.wmax / s.w;
        }
    }

    // ---- one row -------------------------------------------------------------------------

    // Which pass 1 a row takes: 1 the maximum only, 2 with the quadratic's |x + h| range, 0 the
    // general Taylor scan. `taylor`: the Taylor branch runs in float lanes.
    static int scan_kind(const kernel_params& kp, bool taylor) {
        if (!taylor) return 1;
        return kp.taylor_order == 2 && kp.taylor_coeffs[2] > 0 ? 2 : 0;
    }

    template <class T>
    static scan_result scan_any(const T* q, std::size_t k, const kernel_params& kp, bool taylor) {
        switch (scan_kind(kp, taylor)) {
            case 1: return scan_simple<T, false>(q, k, kp);
            case 2: return scan_simple<T, true>(q, k, kp);
            default: return scan_taylor(q, k, kp);
        }
    }

    // `scratch` holds kernel_scratch_floats(k): the row's exps, its Taylor values and, for
    // float64 rows, the row as float(q - max).
    // `known`: the row's pass 1 when it was done ahead (inside the previous row's pass 2);
    // `next`: the next row, whose pass 1 this row's pass 2 takes on where it can.
    template <class T>
    static row_stats one_row(const T* q, std::size_t k, const kernel_params& kp, float* scratch,
                             double* softmax_out, double* taylor_out, const scan_result* known = nullptr,
                             look_ahead* next = nullptr) {
        row_stats out;
        const std::size_t stride = k + kernel_padding;
        float* e_out = softmax_out ? scratch : nullptr;
        float* w_out = taylor_out ? scratch + stride : nullptr;
        const bool float_taylor = kp.want_taylor && kp.taylor_order <= max_float_order;

        const scan_result sc = known ? *known : scan_any(q, k, kp, float_taylor);
        if (!std::isfinite(sc.m)) {
            out.bad_col = first_nonfinite(q, k);
            return out;
        }
        out.argmax = static_cast<std::int64_t>(find_first(q, k, static_cast<T>(sc.m)));

        // float64 rows go to pass 2 as float(q - max), floored where float cannot hold the
        // difference (such elements have exp = 0 anyway); the criterion's sum stays in double.
        const float* y;
        float m;
        double sum_rel = 0;
        bool spread_fits_float = true;
        if constexpr (std::is_same_v<T, float>) {
            y = q;
            m = q[out.argmax];
        } else {
            float* rel = scratch + 2 * stride;
            for (std::size_t i = 0; i < k; ++i) {
                const double x = q[i] - sc.m;
                sum_rel += x;
                spread_fits_float = spread_fits_float && x > -1e30;
                rel[i] = static_cast<float>(std::max(x, -1e30));
            }
            if (!std::isfinite(sum_rel)) {
                out.bad_col = first_nonfinite(q, k);  // NaN or -Inf below the maximum, or overflow
                return out;
            }
            y = rel;
            m = 0;
        }

        // The Taylor branch: in float lanes in pass 2 where that is accurate, else in double here.
        bool taylor_lanes = false;
        float b[max_float_order + 1] = {};
        double range = 0;
        scan_result tr = sc;
        if (kp.want_taylor) {
            const bool float_range_ok = float_taylor && std::isfinite(sc.vmax - sc.vmin) && sc.vmax > sc.vmin;
            if (!float_range_ok) tr = taylor_range_exact(q, k, kp);
            range = tr.vmax - tr.vmin;
            if (!std::isfinite(range) || !std::isfinite(tr.vmin)) {
                out.taylor_overflow = true;
                if (taylor_out) std::fill(taylor_out, taylor_out + k, 0.0);
            } else if (range == 0) {
                out.taylor = kp.power_floor;  // uniform row: K^(1-p)
                out.taylor_max = 1.0 / static_cast<double>(k);
                if (taylor_out) std::fill(taylor_out, taylor_out + k, out.taylor_max);
            } else if (float_taylor && spread_fits_float && shifted_coefficients(kp, tr.q0, 1.0 / range, b)) {
                taylor_lanes = true;
            } else {
                taylor_exact(q, k, kp, tr, out, taylor_out);
            }
        }
        // q0 comes from the float scan for float rows (a float already); for float64 rows it is
        // taken relative to the maximum, as the row itself is
        const float q0 = static_cast<float>(std::is_same_v<T, float> ? tr.q0 : tr.q0 - sc.m);

        pass2_sums s = pass2_any(kp.want_softmax, taylor_lanes, y, k, m, q0, static_cast<std::size_t>(out.argmax),
                                       b, range, kp, e_out, taylor_lanes ? w_out : nullptr, next);
        if (!std::isfinite(s.xr) || !std::isfinite(s.s) || !std::isfinite(s.sx)) {
            out.bad_col = first_nonfinite(q, k);  // NaN or -Inf below the maximum
            if constexpr (std::is_same_v<T, float>) {
                if (out.bad_col == -2) {  // all finite, but q - max overflows float: go through double
                    double* wide = double_scratch(scratch, k);
                    std::copy(q, q + k, wide);
                    return one_row(static_cast<const double*>(wide), k, kp, scratch, softmax_out, taylor_out);
                }
            }
            return out;
        }
        if constexpr (!std::is_same_v<T, float>) s.xr = sum_rel;  // in double for float64 rows

        // s.s is the sum without the maximum's 1; log(1 + s) is as accurate as log1p above 1e-6
        // (its rounding is 1e-16 absolute) and several times faster
        finish(out, sc.m, s.s > 1e-6 ? std::log(1 + s.s) : std::log1p(s.s), s, k, kp, taylor_lanes);
        if (softmax_out) {
            e_out[out.argmax] = 1.0f;
            for (std::size_t j = 0; j < k; ++j) softmax_out[j] = e_out[j] * out.max_prob;
        }
        if (taylor_lanes && taylor_out)
            for (std::size_t j = 0; j < k; ++j) taylor_out[j] = std::max(0.0f, w_out[j]) / s.w;
        return out;
    }

    // k doubles after the three float rows of the scratch space, 8-byte aligned
    static double* double_scratch(float* scratch, std::size_t k) {
        auto at = reinterpret_cast<std::uintptr_t>(scratch + 3 * (k + kernel_padding));
        at = (at + alignof(double) - 1) / alignof(double) * alignof(double);
        return reinterpret_cast<double*>(at);
    }

    // ---- few classes: a row per lane ------------------------------------------------------

    static constexpr std::size_t lanes_max_k = 128;

    // The same sums as one_row for up to fsize rows of k <= lanes_max_k float logits at once,
    // each row in its own lane: the columns are the loop, and the per-row steps (reductions, the
    // log of the sum, the Taylor coefficients) are vector operations across rows. Lanes are
    // independent, so a row's numbers do not depend on its neighbours (nor on how a set is
    // chunked); fewer rows than lanes fill the rest with copies of the last. Order-2 Taylor and
    // integer p only. Writes out[0, rows) and returns the lanes whose row needs one_row instead
    // (non-finite, uniform Taylor values, or values whose powers could overflow) as bits.
    template <int P, bool Taylor>
    static unsigned rows_in_lanes(const float* q, std::size_t rows, std::size_t k, const kernel_params& kp,
                                  row_stats* out) {
        constexpr std::size_t L = fsize;
        constexpr float inf = std::numeric_limits<float>::infinity();
        alignas(64) float t[lanes_max_k * L];
        for (std::size_t r = 0; r < L; ++r) {
            const float* row = q + std::min(r, rows - 1) * k;
            for (std::size_t j = 0; j < k; ++j) t[j * L + r] = row[j];
        }
        // pass 1: maximum (and its first column); for Taylor, as in scan_quadratic, the range of
        // |q + h| (the polynomial is c2 (q + h)^2 + const)
        const double c2 = Taylor ? kp.taylor_coeffs[2] : 1.0;
        const fbatch h(Taylor ? static_cast<float>(kp.taylor_coeffs[1] / (2 * c2)) : 0.0f);
        fbatch m(-inf), at(0.0f), amin(inf), amax(0.0f);
        for (std::size_t j = 0; j < k; ++j) {
            const fbatch x = fbatch::load_aligned(t + j * L);
            at = xsimd::select(x > m, fbatch(static_cast<float>(j)), at);
            m = xsimd::max(m, x);
            if constexpr (Taylor) {
                const fbatch a = xsimd::abs(x + h);
                amin = xsimd::min(amin, a);
                amax = xsimd::max(amax, a);
            }
        }
        // (d + shift) d with d = q - q0 is the Taylor value minus its minimum, divided by c2
        fbatch q0(0.0f), shift(0.0f), taylor_ok(1.0f);
        if constexpr (Taylor) {
            const fbatch spread = (amax - amin) * (amax + amin);  // (range of the values) / c2
            taylor_ok = xsimd::select((spread > fbatch(0.0f)) & (spread < fbatch(static_cast<float>(kp.power_limit))),
                                      fbatch(1.0f), fbatch(0.0f));
            q0 = amin - h;
            shift = amin + amin;
        }
        // pass 2, with float sums flushed into double every flush_vectors columns
        const fbatch lo(exp_floor), zero(0.0f);
#if defined(__wasm__)
        const fbatch pow_cut(-80.0f / static_cast<float>(P));
#endif
        fbatch as(0.0f), asx(0.0f), axr(0.0f), asp(0.0f), aw(0.0f), awp(0.0f), awmax(0.0f);
        alignas(64) double d_s[L] = {}, d_sx[L] = {}, d_xr[L] = {}, d_sp[L] = {}, d_w[L] = {}, d_wp[L] = {};
        const auto flush = [&] {
            alignas(64) float lanes[L];
            const auto into = [&](fbatch& acc, double* total) {
                acc.store_aligned(lanes);
                for (std::size_t l = 0; l < L; ++l) total[l] += lanes[l];
                acc = zero;
            };
            into(as, d_s);
            into(asx, d_sx);
            into(axr, d_xr);
            into(asp, d_sp);
            if constexpr (Taylor) {
                into(aw, d_w);
                into(awp, d_wp);
            }
        };
        // the exponent: floored, and at the floor in the row maximum's own column
        const auto exponent = [&](std::size_t j, fbatch xr) {
            return xsimd::select(at == fbatch(static_cast<float>(j)), lo, xsimd::max(xr, lo));
        };
        const auto add = [&](std::size_t j, fbatch row, fbatch xr, fbatch x, fbatch e) __attribute__((always_inline)) {
            as += e;
            asx = xsimd::fma(e, x, asx);
            axr += xr;
#if defined(__wasm__)
            asp = add_pow<P>(xsimd::select(x > pow_cut, e, zero), asp);
#else
            asp = add_pow<P>(e, asp);
#endif
            if constexpr (Taylor) {
                const fbatch d = row - q0;
                const fbatch w = (d + shift) * d;
                aw += w;
                awp = add_pow<P>(w, awp);
                awmax = xsimd::max(awmax, w);
            }
            if ((j + 1) % flush_vectors == 0) flush();
        };
        std::size_t j = 0;
        // 4 lanes (SSE, WASM): two columns at a time with their exps interleaved, as in pass2
        if constexpr (fsize <= 4) {
            for (; j + 2 <= k; j += 2) {
                const fbatch row0 = fbatch::load_aligned(t + j * L), row1 = fbatch::load_aligned(t + (j + 1) * L);
                const fbatch xr0 = row0 - m, xr1 = row1 - m;
                const fbatch x0 = exponent(j, xr0), x1 = exponent(j + 1, xr1);
                fbatch e0, e1;
                exp_nonpositive2(x0, x1, e0, e1);
                add(j, row0, xr0, x0, e0);
                add(j + 1, row1, xr1, x1, e1);
            }
        }
        for (; j < k; ++j) {
            const fbatch row = fbatch::load_aligned(t + j * L), xr = row - m, x = exponent(j, xr);
            add(j, row, xr, x, exp_nonpositive(x));
        }
        flush();
        alignas(64) float f_wmax[L], f_m[L], f_at[L], f_ok[L];
        awmax.store_aligned(f_wmax);
        m.store_aligned(f_m);
        at.store_aligned(f_at);
        taylor_ok.store_aligned(f_ok);
        unsigned redo = 0;
        for (std::size_t l = 0; l < rows; ++l)
            if (!(std::isfinite(f_m[l]) && std::isfinite(d_xr[l]) && std::isfinite(d_s[l]) && std::isfinite(d_sx[l]) &&
                  f_ok[l] == 1.0f))
                redo |= 1u << l;
        // log(1 + s) for all lanes, vectorized in double
        using dbatch = xsimd::batch<double, Arch>;
        alignas(64) double log_s[L];
        for (std::size_t l = 0; l < L; l += dbatch::size)
            xsimd::log1p(dbatch::load_aligned(d_s + l)).store_aligned(log_s + l);
        for (std::size_t l = 0; l < rows; ++l) {
            pass2_sums sums;
            sums.s = d_s[l], sums.sx = d_sx[l], sums.xr = d_xr[l], sums.sp = d_sp[l];
            sums.w = d_w[l], sums.wp = d_wp[l], sums.wmax = f_wmax[l];
            out[l] = row_stats{};
            out[l].argmax = static_cast<std::int64_t>(f_at[l]);
            finish(out[l], f_m[l], log_s[l], sums, k, kp, Taylor);
        }
        return redo;
    }

#if !defined(__wasm__)
    // Flush-to-zero and denormals-are-zero while the kernel runs (restored after): small exps
    // raised to the power p underflow, and every underflow to a subnormal costs a microcode
    // assist of ~100 cycles. Values below 1e-38 are nothing next to the sums they join.
    struct flush_to_zero {
        unsigned saved = _mm_getcsr();
        flush_to_zero() { _mm_setcsr(saved | 0x8040); }
        ~flush_to_zero() { _mm_setcsr(saved); }
    };
#endif

    static void run(const float* rows_f, const double* rows_d, std::size_t count, std::size_t k,
                    const kernel_params& kp, float* scratch, row_stats* out, const row_outputs& rows_out) {
#if !defined(__wasm__)
        const flush_to_zero ftz;
#endif
        std::size_t r = 0;
        // Few classes (up to 128): a row per lane, so that nothing is left per row but a few
        // scalar steps (the per-row path's reductions and log cost more than the row itself).
        if (rows_f && !rows_out.softmax && !rows_out.taylor && k <= lanes_max_k && (kp.p_int == 2 || kp.p_int == 4) &&
            (!kp.want_taylor || kp.taylor_order == 2)) {
            for (; r < count; r += fsize) {
                const float* group = rows_f + r * k;
                const std::size_t n = std::min(fsize, count - r);
                const unsigned redo =
                    kp.p_int == 4 ? (kp.want_taylor ? rows_in_lanes<4, true>(group, n, k, kp, out + r)
                                                    : rows_in_lanes<4, false>(group, n, k, kp, out + r))
                                  : (kp.want_taylor ? rows_in_lanes<2, true>(group, n, k, kp, out + r)
                                                    : rows_in_lanes<2, false>(group, n, k, kp, out + r));
                for (std::size_t i = 0; i < n; ++i)  // rows the lanes cannot take: one at a time
                    if (redo >> i & 1u) out[r + i] = one_row(group + i * k, k, kp, scratch, nullptr, nullptr);
            }
        }
        look_ahead next;
        next.kind = scan_kind(kp, kp.want_taylor && kp.taylor_order <= max_float_order);
        for (; r < count; ++r) {
            // The row after next is requested while this one is computed (pass 2 works from cache,
            // so the hardware prefetcher sees no stream to follow then; one row ahead arrived too
            // late by ~3%). Rows up to 16 KB. A row whose pass 1 was done ahead will most likely
            // look ahead too, and its pass 2 requests that row a line at a time as it goes.
            const bool prefetch = r + 2 < count && k <= 4096;
            if (prefetch && !next.done) {
                const char* after = rows_f ? reinterpret_cast<const char*>(rows_f + (r + 2) * k)
                                           : reinterpret_cast<const char*>(rows_d + (r + 2) * k);
                const std::size_t bytes = k * (rows_f ? sizeof(float) : sizeof(double));
                for (std::size_t at = 0; at < bytes; at += 64) __builtin_prefetch(after + at, 0, 2);
            }
            double* sm = rows_out.softmax ? rows_out.softmax + r * k : nullptr;
            double* ty = rows_out.taylor ? rows_out.taylor + r * k : nullptr;
            if (rows_f) {
                const bool have = next.done;
                const scan_result known = next.result;
                next.done = false;
                next.q = r + 1 < count ? rows_f + (r + 1) * k : nullptr;
                next.after = prefetch ? rows_f + (r + 2) * k : nullptr;
                out[r] = one_row(rows_f + r * k, k, kp, scratch, sm, ty, have ? &known : nullptr, &next);
            } else {
                out[r] = one_row(rows_d + r * k, k, kp, scratch, sm, ty);
            }
        }
    }
};

}  // namespace
}  // namespace detail
}  // namespace mano

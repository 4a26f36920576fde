#pragma once
// Pass 1 of the per-row MaNo kernel (kernel/kernel_impl.hpp): the row streamed from memory for its
// maximum and, when the Taylor branch is wanted, the range of the Taylor polynomial and where its
// minimum is; and the Taylor branch's scalar double path for the rows float cannot hold. Internal
// linkage, as everything of the kernel (kernel_impl.hpp says why).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "mano/kernel/kernel.hpp"
#include "mano/kernel/kernel_math.hpp"
#include "mano/kernel/kernel_sums.hpp"
#include "mano/kernel/scalar_arch.hpp"

namespace mano {
namespace detail {
namespace {

template <class Arch>
struct row_scan {
    using fbatch = xsimd::batch<float, Arch>;
    static constexpr std::size_t fsize = fbatch::size;
    // Taylor orders up to this run in float lanes; higher ones take the scalar double path.
    static constexpr int max_float_order = 8;

    struct scan_result {
        double m = 0;   // row maximum
        double vmin = std::numeric_limits<double>::infinity(), vmax = -vmin;  // Taylor range
        double q0 = 0;  // where the Taylor polynomial is smallest (a logit, or its mirror image)
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
};

}  // namespace
}  // namespace detail
}  // namespace mano

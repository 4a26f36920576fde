#pragma once
// The per-row MaNo kernel, written once against xsimd::batch<T, Arch>. Each file in kernels/
// includes this header, compiled with its architecture's flags, and instantiates it for one Arch.
// Everything here has internal linkage so that code built with wider instruction sets can never
// be picked by the linker for a narrower architecture's entry point.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "mano/detail/kernel.hpp"

namespace mano {
namespace detail {
namespace {

template <class Arch>
struct row_kernel_impl {
    using dbatch = xsimd::batch<double, Arch>;
    using fbatch = xsimd::batch<float, Arch>;
    static constexpr std::size_t dsize = dbatch::size;
    static constexpr std::size_t fsize = fbatch::size;
    // float partial sums are flushed into double every this many vectors (bounds rounding growth)
    static constexpr std::size_t flush_vectors = 16;

    // x^n by squaring; B is a batch or a plain double
    template <class B>
    static B ipow(B x, int n) {
        B r(1);
        for (;;) {
            if (n & 1) r *= x;
            n >>= 1;
            if (n == 0) return r;
            x *= x;
        }
    }

    // v = sum_{j=0..n} x^j / j!  (Horner)
    static dbatch taylor(dbatch x, const double* c, int n) {
        dbatch v(c[n]);
        for (int j = n - 1; j >= 0; --j) v = xsimd::fma(v, x, dbatch(c[j]));
        return v;
    }

    static double taylor(double x, const double* c, int n) {
        double v = c[n];
        for (int j = n - 1; j >= 0; --j) v = v * x + c[j];
        return v;
    }

    // Horizontal max (more = true) or min of a batch's lanes.
    template <class B>
    static typename B::value_type reduce_extreme(B x, bool more) {
        alignas(64) typename B::value_type lanes[B::size];
        x.store_aligned(lanes);
        auto m = lanes[0];
        for (std::size_t i = 1; i < B::size; ++i) m = (more ? lanes[i] > m : lanes[i] < m) ? lanes[i] : m;
        return m;
    }

    static row_stats one_row(const double* q, std::size_t k, const kernel_params& kp, float* shifted,
                             double* softmax_out, double* taylor_out) {
        row_stats out;
        const double* coeffs = kp.taylor_coeffs.data();
        const int order = kp.taylor_order;
        const std::size_t dend = k - k % dsize;
        constexpr double inf = std::numeric_limits<double>::infinity();

        // Pass 1: row max, row sum, and the range of the Taylor values.
        dbatch bmax(-inf), bsum(0.0), tmin(inf), tmax(-inf);
        for (std::size_t i = 0; i < dend; i += dsize) {
            const dbatch x = dbatch::load_unaligned(q + i);
            bmax = xsimd::max(bmax, x);
            bsum += x;
            if (kp.want_taylor) {
                const dbatch v = taylor(x, coeffs, order);
                tmin = xsimd::min(tmin, v);
                tmax = xsimd::max(tmax, v);
            }
        }
        double m = reduce_extreme(bmax, true), sum_q = xsimd::hadd(bsum);
        double vmin = reduce_extreme(tmin, false), vmax = reduce_extreme(tmax, true);
        for (std::size_t i = dend; i < k; ++i) {
            m = q[i] > m ? q[i] : m;
            sum_q += q[i];
            if (kp.want_taylor) {
                const double v = taylor(q[i], coeffs, order);
                vmin = v < vmin ? v : vmin;
                vmax = v > vmax ? v : vmax;
            }
        }
        if (!std::isfinite(sum_q) || !std::isfinite(m)) {
            out.bad_col = -2;
            for (std::size_t i = 0; i < k; ++i)
                if (!std::isfinite(q[i])) { out.bad_col = static_cast<std::int64_t>(i); break; }
            return out;
        }
        while (q[out.argmax] != m) ++out.argmax;

        // Pass 2: softmax. exp runs in float on q - m (in [-inf, 0], so no overflow and the
        // relative error stays ~1e-7); partial sums are flushed to double every few vectors.
        // The maximum's terms are exact (e = 1, e * x = 0) and go in below in double: summed in a
        // float lane, a 1 would swallow every e < 6e-8, which is all of them in a confident row.
        // The same -1000 (exp underflows to exactly 0, and 0 * -1000 = 0) pads the row to whole
        // vectors, so no element takes a scalar exp (for K = 10 most of them would).
        const std::size_t fend = (k + fsize - 1) / fsize * fsize;
        for (std::size_t i = 0; i < k; ++i) shifted[i] = static_cast<float>(q[i] - m);
        std::fill(shifted + k, shifted + fend, -1000.0f);
        shifted[out.argmax] = -1000.0f;
        const fbatch fp(static_cast<float>(kp.p));
        double s = 0, sp = 0, sx = 0;  // sum e, sum e^p, sum e * (q - m), over all but the maximum
        std::size_t i = 0;
        while (i < fend) {
            const std::size_t block_end = std::min(fend, i + flush_vectors * fsize);
            fbatch bs(0.0f), bsp(0.0f), bsx(0.0f);
            for (; i < block_end; i += fsize) {
                const fbatch x = fbatch::load_unaligned(shifted + i);
                const fbatch e = xsimd::exp(x);
                bs += e;
                bsx = xsimd::fma(e, x, bsx);
                if (kp.want_softmax) bsp += kp.p_int ? ipow(e, kp.p_int) : xsimd::exp(fp * x);
                if (softmax_out) e.store_unaligned(shifted + i);
            }
            s += xsimd::hadd(bs);
            sp += xsimd::hadd(bsp);
            sx += xsimd::hadd(bsx);
        }
        if (softmax_out) shifted[out.argmax] = 1.0f;
        const double log_s = std::log1p(s);  // s is still the sum without the maximum's 1
        s += 1;
        sp += 1;
        out.lse = m + log_s;
        out.phi = out.lse - sum_q / static_cast<double>(k);
        out.max_prob = 1.0 / s;  // the maximum's exp(q - m) is exactly 1
        // H = LSE - sum_k p_k q_k = log s - sum_k p_k (q_k - m); never below 0 mathematically
        out.entropy = std::max(0.0, log_s - sx / s);
        if (kp.want_softmax) out.softmax = sp / (kp.p_int ? ipow(s, kp.p_int) : std::pow(s, kp.p));
        if (softmax_out)
            for (std::size_t j = 0; j < k; ++j) softmax_out[j] = shifted[j] * out.max_prob;

        // Pass 3: Taylor rows shifted by their minimum (paper footnote), scaled by the range so
        // that no power overflows; the scale cancels in sigma = w / sum(w).
        if (kp.want_taylor) {
            const double range = vmax - vmin;
            if (!std::isfinite(range) || !std::isfinite(vmin)) {
                out.taylor_overflow = true;
                if (taylor_out) std::fill(taylor_out, taylor_out + k, 0.0);
            } else if (range == 0) {
                out.taylor = std::pow(static_cast<double>(k), 1.0 - kp.p);  // uniform row
                out.taylor_max = 1.0 / static_cast<double>(k);
                if (taylor_out) std::fill(taylor_out, taylor_out + k, out.taylor_max);
            } else {
                const double inv_range = 1.0 / range;
                const dbatch bvmin(vmin), binv(inv_range), zero(0.0), dp(kp.p);
                dbatch bw(0.0), bwp(0.0), bwmax(0.0);
                for (std::size_t j = 0; j < dend; j += dsize) {
                    const dbatch x = dbatch::load_unaligned(q + j);
                    const dbatch w = xsimd::max((taylor(x, coeffs, order) - bvmin) * binv, zero);
                    bw += w;
                    bwmax = xsimd::max(bwmax, w);
                    bwp += kp.p_int ? ipow(w, kp.p_int) : xsimd::pow(w, dp);
                    if (taylor_out) w.store_unaligned(taylor_out + j);
                }
                double sw = xsimd::hadd(bw), swp = xsimd::hadd(bwp), wmax = reduce_extreme(bwmax, true);
                for (std::size_t j = dend; j < k; ++j) {
                    double w = (taylor(q[j], coeffs, order) - vmin) * inv_range;
                    w = w > 0 ? w : 0;
                    sw += w;
                    wmax = w > wmax ? w : wmax;
                    swp += kp.p_int ? ipow(w, kp.p_int) : std::pow(w, kp.p);
                    if (taylor_out) taylor_out[j] = w;
                }
                out.taylor = swp / (kp.p_int ? ipow(sw, kp.p_int) : std::pow(sw, kp.p));
                out.taylor_max = wmax / sw;
                if (taylor_out)
                    for (std::size_t j = 0; j < k; ++j) taylor_out[j] /= sw;
            }
        }
        return out;
    }

    static void run(const double* rows, std::size_t count, std::size_t k, const kernel_params& kp,
                    float* scratch, row_stats* out, const row_outputs& rows_out) {
        for (std::size_t r = 0; r < count; ++r)
            out[r] = one_row(rows + r * k, k, kp, scratch, rows_out.softmax ? rows_out.softmax + r * k : nullptr,
                             rows_out.taylor ? rows_out.taylor + r * k : nullptr);
    }
};

}  // namespace
}  // namespace detail
}  // namespace mano

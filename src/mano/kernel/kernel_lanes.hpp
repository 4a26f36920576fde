#pragma once
// The MaNo kernel's path for rows of few classes (at most lanes_max_k): a row per lane, so that
// nothing is left per row but a few scalar steps (the two-pass row path's reductions and log
// cost more than such a row itself). row_kernel_impl::run (kernel/kernel_impl.hpp) sends rows
// here; internal linkage, as the kernel has.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "mano/kernel/kernel.hpp"
#include "mano/kernel/kernel_math.hpp"
#include "mano/kernel/kernel_sums.hpp"
#include "mano/kernel/scalar_arch.hpp"

namespace mano {
namespace detail {
namespace {

template <class Arch>
struct lane_kernel_impl {
    using fbatch = xsimd::batch<float, Arch>;
    static constexpr std::size_t fsize = fbatch::size;
    static constexpr std::size_t lanes_max_k = 128;

    // Whether rows of k float logits go a row per lane: sums only (no per-row outputs), integer
    // p of 2 or 4, and order-2 Taylor.
    static bool takes(std::size_t k, const kernel_params& kp, const row_outputs& rows_out) {
        return !rows_out.softmax && !rows_out.taylor && k <= lanes_max_k && (kp.p_int == 2 || kp.p_int == 4) &&
               (!kp.want_taylor || kp.taylor_order == 2);
    }

    // rows_in_lanes for kp's p and branches (takes() holds).
    static unsigned run(const float* q, std::size_t rows, std::size_t k, const kernel_params& kp, row_stats* out) {
        return kp.p_int == 4 ? (kp.want_taylor ? rows_in_lanes<4, true>(q, rows, k, kp, out)
                                               : rows_in_lanes<4, false>(q, rows, k, kp, out))
                             : (kp.want_taylor ? rows_in_lanes<2, true>(q, rows, k, kp, out)
                                               : rows_in_lanes<2, false>(q, rows, k, kp, out));
    }

    // The same sums as row_kernel_impl::one_row for up to fsize rows of k <= lanes_max_k float
    // logits at once, each row in its own lane: the columns are the loop, and the per-row steps
    // (reductions, the log of the sum, the Taylor coefficients) are vector operations across
    // rows. Lanes are independent, so a row's numbers do not depend on its neighbours (nor on how
    // a set is chunked); fewer rows than lanes fill the rest with copies of the last. Order-2
    // Taylor and integer p only. Writes out[0, rows) and returns the lanes whose row needs
    // one_row instead (non-finite, uniform Taylor values, or values whose powers could overflow)
    // as bits.
    template <int P, bool Taylor>
    static unsigned rows_in_lanes(const float* q, std::size_t rows, std::size_t k, const kernel_params& kp,
                                  row_stats* out) {
        constexpr std::size_t L = fsize;
        alignas(64) float t[lanes_max_k * L];
        for (std::size_t r = 0; r < L; ++r) {
            const float* row = q + std::min(r, rows - 1) * k;
            for (std::size_t j = 0; j < k; ++j) t[j * L + r] = row[j];
        }
        fbatch m, at, q0, shift, taylor_ok;
        scan_lanes<Taylor>(t, k, kp, m, at, q0, shift, taylor_ok);
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
        // 4 lanes (SSE, WASM): two columns at a time with their exps interleaved, as in the row
        // path's pass2
        if constexpr (fsize <= 4) {
            for (; j + 2 <= k; j += 2) {
                const fbatch row0 = fbatch::load_aligned(t + j * L), row1 = fbatch::load_aligned(t + (j + 1) * L);
                const fbatch xr0 = row0 - m, xr1 = row1 - m;
                const fbatch x0 = exponent(j, xr0), x1 = exponent(j + 1, xr1);
                const auto [e0, e1] = exp_nonpositive(x0, x1);
                add(j, row0, xr0, x0, e0);
                add(j + 1, row1, xr1, x1, e1);
            }
        }
        for (; j < k; ++j) {
            const fbatch row = fbatch::load_aligned(t + j * L), xr = row - m, x = exponent(j, xr);
            add(j, row, xr, x, exp_nonpositive(x)[0]);
        }
        flush();
        const double* totals[6] = {d_s, d_sx, d_xr, d_sp, d_w, d_wp};
        return finish_lanes<Taylor>(awmax, m, at, taylor_ok, totals, rows, k, kp, out);
    }

    // Pass 1 over the transposed rows t: each lane's maximum m and its first column at; for
    // Taylor, as in the row path's scanner<T, true>, the range of |q + h| (the polynomial is
    // c2 (q + h)^2 + const), whence q0 and the shift of (d + shift) d with d = q - q0 (the Taylor
    // value minus its minimum, divided by c2), and taylor_ok: 1 where the lane's values stay
    // within the powers' range, else 0.
    template <bool Taylor>
    __attribute__((always_inline)) static void scan_lanes(const float* t, std::size_t k, const kernel_params& kp, fbatch& m,
                                                          fbatch& at, fbatch& q0, fbatch& shift, fbatch& taylor_ok) {
        constexpr std::size_t L = fsize;
        constexpr float inf = std::numeric_limits<float>::infinity();
        const double c2 = Taylor ? kp.taylor_coeffs[2] : 1.0;
        const fbatch h(Taylor ? static_cast<float>(kp.taylor_coeffs[1] / (2 * c2)) : 0.0f);
        fbatch amin(inf), amax(0.0f);
        m = fbatch(-inf), at = fbatch(0.0f);
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
        q0 = fbatch(0.0f), shift = fbatch(0.0f), taylor_ok = fbatch(1.0f);
        if constexpr (Taylor) {
            const fbatch spread = (amax - amin) * (amax + amin);  // (range of the values) / c2
            taylor_ok = xsimd::select((spread > fbatch(0.0f)) & (spread < fbatch(static_cast<float>(kp.power_limit))),
                                      fbatch(1.0f), fbatch(0.0f));
            q0 = amin - h;
            shift = amin + amin;
        }
    }

    // Each row's statistics from its lane's double sums (s, sx, xr, sp, w, wp) and the lanes'
    // largest Taylor value, maximum, its column and taylor_ok; the lanes that need one_row
    // instead, as bits.
    template <bool Taylor>
    __attribute__((always_inline)) static unsigned finish_lanes(fbatch awmax, fbatch m, fbatch at, fbatch taylor_ok,
                                                                const double* const (&totals)[6], std::size_t rows,
                                                                std::size_t k, const kernel_params& kp, row_stats* out) {
        constexpr std::size_t L = fsize;
        const double *d_s = totals[0], *d_sx = totals[1], *d_xr = totals[2], *d_sp = totals[3], *d_w = totals[4],
                     *d_wp = totals[5];
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
            row_sums sums;
            sums.s = d_s[l], sums.sx = d_sx[l], sums.xr = d_xr[l], sums.sp = d_sp[l];
            sums.w = d_w[l], sums.wp = d_wp[l], sums.wmax = f_wmax[l];
            out[l] = row_stats{};
            out[l].argmax = static_cast<std::int64_t>(f_at[l]);
            finish_row(out[l], f_m[l], log_s[l], sums, k, kp, Taylor);
        }
        return redo;
    }
};

}  // namespace
}  // namespace detail
}  // namespace mano

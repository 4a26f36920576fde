#pragma once
// Pass 2 of the per-row MaNo kernel (kernel/kernel_impl.hpp): the row read again from cache and
// all its arithmetic in float lanes (exp(q - max) and its sums, the min-shifted Taylor values),
// with pass 1 of the next row run inside it (look_ahead).

#include <algorithm>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "mano/kernel/kernel_scan.hpp"

namespace mano {
namespace detail {
namespace {

template <class Arch>
struct row_arithmetic : row_scan<Arch> {
    using base = row_scan<Arch>;
    using typename base::fbatch;
    using typename base::look_ahead;
    using typename base::scan_result;
    using base::fsize;
    using base::max_float_order;

    // ---- pass 2 --------------------------------------------------------------------------

    // The sums of pass 2 in float lanes, at two levels: each block of flush_vectors vectors goes
    // into a second set of vectors (so no float sum takes more than flush_vectors terms), and those
    // go into the row's double sums (horizontally, which is the slow part) every flush_vectors
    // blocks and at the end. It holds references to pass2's locals, as its lambdas did, and its
    // members are always inlined, as the lambdas were, so that the locals stay in registers.
    template <bool Soft, bool Taylor, int P, int O, bool Extras>
    struct pass2_sums {
        const float* b;
        const kernel_params& kp;
        float* e_out;
        float* w_out;
        const fbatch &lo, &zero, &pow_cut;  // pow_cut: read on WASM only
        const float& fp;
        row_sums& out;
        fbatch &as, &asp, &asx, &axr, &aw, &awp, &awmax;
        fbatch &bs, &bsp, &bsx, &bxr, &bw, &bwp;

        __attribute__((always_inline)) void end_block() {
            bs += as, bsx += asx, bxr += axr, bsp += asp, bw += aw, bwp += awp;
            as = asx = axr = asp = aw = awp = zero;
        }
        __attribute__((always_inline)) void flush() {
            end_block();
            // one transposed horizontal add for all six sums (lane i of the result sums sums[i])
            double* totals[6] = {&out.s, &out.sx, &out.xr, &out.sp, &out.w, &out.wp};
            constexpr std::size_t groups = (6 + fsize - 1) / fsize;
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
        }
        // xr: y - m as is (the criterion's mean); x: the exponent, floored (and at the floor where
        // a lane is left out); d: the Taylor offset (0 where a lane is left out: w = 0)
        __attribute__((always_inline)) void add(fbatch xr, fbatch x, fbatch e, fbatch d, std::size_t at) {
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
                else asp += kp.p_int ? ipow_rt(ep, kp.p_int) : exp_nonpositive(xsimd::max(x * fbatch(fp), lo))[0];
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
        }
        // The row's sums, after the last flush.
        __attribute__((always_inline)) row_sums result() {
            if constexpr (Taylor) {
                alignas(64) float lanes_max[fsize];
                awmax.store_aligned(lanes_max);
                out.wmax = *std::max_element(lanes_max, lanes_max + fsize);
            }
            return out;
        }
    };

    // Everything that needs an exp or a Taylor value, over a float row y: x = y - m (the softmax
    // exponent), d = y - q0 (the Taylor offset). The maximum's own lane is left out (its terms
    // are exact and go in later in double: summed in a float lane, its 1 would swallow every
    // e < 6e-8, which is all of them in a confident row), and so is the padding of the last vector.
    // Next (a scan_kind, or 0 for none): pass 1 of next->q runs in this loop too.
    template <bool Soft, bool Taylor, int P, int O, bool Extras, int Next = 0>
    static row_sums pass2(const float* y, std::size_t k, float m, float q0, std::size_t argmax, const float* b,
                          const kernel_params& kp, float* e_out, float* w_out, look_ahead* next = nullptr) {
        const fbatch bm(m), bq0(q0), lo(exp_floor), zero(0.0f), lanes = iota<fbatch>();
        const auto at_max = lanes == fbatch(static_cast<float>(argmax % fsize));
        const std::size_t full = k / fsize, rem = k % fsize, max_vector = argmax / fsize;
        const float fp = static_cast<float>(kp.p);
        const fbatch pow_cut(-80.0f / fp);
        row_sums out;
        fbatch as(0.0f), asp(0.0f), asx(0.0f), axr(0.0f), aw(0.0f), awp(0.0f), awmax(0.0f);
        fbatch bs(0.0f), bsp(0.0f), bsx(0.0f), bxr(0.0f), bw(0.0f), bwp(0.0f);
        pass2_sums<Soft, Taylor, P, O, Extras> sums{b, kp, e_out, w_out, lo, zero, pow_cut, fp, out, as, asp, asx, axr,
                                                    aw, awp, awmax, bs, bsp, bsx, bxr, bw, bwp};
        typename base::template scanner<float, Next == 2> ahead(kp);
        const auto scan_ahead = [&](std::size_t v) __attribute__((always_inline)) {
            if constexpr (Next != 0) {
                ahead.update(fbatch::load_unaligned(next->q + v * fsize));
                // the row after next, a cache line at a time
                if (next->after && (v * fsize * sizeof(float)) % 64 == 0)
                    __builtin_prefetch(next->after + v * fsize, 0, 2);
            }
        };
        const auto step = [&](fbatch xr, fbatch x, fbatch d, std::size_t at) __attribute__((always_inline)) {
            sums.add(xr, x, exp_nonpositive(x)[0], d, at);
        };
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
                const auto [e0, e1] = exp_nonpositive(x0, x1);
                sums.add(xr0, x0, e0, row0 - bq0, v * fsize);
                sums.add(xr1, x1, e1, row1 - bq0, (v + 1) * fsize);
            }
            for (; v < stop; ++v) one(v);
            if (v == full) break;
            if (++blocks % flush_vectors == 0) sums.flush();
            else sums.end_block();
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
        sums.flush();
        if constexpr (Next != 0) {
            next->result = ahead.result(next->q, full * fsize, k, kp);
            next->done = true;
        }
        return sums.result();
    }

    template <bool Soft, bool Taylor, int O, int Next>
    static row_sums pass2_p(int p_int, const float* y, std::size_t k, float m, float q0, std::size_t argmax,
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
    static row_sums pass2_any(bool soft, bool taylor, const float* y, std::size_t k, float m, float q0,
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

};

}  // namespace
}  // namespace detail
}  // namespace mano

#pragma once
// The per-row loops of the source fit, MLLS's EM and COT's auction (src/mano/shift/), written
// once against xsimd and instantiated per architecture beside the MaNo kernel
// (cmake/kernel_instance.cpp.in), so native builds and WebAssembly SIMD run the same code.
// Exponentials run in float lanes (kernel/kernel_math.hpp) on differences taken from the row's
// maximum or minimum, their sums are flushed into double every few vectors; the EM and the
// auction read float rows and compute in double, because their stopping tests look at changes
// of 1e-10 that float sums would drown.
// Everything here has internal linkage (see kernel_impl.hpp).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "mano/kernel/kernel.hpp"
#include "mano/kernel/kernel_math.hpp"

namespace mano {
namespace detail {
namespace {

template <class Arch>
struct shift_impl {
    using fbatch = xsimd::batch<float, Arch>;
    using dbatch = xsimd::batch<double, Arch>;
    static constexpr std::size_t F = fbatch::size;
    static constexpr std::size_t D = dbatch::size;
    // float partial sums go into double every this many vectors: each lane then adds at most
    // this many terms in float
    static constexpr std::size_t flush_vectors = 8;

    // The row's maximum (up) or minimum, and d_j = q_j - that in float into d.
    template <class T>
    static double shift_row(const T* q, std::size_t k, bool up, float* d) {
        T ref = q[0];
        for (std::size_t j = 1; j < k; ++j) ref = up ? std::max(ref, q[j]) : std::min(ref, q[j]);
        for (std::size_t j = 0; j < k; ++j) d[j] = static_cast<float>(q[j] - ref);
        return static_cast<double>(ref);
    }

    // The row's maximum (up) or minimum in the lanes of B (T widened to B's values as loaded).
    template <class B, class T>
    static typename B::value_type row_extreme(const T* q, std::size_t k, bool up) {
        using V = typename B::value_type;
        constexpr std::size_t W = B::size;
        std::size_t j = 0;
        V ref = static_cast<V>(q[0]);
        if (k >= W) {
            B r = B::load_unaligned(q);
            for (j = W; j + W <= k; j += W) {
                const B x = B::load_unaligned(q + j);
                r = up ? xsimd::max(r, x) : xsimd::min(r, x);
            }
            alignas(64) V lanes[W];
            r.store_aligned(lanes);
            ref = lanes[0];
            for (std::size_t i = 1; i < W; ++i) ref = up ? std::max(ref, lanes[i]) : std::min(ref, lanes[i]);
        }
        for (; j < k; ++j) ref = up ? std::max(ref, static_cast<V>(q[j])) : std::min(ref, static_cast<V>(q[j]));
        return ref;
    }

    // The row's maximum (up) or minimum of float logits, vectorized; d_j = q_j - that.
    static double shift_row(const float* q, std::size_t k, bool up, float* d) {
        const float ref = row_extreme<fbatch>(q, k, up);
        const fbatch rb(ref);
        std::size_t j = 0;
        for (; j + F <= k; j += F) (fbatch::load_unaligned(q + j) - rb).store_unaligned(d + j);
        for (; j < k; ++j) d[j] = q[j] - ref;
        return static_cast<double>(ref);
    }

    template <class T>
    static const T* row_of(const T* rows, std::size_t i, std::size_t k) {
        return rows + i * k;
    }

    // e_j = exp(max(s d_j, floor)) into e (may be d itself); returns sum_j e_j (double), and,
    // with moments, sum_j e_j d_j and sum_j e_j d_j^2 into m1, m2.
    template <bool Moments>
    static double exp_sums(const float* d, std::size_t k, float s, float* e, double* m1, double* m2) {
        const fbatch scale(s), floor(exp_floor);
        fbatch a0(0.0f), a1(0.0f), a2(0.0f);
        double t0 = 0, t1 = 0, t2 = 0;
        std::size_t j = 0, since = 0;
        for (; j + F <= k; j += F) {
            const fbatch x = fbatch::load_unaligned(d + j);
            const fbatch v = exp_nonpositive(xsimd::max(x * scale, floor))[0];
            v.store_unaligned(e + j);
            a0 += v;
            if constexpr (Moments) {
                const fbatch vx = v * x;
                a1 += vx;
                a2 = xsimd::fma(vx, x, a2);
            }
            if (++since == flush_vectors) {
                t0 += xsimd::hadd(a0), a0 = fbatch(0.0f);
                if constexpr (Moments) t1 += xsimd::hadd(a1), t2 += xsimd::hadd(a2), a1 = a2 = fbatch(0.0f);
                since = 0;
            }
        }
        t0 += xsimd::hadd(a0);
        if constexpr (Moments) t1 += xsimd::hadd(a1), t2 += xsimd::hadd(a2);
        for (; j < k; ++j) {
            const float v = std::exp(std::max(d[j] * s, exp_floor));
            e[j] = v;
            t0 += v;
            if constexpr (Moments) t1 += static_cast<double>(v) * d[j], t2 += static_cast<double>(v) * d[j] * d[j];
        }
        if constexpr (Moments) *m1 = t1, *m2 = t2;
        return t0;
    }

    template <class T>
    static void scaled_softmax(const T* rows, std::size_t count, std::size_t k, double scale, float* probs,
                               double* max_prob, float* scratch) {
        const bool up = scale >= 0;
        const float s = static_cast<float>(scale);
        for (std::size_t i = 0; i < count; ++i) {
            float* out = probs ? probs + i * k : scratch;
            shift_row(row_of(rows, i, k), k, up, out);
            const double sum = exp_sums<false>(out, k, s, out, nullptr, nullptr);
            // the reference entry's exp is exactly 1 and the largest
            if (max_prob) max_prob[i] = 1 / sum;
            if (!probs) continue;
            const fbatch inv(static_cast<float>(1 / sum));
            std::size_t j = 0;
            for (; j + F <= k; j += F) (fbatch::load_unaligned(out + j) * inv).store_unaligned(out + j);
            for (; j < k; ++j) out[j] = out[j] * static_cast<float>(1 / sum);
        }
    }

    template <class T>
    static void softmax_moments(const T* rows, std::size_t count, std::size_t k, double beta, double* out,
                                float* scratch) {
        const bool up = beta >= 0;
        const float s = static_cast<float>(beta);
        for (std::size_t i = 0; i < count; ++i, out += 4) {
            out[0] = shift_row(row_of(rows, i, k), k, up, scratch);
            out[1] = exp_sums<true>(scratch, k, s, scratch + k + kernel_padding, out + 2, out + 3);
        }
    }

    // As softmax_moments, in double lanes throughout (xsimd's double exp); `x` is unused.
    template <class T>
    static void softmax_moments_exact(const T* rows, std::size_t count, std::size_t k, double beta, double* out,
                                      double*) {
        const bool up = beta >= 0;
        const dbatch b(beta);
        for (std::size_t i = 0; i < count; ++i, out += 4) {
            const T* q = row_of(rows, i, k);
            const double ref = row_extreme<dbatch>(q, k, up);
            const dbatch rb(ref);
            dbatch a0(0.0), a1(0.0), a2(0.0);
            std::size_t j = 0;
            for (; j + D <= k; j += D) {
                const dbatch d = dbatch::load_unaligned(q + j) - rb;
                const dbatch e = xsimd::exp(b * d);
                const dbatch ed = e * d;
                a0 += e;
                a1 += ed;
                a2 = xsimd::fma(ed, d, a2);
            }
            double t0 = xsimd::hadd(a0), t1 = xsimd::hadd(a1), t2 = xsimd::hadd(a2);
            for (; j < k; ++j) {
                const double d = static_cast<double>(q[j]) - ref, e = std::exp(beta * d);
                t0 += e, t1 += e * d, t2 += e * d * d;
            }
            out[0] = ref, out[1] = t0, out[2] = t1, out[3] = t2;
        }
    }

    // rows (count x k, float) widened into x (k doubles), s_i = w . x; into row_sums (if not null)
    // s_i; over the rows with s_i > 0, and where sums is not null, sums += x / s_i and log_sum +=
    // log s_i; ++zero_rows for the others.
    static void em_pass(const float* rows, std::size_t count, std::size_t k, const double* w, double* sums,
                        double* row_sums, double* log_sum, std::size_t* zero_rows, double* x) {
        for (std::size_t i = 0; i < count; ++i) {
            const float* p = rows + i * k;
            dbatch a0(0.0), a1(0.0);
            std::size_t j = 0;
            for (; j + 2 * D <= k; j += 2 * D) {
                const dbatch x0 = dbatch::load_unaligned(p + j), x1 = dbatch::load_unaligned(p + j + D);
                x0.store_unaligned(x + j);
                x1.store_unaligned(x + j + D);
                a0 = xsimd::fma(x0, dbatch::load_unaligned(w + j), a0);
                a1 = xsimd::fma(x1, dbatch::load_unaligned(w + j + D), a1);
            }
            double s = xsimd::hadd(a0 + a1);
            for (; j < k; ++j) x[j] = p[j], s += x[j] * w[j];
            if (row_sums) row_sums[i] = s;
            if (!(s > 0)) {
                ++*zero_rows;
                continue;
            }
            if (!sums) continue;
            *log_sum += std::log(s);
            const double inv = 1 / s;
            const dbatch vinv(inv);
            j = 0;
            for (; j + D <= k; j += D)
                xsimd::fma(dbatch::load_unaligned(x + j), vinv, dbatch::load_unaligned(sums + j)).store_unaligned(sums + j);
            for (; j < k; ++j) sums[j] += x[j] * inv;
        }
    }

    // The largest and second largest of p_j - price_j over j, and where the largest is (the
    // first such j).
    static best_two best_values(const float* p, std::size_t k, const double* price) {
        constexpr double low = -std::numeric_limits<double>::infinity();
        dbatch b1(low), b2(low), at(0.0), index;
        {
            alignas(64) double lanes[D];
            for (std::size_t i = 0; i < D; ++i) lanes[i] = static_cast<double>(i);
            index = dbatch::load_aligned(lanes);
        }
        const dbatch step(static_cast<double>(D));
        std::size_t j = 0;
        for (; j + D <= k; j += D, index += step) {
            const dbatch v = dbatch::load_unaligned(p + j) - dbatch::load_unaligned(price + j);
            const auto better = v > b1;
            b2 = xsimd::max(b2, xsimd::min(b1, v));
            at = xsimd::select(better, index, at);
            b1 = xsimd::select(better, v, b1);
        }
        alignas(64) double l1[D], l2[D], li[D];
        b1.store_aligned(l1);
        b2.store_aligned(l2);
        at.store_aligned(li);
        best_two r{0, low, low};
        for (std::size_t i = 0; i < D; ++i) {
            if (l1[i] > r.first || (l1[i] == r.first && li[i] < static_cast<double>(r.index))) {
                r.second = std::max(r.second, r.first);
                r.first = l1[i];
                r.index = static_cast<std::size_t>(li[i]);
            } else {
                r.second = std::max(r.second, l1[i]);
            }
            r.second = std::max(r.second, l2[i]);
        }
        for (; j < k; ++j) {
            const double v = static_cast<double>(p[j]) - price[j];
            if (v > r.first) r.second = r.first, r.first = v, r.index = j;
            else r.second = std::max(r.second, v);
        }
        return r;
    }

    // The lanes' vectors of the row (k / D of them, the rest of the row a last short one): the
    // largest value of each into vector_max, then the classes of every value at or above the
    // count-th largest of those (at least count classes: each of those vectors has one), ascending.
    // NaN values never reach here: the rows are probabilities and the prices finite or +inf.
    static std::size_t top_classes(const float* p, std::size_t k, const double* price, std::size_t count,
                                   std::uint32_t* classes, double* values, double* vector_max) {
        const std::size_t vectors = (k + D - 1) / D;
        std::size_t j = 0, v = 0;
        for (; j + D <= k; j += D, ++v) {
            const dbatch x = dbatch::load_unaligned(p + j) - dbatch::load_unaligned(price + j);
            alignas(64) double lanes[D];
            x.store_aligned(lanes);
            double top = lanes[0];
            for (std::size_t i = 1; i < D; ++i) top = std::max(top, lanes[i]);
            vector_max[v] = top;
        }
        if (j < k) {
            double top = -std::numeric_limits<double>::infinity();
            for (std::size_t c = j; c < k; ++c) top = std::max(top, static_cast<double>(p[c]) - price[c]);
            vector_max[v] = top;
        }
        // the count-th largest vector maximum: the count largest kept in descending order in
        // values' room (k >= count doubles), each new one inserted by shifting the lower ones
        double floor = -std::numeric_limits<double>::infinity();
        if (count <= vectors) {
            std::size_t kept = 0;
            for (v = 0; v < vectors; ++v) {
                const double x = vector_max[v];
                if (kept == count && !(x > values[count - 1])) continue;
                std::size_t at = kept < count ? kept++ : count - 1;
                for (; at > 0 && values[at - 1] < x; --at) values[at] = values[at - 1];
                values[at] = x;
            }
            floor = values[count - 1];
        }
        std::size_t n = 0;
        for (v = 0, j = 0; v < vectors; ++v, j += D) {
            if (!(vector_max[v] >= floor)) continue;
            for (std::size_t c = j; c < std::min(k, j + D); ++c) {
                const double x = static_cast<double>(p[c]) - price[c];
                classes[n] = static_cast<std::uint32_t>(c), values[n] = x, n += x >= floor ? 1 : 0;
            }
        }
        return n;
    }
};

}  // namespace
}  // namespace detail
}  // namespace mano

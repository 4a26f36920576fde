#pragma once
// The vector math of the MaNo kernel (kernel/kernel_impl.hpp, kernel/kernel_lanes.hpp): exp,
// integer powers and polynomials on xsimd::batch<float, Arch> (B), some on plain numbers too.
// Internal linkage, as the kernel has: each kernel instance compiles its own copy with its flags.

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "mano/kernel/scalar_arch.hpp"

namespace mano {
namespace detail {
namespace {

// exp's argument floor: exp(-86) = 4.5e-38 is still a normal float, so 2^n can be written into
// the exponent bits, and it is negligible next to the row maximum's exact 1.
constexpr float exp_floor = -86.0f;

// exp_nonpositive (below) on N = sizeof...(I) vectors.
template <class B, std::size_t... I>
inline std::array<B, sizeof...(I)> exp_nonpositive_steps(const std::array<B, sizeof...(I)>& x,
                                                         std::index_sequence<I...>) {
    constexpr std::size_t N = sizeof...(I);
    using ibatch = xsimd::batch<std::int32_t, typename B::arch_type>;
    const B magic(12582912.0f);
    const std::array<B, N> t{xsimd::fma(x[I], B(1.44269504f), magic)...};
    const std::array<B, N> n{(t[I] - magic)...};
#ifdef __FMA__
    // a fused multiply-add keeps n * ln 2 exact enough with one float ln 2 (|n| <= 125)
    const std::array<B, N> r{xsimd::fma(n[I], B(-0.693147182f), x[I])...};
#else
    std::array<B, N> r{xsimd::fma(n[I], B(-0.693359375f), x[I])...};
    r = {xsimd::fma(n[I], B(2.12194440e-4f), r[I])...};
#endif
    std::array<B, N> p{xsimd::fma(B(8.290314002e-03f), r[I], B(4.189793105e-02f))...};
    p = {xsimd::fma(p[I], r[I], B(1.666763622e-01f))...};
    p = {xsimd::fma(p[I], r[I], B(4.999914952e-01f))...};
    p = {xsimd::fma(p[I], r[I], B(9.999997072e-01f))...};
    p = {xsimd::fma(p[I], r[I], B(1.0f))...};
    return {xsimd::bitwise_cast<B>(xsimd::bitwise_cast<ibatch>(p[I]) + (xsimd::bitwise_cast<ibatch>(t[I]) << 23))...};
}

// e^x for x in [exp_floor, 0]: Cody-Waite reduction with a two-part ln 2 (exact without FMA),
// a degree-5 polynomial (relative error < 2e-7 in float), and 2^n added to the exponent bits.
// n is read from the low bits of x * log2(e) + 1.5 * 2^23, which rounds it to an integer.
// N vectors in, their N exps out (exp_nonpositive(x)[0]; auto [e0, e1] = exp_nonpositive(x0, x1)),
// each step done on all N before the next: one exp is a chain of ~11 dependent operations, and
// N independent chains let the core overlap them.
template <class B, class... More>
inline std::array<B, 1 + sizeof...(More)> exp_nonpositive(B x, More... more) {
    return exp_nonpositive_steps<B>({x, more...}, std::make_index_sequence<1 + sizeof...(More)>());
}

// x^P for a compile-time P >= 1, by squaring
template <int P, class B>
inline B ipow(B x) {
    if constexpr (P == 1) return x;
    else if constexpr (P % 2 == 0) { const B h = ipow<P / 2>(x); return h * h; }
    else return ipow<P - 1>(x) * x;
}

// acc + x^P, the last multiply fused
template <int P, class B>
inline B add_pow(B x, B acc) {
    if constexpr (P == 1) return acc + x;
    else if constexpr (P % 2 == 0) { const B h = ipow<P / 2>(x); return xsimd::fma(h, h, acc); }
    else return xsimd::fma(ipow<P - 1>(x), x, acc);
}

// x^n for a run-time n >= 1; B is a batch or a plain double
template <class B>
inline B ipow_rt(B x, int n) {
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
inline B poly(B x, const C* c, int order) {
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
template <int O, class B>
inline B shifted_poly(B d, const float* b, int order) {
    if constexpr (O == 2) {
        return (d + B(b[1])) * d;
    } else {
        B u(b[order]);
        for (int j = order - 1; j >= 1; --j) u = xsimd::fma(u, d, B(b[j]));
        return u * d;
    }
}

// 0, 1, 2, ... in the lanes of a float batch
template <class B>
inline B iota() {
    alignas(64) float lanes[B::size];
    for (std::size_t i = 0; i < B::size; ++i) lanes[i] = static_cast<float>(i);
    return B::load_aligned(lanes);
}

}  // namespace
}  // namespace detail
}  // namespace mano

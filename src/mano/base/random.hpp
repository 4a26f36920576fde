#pragma once
// Random numbers that are the same on every platform (native, WebAssembly, any CPU or standard
// library): splitmix64 (Steele, Lea and Flood 2014) and the draws built on it. mano draws with it
// what must be reproducible from a seed: an audit's rows (src/mano/audit/audit_sample.hpp) and a
// calibration family's label-shifted copies (src/mano/workflow/label_shift_copies.hpp).

#include <cmath>
#include <cstdint>

namespace mano {
namespace detail {

// 64-bit state, one multiply-xorshift output per step.
struct splitmix64 {
    std::uint64_t state = 0;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
};

// A whole number uniform on [0, bound), bound >= 1: draws below 2^64 mod bound are rejected so
// that every residue is equally likely (no modulo bias; no std::uniform_int_distribution, whose
// algorithm each standard library chooses).
inline std::uint64_t uniform_below(splitmix64& g, std::uint64_t bound) {
    const std::uint64_t reject_below = (0 - bound) % bound;  // 2^64 mod bound
    for (;;) {
        const std::uint64_t x = g.next();
        if (x >= reject_below) return x % bound;
    }
}

// Uniform on [0, 1), from the top 53 bits.
inline double uniform01(splitmix64& g) { return static_cast<double>(g.next() >> 11) * 0x1.0p-53; }

// Standard normal (Box-Muller, one of the pair).
inline double standard_normal(splitmix64& g) {
    const double u = 1 - uniform01(g), v = uniform01(g);
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * 3.141592653589793 * v);
}

// Gamma(alpha, 1) by Marsaglia and Tsang (2000); alpha < 1 through Gamma(alpha + 1) u^(1/alpha).
inline double gamma_draw(splitmix64& g, double alpha) {
    if (alpha < 1) return gamma_draw(g, alpha + 1) * std::pow(1 - uniform01(g), 1 / alpha);
    const double d = alpha - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
        double x, v;
        do x = standard_normal(g), v = 1 + c * x;
        while (v <= 0);
        v = v * v * v;
        const double u = 1 - uniform01(g);
        if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
}

}  // namespace detail
}  // namespace mano

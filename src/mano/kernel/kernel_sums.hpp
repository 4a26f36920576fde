#pragma once
// A row's sums and the statistics made from them, shared by the kernel's two paths: the two-pass
// row path (kernel/kernel_impl.hpp) and the row-per-lane one (kernel/kernel_lanes.hpp).
// Internal linkage, as the kernel has: each kernel instance compiles its own copy with its flags.

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "mano/kernel/kernel.hpp"
#include "mano/kernel/kernel_math.hpp"

namespace mano {
namespace detail {
namespace {

// no float partial sum takes more than this many terms (bounds rounding growth)
constexpr std::size_t flush_vectors = 16;

// The sums over a row, in double. s, sp and sx leave out the maximum's exact terms.
struct row_sums {
    double s = 0;   // sum exp(q - max)
    double sp = 0;  // sum exp(q - max)^p
    double sx = 0;  // sum exp(q - max) (q - max)
    double xr = 0;  // sum (q - max)
    double w = 0;   // sum of the Taylor values less their minimum, in any scale (sigma = w / sum w)
    double wp = 0;  // sum of their p-th powers
    float wmax = 0;  // the largest of them
};

// A row's statistics from its sums, for both paths. `taylor`: the Taylor sums are in s.
inline void finish_row(row_stats& out, double m, double log_s, const row_sums& s, std::size_t k,
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
        // the largest of a probability row lies in [1/K, 1]; the float lanes' rounding of the
        // minimum's value (about 0, either sign) must not push it out (the softrun ConfScore read
        // 1.0000000005 at K = 2 once)
        out.taylor_max = std::min(1.0, std::max(1.0 / static_cast<double>(k), s.wmax / s.w));
    }
}

}  // namespace
}  // namespace detail
}  // namespace mano

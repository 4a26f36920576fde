#pragma once
// MLLS's EM over the class priors (docs/methods.md, mlls), accelerated: the EM map F takes the
// priors x to (1/N) sum_i Q_i, Q_ik = w_k P_ik / sum_j w_j P_ij with w = x / source priors, and
// has one fixed point, the maximum-likelihood priors. Plain EM needs thousands of steps where
// the posteriors say little about the priors (K = 1000: more than 20000). Anderson acceleration
// (Walker and Ni, 2011) extrapolates from the last few steps to the same fixed point in tens,
// safeguarded by the likelihood: a step that lowers it is replaced by a plain EM step. Each
// evaluation of F is one pass over the rows in the kernel (kernel.hpp, em_pass), in fixed row
// ranges that may run at once (parallel_for), summed in their order: the same numbers for any
// number of threads.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mano/base/parallel.hpp"
#include "mano/kernel/kernel.hpp"
#include "mano/shift/row_blocks.hpp"

namespace mano {

// EM stops when no prior moves by more than this in one step of F, or after em_max_iterations
// evaluations of F (then it reports that it did not converge).
inline constexpr double em_tolerance = 1e-10;
inline constexpr std::size_t em_max_iterations = 20000;

struct prior_estimate {
    std::vector<double> priors;  // F(x) at the last x: (1/N) sum_i Q_i
    double accuracy = 0;         // (1/N) sum_i Q_{i, predicted_i}, Q under the priors
    double accuracy_se = 0;      // sqrt(sum_i Q(1 - Q)) / N at the predicted classes
    std::size_t iterations = 0;  // evaluations of F (passes over the rows)
    bool converged = false;
};

// The priors of the N rows P (calibrated posteriors under the source priors, N x K floats)
// from x = source priors; `predicted` holds each row's predicted class (the argmax of its logits).
prior_estimate estimate_priors(const row_blocks& rows, const std::int32_t* predicted, std::size_t k,
                               const std::vector<double>& source_priors, const detail::shift_kernels& kernels,
                               const parallel_for& parallel = run_in_order,
                               std::size_t max_iterations = em_max_iterations);

}  // namespace mano

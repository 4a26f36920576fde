#pragma once
// A labeled source set as the fits read it (source_fit.hpp, label_shift.hpp, and each method's
// fit_source in the method table): its rows checked once (finite logits, labels in [0, K)), each
// row's predicted class, and the kernel's passes over any of its rows (kernel/kernel.hpp). Its
// passes run in fixed ranges of rows (source_task_rows) that `parallel` may run at once, summed in
// their order: the same numbers for any number of threads.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "mano/base/parallel.hpp"
#include "mano/kernel/kernel.hpp"
#include "mano/scan/logits_view.hpp"

namespace mano {
namespace detail {

// The mean slope and curvature in beta of the NLL of softmax(beta q) at the labels:
// mean_i (E_p[d_i] - d_iy) and mean_i Var_p(d_i), p = softmax(beta d_i).
struct nll_slope {
    double slope = 0;
    double curvature = 0;
};

// Rows per task of a pass over the source: fixed, so that sums do not depend on the threads.
inline constexpr std::size_t source_task_rows = 512;

class source_rows {
public:
    // Throws mano::error naming the first row with a label outside [0, K) or a logit that is not
    // finite; `temperature` is the options' T (softmax(q / T) is what the methods see).
    source_rows(const logits_view& logits, const std::int64_t* labels, double temperature,
                const shift_kernels& kernels, parallel_for parallel = run_in_order);

    std::size_t n() const { return n_; }
    std::size_t k() const { return k_; }
    double temperature() const { return temperature_; }
    const std::int64_t* labels() const { return labels_; }
    const shift_kernels& kernels() const { return kernels_; }
    // each row's predicted class: the first maximum (numpy.argmax)
    const std::vector<std::int32_t>& predicted() const { return predicted_; }
    std::size_t correct() const { return correct_; }

    // Row i as the kernels take it: one of the two pointers is null.
    const float* row_f(std::size_t i) const { return rows_f_ ? rows_f_ + i * stride_ : nullptr; }
    const double* row_d(std::size_t i) const { return rows_d_ ? rows_d_ + i * stride_ : nullptr; }

    // The NLL's slope and curvature at beta over `rows` (every row when null), with float
    // exponentials or, when exact, double ones.
    nll_slope slope(double beta, const std::vector<std::size_t>* rows, bool exact) const;
    // The exact slope over every row at beta, handing each row's exact softmax moments (the
    // kernel's 4 doubles at beta) to each_row(i, moments), possibly at once; slope() at this beta
    // then returns it without a pass (the base fit and the scale fit both start at 1 / T).
    nll_slope exact_slope(double beta, const std::function<void(std::size_t, const double*)>& each_row) const;

    // Temperature scaling on top of T: the a minimizing the mean NLL of softmax(a q / T) at the
    // labels over `rows` (every row when null), by a safeguarded Newton in one pass per step.
    double fit_scale(const std::vector<std::size_t>* rows = nullptr) const;
    // fit_scale() over every row, fitted once and kept: what CBPE and MLLS share.
    double scale() const;

    // softmax(q / T) of `rows` (every row when null) in double, row after row.
    std::vector<double> probs(const std::vector<std::size_t>* rows = nullptr) const;

private:
    const std::int64_t* labels_;
    double temperature_;
    const shift_kernels& kernels_;
    parallel_for parallel_;
    std::size_t n_, k_, stride_ = 0;
    std::vector<double> widened_;  // the rows, when the view is neither contiguous float32 nor float64
    const float* rows_f_ = nullptr;
    const double* rows_d_ = nullptr;
    std::vector<std::int32_t> predicted_;
    std::size_t correct_ = 0;
    mutable std::optional<double> scale_;
    mutable std::optional<std::pair<double, nll_slope>> exact_at_;  // exact_slope's beta and slope
    nll_slope slope_pass(double beta, const std::vector<std::size_t>* rows, bool exact,
                         const std::function<void(std::size_t, const double*)>* each_row) const;
};

}  // namespace detail
}  // namespace mano

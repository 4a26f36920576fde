// A labeled source set as the fits read it (source_rows.hpp).
#include "mano/shift/source_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "mano/base/error.hpp"

namespace mano {
namespace detail {

namespace {

std::string describe(double x) {
    if (std::isnan(x)) return "NaN";
    return x > 0 ? "+Inf" : "-Inf";
}

bool all_finite(const float* row, std::size_t k) {
    std::uint32_t infinite = 0;
    for (std::size_t c = 0; c < k; ++c) {
        std::uint32_t bits;
        std::memcpy(&bits, row + c, sizeof bits);
        infinite |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    }
    return infinite == 0;
}

// The safeguarded Newton's iterations: each is one pass over the rows.
constexpr int max_passes = 100;

}  // namespace

source_rows::source_rows(const logits_view& logits, const std::int64_t* labels, double temperature,
                         const shift_kernels& kernels, parallel_for parallel)
    : labels_(labels), temperature_(temperature), kernels_(kernels), parallel_(std::move(parallel)), n_(logits.rows()),
      k_(logits.cols()) {
    if (n_ == 0) throw error("the source logits have 0 rows; ATC, DoC and temperature fitting need labeled source rows");
    if (k_ < 2) throw error("source logits need at least 2 columns (classes); got " + std::to_string(k_));
    if (labels == nullptr) throw error("the source labels are missing; pass one class index per source row");
    if (logits.type() == dtype::float32) {
        rows_f_ = static_cast<const float*>(logits.data()), stride_ = logits.row_stride();
    } else if (logits.type() == dtype::float64) {
        rows_d_ = static_cast<const double*>(logits.data()), stride_ = logits.row_stride();
    } else {
        widened_.resize(n_ * k_);
        widen_rows(logits, 0, n_, widened_.data());
        rows_d_ = widened_.data(), stride_ = k_;
    }
    predicted_.resize(n_);
    // each range checks its rows and keeps its first fault; the first range with one says it
    const std::size_t ranges = (n_ + source_task_rows - 1) / source_task_rows;
    std::vector<std::string> faults(ranges);
    std::vector<std::size_t> correct(ranges, 0);
    parallel_(ranges, [&](std::size_t t) {
        const std::size_t first = t * source_task_rows, count = std::min(source_task_rows, n_ - first);
        std::vector<double> q(k_);
        const std::vector<double> no_price(rows_f_ ? k_ : 0, 0.0);
        for (std::size_t r = first; r < first + count; ++r) {
            const std::int64_t label = labels[r];
            if (label < 0 || static_cast<std::uint64_t>(label) >= k_) {
                faults[t] = "source row " + std::to_string(r) + ": label " + std::to_string(label) +
                            " is outside [0, " + std::to_string(k_) + "); labels must be class indices counting from 0";
                return;
            }
            // a float row of finite logits (every exponent below all ones) in one vectorized
            // check, its first maximum by the kernel; two finite floats are never too far apart
            // to subtract in double
            if (rows_f_ && all_finite(row_f(r), k_)) {
                const auto arg = kernels_.best_values(row_f(r), k_, no_price.data()).index;
                predicted_[r] = static_cast<std::int32_t>(arg);
                correct[t] += arg == static_cast<std::size_t>(label) ? 1 : 0;
                continue;
            }
            if (rows_f_) {
                const float* row = row_f(r);
                for (std::size_t c = 0; c < k_; ++c) q[c] = static_cast<double>(row[c]);
            } else {
                const double* row = row_d(r);
                std::copy(row, row + k_, q.begin());
            }
            std::size_t arg = 0;
            double low = q[0];
            for (std::size_t c = 0; c < k_; ++c) {
                if (!std::isfinite(q[c])) {
                    faults[t] = "source row " + std::to_string(r) + ", column " + std::to_string(c) + ": logit is " +
                                describe(q[c]) + " (rows and columns count from 0); logits must be finite";
                    return;
                }
                if (q[c] > q[arg]) arg = c;
                low = std::min(low, q[c]);
            }
            if (!std::isfinite(q[arg] - low)) {
                faults[t] = "source row " + std::to_string(r) +
                            ": logits are too far apart to subtract in double precision";
                return;
            }
            predicted_[r] = static_cast<std::int32_t>(arg);
            correct[t] += arg == static_cast<std::size_t>(label) ? 1 : 0;
        }
    });
    for (std::size_t t = 0; t < faults.size(); ++t) {
        if (!faults[t].empty()) throw error(faults[t]);
        correct_ += correct[t];
    }
}

nll_slope source_rows::slope(double beta, const std::vector<std::size_t>* rows, bool exact) const {
    if (!rows && exact_at_ && exact_at_->first == beta) return exact_at_->second;
    return slope_pass(beta, rows, exact, nullptr);
}

nll_slope source_rows::exact_slope(double beta, const std::function<void(std::size_t, const double*)>& each_row) const {
    const nll_slope out = slope_pass(beta, nullptr, true, &each_row);
    exact_at_.emplace(beta, out);
    return out;
}

nll_slope source_rows::slope_pass(double beta, const std::vector<std::size_t>* rows, bool exact,
                                  const std::function<void(std::size_t, const double*)>* each_row) const {
    const std::size_t count = rows ? rows->size() : n_;
    // the rows in tasks of source_task_rows, summed in order
    const std::size_t tasks = (count + source_task_rows - 1) / source_task_rows;
    std::vector<nll_slope> parts(tasks);
    parallel_(tasks, [&](std::size_t t) {
        std::vector<float> scratch(kernel_scratch_floats(k_));
        std::vector<double> row(k_);
        double moments[4];
        nll_slope& part = parts[t];
        const std::size_t end = std::min(count, (t + 1) * source_task_rows);
        for (std::size_t j = t * source_task_rows; j < end; ++j) {
            const std::size_t i = rows ? (*rows)[j] : j;
            const auto y = static_cast<std::size_t>(labels_[i]);
            if (exact) kernels_.softmax_moments_exact(row_f(i), row_d(i), 1, k_, beta, moments, row.data());
            else kernels_.softmax_moments(row_f(i), row_d(i), 1, k_, beta, moments, scratch.data());
            // d_y as the kernel's d: in double when exact, else rounded to float
            const double q_y = rows_f_ ? static_cast<double>(row_f(i)[y]) : row_d(i)[y];
            const double d_y = exact ? q_y - moments[0] : static_cast<double>(static_cast<float>(q_y - moments[0]));
            if (each_row) (*each_row)(i, moments);
            const double mean = moments[2] / moments[1];
            part.slope += mean - d_y;
            part.curvature += std::max(0.0, moments[3] / moments[1] - mean * mean);
        }
    });
    nll_slope out;
    for (const auto& part : parts) out.slope += part.slope, out.curvature += part.curvature;
    out.slope /= static_cast<double>(count);
    out.curvature /= static_cast<double>(count);
    return out;
}

double source_rows::fit_scale(const std::vector<std::size_t>* rows) const {
    // In beta = a / T the NLL is convex. A bracket [lo, hi] with slope(lo) < 0 < slope(hi) from
    // beta = 1 / T (a = 1) outwards (below), then Newton steps that stay inside it and halve the last
    // step (else bisection): in float passes to ~1e-6, then in exact ones, inside a bracket of
    // 1e-2 around that (the float slope is within ~1e-7 of the exact one), until a Newton step of
    // at most 1e-7 (relative), which is taken. A set whose NLL keeps falling (every prediction
    // right, or every one wrong) ends at the last beta tried.
    const double start = 1 / temperature_;
    int passes = 0;
    auto at = [&](double beta, bool exact) { return ++passes, slope(beta, rows, exact); };
    double beta = start;
    nll_slope s = at(beta, false);
    if (s.slope == 0) return 1;
    // Downhill from start until the slope changes sign: by Newton's steps while they point
    // downhill and reach no farther than the doubling search would (the slope of these NLLs
    // bends so that Newton's steps from one side often stay on it, converging without a bracket:
    // then a bracket of 1e-2 around the point reached), else doubling the distance.
    const double dir = s.slope < 0 ? 1 : -1;
    double lo = start, hi = start;
    bool exact = false;
    for (double reach = start;;) {
        const double newton = s.curvature > 0 ? -s.slope / s.curvature : 0;
        const bool downhill = newton * dir > 0 && std::abs(newton) <= reach;
        const double size = std::max(std::abs(beta + newton), 1e-3 * start);
        if (downhill && std::abs(newton) <= 1e-6 * size) {
            beta += newton;
            exact = true, lo = beta - 1e-2 * size, hi = beta + 1e-2 * size;
            s = at(beta, true);
            if (s.slope == 0) return beta * temperature_;
            break;
        }
        if (downhill) beta += newton;
        else beta += dir * reach, reach *= 2;
        s = at(beta, false);
        if (s.slope == 0) return beta * temperature_;
        (s.slope < 0 ? lo : hi) = beta;
        if ((s.slope < 0) != (dir > 0)) break;
        if (passes >= max_passes / 2) return beta * temperature_;
    }
    double last_step = hi - lo;
    while (passes < max_passes) {
        const double newton = beta - s.slope / s.curvature;
        const double size = std::max(std::abs(beta), 1e-3 * start);
        // Newton's error squares each step: one of 1e-7 leaves ~1e-14 (the first exact pass, after
        // the float ones, usually steps ~5e-8: the float slope's rounding)
        if (exact && s.curvature > 0 && std::abs(newton - beta) <= 1e-7 * size) return newton * temperature_;
        double next = newton;
        if (!(s.curvature > 0 && next > lo && next < hi && std::abs(next - beta) < 0.5 * std::abs(last_step)))
            next = (lo + hi) / 2;
        last_step = next - beta;
        beta = next;
        if (!exact && std::abs(last_step) <= 1e-6 * size)
            exact = true, lo = beta - 1e-2 * size, hi = beta + 1e-2 * size, last_step = hi - lo;
        else if (exact && hi - lo <= 1e-13 * size)
            break;
        s = at(beta, exact);
        if (s.slope == 0) break;
        (s.slope < 0 ? lo : hi) = beta;
    }
    return beta * temperature_;
}

double source_rows::scale() const {
    if (!scale_) scale_ = fit_scale(nullptr);
    return *scale_;
}

std::vector<double> source_rows::probs(const std::vector<std::size_t>* rows) const {
    const std::size_t count = rows ? rows->size() : n_;
    std::vector<double> out(count * k_);
    for (std::size_t j = 0; j < count; ++j) {
        const std::size_t i = rows ? (*rows)[j] : j;
        double* p = out.data() + j * k_;
        for (std::size_t c = 0; c < k_; ++c) p[c] = rows_f_ ? static_cast<double>(row_f(i)[c]) : row_d(i)[c];
        const double top = *std::max_element(p, p + k_);
        double sum = 0;
        for (std::size_t c = 0; c < k_; ++c) p[c] = std::exp((p[c] - top) / temperature_), sum += p[c];
        for (std::size_t c = 0; c < k_; ++c) p[c] /= sum;
    }
    return out;
}

}  // namespace detail
}  // namespace mano

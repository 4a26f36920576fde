// MLLS's EM over the class priors, Anderson-accelerated (prior_em.hpp).
#include "mano/shift/prior_em.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include "mano/base/error.hpp"

namespace mano {
namespace {

// Rows per task of a pass: fixed, so that the sums' order does not depend on the threads.
constexpr std::size_t task_rows = 2048;
// Anderson's memory: the last this many steps.
constexpr std::size_t memory = 8;
// A class heading for 0 is extrapolated at most this far below its EM step per iteration.
constexpr double shrink_floor = 0.1;

// Part of a block: rows [first, first + count) of block `block`.
struct segment {
    std::size_t block, first, count;
};

// The rows cut into tasks of task_rows rows (across block borders), in order.
std::vector<std::vector<segment>> tasks_of(const row_blocks& rows) {
    std::vector<std::vector<segment>> tasks;
    std::size_t room = 0;
    for (std::size_t b = 0; b < rows.size(); ++b)
        for (std::size_t first = 0; first < rows[b].count;) {
            if (room == 0) tasks.emplace_back(), room = task_rows;
            const std::size_t count = std::min(room, rows[b].count - first);
            tasks.back().push_back({b, first, count});
            first += count, room -= count;
        }
    return tasks;
}

// One evaluation of F, and the log-likelihood of x (up to a constant).
struct em_step {
    std::vector<double> image;
    double log_likelihood = 0;
};

class em_passes {
public:
    em_passes(const row_blocks& rows, std::size_t k, const std::vector<double>& source,
              const detail::shift_kernels& kernels, const parallel_for& parallel)
        : rows_(rows), tasks_(tasks_of(rows)), k_(k), n_(rows_in(rows)), source_(source), kernels_(kernels),
          parallel_(parallel) {}

    em_step operator()(const std::vector<double>& x) const {
        const std::vector<double> w = weights(x);
        std::vector<std::vector<double>> sums(tasks_.size());
        std::vector<double> logs(tasks_.size(), 0.0);
        std::vector<std::size_t> zeros(tasks_.size(), 0);
        parallel_(tasks_.size(), [&](std::size_t t) {
            sums[t].assign(k_, 0.0);
            std::vector<double> row(k_);
            for (const auto& s : tasks_[t])
                kernels_.em_pass(rows_[s.block].rows + s.first * k_, s.count, k_, w.data(), sums[t].data(), nullptr,
                                 &logs[t], &zeros[t], row.data());
        });
        std::vector<double> total(k_, 0.0);
        em_step out;
        std::size_t zero_rows = 0;
        for (std::size_t t = 0; t < tasks_.size(); ++t) {
            for (std::size_t c = 0; c < k_; ++c) total[c] += sums[t][c];
            out.log_likelihood += logs[t];
            zero_rows += zeros[t];
        }
        // a row whose posteriors all vanish counts as uniform, as in plain EM
        const double flat = static_cast<double>(zero_rows) / static_cast<double>(k_);
        out.image.resize(k_);
        for (std::size_t c = 0; c < k_; ++c) out.image[c] = (w[c] * total[c] + flat) / static_cast<double>(n_);
        return out;
    }

    // The accuracy and its standard error under the priors x.
    void accuracy(const std::vector<double>& x, const std::int32_t* predicted, prior_estimate& out) const {
        const std::vector<double> w = weights(x);
        std::vector<double> sum(tasks_.size(), 0.0), variance(tasks_.size(), 0.0);
        std::vector<std::size_t> starts(tasks_.size(), 0);
        for (std::size_t t = 1; t < tasks_.size(); ++t) starts[t] = starts[t - 1] + task_rows;
        parallel_(tasks_.size(), [&](std::size_t t) {
            std::vector<double> row(k_), sums(task_rows);
            std::size_t at = starts[t];
            for (const auto& s : tasks_[t]) {
                const float* p = rows_[s.block].rows + s.first * k_;
                double unused = 0;
                std::size_t zero = 0;
                kernels_.em_pass(p, s.count, k_, w.data(), nullptr, sums.data(), &unused, &zero, row.data());
                for (std::size_t i = 0; i < s.count; ++i, ++at) {
                    const auto c = static_cast<std::size_t>(predicted[at]);
                    const double f = sums[i] > 0 ? w[c] * static_cast<double>(p[i * k_ + c]) / sums[i]
                                                 : 1.0 / static_cast<double>(k_);
                    sum[t] += f;
                    variance[t] += f * (1 - f);
                }
            }
        });
        double total = 0, spread = 0;
        for (std::size_t t = 0; t < tasks_.size(); ++t) total += sum[t], spread += variance[t];
        const double n = static_cast<double>(n_);
        out.accuracy = total / n;
        out.accuracy_se = std::sqrt(spread) / n;
    }

private:
    std::vector<double> weights(const std::vector<double>& x) const {
        std::vector<double> w(k_);
        for (std::size_t c = 0; c < k_; ++c) w[c] = x[c] / source_[c];
        return w;
    }

    const row_blocks& rows_;
    std::vector<std::vector<segment>> tasks_;
    std::size_t k_, n_;
    const std::vector<double>& source_;
    const detail::shift_kernels& kernels_;
    const parallel_for& parallel_;
};

// Anderson's history: the last steps' differences of x and of the residual g = F(x) - x.
class anderson_history {
public:
    void clear() { dx_.clear(), dg_.clear(), last_x_.clear(); }

    // The extrapolated point from x and its residual g: x + g - (dX + dG) gamma, gamma minimizing
    // |g - dG gamma| (least squares by modified Gram-Schmidt; a column that adds nothing new is
    // left out). Remembers this step for the next.
    std::vector<double> next(const std::vector<double>& x, const std::vector<double>& g) {
        const std::size_t k = x.size();
        if (!last_x_.empty()) {
            std::vector<double> dx(k), dg(k);
            for (std::size_t c = 0; c < k; ++c) dx[c] = x[c] - last_x_[c], dg[c] = g[c] - last_g_[c];
            dx_.push_back(std::move(dx)), dg_.push_back(std::move(dg));
            if (dx_.size() > memory) dx_.pop_front(), dg_.pop_front();
        }
        last_x_ = x, last_g_ = g;
        std::vector<double> y(k);
        for (std::size_t c = 0; c < k; ++c) y[c] = x[c] + g[c];
        // Q R = dG, newest columns first
        std::vector<std::vector<double>> q;
        std::vector<std::vector<double>> r;
        std::vector<std::size_t> kept;
        for (std::size_t j = dg_.size(); j-- > 0;) {
            std::vector<double> v = dg_[j];
            std::vector<double> coef(q.size());
            double before = 0;
            for (const double e : v) before += e * e;
            for (std::size_t i = 0; i < q.size(); ++i) {
                double dot = 0;
                for (std::size_t c = 0; c < k; ++c) dot += q[i][c] * v[c];
                coef[i] = dot;
                for (std::size_t c = 0; c < k; ++c) v[c] -= dot * q[i][c];
            }
            double norm = 0;
            for (const double e : v) norm += e * e;
            if (!(norm > 1e-20 * before) || !(norm > 0)) continue;
            norm = std::sqrt(norm);
            for (double& e : v) e /= norm;
            coef.push_back(norm);
            q.push_back(std::move(v)), r.push_back(std::move(coef)), kept.push_back(j);
        }
        // R gamma = Q^T g, by back substitution (r[i] holds column i of R)
        const std::size_t m = q.size();
        std::vector<double> gamma(m);
        for (std::size_t i = 0; i < m; ++i) {
            double dot = 0;
            for (std::size_t c = 0; c < k; ++c) dot += q[i][c] * g[c];
            gamma[i] = dot;
        }
        for (std::size_t i = m; i-- > 0;) {
            for (std::size_t j = i + 1; j < m; ++j) gamma[i] -= r[j][i] * gamma[j];
            gamma[i] /= r[i][i];
        }
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t c = 0; c < k; ++c) y[c] -= gamma[i] * (dx_[kept[i]][c] + dg_[kept[i]][c]);
        return y;
    }

private:
    std::deque<std::vector<double>> dx_, dg_;
    std::vector<double> last_x_, last_g_;
};

// x moved onto the simplex: each value within [0, 1], their sum 1. F's image sums to 1 only up
// to rounding, and a set of one class gave a prior of 1 + 3e-14, which a result's reader refuses.
// Each clipped value divided by the clipped sum stays within [0, 1], as a correctly rounded
// quotient of a part by a whole at least as large.
std::vector<double> on_simplex(std::vector<double> x) {
    double total = 0;
    for (double& v : x) v = std::clamp(v, 0.0, 1.0), total += v;
    if (!(total > 0)) return std::vector<double>(x.size(), 1.0 / static_cast<double>(x.size()));
    for (double& v : x) v = std::min(1.0, v / total);
    return x;
}

}  // namespace

prior_estimate estimate_priors(const row_blocks& rows, const std::int32_t* predicted, std::size_t k,
                               const std::vector<double>& source_priors, const detail::shift_kernels& kernels,
                               const parallel_for& parallel, std::size_t max_iterations) {
    if (rows_in(rows) == 0) throw error("MLLS: no rows to estimate the class priors of");
    const em_passes F(rows, k, source_priors, kernels, parallel);
    prior_estimate out;
    std::vector<double> x = source_priors;
    em_step at = F(x);
    out.iterations = 1;
    anderson_history history;
    for (;;) {
        std::vector<double> g(k);
        double moved = 0;
        for (std::size_t c = 0; c < k; ++c) g[c] = at.image[c] - x[c], moved = std::max(moved, std::abs(g[c]));
        if (moved < em_tolerance) {
            out.converged = true;
            break;
        }
        if (out.iterations >= max_iterations) break;
        std::vector<double> y = history.next(x, g);
        double total = 0;
        for (std::size_t c = 0; c < k; ++c) {
            if (!(y[c] >= shrink_floor * at.image[c])) y[c] = shrink_floor * at.image[c];
            total += y[c];
        }
        for (double& v : y) v /= total;
        em_step tried = F(y);
        ++out.iterations;
        // The likelihood may not fall (beyond its rounding): else a plain EM step from x.
        const double slack = 1e-12 * (std::abs(at.log_likelihood) + static_cast<double>(rows_in(rows)));
        if (tried.log_likelihood >= at.log_likelihood - slack) {
            x = std::move(y), at = std::move(tried);
            continue;
        }
        history.clear();
        if (out.iterations >= max_iterations) break;
        x = at.image;
        at = F(x);
        ++out.iterations;
    }
    out.priors = on_simplex(at.image);
    F.accuracy(out.priors, predicted, out);
    return out;
}

}  // namespace mano

// The correctness model (correctness_model.hpp): the JSON form with its checks, and the penalized
// logistic fit.
#include "mano/calibration/correctness_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mano/calibration/evaluate.hpp"
#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

namespace {

double sigmoid(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }

// log(1 + e^x) without overflow
double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// logit of a mean confidence; kept finite where every row of a cell has confidence 1 in double
double logit_of(double confidence) {
    const double c = std::min(1 - 1e-12, std::max(1e-12, confidence));
    return std::log(c) - std::log1p(-c);
}

}  // namespace

double correctness_model::probability(double mean_confidence, std::size_t cls) const {
    double eta = intercept + slope * logit_of(mean_confidence);
    if (!class_effects.empty()) eta += class_effects[cls];
    return sigmoid(eta);
}

std::vector<double> correctness_model::cell_probabilities(const correctness_histogram& h,
                                                          const correctness_histogram* means) const {
    std::vector<double> f(correctness_bins * h.classes(), 0.0);
    for (std::size_t b = 0; b < correctness_bins; ++b)
        for (std::size_t c = 0; c < h.classes(); ++c) {
            const auto& x = means && means->cell(b, c).rows > 0 ? means->cell(b, c) : h.cell(b, c);
            if (x.rows > 0) f[b * h.classes() + c] = probability(x.confidence / static_cast<double>(x.rows), c);
        }
    return f;
}

double mean_probability(const correctness_model& m, const correctness_histogram& h) {
    const auto f = m.cell_probabilities(h);
    const double n = static_cast<double>(h.rows());
    if (n == 0) return 0;
    double sum = 0;
    for (std::size_t b = 0; b < correctness_bins; ++b)
        for (std::size_t c = 0; c < h.classes(); ++c) sum += static_cast<double>(h.cell(b, c).rows) * f[b * h.classes() + c];
    return sum / n;
}

nlohmann::json correctness_model::to_json() const {
    return {{"edges", correctness_edges()},
            {"classes", classes},
            {"intercept", intercept},
            {"slope", slope},
            {"class_effects", class_effects},
            {"ridge", ridge},
            {"iterations", iterations},
            {"rows", rows},
            {"residual_variance", residual_variance},
            {"set_residual_variances", set_residual_variances}};
}

correctness_model correctness_model::from_json(const nlohmann::json& j, std::size_t k) {
    const std::string what = "calibration: \"correctness\"";
    if (!j.is_object()) throw error(what + " must be an object");
    detail::check_known_keys(j, {"edges", "classes", "intercept", "slope", "class_effects", "ridge", "iterations", "rows",
                                 "residual_variance", "set_residual_variances"},
                             what);
    if (detail::numbers_of(j, "edges", what) != correctness_edges())
        throw error(what + ": its confidence bins are not this build's; run mano calibrate again with this mano");
    correctness_model m;
    m.classes = detail::count_of(j, "classes", what);
    if (m.classes != correctness_classes(k))
        throw error(what + ": \"classes\" must be " + std::to_string(correctness_classes(k)) + " for " + std::to_string(k) + " classes");
    m.intercept = detail::number_of(j, "intercept", what);
    m.slope = detail::number_of(j, "slope", what);
    m.class_effects = detail::numbers_of(j, "class_effects", what);
    m.ridge = detail::number_of(j, "ridge", what);
    m.iterations = detail::count_of(j, "iterations", what);
    m.rows = detail::count_of(j, "rows", what);
    m.residual_variance = detail::number_of(j, "residual_variance", what);
    m.set_residual_variances = detail::numbers_of(j, "set_residual_variances", what);
    bool sane = std::isfinite(m.intercept) && std::isfinite(m.slope) && std::isfinite(m.ridge) && m.ridge >= 0 &&
                m.class_effects.size() == (m.classes > 1 ? m.classes : 0) && !m.set_residual_variances.empty() &&
                m.residual_variance >= 0 && m.residual_variance <= 1;
    for (const double g : m.class_effects) sane = sane && std::isfinite(g);
    double sum = 0;
    for (const double v : m.set_residual_variances) sane = sane && v >= 0 && v <= 1, sum += v;
    sane = sane && std::abs(sum / static_cast<double>(m.set_residual_variances.size()) - m.residual_variance) <= 1e-9;
    if (!sane) throw error(what + ": the model is inconsistent (coefficients not finite, or residual variances out of [0, 1])");
    return m;
}

namespace {

// One pooled cell of the fit: the feature, the class cell, rows and correct rows.
struct fit_cell {
    double x;
    std::size_t cls;
    double rows, correct;
};

// Solves A d = b in place for a symmetric positive definite A (n x n, row-major) by Cholesky;
// false when A is not positive definite.
bool solve_spd(std::vector<double> a, std::vector<double>& b, std::size_t n) {
    for (std::size_t j = 0; j < n; ++j) {
        double d = a[j * n + j];
        for (std::size_t p = 0; p < j; ++p) d -= a[j * n + p] * a[j * n + p];
        if (!(d > 0)) return false;
        d = std::sqrt(d);
        a[j * n + j] = d;
        for (std::size_t i = j + 1; i < n; ++i) {
            double s = a[i * n + j];
            for (std::size_t p = 0; p < j; ++p) s -= a[i * n + p] * a[j * n + p];
            a[i * n + j] = s / d;
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        double s = b[i];
        for (std::size_t p = 0; p < i; ++p) s -= a[i * n + p] * b[p];
        b[i] = s / a[i * n + i];
    }
    for (std::size_t i = n; i-- > 0;) {
        double s = b[i];
        for (std::size_t p = i + 1; p < n; ++p) s -= a[p * n + i] * b[p];
        b[i] = s / a[i * n + i];
    }
    return true;
}

// The penalized negative log-likelihood at theta = [intercept, slope, class effects...].
double objective(const std::vector<fit_cell>& cells, const std::vector<double>& theta, double ridge, bool effects) {
    double total = 0;
    for (const auto& c : cells) {
        const double eta = theta[0] + theta[1] * c.x + (effects ? theta[2 + c.cls] : 0.0);
        total += c.rows * softplus(eta) - c.correct * eta;
    }
    for (std::size_t i = 2; i < theta.size(); ++i) total += 0.5 * ridge * theta[i] * theta[i];
    return total;
}

// The gradient and Hessian of the objective at theta (p = theta's size, the Hessian row-major).
void newton_system(const std::vector<fit_cell>& cells, const std::vector<double>& theta, double ridge, bool effects,
                   std::vector<double>& gradient, std::vector<double>& hessian) {
    const std::size_t p = theta.size();
    for (const auto& c : cells) {
        const double eta = theta[0] + theta[1] * c.x + (effects ? theta[2 + c.cls] : 0.0);
        const double q = sigmoid(eta);
        const double r = c.rows * q - c.correct;  // d objective / d eta
        const double w = c.rows * q * (1 - q);
        const std::size_t g = 2 + c.cls;
        gradient[0] += r;
        gradient[1] += r * c.x;
        hessian[0] += w;
        hessian[1] += w * c.x;
        hessian[p + 1] += w * c.x * c.x;
        if (effects) {
            gradient[g] += r;
            hessian[g] += w;
            hessian[p + g] += w * c.x;
            hessian[g * p + g] += w;
        }
    }
    hessian[p] = hessian[1];
    for (std::size_t i = 2; i < p; ++i) {
        hessian[i * p] = hessian[i];
        hessian[i * p + 1] = hessian[p + i];
        gradient[i] += ridge * theta[i];
        hessian[i * p + i] += ridge;
    }
    // a tiny ridge on the intercept and slope keeps the step finite where every cell has one x
    hessian[0] += 1e-9 * (1 + hessian[0]);
    hessian[p + 1] += 1e-9 * (1 + hessian[p + 1]);
}

// Var(c - f) over a set's rows, c in {0, 1} and f (the model's) constant within a cell, at most 1.
double residual_variance(const correctness_model& m, const correctness_histogram& h) {
    const auto f = m.cell_probabilities(h);
    double n = 0, sum = 0, sum_sq = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
        const auto& x = h.cell(i / m.classes, i % m.classes);
        const double good = static_cast<double>(x.correct), bad = static_cast<double>(x.rows - x.correct);
        n += static_cast<double>(x.rows);
        sum += good * (1 - f[i]) - bad * f[i];
        sum_sq += good * (1 - f[i]) * (1 - f[i]) + bad * f[i] * f[i];
    }
    const double mean = sum / n;
    return std::min(1.0, std::max(0.0, sum_sq / n - mean * mean));
}

}  // namespace

std::optional<correctness_model> fit_correctness(const std::vector<const correctness_histogram*>& sets,
                                                 std::vector<std::string>* notes) {
    const auto skip = [&](const std::string& why) -> std::optional<correctness_model> {
        if (notes) notes->push_back("correctness model (audits): not fitted: " + why);
        return std::nullopt;
    };
    if (sets.empty()) return skip("no calibration sets");
    const std::size_t k = sets.front()->k();
    correctness_model m;
    m.classes = sets.front()->classes();
    const bool effects = m.classes > 1;
    std::vector<fit_cell> cells;
    double rows = 0, correct = 0;
    for (const auto* h : sets) {
        if (h->k() != k) return skip("the sets have different numbers of classes");
        if (!h->labeled) return skip("a set's histogram has no labels");
        for (std::size_t b = 0; b < correctness_bins; ++b)
            for (std::size_t c = 0; c < m.classes; ++c) {
                const auto& x = h->cell(b, c);
                if (x.rows == 0) continue;
                const double n = static_cast<double>(x.rows);
                cells.push_back({logit_of(x.confidence / n), c, n, static_cast<double>(x.correct)});
                rows += n;
                correct += static_cast<double>(x.correct);
            }
    }
    if (correct == 0 || correct == rows) return skip(correct == 0 ? "no calibration row is correct" : "every calibration row is correct");
    const std::size_t p = 2 + (effects ? m.classes : 0);
    std::vector<double> theta(p, 0.0);
    theta[0] = std::log(correct / (rows - correct));
    double current = objective(cells, theta, m.ridge, effects);
    constexpr std::size_t max_iterations = 100;
    bool converged = false;
    for (std::size_t it = 1; it <= max_iterations && !converged; ++it) {
        std::vector<double> step(p, 0.0), hessian(p * p, 0.0);
        newton_system(cells, theta, m.ridge, effects, step, hessian);
        if (!solve_spd(hessian, step, p)) break;
        // Newton's step, halved until the objective does not rise
        double scale = 1;
        std::vector<double> next(p);
        double value = 0;
        for (int halving = 0; halving < 40; ++halving, scale /= 2) {
            for (std::size_t i = 0; i < p; ++i) next[i] = theta[i] - scale * step[i];
            value = objective(cells, next, m.ridge, effects);
            if (value <= current + 1e-12 * std::abs(current)) break;
        }
        double largest = 0;
        for (std::size_t i = 0; i < p; ++i) largest = std::max(largest, std::abs(next[i] - theta[i]));
        theta = next;
        current = value;
        m.iterations = it;
        converged = largest < 1e-10 || !(std::isfinite(current));
    }
    for (const double t : theta)
        if (!std::isfinite(t)) return skip("Newton's method diverged");
    if (!converged) return skip("Newton's method did not converge in " + std::to_string(max_iterations) + " steps");
    m.intercept = theta[0];
    m.slope = theta[1];
    m.class_effects.assign(theta.begin() + 2, theta.end());
    m.rows = static_cast<std::uint64_t>(rows);
    for (const auto* h : sets) m.set_residual_variances.push_back(residual_variance(m, *h));
    double total = 0;
    for (const double v : m.set_residual_variances) total += v;
    m.residual_variance = total / static_cast<double>(m.set_residual_variances.size());
    return m;
}

std::optional<correctness_model> fit_correctness(const std::vector<labeled_set>& sets, std::vector<std::string>* notes) {
    std::vector<const correctness_histogram*> histograms;
    for (const auto& s : sets)
        if (s.scores.correctness && s.scores.correctness->labeled) histograms.push_back(&*s.scores.correctness);
    if (histograms.empty()) return std::nullopt;
    if (histograms.size() != sets.size()) {
        if (notes)
            notes->push_back("correctness model (audits): not fitted: " + std::to_string(sets.size() - histograms.size()) +
                             " of the sets have no labeled correctness histogram");
        return std::nullopt;
    }
    return fit_correctness(histograms, notes);
}

}  // namespace mano

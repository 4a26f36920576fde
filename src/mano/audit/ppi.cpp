// Audit mode (audit.hpp): PPI on the calibration's correctness model, Wilson with labels alone,
// and the labels needed for an interval width.
#include "mano/audit/ppi.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "mano/calibration/calibration.hpp"
#include "mano/calibration/correctness_model.hpp"
#include "mano/scan/correctness_histogram.hpp"
#include "mano/base/error.hpp"
#include "mano/calibration/student_t.hpp"
#include "mano/scan/result.hpp"
#include "mano/base/text.hpp"
#include "mano/calibration/interval_level.hpp"

namespace mano {

nlohmann::json audit_estimate::to_json() const {
    nlohmann::json j = {{"n", n}, {"accuracy", accuracy}, {"interval", {lower, upper}}, {"method", method},
                        {"wilson", {wilson_lower, wilson_upper}}};
    if (!reason.empty()) j["reason"] = reason;
    if (!warnings.empty()) j["warnings"] = warnings;
    return j;
}

nlohmann::json labels_needed::to_json() const { return {{"width", width}, {"n", n}, {"method", method}}; }

namespace {

double clip01(double x) { return std::min(1.0, std::max(0.0, x)); }

double z_of(double level) {
    check_interval_level(level);
    return normal_quantile(0.5 + level / 2);
}

double wilson_width(double p, double n, double z) {
    const double z2 = z * z;
    return 2 * z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
}

// The t quantile of the PPI interval with n audited rows.
double t_of(double level, double n) { return student_t_quantile(0.5 + level / 2, n - 1); }

// The expected PPI width with n of N rows audited, V the calibration's mean Var(c - f) (ppi.hpp).
double ppi_width(double v, double n, double big_n, double level) {
    const double w = audit_pseudo_rows, v_n = ((n - 1) * v + w) / (n + 2 * w - 1);
    return 2 * t_of(level, n) * std::sqrt(std::max(0.0, 1 - n / big_n) * v_n / n);
}

// The least n in [low, high] with width(n) <= width, width falling with n; high + 1 when none.
template <class F>
std::size_t least_n(std::size_t low, std::size_t high, double width, const F& width_of) {
    if (width_of(static_cast<double>(high)) > width) return high + 1;
    while (low < high) {
        const std::size_t mid = low + (high - low) / 2;
        if (width_of(static_cast<double>(mid)) <= width) high = mid;
        else low = mid + 1;
    }
    return low;
}

// The whole set's cells with rows, for the score set (ppi.hpp): rows, f and logit(f) of each, and
// the mean of f over the rows.
struct set_cells {
    std::vector<double> rows, f, eta;
    double total = 0, mean = 0;
};

set_cells cells_of(const correctness_model& model, const correctness_histogram& h) {
    set_cells s;
    const auto f = model.cell_probabilities(h);
    for (std::size_t i = 0; i < f.size(); ++i) {
        const double rows = static_cast<double>(h.cell(i / h.classes(), i % h.classes()).rows);
        if (rows == 0) continue;
        const double p = std::min(1 - audit_score_f_clamp, std::max(audit_score_f_clamp, f[i]));
        s.rows.push_back(rows);
        s.f.push_back(f[i]);
        s.eta.push_back(std::log(p) - std::log1p(-p));
        s.total += rows;
        s.mean += rows * f[i];
    }
    s.mean /= s.total;
    return s;
}

double sigmoid(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }

// theta0 and V at the intercept shift delta: the mean of f_d = sigmoid(logit f + delta) over the
// set, and the variance of c - f were each row correct with probability f_d.
std::pair<double, double> shifted_moments(const set_cells& s, double delta) {
    double mean = 0, spread = 0;
    for (std::size_t i = 0; i < s.rows.size(); ++i) {
        const double p = sigmoid(s.eta[i] + delta), gap = p - s.f[i];
        mean += s.rows[i] * p;
        spread += s.rows[i] * (p * (1 - p) + gap * gap);
    }
    mean /= s.total;
    const double drift = mean - s.mean;
    return {mean, std::max(0.0, spread / s.total - drift * drift)};
}

// The hull of {theta0 : (theta - theta0)^2 <= k V(theta0)} over the shifts (ppi.hpp): the first and
// last of a grid of shifts inside it, each refined by bisection against its outer neighbour.
std::optional<std::pair<double, double>> model_score_set(const set_cells& s, double theta, double k) {
    const auto inside = [&](double delta) {
        const auto [t0, v] = shifted_moments(s, delta);
        return (theta - t0) * (theta - t0) <= k * v;
    };
    const double step = 2 * audit_score_shift_range / static_cast<double>(audit_score_grid);
    const auto at = [&](std::size_t j) { return -audit_score_shift_range + step * static_cast<double>(j); };
    std::optional<std::size_t> first, last;
    for (std::size_t j = 0; j <= audit_score_grid; ++j)
        if (inside(at(j))) {
            if (!first) first = j;
            last = j;
        }
    if (!first) return std::nullopt;
    // the boundary between an inside shift and its outer neighbour, which is outside
    const auto refine = [&](double in, double out) {
        for (int i = 0; i < 60; ++i) {
            const double mid = (in + out) / 2;
            (inside(mid) ? in : out) = mid;
        }
        return shifted_moments(s, in).first;
    };
    const double lo = *first == 0 ? shifted_moments(s, at(0)).first : refine(at(*first), at(*first - 1));
    const double hi = *last == audit_score_grid ? shifted_moments(s, at(*last)).first : refine(at(*last), at(*last + 1));
    return std::make_pair(lo, hi);
}

}  // namespace

std::pair<double, double> wilson_interval(std::size_t correct, std::size_t n, double level) {
    if (n == 0) throw error("a Wilson interval needs at least one labeled row");
    if (correct > n) throw error("a Wilson interval: more correct rows than rows");
    const double z = z_of(level), z2 = z * z, m = static_cast<double>(n);
    const double p = static_cast<double>(correct) / m;
    const double center = (p + z2 / (2 * m)) / (1 + z2 / m);
    const double half = wilson_width(p, m, z) / 2;
    return {clip01(center - half), clip01(center + half)};
}

audit_estimate audit(const calibration& c, const result& all, const result& audited, double level) {
    z_of(level);  // checks the level
    if (all.k != c.k || audited.k != c.k)
        throw error("audit: the logits have " + std::to_string(all.k != c.k ? all.k : audited.k) +
                    " classes but the calibration was fitted on logits with " + std::to_string(c.k));
    if (!audited.accuracy)
        throw error("audit: the audited rows were scored without their labels; score them with their labels and the "
                    "calibration's scoring options");
    if (audited.n < 2) throw error("audit: " + std::to_string(audited.n) + " labeled row; an audit needs at least 2");
    if (audited.n > all.n)
        throw error("audit: " + std::to_string(audited.n) + " audited rows but the set has " + std::to_string(all.n) +
                    "; audit rows of this set");
    audit_estimate out;
    out.n = audited.n;
    out.correct = static_cast<std::size_t>(std::llround(*audited.accuracy * static_cast<double>(audited.n)));
    std::tie(out.wilson_lower, out.wilson_upper) = wilson_interval(out.correct, out.n, level);
    if (!c.correctness || out.n < audit_min_ppi_labels) {
        out.method = "wilson";
        out.reason = c.correctness ? audit_wilson_reason_few : audit_wilson_reason_no_model;
        out.accuracy = static_cast<double>(out.correct) / static_cast<double>(out.n);
        out.lower = out.wilson_lower;
        out.upper = out.wilson_upper;
        return out;
    }
    if (!all.correctness || !audited.correctness || !audited.correctness->labeled)
        throw error(std::string("audit: ") + (all.correctness ? "the audited rows were" : "the set was") +
                    " scored without the correctness histogram (option \"correctness_histogram\"); score " +
                    (all.correctness ? "them with their labels" : "it") + " and the calibration's scoring options");
    const auto& h = *audited.correctness;
    const auto& model = *c.correctness;
    const double whole_mean = mean_probability(model, *all.correctness);
    const auto f = model.cell_probabilities(h, &*all.correctness);
    // c - f over the audited rows (c is 1 on the cell's correct rows, 0 on the others), and f
    double sum = 0, sum_sq = 0, sum_f = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
        const auto& x = h.cell(i / h.classes(), i % h.classes());
        const double good = static_cast<double>(x.correct), bad = static_cast<double>(x.rows - x.correct);
        sum += good * (1 - f[i]) - bad * f[i];
        sum_sq += good * (1 - f[i]) * (1 - f[i]) + bad * f[i] * f[i];
        sum_f += static_cast<double>(x.rows) * f[i];
    }
    const double n = static_cast<double>(audited.n), big_n = static_cast<double>(all.n);
    const double theta = whole_mean + sum / n;
    // the variance with w correct and w wrong pseudo-rows at the audited mean f (residuals 1 - f, -f)
    const double w = audit_pseudo_rows, f_mean = sum_f / n;
    const double up = 1 - f_mean, down = -f_mean, m = (sum + w * (up + down)) / (n + 2 * w);
    const double squares = sum_sq - 2 * m * sum + n * m * m + w * ((up - m) * (up - m) + (down - m) * (down - m));
    const double s2 = std::max(0.0, squares / (n + 2 * w - 1));
    const double half = t_of(level, n) * std::sqrt((1 - n / big_n) * s2 / n);
    double lower = theta - half, upper = theta + half;
    // joined with the score set at the model's variance for each candidate accuracy (ppi.hpp)
    const double z = z_of(level);
    if (const auto score = model_score_set(cells_of(model, *all.correctness), theta, z * z * (1 - n / big_n) / n)) {
        lower = std::min(lower, score->first);
        upper = std::max(upper, score->second);
    }
    out.accuracy = clip01(theta);
    out.lower = clip01(lower);
    out.upper = clip01(upper);
    return out;
}

std::optional<labels_needed> labels_for_width(const calibration& c, std::size_t n_rows, double lower, double upper,
                                              double level, double width) {
    if (!(upper - lower > width) || n_rows < 2) return std::nullopt;  // an audit needs 2 labeled rows
    const double z = z_of(level), big_n = static_cast<double>(n_rows);
    labels_needed out;
    out.width = width;
    out.method = "wilson";
    if (n_rows < audit_min_ppi_labels) {  // too few rows for PPI: label them all
        out.n = n_rows;
        return out;
    }
    const double p_worst = std::min(upper, std::max(lower, 0.5));
    const auto wilson_of = [&](double n) { return wilson_width(p_worst, n, z); };
    const std::size_t few = audit_min_ppi_labels - 1;  // Wilson up to here, with or without a model
    std::size_t n = least_n(2, c.correctness ? few : n_rows, width, wilson_of);
    if (c.correctness && n > few) {
        out.method = "ppi";
        const double v = c.correctness->residual_variance;
        n = least_n(audit_min_ppi_labels, n_rows, width, [&](double m) { return ppi_width(v, m, big_n, level); });
    }
    out.n = std::min(n_rows, std::max<std::size_t>(2, n));
    return out;
}

}  // namespace mano

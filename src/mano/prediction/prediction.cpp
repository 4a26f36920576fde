// What a calibration predicts (prediction.hpp): the interval of one method's line at a score,
// the options to score a new set with, the recommended estimate with its class-shift check, and
// the coverage of intervals over labeled sets.
#include "mano/prediction/prediction.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "mano/shift/label_shift.hpp"
#include "mano/calibration/student_t.hpp"
#include "mano/calibration/interval_level.hpp"
#include "mano/prediction/own_accuracy.hpp"
#include "mano/calibration/detail/labeled_sets.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

namespace {

using detail::clip01;

// The estimate and its interval [lower, upper] (unclipped) within [0, 1], where the truth lies.
// An interval that overlaps [0, 1] is clipped; one wholly outside it (the line far beyond the
// scores it was fitted on: a score of 1e308, uniform logits) would clip to a single point, a
// 90% interval of width 0, so it keeps its width at the nearer end instead.
void bound(prediction& p, double fitted, double lower, double upper) {
    p.accuracy = clip01(fitted);
    p.out_of_range = fitted < 0 ? -1 : fitted > 1 ? 1 : 0;
    const double width = std::min(1.0, upper - lower);
    if (upper < 0) {
        p.lower = 0, p.upper = width;
    } else if (lower > 1) {
        p.lower = 1 - width, p.upper = 1;
    } else {
        p.lower = clip01(lower), p.upper = clip01(upper);
    }
}

// bound() for a set of `rows` rows (0: the population the line speaks of), its interval first
// widened to the quantiles of the set's own accuracy, the population's accuracy drawn from the
// symmetric interval fitted -/+ half's own spread (t with `dof`, 0: normal; own_accuracy.hpp); an
// interval wholly outside [0, 1] is left to bound(). The candidates are made only for a set.
void own_set(prediction& p, double fitted, double lower, double upper, double half, double dof, std::size_t rows,
             double level) {
    if (rows > 0 && upper >= 0 && lower <= 1) {
        const auto candidates = interval_candidates(fitted, half, level, dof);
        const auto ends = own_accuracy_ends(candidates, static_cast<double>(candidates.size()), rows, level);
        lower = std::min(lower, ends.first);
        upper = std::max(upper, ends.second);
    }
    bound(p, fitted, lower, upper);
}

}  // namespace

nlohmann::json prediction::to_json() const {
    nlohmann::json j = {{"score", score}};
    if (score_se) j["se"] = *score_se;
    j["accuracy"] = accuracy;
    j["interval"] = {lower, upper};
    j["slope"] = slope;
    j["extrapolated"] = extrapolated;
    if (out_of_range) j["out_of_range"] = out_of_range < 0 ? "below" : "above";
    return j;
}

namespace {

// A method's line at a score: its link-scale abscissa x, the line there and the accuracy it maps
// to, and the slope as accuracy per score at this score (the delta method for the score's noise).
struct line_point {
    double x, line, fitted, slope, x_density;
};

double normal_density(double z) { return std::exp(-z * z / 2) / std::sqrt(2 * 3.141592653589793); }

line_point line_at(const method_calibration& c, double score) {
    line_point at;
    at.x = to_link(c.link, score);
    at.line = c.fit.slope * at.x + c.fit.intercept;
    at.fitted = from_link(c.link, at.line);
    at.x_density = normal_density(at.x);
    at.slope = c.link == link::probit ? c.fit.slope * normal_density(at.line) / at.x_density : c.fit.slope;
    return at;
}

// The folds' held-out residuals, weighed (label-shift copies: an original weighs R, a copy 1):
// each calibration set's fold line at x moved down and up by that set's |residual|, with the
// jackknife+ ends at `level` where there are enough of them (Barber et al. 2021).
struct fold_spread {
    double total = 0, residual_sq = 0, with_new = 0;
    std::optional<double> lower_end, upper_end;
    std::vector<accuracy_candidate> candidates;  // of the population's accuracy, for a set's own
};

fold_spread spread_of_folds(const method_calibration& c, double x, std::size_t rows, double level) {
    fold_spread s;
    std::size_t residual_count = 0;
    struct end {
        double value, weight;
    };
    std::vector<end> low, high;
    for (const auto& fold : c.folds)
        for (std::size_t i = 0; i < fold.residuals.size(); ++i) {
            const double w = fold.weight(i), r = std::abs(fold.residuals[i]);
            s.residual_sq += w * r * r, s.total += w, ++residual_count;
            const double at = from_link(c.link, fold.slope * x + fold.intercept);
            low.push_back({at - r, w});
            high.push_back({at + r, w});
            if (rows > 0) {
                s.candidates.push_back({at - r, w / 2});
                s.candidates.push_back({at + r, w / 2});
            }
        }
    // the new set weighs as much as a set on average, so that equal weights give the
    // ceil(level (m + 1))-th smallest upper end and the floor((1 - level)(m + 1))-th lower one
    s.with_new = s.total + (residual_count ? s.total / static_cast<double>(residual_count) : 0);
    const auto by_value = [](const end& a, const end& b) { return a.value < b.value; };
    std::sort(low.begin(), low.end(), by_value);
    std::sort(high.begin(), high.end(), by_value);
    const double upper_share = level * s.with_new - 1e-9 * s.with_new, lower_share = (1 - level) * s.with_new + 1e-9 * s.with_new;
    double cumulative = 0;
    for (const auto& e : high)
        if ((cumulative += e.weight) >= upper_share) {
            s.upper_end = e.value;
            break;
        }
    cumulative = 0;
    for (const auto& e : low) {
        if ((cumulative += e.weight) > lower_share) break;
        s.lower_end = e.value;
    }
    return s;
}

// Too few sets for jackknife+ at this level: a t interval whose spread is the root mean square of
// the held-out-group residuals, with a degree of freedom per group less one.
void fold_t_interval(prediction& p, const method_calibration& c, const line_point& at, const fold_spread& s,
                     std::size_t rows, double level) {
    const double folds = static_cast<double>(c.folds.size());
    double variance = s.residual_sq / s.total;
    if (p.score_se) variance += at.slope * at.slope * *p.score_se * *p.score_se;
    const double half = student_t_quantile(0.5 + level / 2, folds - 1) * std::sqrt(variance);
    own_set(p, at.fitted, at.fitted - half, at.fitted + half, half, folds - 1, rows, level);
}

// jackknife+'s ends; for a set of `rows` rows, widened to the quantiles of its own accuracy
// (own_accuracy.hpp); the score's own sampling noise added in quadrature to each side.
void jackknife_interval(prediction& p, const line_point& at, const fold_spread& s, double t, std::size_t rows,
                        double level) {
    double lower_end = *s.lower_end, upper_end = *s.upper_end;
    if (rows > 0) {
        const auto ends = own_accuracy_ends(s.candidates, s.with_new, rows, level);
        lower_end = std::min(lower_end, ends.first);
        upper_end = std::max(upper_end, ends.second);
    }
    double lower = std::min(lower_end, at.fitted);
    double upper = std::max(upper_end, at.fitted);
    if (p.score_se) {
        const double noise = t * std::abs(at.slope) * *p.score_se;
        lower = at.fitted - std::hypot(at.fitted - lower, noise);
        upper = at.fitted + std::hypot(upper - at.fitted, noise);
    }
    bound(p, at.fitted, lower, upper);
}

// No folds (a calibration written without them): the least-squares prediction interval of a new
// set at the score, plus the score's own sampling variance (on the link's scale, mapped back at
// both ends).
void least_squares_interval(prediction& p, const method_calibration& c, const line_point& at, double t,
                            std::size_t rows, double level) {
    const auto& f = c.fit;
    const double n = static_cast<double>(f.n);
    const double dx = at.x - c.score_mean;
    double variance = f.residual_se * f.residual_se * (1.0 + 1.0 / n + (c.score_sxx > 0 ? dx * dx / c.score_sxx : 0.0));
    const double x_se = p.score_se ? *p.score_se * (c.link == link::probit ? 1 / at.x_density : 1.0) : 0.0;
    variance += f.slope * f.slope * x_se * x_se;
    const double half = t * std::sqrt(variance);
    const double lower = from_link(c.link, at.line - half), upper = from_link(c.link, at.line + half);
    own_set(p, at.fitted, lower, upper, std::max(at.fitted - lower, upper - at.fitted), n - 2, rows, level);
}

}  // namespace

prediction predict(const method_calibration& c, double score, std::optional<double> score_se, double level, std::size_t rows) {
    check_interval_level(level);
    if (!std::isfinite(score)) throw error(std::string(method_name(c.m)) + ": the score is not a finite number");
    if (c.fit.n < detail::min_sets) throw error(std::string(method_name(c.m)) + ": the calibration has fewer than 3 sets");
    prediction p;
    p.score = score;
    p.score_se = score_se && std::isfinite(*score_se) ? score_se : std::nullopt;
    const auto at = line_at(c, score);
    p.slope = at.slope;
    p.extrapolated = at.x < c.fit.x_min || at.x > c.fit.x_max;
    const double t = student_t_quantile(0.5 + level / 2, static_cast<double>(c.fit.n) - 2);
    if (c.folds.empty()) {
        least_squares_interval(p, c, at, t, rows, level);
        return p;
    }
    const auto spread = spread_of_folds(c, at.x, rows, level);
    if (spread.upper_end && spread.lower_end) jackknife_interval(p, at, spread, t, rows, level);
    else fold_t_interval(p, c, at, spread, rows, level);
    return p;
}

const char* regime_name(regime r) noexcept { return r == regime::label_shift ? "label_shift" : "general"; }

prediction predict_label_shift(double accuracy, double se, double class_se, const std::vector<double>& residuals, double level,
                               std::size_t rows) {
    check_interval_level(level);
    prediction p;
    p.score = accuracy;
    p.score_se = se;
    p.slope = 1;  // the score is the accuracy
    // the ceil(level (m + 1))-th smallest |residual|, the largest when there are too few
    std::vector<double> spread;
    for (const double r : residuals) spread.push_back(std::abs(r));
    std::sort(spread.begin(), spread.end());
    double q = 0;
    if (!spread.empty()) {
        const auto rank = static_cast<std::size_t>(std::ceil(level * static_cast<double>(spread.size() + 1) - 1e-9));
        q = spread[std::min(rank, spread.size()) - 1];
    }
    const double z = normal_quantile(0.5 + level / 2);
    const double half = std::max(label_shift_interval_floor, std::hypot(q, z * se, z * class_se));
    own_set(p, accuracy, accuracy - half, accuracy + half, half, 0, rows, level);
    return p;
}

namespace {

// The error of MLLS's accuracy at `priors` from the source's calibration of each class, learned on
// that class's source rows: about sqrt(c_y (1 - c_y) / n_y) for class y (c_y its rows' mean
// calibrated confidence, n_y their number), weighed by the prior, independent across classes.
// Small for a mix of many classes, the whole of one class's for a set of that class alone: on sets
// of 65-95% one class (bench/dominant_class.py) MLLS erred by up to 0.04 where the source's
// resampled residuals gave intervals of -/+ 0.02.
double class_calibration_se(const label_shift_model& model, const std::vector<double>& priors, std::size_t source_rows) {
    const double rows = static_cast<double>(std::min(source_rows, label_shift_fit_max_rows));
    double variance = 0;
    for (std::size_t y = 0; y < priors.size(); ++y) {
        const double c = model.confidence_by_class[y];
        variance += priors[y] * priors[y] * c * (1 - c) / (model.priors[y] * rows);
    }
    return std::sqrt(variance);
}

// The calibration was fitted on rows of one input kind: a set of another is on another scale.
void check_input(const calibration& c, input_kind input) {
    if (input != c.opts.input)
        throw error(std::string("the set is read as input ") + input_kind_name(input) +
                    " but the calibration was fitted on input " + input_kind_name(c.opts.input) +
                    "; read the set as the calibration's sets were read (input " + input_kind_name(c.opts.input) + ")");
}

}  // namespace

options scoring_options(const calibration& c, std::size_t n, std::size_t columns, input_kind input,
                        std::vector<method>* left_out) {
    check_input(c, input);
    const std::size_t k = classes_of(input, columns);
    if (k != c.k)
        throw error("the logits have " + std::to_string(k) + " classes but the calibration was fitted on logits with " +
                    std::to_string(c.k));
    options o = c.opts;
    o.correctness_histogram = c.correctness.has_value();
    o.methods.clear();
    for (const method m : c.opts.methods) {
        const bool bounded = info_of(m).cost != method_cost::keeps_rows ||
                             (n > 0 && k <= keeps_rows_max_k &&
                              static_cast<double>(n) * static_cast<double>(k) <= static_cast<double>(keeps_rows_max_logits));
        if (bounded) o.methods.push_back(m);
        else if (left_out) left_out->push_back(m);
    }
    return o;
}

namespace {

// MaNo's score on the calibration's branch, and whether the set took that branch: a per-set
// softrun result serves through its variants when it took the other one.
struct branch_match {
    std::optional<double> mano_value;
    bool same = true;
};

branch_match on_calibration_branch(const calibration& c, const result& r) {
    branch_match b;
    if (!r.mano || c.opts.norm == normalization::softrun) return b;
    const std::string want = variant_name(c.opts.norm, c.opts.taylor_order);
    const auto& m = *r.mano;
    b.same = variant_name(m.used, m.taylor_order) == want && m.p == c.opts.p;
    if (b.same) b.mano_value = r.value(method::mano);
    else if (m.variants.count(want) && m.p == c.opts.p) b.mano_value = m.variants.at(want);
    else
        throw error("MaNo was scored with normalization " + variant_name(m.used, m.taylor_order) + " (p = " +
                    number_text(m.p) + ") but the calibration uses " + want + " (p = " + number_text(c.opts.p) +
                    "); score the set with the calibration's options");
    return b;
}

// Each calibrated method's prediction at the set's value; the methods that read the softrun rows
// (the table's on_softrun_branch) only where the set took the calibration's branch.
void predict_methods(set_prediction& out, const calibration& c, const result& r, double level) {
    const auto branch = on_calibration_branch(c, r);
    for (auto v : r.values()) {
        const method_calibration* found = calibration_of(c, v.m);
        if (!found) continue;
        if (info_of(v.m).softrun_variants && branch.mano_value && *branch.mano_value != v.value) {
            v.value = *branch.mano_value;
            v.se.reset();
        }
        if (info_of(v.m).on_softrun_branch && !branch.same) continue;
        out.methods[v.m] = predict(*found, v.value, v.se, level, r.n);
    }
}

// How far the set's predicted class proportions are from the calibration's, against the range
// the calibration sets spanned at this confidence.
shift_check class_shift_check(const calibration& c, const result& r) {
    shift_check shift;
    shift.distance = class_shift(r, c.shift->proportions);
    shift.range = c.shift->range_at(*r.confidence);
    // the distance two samples of n rows from the same proportions have on average: beyond
    // the range by less than this is sampling noise, not a shift
    for (const double p : c.shift->proportions)
        shift.allowance += 0.5 * std::sqrt(2 * p * (1 - p) / (std::acos(-1.0) * static_cast<double>(r.n)));
    shift.outside = shift.distance > shift.range + shift.allowance;
    return shift;
}

// The label-shift regime (the table's estimates_label_shift method, on the model it fitted on the
// source): its estimate where the set passes the check; where the evidence cannot vouch for one
// regime (label_shift_check.hpp), the estimate's interval holds the other regime's too.
void label_shift_regime(set_prediction& out, const calibration& c, const result& r, double level,
                        const std::optional<set_estimate>& general) {
    const method m = label_shift_method();
    const auto& value = r[m];
    if (!value || !r.mlls || !out.methods.count(m) || !c.opts.source || !c.opts.source->fitted.contains(method_name(m)))
        return;
    const auto model = label_shift_model::from_json(c.opts.source->fitted.at(method_name(m)), c.k);
    out.label_shift = check_label_shift(*r.mlls, model, r.n);
    const auto& check = *out.label_shift;
    const double class_se = class_calibration_se(model, r.mlls->priors, c.opts.source->n);
    const set_estimate own{m, predict_label_shift(value->value, value->se.value_or(0), class_se, model.residuals, level, r.n),
                           regime::label_shift};
    if (check.passed) out.estimate = own;
    if (general && !check.reason.empty()) {
        const auto& other = check.passed ? general->value : own.value;
        auto& v = out.estimate->value;
        v.lower = std::min(v.lower, other.lower);
        v.upper = std::max(v.upper, other.upper);
    }
}

}  // namespace

set_prediction predict(const calibration& c, const result& r, double level) {
    check_input(c, r.input);
    if (r.k != c.k)
        throw error("the logits have " + std::to_string(r.k) + " classes but the calibration was fitted on logits with " +
                    std::to_string(c.k));
    set_prediction out;
    out.n = r.n;
    out.k = r.k;
    out.level = level;
    predict_methods(out, c, r, level);
    out.accuracy = r.accuracy;
    if (c.shift && r.predicted.size() == c.k && r.confidence) out.shift = class_shift_check(c, r);
    // the regime: the label-shift method on a label-shift-like set, else the calibrated method with
    // the lowest leave-one-group-out error that this result has (the class-shift check above is
    // information)
    std::optional<set_estimate> general;
    for (const auto* mc : detail::by_held_out_error(c.methods))
        if (out.methods.count(mc->m)) {
            general = set_estimate{mc->m, out.methods.at(mc->m), regime::general};
            break;
        }
    out.estimate = general;
    label_shift_regime(out, c, r, level, general);
    if (out.estimate)
        out.labels_for_width = labels_for_width(c, r.n, out.estimate->value.lower, out.estimate->value.upper, level);
    out.too_small = r.n < min_judged_rows;
    return out;
}

nlohmann::json set_prediction::to_json() const {
    nlohmann::json by_method = nlohmann::json::object();
    for (const auto& [m, p] : methods) by_method[method_name(m)] = p.to_json();
    nlohmann::json out = {{"n", n}, {"k", k}, {"level", level}, {"methods", by_method}};
    if (accuracy) out["accuracy"] = *accuracy;
    if (shift)
        out["shift"] = {{"distance", shift->distance}, {"range", shift->range}, {"allowance", shift->allowance},
                        {"outside", shift->outside}};
    if (label_shift) {
        auto& j = out["label_shift"] = {{"gap", label_shift->gap}, {"allowance", label_shift->allowance},
                                        {"max_prior", label_shift->max_prior}, {"passed", label_shift->passed}};
        if (const auto& d = label_shift->dominant) j["dominant"] = {{"class", d->label}, {"gap", d->gap}, {"se", d->se}};
        if (!label_shift->reason.empty()) j["reason"] = label_shift->reason;
    }
    if (estimate) {
        out["estimate"] = {{"method", method_name(estimate->m)},
                           {"accuracy", estimate->value.accuracy},
                           {"interval", {estimate->value.lower, estimate->value.upper}},
                           {"extrapolated", estimate->value.extrapolated},
                           {"regime", regime_name(estimate->regime)}};
        if (estimate->value.out_of_range) out["estimate"]["out_of_range"] = estimate->value.out_of_range < 0 ? "below" : "above";
    }
    if (audit) out["audit"] = audit->to_json();
    if (labels_for_width) out["labels_for_width"] = labels_for_width->to_json();
    if (too_small) out["too_small"] = {{"rows", n}, {"minimum_rows", min_judged_rows}};
    return out;
}

set_prediction predict_audited(const calibration& c, const result& all, const result& audited, double level) {
    set_prediction p = predict(c, all, level);
    p.audit = audit(c, all, audited, level);
    return p;
}

coverage_report coverage(const std::vector<set_prediction>& predictions) {
    coverage_report out;
    const auto add = [](interval_coverage& cov, const prediction& p, double truth) {
        cov.covered += p.lower <= truth && truth <= p.upper ? 1 : 0;
        cov.sets += 1;
        cov.mae += std::abs(p.accuracy - truth);
        // (sum + upper) - lower, the order mano has always summed in: reported widths stay bit for bit
        cov.width = cov.width + p.upper - p.lower;
    };
    for (const auto& s : predictions) {
        if (!s.accuracy) continue;
        for (const auto& [m, p] : s.methods) add(out.methods[m], p, *s.accuracy);
        if (s.estimate) {
            if (!out.estimate) out.estimate.emplace();
            add(*out.estimate, s.estimate->value, *s.accuracy);
        }
    }
    const auto finish = [](interval_coverage& cov) {
        const double sets = static_cast<double>(cov.sets);
        cov.rate = static_cast<double>(cov.covered) / sets;
        cov.mae /= sets;
        cov.width /= sets;
    };
    for (auto& [m, cov] : out.methods) finish(cov);
    if (out.estimate) finish(*out.estimate);
    return out;
}

nlohmann::json interval_coverage::to_json() const {
    return {{"covered", covered}, {"sets", sets}, {"rate", rate}, {"mae", mae}, {"width", width}};
}

nlohmann::json coverage_report::to_json() const {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [m, cov] : methods) out[method_name(m)] = cov.to_json();
    if (estimate) out["estimate"] = estimate->to_json();
    return out;
}
}  // namespace mano

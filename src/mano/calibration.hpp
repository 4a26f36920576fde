#pragma once
// From scores to accuracy (docs/cli.md, "mano calibrate and mano predict"): evaluate estimators
// over labeled shifted sets, fit a per-method linear calibration, and predict an unlabeled set's
// accuracy with an interval.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/audit.hpp"
#include "mano/correctness.hpp"
#include "mano/evaluation.hpp"
#include "mano/options.hpp"
#include "mano/result.hpp"

namespace mano {

// One labeled test set: its scores, with result::accuracy holding the true accuracy.
struct labeled_set {
    std::string name;
    std::string group;  // optional, e.g. the corruption type; "" = none
    result scores;
};

// The paper's protocol over many sets. Methods are those present in every set.
struct evaluation_report {
    std::vector<labeled_set> sets;
    std::map<method, evaluation_summary> summary;  // over all the sets
    std::map<std::string, std::map<method, evaluation_summary>> groups;  // groups with at least 3 sets
    std::vector<std::string> notes;  // why a method has no summary, e.g. constant scores

    // {"sets": [{"name", "group"?, "n", "k", "accuracy", "methods"}], "summary": {method:
    // summary_json}, "groups"?: {group: {method: summary_json}}, "notes": [...]}
    nlohmann::json to_json() const;
};

// Needs >= 3 sets, each with a true accuracy.
evaluation_report evaluate(const std::vector<labeled_set>& sets);

// One method's summary as evaluate() reports it: {"r2", "pearson", "spearman", "kendall", "mae", "n"}.
nlohmann::json summary_json(const evaluation_summary& s);

// One group of calibration sets (a shift type) left out: the line fitted on the other groups, and
// the residuals (true accuracy - the line's clipped estimate) of the left-out group's sets.
struct group_fold {
    std::string group;
    double slope = 0;
    double intercept = 0;
    std::vector<double> residuals;
};

// How a method's line maps a score to accuracy (docs/cli.md, "Links"): the identity,
// accuracy ~ slope * score + intercept, or the probit link, Phi^-1(accuracy) ~ slope *
// Phi^-1(score) + intercept, scores and accuracies kept within [probit_margin, 1 - probit_margin].
// calibrate fits both where every score lies in [0, 1] and keeps the lower held-out error.
enum class link { identity, probit };
inline constexpr double probit_margin = 1e-3;
const char* link_name(link l) noexcept;  // "identity", "probit"
double to_link(link l, double x);        // a score or an accuracy on the line's scale
double from_link(link l, double y);      // the line's value as an accuracy

// accuracy ~ slope * value + intercept for one method (on its link's scale), fitted on labeled sets.
struct method_calibration {
    method m = method::mano;
    // the fit, score_mean, score_sxx and the folds' lines are on the link's scale; residuals and
    // logo_mae are accuracies
    enum link link = link::identity;
    linear_fit fit;
    double score_mean = 0;  // mean of the fitted scores
    double score_sxx = 0;   // sum of squared deviations of the fitted scores from their mean
    // Leave-one-group-out: one fold per group (sets without a group are groups of one). Empty with
    // fewer than 2 groups or when a fold cannot be fitted; predictions then fall back to the t
    // interval of the whole fit.
    std::vector<group_fold> folds;
    double logo_mae = 0;  // mean |residual| over every set's fold; meaningful when folds exist
};

// The normalization one family of sets shares (docs/cli.md, "One normalization for a family of
// sets"): MaNo's branch (and Taylor order) chosen once for all the sets, by the
// leave-one-group-out error of MaNo's line when the sets have true accuracies, else by the
// criterion on the pooled sets.
struct normalization_choice {
    normalization norm = normalization::softmax;  // softmax or taylor
    int taylor_order = 2;
    std::string by;             // "leave-one-group-out" or "pooled criterion"
    double pooled_criterion = 0;  // sum_i n_i Phi_i / sum_i n_i over the sets
    double eta = 5;
    std::map<std::string, double> errors;  // by leave-one-group-out: each variant's error

    std::string variant() const { return variant_name(norm, taylor_order); }
    nlohmann::json to_json() const;
    static normalization_choice from_json(const nlohmann::json& j);
};

// Chooses among the variants every set's MaNo result carries (mano_result::variants: a softrun
// scan gives softmax and the options' Taylor order; more come from scans at other orders). Ties
// go to softmax, then to the lower order. Throws mano::error when a set has no MaNo variants.
normalization_choice choose_normalization(const std::vector<labeled_set>& sets, const options& opts);


// What the calibration sets' predicted class proportions looked like: their mean, and each set's
// confidence (mean max softmax) with its total variation distance from that mean.
struct shift_reference {
    std::vector<double> proportions;
    std::vector<std::pair<double, double>> sets;  // (confidence, distance)

    // The largest distance a calibration set at least as confident as `confidence` had (over the
    // three most confident sets at least); a set beyond it has moved its class proportions
    // further than any shift in calibration did at its confidence.
    double range_at(double confidence) const;
};

// Total variation distance between a set's predicted class proportions and `proportions`.
double class_shift(const result& r, const std::vector<double>& proportions);

struct calibration {
    options opts;  // the options the sets were scored with; predictions must score the same way
    std::size_t k = 0;  // the number of classes of the fitted sets; predictions need the same
    std::vector<method_calibration> methods;
    std::vector<std::string> sets;  // names of the fitted sets
    std::optional<normalization_choice> normalization;  // set when the family's branch was chosen
    // The method with the lowest leave-one-group-out error: the estimate of sets outside the
    // label-shift regime.
    std::optional<method> recommended;
    std::optional<shift_reference> shift;  // when every set had predicted class counts
    // P(correct | confidence bin, predicted class), when every set had a labeled correctness
    // histogram: audits (audit.hpp) and "labels needed" read it.
    std::optional<correctness_model> correctness;

    nlohmann::json to_json() const;
    // Throws mano::error on anything that is not a calibration written by to_json().
    static calibration from_json(const nlohmann::json& j);
};

// The options to score a set of n x k logits with, for predictions from `c`: the calibration's
// own (with the correctness histogram when it has a correctness model), less the methods that
// keep every row (COT, COTT) where n * k is above their default limit
// in the method table (or n is unknown, 0), so that a prediction takes bounded time and memory
// on any file; predict() then estimates with the best method left. The methods left out go to
// `left_out`. Throws when k is not the calibration's number of classes, before any row is read.
options scoring_options(const calibration& c, std::size_t n, std::size_t k, std::vector<method>* left_out = nullptr);

// Fits every method present in all sets (>= 3 sets with true accuracies). A method whose
// scores are all equal cannot be fitted: it is left out and a line saying so goes to `notes`.
// With `family` and softrun options without a fixed criterion, MaNo's branch is chosen once for
// all sets (choose_normalization) from their variants and recorded in the options; the softrun
// variants of ConfScore and Nuclear are kept only if every set was scored on the chosen branch.
// Without `family`, each set keeps its own branch (the paper's literal per-set criterion).
calibration calibrate(const std::vector<labeled_set>& sets, const options& opts,
                      std::vector<std::string>* notes = nullptr, bool family = true);

struct prediction {
    double score = 0;
    std::optional<double> score_se;  // the score's own sampling standard error, when known
    double accuracy = 0;             // the fitted line at score, clipped to [0, 1]
    // The prediction interval within [0, 1]: clipped where it overlaps [0, 1]; one wholly outside
    // keeps its width at the nearer end rather than shrink to a point that claims certainty.
    double lower = 0, upper = 0;
    bool extrapolated = false;       // score outside the range the line was fitted on
    // The fitted line at score lies below 0 (-1) or above 1 (+1): the accuracy is clipped, and
    // the line says only that the set is far from the calibration sets; 0 within [0, 1].
    int out_of_range = 0;
    // The accuracy per unit of score at this score: the line's slope, through the link (the
    // derivative of Phi(slope probit(score) + intercept) on the probit link). What a score's own
    // noise moves the estimate by: |slope| * score_se (the monitor's too-small rule).
    double slope = 0;

    // {"score", "se"?, "accuracy", "interval", "slope", "extrapolated", "out_of_range"?: "below" | "above"}
    nlohmann::json to_json() const;
};

// The estimate of the whole fit at `score`, with a prediction interval at `level` (in (0, 1),
// e.g. 0.9): with folds, jackknife+ over groups (Barber et al. 2021): the level quantiles of
// fold_line(score) -/+ |residual| over the calibration sets, widened to hold the estimate and,
// in quadrature, by t * |slope| * score_se; with too few sets for that level, fitted -/+ t(folds - 1)
// * sqrt(mean residual^2 + slope^2 score_se^2); without folds, the t interval of the whole fit,
// its variance widened by slope^2 * score_se^2.
prediction predict(const method_calibration& c, double score, std::optional<double> score_se, double level);

// A set's predicted class proportions against the calibration's: outside when distance > range +
// allowance, the mean distance that sampling n rows from the calibration's proportions gives
// (0.5 sum_k sqrt(2 p_k (1 - p_k) / (pi n))).
struct shift_check {
    double distance = 0;  // class_shift from the calibration sets' mean proportions
    double range = 0;     // shift_reference::range_at the set's confidence
    double allowance = 0;
    bool outside = false;
};

// Which estimator a set's estimate comes from (docs/cli.md, "Regimes"): MLLS where the set looks
// like label shift of the source set, the calibration's line of the lowest held-out error elsewhere.
enum class regime { general, label_shift };
const char* regime_name(regime r) noexcept;  // "general", "label_shift"

// The label-shift check: a set is label-shift-like when its mean calibrated confidence matches
// what the source set's confidence by class gives at the priors MLLS estimated, within
// label_shift_tolerance + 3 se, and no class takes more than label_shift_max_prior of them (a
// corruption that collapses the predictions onto a class looks like extreme label shift).
inline constexpr double label_shift_tolerance = 0.02;
inline constexpr double label_shift_max_prior = 0.6;
// The half-width of an MLLS interval is at least this.
inline constexpr double label_shift_interval_floor = 0.01;
struct label_shift_check {
    double gap = 0;        // |confidence - expected confidence|
    double allowance = 0;  // label_shift_tolerance + 3 se
    double max_prior = 0;
    bool passed = false;
};

// The MLLS estimate of a label-shift-like set: its accuracy, with the interval
// estimate -/+ max(floor, hypot(q, z se)), q the level quantile of |residual| over the source
// set's synthetic label-shift resamples (label_shift.hpp), se the estimate's row-sampling error.
prediction predict_label_shift(double accuracy, double se, const std::vector<double>& residuals, double level);

// The set's estimate: the method, its prediction and the regime that chose it.
struct set_estimate {
    method m = method::mano;
    prediction value;  // as in set_prediction::methods (for MLLS in the label-shift regime: its own)
    enum regime regime = regime::general;
};

// What a calibration predicts for one set.
struct set_prediction {
    std::size_t n = 0, k = 0;
    double level = 0.9;
    std::map<method, prediction> methods;
    std::optional<double> accuracy;  // the true accuracy, when the result has one
    std::optional<shift_check> shift;  // when the calibration and the result have class counts
    std::optional<label_shift_check> label_shift;  // when the result has MLLS
    std::optional<set_estimate> estimate;
    std::optional<audit_estimate> audit;  // from labeled audited rows (predict_audited)
    // when the estimate's interval is wider than audit_target_width: the labels that would narrow it
    std::optional<labels_needed> labels_for_width;

    // {"n", "k", "level", "methods": {method: {"score", "se"?, "accuracy", "interval": [lo, hi],
    // "extrapolated"}}, "accuracy"?, "estimate"?: {"method", "accuracy", "interval",
    // "extrapolated", "regime"}, "shift"?: {"distance", "range", "allowance", "outside"},
    // "label_shift"?: {"gap", "allowance", "max_prior", "passed"}, "audit"?: audit_estimate::to_json,
    // "labels_for_width"?: labels_needed::to_json}
    nlohmann::json to_json() const;
};

// Every calibrated method present in `r`, with intervals at `level`. MaNo is read from the
// result's variants when it was scored with per-set softrun.
set_prediction predict(const calibration& c, const result& r, double level);

// How well the prediction intervals of sets with a true accuracy held it.
struct interval_coverage {
    std::size_t covered = 0;  // sets whose interval holds the true accuracy
    std::size_t sets = 0;
    double rate = 0;   // covered / sets
    double mae = 0;    // mean |estimate - true accuracy|
    double width = 0;  // mean interval width

    nlohmann::json to_json() const;  // {"covered", "sets", "rate", "mae", "width"}
};

struct coverage_report {
    std::optional<interval_coverage> estimate;  // of set_prediction::estimate
    std::map<method, interval_coverage> methods;

    bool empty() const { return !estimate && methods.empty(); }
    nlohmann::json to_json() const;  // {"estimate"?: {...}, method: {...}}
};

// Over the predictions that have a true accuracy; empty when none has.
coverage_report coverage(const std::vector<set_prediction>& predictions);

}  // namespace mano

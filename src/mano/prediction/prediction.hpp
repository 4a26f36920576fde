#pragma once
// A calibration's estimate of a set (docs/cli.md, "mano calibrate and mano predict"): each
// method's line at the set's score with its prediction interval, the regime that picks the
// estimate (MLLS on label-shift-like sets), the class-shift check, an audit's interval when
// labeled rows came with the set (audit/ppi.hpp), and how well intervals held true accuracies.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/audit/ppi.hpp"
#include "mano/calibration/calibration.hpp"
#include "mano/prediction/label_shift_check.hpp"
#include "mano/scan/options.hpp"
#include "mano/scan/result.hpp"

namespace mano {

// The options to score a set of n rows of `columns` values of kind `input` with, for predictions
// from `c`: the calibration's own (with the correctness histogram when it has a correctness
// model), less the methods that keep every row (COT, COTT) where n * K is above their default
// limit in the method table (or n is unknown, 0), so that a prediction takes bounded time and
// memory on any file; predict() then estimates with the best method left. The methods left out go
// to `left_out`. Throws when the input kind is not the calibration's, or the classes are not its
// number of classes, before any row is read.
options scoring_options(const calibration& c, std::size_t n, std::size_t columns, input_kind input,
                        std::vector<method>* left_out = nullptr);

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
// its variance widened by slope^2 * score_se^2. With `rows` > 0 the interval is for the accuracy
// of those rows themselves, not of the population they come from: before the score's noise, it
// holds the quantiles of the binomial mixture of rows draws at each candidate population accuracy
// (own_accuracy.hpp: jackknife+'s fold lines -/+ their residuals, else the interval's own spread).
prediction predict(const method_calibration& c, double score, std::optional<double> score_se, double level,
                   std::size_t rows = 0);

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

// The half-width of an MLLS interval is at least this.
inline constexpr double label_shift_interval_floor = 0.01;

// The MLLS estimate of a label-shift-like set: its accuracy, with the interval
// estimate -/+ max(floor, sqrt(q^2 + z^2 (se^2 + class_se^2))), q the level quantile of |residual|
// over the source set's synthetic label-shift resamples (label_shift.hpp), se the estimate's
// row-sampling error, class_se the error of the source's calibration of each class at the set's
// priors (prediction.cpp, class_calibration_se). For `rows` > 0, widened to the set's own accuracy
// as predict() does.
prediction predict_label_shift(double accuracy, double se, double class_se, const std::vector<double>& residuals,
                               double level, std::size_t rows = 0);

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
    std::optional<label_shift_check> label_shift;  // when the result has MLLS (label_shift_check.hpp)
    std::optional<set_estimate> estimate;
    std::optional<audit_estimate> audit;  // from labeled audited rows (predict_audited)
    // when the estimate's interval is wider than audit_target_width: the labels that would narrow it
    std::optional<labels_needed> labels_for_width;
    // fewer rows than min_judged_rows (own_accuracy.hpp): too small to judge without labels;
    // labeling its n rows gives its accuracy
    bool too_small = false;

    // {"n", "k", "level", "methods": {method: {"score", "se"?, "accuracy", "interval": [lo, hi],
    // "extrapolated"}}, "accuracy"?, "estimate"?: {"method", "accuracy", "interval",
    // "extrapolated", "regime"}, "shift"?: {"distance", "range", "allowance", "outside"},
    // "label_shift"?: {"gap", "allowance", "max_prior", "dominant"?: {"class", "gap", "se"}, "passed",
    // "reason"?}, "audit"?: audit_estimate::to_json,
    // "labels_for_width"?: labels_needed::to_json, "too_small"?: {"rows", "minimum_rows"}}
    nlohmann::json to_json() const;
};

// Every calibrated method present in `r`, with intervals at `level`. MaNo is read from the
// result's variants when it was scored with per-set softrun. A result of another input kind than
// the calibration's is refused.
set_prediction predict(const calibration& c, const result& r, double level);

// predict(c, all, level) with the audit of `audited` added (set_prediction::audit, audit/ppi.hpp).
set_prediction predict_audited(const calibration& c, const result& all, const result& audited, double level);

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

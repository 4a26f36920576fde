#pragma once
// Audit mode (docs/audit.md): the accuracy of a set from a uniform sample of its rows labeled by
// hand, with prediction-powered inference (PPI, Angelopoulos et al., Science 2023) on the
// calibration's correctness model (calibration/correctness_model.hpp), labels alone (Wilson) without one; and how
// many labels would bring a set's interval to a given width. The sample and its file are in
// audit_sample.hpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/calibration/calibration.hpp"
#include "mano/scan/result.hpp"

namespace mano {

// An audited accuracy.
struct audit_estimate {
    std::size_t n = 0;        // labeled rows
    std::size_t correct = 0;  // of which correct
    double accuracy = 0;
    double lower = 0, upper = 0;
    std::string method = "ppi";  // "ppi", or "wilson" (labels alone): below audit_min_ppi_labels, or without a model
    std::string reason;          // why "wilson", in words (audit_wilson_reason_*); empty for "ppi"
    double wilson_lower = 0, wilson_upper = 0;  // labels alone, for comparison
    std::vector<std::string> warnings;  // what reading the audit file warned of (audit_labels::warnings)

    // {"n", "accuracy", "interval": [lo, hi], "method", "reason"? (with "wilson"), "wilson": [lo, hi], "warnings"?: [...]}
    nlohmann::json to_json() const;
};

// How many uniformly audited labels would bring a set's interval to `width`.
struct labels_needed {
    double width = 0.25;
    std::size_t n = 0;           // at most the set's rows (labeling every row gives its accuracy)
    std::string method = "ppi";  // "ppi" (the correctness model) or "wilson" (labels alone)

    nlohmann::json to_json() const;  // {"width", "n", "method"}
};

// Intervals wider than this get a labels_needed in a prediction (prediction/prediction.hpp).
inline constexpr double audit_target_width = 0.25;

// Below this many labeled rows the audit is Wilson on the labels alone, even with a correctness
// model: the PPI interval's variance, estimated from so few rows, does not hold (docs/audit.md).
inline constexpr std::size_t audit_min_ppi_labels = 10;
// PPI's variance counts this weight of a correct and of a wrong pseudo-row at the audited rows'
// mean f (a pseudo-count floor, Agresti-Coull style): an audit without errors near accuracy 1
// still gets the variance an error could bring (docs/audit.md, "The interval").
inline constexpr double audit_pseudo_rows = 0.25;
// The score set joined to the PPI interval (audit()): f within [clamp, 1 - clamp] for its logit,
// intercept shifts in [-range, range] on a grid of this many steps, each end refined by bisection.
inline constexpr double audit_score_f_clamp = 1e-15;
inline constexpr double audit_score_shift_range = 60;
inline constexpr std::size_t audit_score_grid = 1200;
// The audit's "reason" when its method is "wilson".
inline constexpr const char* audit_wilson_reason_few = "n < 10 labels: Wilson on the labels alone";
inline constexpr const char* audit_wilson_reason_no_model =
    "the calibration has no correctness model: Wilson on the labels alone; run mano calibrate again for a narrower "
    "interval";

// The Wilson score interval of `correct` successes in n trials at `level`, within [0, 1].
std::pair<double, double> wilson_interval(std::size_t correct, std::size_t n, double level);

// The audited accuracy of the set scored as `all` (its N rows, scored with the calibration's
// scoring options: its correctness histogram included when the calibration has a model) from
// `audited`: n >= 2 rows of it drawn uniformly without replacement, scored with the same options
// and their labels. With the calibration's correctness model f and n >= audit_min_ppi_labels, PPI
// with lambda = 1:
//   theta = mean_all(f) + mean_audit(c - f),   Var = (1 - n/N) s^2 / n,
// s^2 the variance of the audited c - f with audit_pseudo_rows of a correct and of a wrong row at
// the audited mean f added (weights; divisor n + 2w - 1), interval theta -/+ t_{n-1,(1+level)/2} sd,
// joined (the smallest interval holding both) with the score set
//   {theta0 : (theta - theta0)^2 <= z^2 (1 - n/N) V(theta0) / n},   z = z_{(1+level)/2},
// V(theta0) the variance of c - f over the set were each row correct with probability
// f_d = sigmoid(logit f + d), d such that mean_all(f_d) = theta0 (the model's intercept moved to
// theta0): mean_all f_d (1 - f_d) + Var_all(f_d - f), from the set's histogram. An audit without
// errors has s^2 ~ 0, and the score set keeps the binomial evidence (Wilson's, where f is the same
// for every row); within [0, 1]. The accuracy estimated is that of the N
// rows: mean_all(f) is exact over them, so theta's error is mean_audit(c - f) - mean_all(c - f),
// whose variance for n of N rows drawn without replacement is exactly (1 - n/N) S^2 / n (PPI's
// Var_all(f)/N term is for the accuracy of the distribution the rows were drawn from; 0 here).
// f of a row is the model at its cell with the whole set's mean confidence of that cell.
// Below audit_min_ppi_labels or without a model: the audited rows' proportion with its Wilson
// interval ("method": "wilson" with its "reason"). Throws mano::error
// when the results do not fit (another K, no labels, more audited rows than the set has).
audit_estimate audit(const calibration& c, const result& all, const result& audited, double level);

// For an estimate of a set of n_rows rows whose interval [lower, upper] at `level` is wider than
// `width`: the audited labels that would bring the interval audit() gives to `width` at that level:
// the least n whose interval would be at most `width` wide. Below audit_min_ppi_labels (and for any
// n without a correctness model) that is the Wilson interval at the point of the estimate interval
// nearest 0.5 (its worst case); from audit_min_ppi_labels on with a model, the PPI interval
// t_{n-1} sqrt((1 - n/N) V_n / n) <= width / 2, V_n = ((n - 1) V + w) / (n + 2w - 1) the expected variance
// with the pseudo-rows at their widest (V the calibration's mean Var(c - f), w audit_pseudo_rows;
// the score set audit() joins is about as wide away from accuracies 0 and 1, where a 0.25 width lies).
// "method" says which. At least 2 (an audit needs 2 labeled rows) and at most N: a set of fewer
// than audit_min_ppi_labels rows gets all its rows; none for a set of fewer than 2 rows.
std::optional<labels_needed> labels_for_width(const calibration& c, std::size_t n_rows, double lower, double upper,
                                              double level, double width = audit_target_width);

}  // namespace mano

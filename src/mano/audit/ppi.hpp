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
    std::string method = "ppi";  // "ppi", or "wilson" (labels alone) without a correctness model
    double wilson_lower = 0, wilson_upper = 0;  // labels alone, for comparison
    std::vector<std::string> warnings;  // what reading the audit file warned of (audit_labels::warnings)

    // {"n", "accuracy", "interval": [lo, hi], "method", "wilson": [lo, hi], "warnings"?: [...]}
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

// The Wilson score interval of `correct` successes in n trials at `level`, within [0, 1].
std::pair<double, double> wilson_interval(std::size_t correct, std::size_t n, double level);

// The audited accuracy of the set scored as `all` (its N rows, scored with the calibration's
// scoring options: its correctness histogram included when the calibration has a model) from
// `audited`: n >= 2 rows of it drawn uniformly without replacement, scored with the same options
// and their labels. With the calibration's correctness model f, PPI with lambda = 1:
//   theta = mean_all(f) + mean_audit(c - f),   Var = (1 - n/N) s^2_audit(c - f) / n,
// interval theta -/+ z_{(1+level)/2} sd within [0, 1]. The accuracy estimated is that of the N
// rows: mean_all(f) is exact over them, so theta's error is mean_audit(c - f) - mean_all(c - f),
// whose variance for n of N rows drawn without replacement is exactly (1 - n/N) S^2 / n (PPI's
// Var_all(f)/N term is for the accuracy of the distribution the rows were drawn from; 0 here).
// f of a row is the model at its cell with the whole set's mean confidence of that cell.
// Without a model: the audited rows' proportion with its Wilson interval. Throws mano::error
// when the results do not fit (another K, no labels, more audited rows than the set has).
audit_estimate audit(const calibration& c, const result& all, const result& audited, double level);

// For an estimate of a set of n_rows rows whose interval [lower, upper] at `level` is wider than
// `width`: the audited labels that would bring the interval to `width` at that level. With a correctness model: the least n
// with z sqrt((1 - n/N) V / n) <= width / 2, V the calibration's mean Var(c - f); otherwise the
// least n whose Wilson interval is at most `width` wide at the point of the estimate interval
// nearest 0.5 (its worst case). At least 2 (an audit needs 2 labeled rows) and at most N: none for
// a set of fewer than 2 rows, which no audit can narrow.
std::optional<labels_needed> labels_for_width(const calibration& c, std::size_t n_rows, double lower, double upper,
                                              double level, double width = audit_target_width);

}  // namespace mano

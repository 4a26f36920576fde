#pragma once
// From scores to accuracy (DESIGN.md section 4): evaluate estimators over labeled shifted sets,
// fit a per-method linear calibration, and predict an unlabeled set's accuracy with an interval.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// The paper's protocol over many sets: {"sets": [{"name", "group"?, "n", "k", "accuracy",
// "methods"}], "summary": {method: {"r2", "pearson", "spearman", "kendall", "mae", "n"}},
// "groups": {group: {method: {...}}} (groups with at least 3 sets), "notes": [why a method has
// no summary, e.g. constant scores]}. Methods are those present in every set. Needs >= 3 sets,
// each with a true accuracy.
nlohmann::json evaluate(const std::vector<labeled_set>& sets);

// accuracy ~ slope * value + intercept for one method, fitted on labeled sets.
struct method_calibration {
    method m = method::mano;
    linear_fit fit;
    double score_mean = 0;  // mean of the fitted scores
    double score_sxx = 0;   // sum of squared deviations of the fitted scores from their mean
};

struct calibration {
    options opts;  // the options the sets were scored with; predictions must score the same way
    std::size_t k = 0;  // the number of classes of the fitted sets; predictions need the same
    std::vector<method_calibration> methods;
    std::vector<std::string> sets;  // names of the fitted sets

    nlohmann::json to_json() const;
    // Throws mano::error on anything that is not a calibration written by to_json().
    static calibration from_json(const nlohmann::json& j);
};

// Fits every method present in all sets (>= 3 sets with true accuracies). A method whose
// scores are all equal cannot be fitted: it is left out and a line saying so goes to `notes`.
calibration calibrate(const std::vector<labeled_set>& sets, const options& opts,
                      std::vector<std::string>* notes = nullptr);

struct prediction {
    double score = 0;
    std::optional<double> score_se;  // the score's own sampling standard error, when known
    double accuracy = 0;             // the fitted line at score, clipped to [0, 1]
    double lower = 0, upper = 0;     // the prediction interval, clipped to [0, 1]
    bool extrapolated = false;       // score outside the range the line was fitted on
};

// The t prediction interval of the fit at `score` (level in (0, 1), e.g. 0.9), its variance
// widened by slope^2 * score_se^2 for the score's own sampling uncertainty.
prediction predict(const method_calibration& c, double score, std::optional<double> score_se, double level);

// Every calibrated method present in `r`: {"n", "k", "level", "methods": {method: {"score",
// "se"?, "accuracy", "interval": [lo, hi], "extrapolated"}}}, plus "accuracy" (true) when known.
nlohmann::json predict(const calibration& c, const result& r, double level);

}  // namespace mano

#pragma once
// From scores to accuracy (docs/cli.md, "mano calibrate and mano predict"): a per-method line
// fitted on labeled shifted sets, its leave-one-group-out folds, and the calibration file's
// contents (calibration_file.cpp reads and checks it).

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/calibration/correctness_model.hpp"
#include "mano/calibration/evaluate.hpp"
#include "mano/calibration/label_shift_copies.hpp"
#include "mano/calibration/normalization_choice.hpp"
#include "mano/calibration/statistics.hpp"
#include "mano/scan/options.hpp"
#include "mano/scan/result.hpp"

namespace mano {

// One group of calibration sets (a shift type) left out: the line fitted on the other groups, and
// the residuals (true accuracy - the line's clipped estimate) of the left-out group's sets.
struct group_fold {
    std::string group;
    double slope = 0;
    double intercept = 0;
    std::vector<double> residuals;
    std::vector<double> weights;  // of the residuals' sets; empty: 1 each
    // per residual: true where it is a label-shift copy's (empty: no copies). Copies' residuals
    // widen jackknife+ intervals; the held-out error that ranks methods leaves them out.
    std::vector<bool> copy;
    double weight(std::size_t i) const { return weights.empty() ? 1.0 : weights[i]; }
    bool is_copy(std::size_t i) const { return !copy.empty() && copy[i]; }
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
    // mean |residual| of every set but the label-shift copies, each from its group's fold;
    // meaningful when folds exist
    double logo_mae = 0;
};

// The scores the line was fitted over, on the score's own scale (the fit keeps them on the link's).
std::pair<double, double> score_range(const method_calibration& mc);
// The fitted line in the user's terms: "accuracy = 0.85 × score + 0.141" (identity) or
// "accuracy = Φ(2.77 × Φ⁻¹(score) + 0.738)" (probit), 4 significant digits.
std::string fit_equation(const method_calibration& mc);

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
    // the label-shifted copies the family got (label_shift_copies.hpp), and how many were fitted
    // besides the `sets`; absent when calibrate made none
    std::optional<label_shift_copies> copies;
    std::size_t copy_sets = 0;
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

// The calibration of method m, or nullptr when it has none.
const method_calibration* calibration_of(const calibration& c, method m);

// Fits every method present in all sets (>= 3 sets with true accuracies). A method whose
// scores are all equal cannot be fitted: it is left out and a line saying so goes to `notes`.
// With `family` and softrun options without a fixed criterion, MaNo's branch is chosen once for
// all sets (choose_normalization) from their variants and recorded in the options; the softrun
// variants of ConfScore and Nuclear are kept only if every set was scored on the chosen branch.
// Without `family`, each set keeps its own branch (the paper's literal per-set criterion).
calibration calibrate(const std::vector<labeled_set>& sets, const options& opts,
                      std::vector<std::string>* notes = nullptr, bool family = true);

}  // namespace mano

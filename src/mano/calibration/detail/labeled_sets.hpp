#pragma once
// What the evaluation protocol (evaluate.cpp), the calibration (calibration.cpp), the family's
// normalization choice (normalization_choice.cpp), predictions (prediction/prediction.cpp) and the
// calibration file (calibration_file.cpp) share: checks and values of labeled sets, and the
// leave-one-group-out folds.

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mano/scan/registry.hpp"

namespace mano {

// evaluate.hpp and calibration.hpp; declared here so that this header sits below them
struct labeled_set;
struct group_fold;
struct method_calibration;
struct normalization_choice;
enum class link;

namespace detail {

// Fewer sets than this give no line with a held-out error.
constexpr std::size_t min_sets = 3;

inline double clip01(double x) { return std::min(1.0, std::max(0.0, x)); }

// At least min_sets sets, each with a true accuracy; `what` names the step in the message.
void check_labeled(const std::vector<labeled_set>& sets, const std::string& what);

// Methods present in every set, in method order, with one value per set.
std::map<method, std::vector<double>> common_values(const std::vector<labeled_set>& sets);

// Why method m's `values` (common_values(sets)[m]) count as constant over the sets that are not
// label-shift copies (statistics.hpp, constant_scores, with each set's standard error where every
// set has one); nullopt when they vary. Such a method is neither fitted nor summarized.
std::optional<std::string> constant_over(const std::vector<labeled_set>& sets, method m, const std::vector<double>& values);

// The sets' true accuracies, in order.
std::vector<double> accuracies(const std::vector<labeled_set>& sets);

// The sets' weights, in order; empty when every set weighs 1.
std::vector<double> weights(const std::vector<labeled_set>& sets);

// Each set's group for leave-one-group-out: its group, or its own name when it has none; with
// fewer than two groups every set is its own group (leave-one-out). A label-shifted copy takes
// its set's.
std::vector<std::string> fold_keys(const std::vector<labeled_set>& sets);

// The folds of one method's line, in order of first appearance; empty when a fold cannot be fitted.
// x is on the link's scale, y are accuracies: each fold's line is fitted to to_link(y) of the sets
// outside its group that are not label-shift copies (`copies`, copy_flags), and its residuals are
// y - from_link(line), clipped to [0, 1], for every set of the group, copies included (marked in
// group_fold::copy, weighted by `w`): the copies widen the intervals, they do not bend the lines.
std::vector<group_fold> fit_folds(const std::vector<double>& x, const std::vector<double>& y,
                                  const std::vector<std::string>& keys, enum link l, const std::vector<double>& w = {},
                                  const std::vector<bool>& copies = {});

// Per set: whether it is a label-shift copy; empty when none is.
std::vector<bool> copy_flags(const std::vector<labeled_set>& sets);

// Held-out errors compared at 1e-9: methods that differ by a constant (DoC is ConfScore moved by
// one) tie in the last bits, differently on each target; ties go to the registry's order.
long long error_key(double logo_mae);

// The methods that have folds, best first: by held-out error, then in registry order.
std::vector<const method_calibration*> by_held_out_error(const std::vector<method_calibration>& methods);

// The mean absolute held-out residual over every fold, each weighted by its set's weight, the
// label-shift copies' left out: the error that ranks methods is the one on the sets themselves.
// With the copies in the lines and the ranking, lines bent toward resampled class mixes and
// outranked the best on corruption types (bench/trust_report.py on Fashion-MNIST-C, held-out
// types: 0.064 / 0.086 / 0.089 with them, 0.049 / 0.079 / 0.070 with the lines on the sets alone).
double mean_abs_residual(const std::vector<group_fold>& folds);

// The family's MaNo values: each set's chosen variant (its standard error only where it was
// scored on that branch); the softrun variants of the baselines leave when a set used another branch.
std::vector<labeled_set> on_branch(std::vector<labeled_set> sets, const normalization_choice& choice,
                                   std::vector<std::string>* notes);

}  // namespace detail
}  // namespace mano

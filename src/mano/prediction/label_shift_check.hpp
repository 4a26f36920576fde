#pragma once
// The label-shift check of a set (docs/cli.md, "Regimes"): whether MLLS's estimate can be trusted,
// from the set's own evidence. Two comparisons with the labeled source set at the priors MLLS
// estimated:
// - the set's mean calibrated confidence against sum_y prior_y (source's mean confidence of class
//   y's rows): off by more than label_shift_tolerance + label_shift_se_multiple se, the set is
//   not plain label shift;
// - the dominant class d (the largest prior, when above the source's prior of d): the mean
//   calibrated probability of d over the set's rows predicted d against the source's rows
//   predicted d (label_shift_model::predicted). Under label shift toward d these rows hold more of
//   d's own rows and fewer errors than the source's do, so they are as confident or more; a
//   corruption that collapses the predictions onto d (it looks like extreme label shift) gives
//   rows less confident than d's own: below by more than label_shift_tolerance +
//   label_shift_se_multiple se (the two samples' errors in quadrature), MLLS is not trusted.
// Priors at the simplex's edge (the other classes hold under 3 rows' worth) leave nothing to tell
// a set of one class from a corruption collapsing onto it by: MLLS, with both regimes' intervals.

#include <cstddef>
#include <optional>
#include <string>

#include "mano/scan/result.hpp"
#include "mano/shift/label_shift.hpp"

namespace mano {

inline constexpr double label_shift_tolerance = 0.02;
inline constexpr double label_shift_se_multiple = 3;

struct dominant_class_evidence {
    std::size_t label = 0;
    double gap = 0;  // source's mean - the set's (positive: the set's rows are less confident)
    double se = 0;
};

struct label_shift_check {
    double gap = 0;        // |confidence - expected confidence|
    double allowance = 0;  // label_shift_tolerance + label_shift_se_multiple se
    double max_prior = 0;  // information
    std::optional<dominant_class_evidence> dominant;
    // MLLS's estimate is the set's (the label_shift regime)
    bool passed = false;
    // Non-empty where the evidence cannot vouch for one regime alone: then the estimate's interval
    // holds both regimes' intervals (MLLS's and the general one's), and this says why.
    std::string reason;
};

// The check of a set of n rows from MLLS's details `set` and the source's `model`. A set of fewer
// than min_judged_rows rows (own_accuracy.hpp) does not pass.
label_shift_check check_label_shift(const label_shift_result& set, const label_shift_model& model, std::size_t n);

}  // namespace mano

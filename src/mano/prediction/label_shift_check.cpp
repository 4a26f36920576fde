// The label-shift check (label_shift_check.hpp).
#include "mano/prediction/label_shift_check.hpp"

#include <algorithm>
#include <cmath>

#include "mano/base/text.hpp"
#include "mano/prediction/own_accuracy.hpp"

namespace mano {

namespace {

// The dominant class's evidence, when the source and the set have rows predicted it (two or more
// in the source, for its spread); none when its prior is not above the source's.
std::optional<dominant_class_evidence> dominant_evidence(const label_shift_result& set, const label_shift_model& model) {
    if (!set.dominant || !model.predicted) return std::nullopt;
    const auto& d = *set.dominant;
    const auto& source = *model.predicted;
    const double source_rows = source.rows[d.label];
    if (d.rows == 0 || source_rows < 2) return std::nullopt;
    const double se = std::hypot(d.sd / std::sqrt(static_cast<double>(d.rows)), source.sd[d.label] / std::sqrt(source_rows));
    return dominant_class_evidence{d.label, source.mean[d.label] - d.mean, se};
}

// Priors that leave the other classes under this many rows' worth sit at the simplex's edge: no
// evidence of any row of theirs (the rule of three: 3 / n bounds a share seen 0 times in n at 95%).
constexpr double edge_rows = 3;

}  // namespace

label_shift_check check_label_shift(const label_shift_result& set, const label_shift_model& model, std::size_t n) {
    label_shift_check check;
    check.gap = std::abs(set.confidence - set.expected_confidence);
    check.allowance = label_shift_tolerance + label_shift_se_multiple * set.confidence_se;
    const auto top = std::max_element(set.priors.begin(), set.priors.end());
    check.max_prior = *top;
    const auto label = static_cast<std::size_t>(top - set.priors.begin());
    // a set too small to judge has no label-shift regime; one whose confidence is off is no label shift
    if (n < min_judged_rows || check.gap > check.allowance) return check;
    const bool toward_dominant = check.max_prior > model.priors[label];
    check.dominant = toward_dominant ? dominant_evidence(set, model) : std::nullopt;
    const std::string name = "class " + std::to_string(label);
    if (check.dominant && check.dominant->gap > label_shift_tolerance + label_shift_se_multiple * check.dominant->se) {
        check.reason = "the rows predicted " + name + " (prior " + number_text(check.max_prior) +
                       ") are less confident than the source's by " + number_text(check.dominant->gap) + " (" +
                       number_text(check.dominant->gap / check.dominant->se) +
                       " se): a corruption that collapses predictions onto a class looks like label shift toward it, "
                       "so MLLS is not trusted";
        return check;
    }
    check.passed = true;
    if (static_cast<double>(n) * (1 - check.max_prior) < edge_rows)
        check.reason = "the priors sit at the simplex's edge (the classes other than " + name + " hold under " +
                       number_text(edge_rows) + " rows' worth): a set of that class alone and a corruption collapsing "
                       "predictions onto it look alike";
    else if (toward_dominant && !check.dominant)
        check.reason = "no source profile of the rows predicted " + name +
                       " (a calibration or result from an older mano, or under 2 such source rows) to tell label shift "
                       "toward it from a corruption collapsing onto it; recalibrate with this mano";
    else if (label_shift_se_multiple * set.confidence_se > label_shift_tolerance)
        // a check too weak to see a gap of its tolerance (a small set, where corrupted sets pass it
        // too) cannot tell label shift from a corruption (bench/trust_report.py's subsets of 20 and
        // 50 rows: corrupted ones routed to MLLS were covered 76-84% of the time, label-shifted ones
        // left to the line 52-62%)
        check.reason = "the check is too weak at " + std::to_string(n) + " rows to see a gap of " +
                       number_text(label_shift_tolerance) + " (" + number_text(label_shift_se_multiple) + " se = " +
                       number_text(label_shift_se_multiple * set.confidence_se) + ")";
    return check;
}

}  // namespace mano

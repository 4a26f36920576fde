#pragma once
// The paper's protocol over labeled shifted sets (docs/cli.md, "mano eval"): how well each
// estimator's score tracks accuracy across the sets.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/calibration/statistics.hpp"
#include "mano/scan/registry.hpp"
#include "mano/scan/result.hpp"

namespace mano {

// One labeled test set: its scores, with result::accuracy holding the true accuracy.
struct labeled_set {
    std::string name;
    std::string group;  // optional, e.g. the corruption type; "" = none
    result scores;
    // its weight in a calibration: 1, or with label-shift copies (label_shift_copies.hpp) R for an
    // original and 1 for each copy; evaluate() counts every set once
    double weight = 1;
    // for one of the label-shifted copies calibrate adds: the index of its set in the family
    std::optional<std::size_t> copy_of;
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

}  // namespace mano

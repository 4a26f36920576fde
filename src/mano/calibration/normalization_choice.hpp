#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/calibration/evaluate.hpp"
#include "mano/scan/options.hpp"

namespace mano {

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


}  // namespace mano

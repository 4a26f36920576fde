#pragma once
// What a labeled source set taught the options (shift/source_fit.hpp fits it): the scan carries it
// to the source-based estimators (ATC-MC, ATC-NE, DoC, and the fitted entries of COTT, MLLS and
// CBPE), and a calibration file keeps it.

#include <cstddef>

#include <nlohmann/json.hpp>

namespace mano {

struct source_model {
    std::size_t n = 0;
    std::size_t k = 0;
    double temperature = 1;       // the softmax(q / T) everything below was computed with
    double accuracy = 0;          // mean [argmax == label]
    double confscore = 0;         // mean max probability
    double atc_mc_threshold = 0;  // ATC threshold on max probability
    double atc_ne_threshold = 0;  // ATC threshold on negative entropy sum_k p log p
    // What the estimators with a method_info::fit_source learned, by method name (COTT's
    // threshold); each reads and checks its own entry.
    nlohmann::json fitted = nlohmann::json::object();

    nlohmann::json to_json() const;
    static source_model from_json(const nlohmann::json& j);
};

}  // namespace mano

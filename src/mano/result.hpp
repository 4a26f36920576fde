#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "mano/options.hpp"

namespace mano {

struct mano_result {
    double score = 0;              // S in [0, 1]
    double criterion = 0;          // Phi (or the fixed criterion when one was given)
    bool criterion_fixed = false;  // true when options::criterion overrode the data's Phi
    normalization used = normalization::softmax;  // the branch the score was computed with
    double p = 4;
    double eta = 5;
    int taylor_order = 2;
    std::int64_t batch_size = 0;   // 0 = whole set
    std::size_t batches = 0;       // number of batches averaged (batch mode only)
};

// An estimate that comes with a threshold (ATC) or an error (COT) besides the accuracy.
struct accuracy_estimate {
    double accuracy = 0;
    double threshold = 0;  // ATC only
    double error = 0;      // COT only: the transport cost, accuracy = 1 - error
};

struct result {
    std::size_t n = 0;
    std::size_t k = 0;
    std::optional<mano_result> mano;
    // scores (higher or lower means more accurate depending on the method)
    std::optional<double> confscore, entropy, nuclear, mde, confscore_softrun, nuclear_softrun, dispersion, frechet;
    // direct accuracy estimates
    std::optional<accuracy_estimate> cot, atc_mc, atc_ne, doc, agreement;

    // The JSON result of DESIGN.md section 5.
    nlohmann::json to_json() const;
};

}  // namespace mano

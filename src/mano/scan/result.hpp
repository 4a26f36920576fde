#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/scan/correctness_histogram.hpp"
#include "mano/scan/options.hpp"

namespace mano {

// MaNo's details besides its score S in [0, 1] (result::estimates[method::mano]).
struct mano_result {
    double criterion = 0;          // Phi (or the fixed criterion when one was given)
    bool criterion_fixed = false;  // true when options::criterion overrode the data's Phi
    normalization used = normalization::softmax;  // the branch the score was computed with
    double p = 4;
    double eta = 5;
    int taylor_order = 2;
    std::int64_t batch_size = 0;   // 0 = whole set
    std::size_t batches = 0;       // number of batches averaged (batch mode only)
    // softrun without a fixed criterion computes both branches in one pass: the score each would
    // give, keyed by variant_name ("softmax", "taylor2"), so that a family of sets can share one
    // branch chosen after scoring (choose_normalization).
    std::map<std::string, double> variants;
};

// MLLS's details besides its accuracy (result::estimates[method::mlls]; src/mano/shift/label_shift.hpp).
struct label_shift_result {
    std::vector<double> priors;  // the class priors EM estimated
    bool converged = true;       // false: EM stopped at its iteration limit (the estimate's detail)
    // The label-shift check of a calibration's predictions: the mean calibrated confidence, its
    // standard error, and what the source set's confidence by class predicts at these priors.
    double confidence = 0;
    double confidence_se = 0;
    double expected_confidence = 0;
    // The dominant class (the largest prior) and, over the rows predicted it, the mean and sample
    // standard deviation of its calibrated probability: what the check compares with the source's
    // rows predicted it (label_shift_model::predicted). Absent from an older mano's result.
    struct dominant_class {
        std::size_t label = 0;
        std::size_t rows = 0;
        double mean = 0, sd = 0;
    };
    std::optional<dominant_class> dominant;
};

// "softmax", or "taylor" followed by the order ("taylor2"); parse_variant is its inverse and
// throws mano::error on anything else.
std::string variant_name(normalization n, int taylor_order);
std::pair<normalization, int> parse_variant(const std::string& name);

// Predicted class counts are kept (state, result) up to this many classes.
inline constexpr std::size_t class_counts_max_k = 1000;

// One method's number: a score, or the accuracy estimate of the methods that return accuracy
// (method_info::returns).
struct estimate {
    double value = 0;
    // The standard error, from row sampling: the delta method for MaNo, the sample standard
    // deviation of the per-row quantity over sqrt(N) for the averages, the binomial one for the
    // proportions. Absent where the value is not a mean over rows (nuclear, mde, cot, ...).
    std::optional<double> se;
    // The method's other number, named by method_info::detail (ATC's threshold, COT's
    // transport cost), when it has one.
    std::optional<double> detail;
};

struct result {
    std::size_t n = 0;
    std::size_t k = 0;
    // Every computed method's estimate, indexed by method (table order).
    std::array<std::optional<estimate>, method_count> estimates;
    // MaNo's details besides its score.
    std::optional<mano_result> mano;
    // MLLS's priors and its label-shift check.
    std::optional<label_shift_result> mlls;
    const std::optional<estimate>& operator[](method m) const { return estimates[static_cast<int>(m)]; }
    std::optional<estimate>& operator[](method m) { return estimates[static_cast<int>(m)]; }
    // The method's value, when computed.
    std::optional<double> value(method m) const {
        const auto& e = (*this)[m];
        return e ? std::optional<double>(e->value) : std::nullopt;
    }
    // The true accuracy, when labels were pushed with the rows.
    std::optional<double> accuracy;
    // How many rows each class wins (argmax), K counts summing to n; empty beyond
    // class_counts_max_k classes. The shift diagnostics compare these proportions across sets.
    std::vector<std::uint64_t> predicted;
    // The mean maximum softmax probability (at the options' temperature), whatever the methods:
    // the shift diagnostics compare a set's class proportions with calibration sets at least as
    // confident.
    std::optional<double> confidence;
    // The rows by confidence bin and predicted class (with the correct ones when labeled), when
    // the options asked for it (options::correctness_histogram): audits read it.
    std::optional<correctness_histogram> correctness;
    // What the rows held (options::input): a calibration predicts only results of its own kind.
    input_kind input = input_kind::logits;
    // Scored as logits, every row lay in [0, 1] and summed to 1: probabilities, most likely,
    // which want input probabilities (the front ends warn).
    bool looks_like_probabilities = false;

    // Every computed method's one number, in method order.
    struct method_value {
        method m;
        double value;
        std::optional<double> se;
    };
    std::vector<method_value> values() const;

    // The JSON result (docs/cli.md, "JSON result"): per method an object with its value under "score"
    // or "accuracy" (method_info::returns), its detail and "se" where known; "accuracy" at the
    // top when labels were given; "input" when not logits; "looks_like_probabilities" when true.
    nlohmann::json to_json() const;
    // The inverse of to_json(), for results that travel as JSON (the npm package, saved CLI
    // output); throws mano::error naming the first field that is missing or malformed.
    static result from_json(const nlohmann::json& j);
};

}  // namespace mano

#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mano/scan/features.hpp"
#include "mano/scan/input_kind.hpp"
#include "mano/scan/options_table.hpp"
#include "mano/scan/registry.hpp"
#include "mano/scan/source_model.hpp"

namespace mano {

// How MaNo turns logits into probabilities. `softrun` (the paper's default) chooses between the
// other two with the criterion: softmax when criterion > eta, Taylor otherwise; softmax always
// at K = 2, where the Taylor normalization is degenerate (taylor_defined).
enum class normalization { softrun, softmax, taylor };

const char* normalization_name(normalization n) noexcept;
normalization parse_normalization(const std::string& name);  // throws mano::error

// The paper's Taylor rows, (t_ik - min_j t_ij) / sum_j (t_ij - min_j t_ij) with t the order-n
// polynomial of exp, are degenerate at K = 2: the smaller of the two entries is the row minimum,
// so every row is one-hot at its argmax ([0, 1] or [1, 0]) whatever the logits, and MaNo on them
// reads its maximum 2^(-1/p) on every set (the softrun ConfScore 1). From 3 classes up they are
// defined; at K = 2 softrun takes softmax (a binary model's own probabilities) and an explicit
// normalization taylor is refused for the methods that read the branch.
inline constexpr std::size_t taylor_min_classes = 3;
inline constexpr bool taylor_defined(std::size_t k) noexcept { return k >= taylor_min_classes; }

// The branch softrun takes on a set of K classes with this criterion: softmax when the
// criterion > eta (a strict '>', paper Algorithm 1) or the Taylor rows are not defined at K.
normalization softrun_branch(double criterion, double eta, std::size_t k) noexcept;

struct options {
    double p = 4.0;            // the L_p norm; any p > 1
    double eta = 5.0;          // softrun threshold on the criterion
    int taylor_order = 2;      // order n >= 1 of the Taylor expansion of exp
    normalization norm = normalization::softrun;
    // Official-code compatibility: > 0 scores consecutive batches of this many rows and averages
    // the per-batch scores without weights (the authors' code uses 128). 0 = whole set (paper).
    std::int64_t batch_size = 0;
    // Official-code compatibility: a fixed criterion instead of the one computed from the data.
    std::optional<double> criterion;
    // SIMD architecture for the kernel: "" = best the CPU has (or the MANO_ARCH environment
    // variable), else one of available_architectures().
    std::string architecture;
    // Methods to compute from the target logits; empty = the defaults: default_methods(K) in an
    // accumulator (the row count unknown: nothing that keeps every row), default_methods(K, N) in
    // score(). An accumulator keeps them in table order, each once.
    std::vector<method> methods;
    // Temperature T applied as q / T to every softmax-based baseline (not to MaNo, which has its
    // own normalization); 1 = none. Fitted on labeled source logits by mano::fit_temperature.
    double temperature = 1.0;
    // COT's label marginal (K masses summing to 1); empty = uniform.
    std::vector<double> label_marginal;
    // What ATC-MC, ATC-NE and DoC learned from labeled source logits (fit_source, with the same
    // temperature as above).
    std::optional<source_model> source;
    // Feature moments of the source set, for the Frechet distance.
    std::shared_ptr<const feature_moments> source_features;
    // Collect the correctness histogram (correctness.hpp) of the rows: audits and the calibration's
    // correctness model read it.
    bool correctness_histogram = false;
    // What the rows hold (input_kind.hpp): logits, or probabilities or a binary column that the
    // accumulator turns into logits. The K of an accumulator is the classes, classes_of(input, columns).
    input_kind input = input_kind::logits;

    // Whether `methods` lists m (an accumulator resolves an empty list to default_methods(K)).
    bool wants(method m) const;
    // Which of MaNo's branches are accumulated for K classes: both for softrun, unless a fixed
    // criterion or K = 2 (taylor_defined) has decided the branch already; one when the
    // normalization is forced.
    bool scores_softmax_branch(std::size_t k) const;
    bool scores_taylor_branch(std::size_t k) const;
    // The branch a set of K classes is scored on, given its criterion (the fixed one or Phi).
    normalization branch_used(double criterion, std::size_t k) const noexcept;

    // Throws mano::error naming the first invalid option (the ranges of options_table.hpp).
    void validate() const;

    // Every option (the source model and source feature moments included) as JSON, and back
    // ("correctness_histogram" only when true, false when absent; "input" only when not logits,
    // logits when absent: options and states written before either read as before); from_json throws
    // nlohmann::json exceptions on a malformed object and validates the result.
    nlohmann::json to_json() const;
    static options from_json(const nlohmann::json& j);
};

}  // namespace mano

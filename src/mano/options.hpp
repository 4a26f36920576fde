#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace mano {

// How MaNo turns logits into probabilities. `softrun` (the paper's default) chooses between the
// other two with the criterion: softmax when criterion > eta, Taylor otherwise.
enum class normalization { softrun, softmax, taylor };

const char* normalization_name(normalization n) noexcept;
normalization parse_normalization(const std::string& name);  // throws mano::error

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

    // Throws mano::error naming the first invalid option.
    void validate() const;
};

}  // namespace mano

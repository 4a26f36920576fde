#pragma once
// Label-shifted copies of the calibration sets (docs/cli.md, "Label-shift copies"): a calibration
// fitted on corrupted sets alone has never seen a set whose class mix moved as well, and its lines
// and intervals mislead on those. So calibrate adds, for each labeled set with rows and
// r = 0 .. R - 1, a copy whose classes follow proportions drawn from Dirichlet(alpha_r 1_K)
// (alpha cycling through `alphas`): m = min(N, max_rows) rows, class counts ~ Multinomial(m, pi)
// over the classes the set has, each class's rows drawn with replacement among the set's rows of
// that class. A copy's accuracy is its rows' accuracy, and it keeps its set's group (a fold of
// leave-one-group-out holds a set and its copies together). Each original weighs R, each copy 1,
// so that an original counts as much as its copies together. The draws are splitmix64 streams
// (src/mano/base/random.hpp) seeded from (seed, set, copy): the same rows on every platform.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace mano {

struct label_shift_copies {
    std::size_t copies = 6;  // R per set; 0: none
    std::uint64_t seed = 0;
    std::size_t max_rows = 1000;
    std::vector<double> alphas = {0.5, 1, 5};

    // {"copies", "seed", "max_rows", "alphas"}
    nlohmann::json to_json() const;
    // Throws mano::error naming `what` and the key at fault.
    static label_shift_copies from_json(const nlohmann::json& j, const std::string& what);
};

// The most copies a set may get, and the largest seed (what every front end carries exactly).
inline constexpr std::size_t label_shift_max_copies = 100;
inline constexpr std::uint64_t label_shift_max_seed = (std::uint64_t{1} << 53) - 1;

// The rows of copy `copy` of the set `set` (its index in the family), whose rows have the class
// labels `labels` in [0, k): the drawn rows, in the order drawn (with repeats). Throws mano::error
// for a label outside [0, k) or a set without rows.
std::vector<std::uint64_t> label_shift_copy_rows(const std::vector<std::int64_t>& labels, std::size_t k,
                                                 const label_shift_copies& o, std::size_t set, std::size_t copy);

}  // namespace mano

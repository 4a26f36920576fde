#pragma once
// The CLI side of manifests (eval, calibrate, predict --manifest): the sets a run selects, their
// scores, and eval's plots.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <mano/mano.hpp>

#include "cli/options.hpp"
#include "io/manifest.hpp"

namespace mano {
namespace cli {

io::outside_paths outside(bool allow);

// The sets of these groups (every set when `groups` is empty); throws mano::error for a group no
// set has.
std::vector<io::manifest_set> selected_sets(const io::manifest& m, const std::vector<std::string>& groups);

// The options to score a set of rows x cols logits with.
using options_for_shape = std::function<options(std::size_t rows, std::size_t cols)>;

// Scores one labeled (or unlabeled) set of a manifest with the options `choose` gives for its
// shape: all its rows, or a copy pass's rows (`copy`, src/mano/workflow/family.hpp) with their
// labels; `keep_labels` gives its labels back with the result.
workflow::scored_set score_set(const io::manifest_set& set, const input_args& input, const options_for_shape& choose,
                               const workflow::pass* copy = nullptr, bool keep_labels = false);

// Every selected set of a manifest, with labels, scored for eval and calibrate by the core's
// workflow (mano/workflow/family.hpp): with --normalization family, the branch chosen for all the
// sets; with `copies` (calibrate), each set's label-shifted copies too.
workflow::scored_family score_manifest(const io::manifest& m, const std::vector<std::string>& groups, method_args& methods,
                                       const input_args& input, const std::optional<label_shift_copies>& copies);

// eval --plots: one SVG per summarized method in `folder`, the report's sets against the line and
// 90% band fitted on them.
void write_plots(const std::string& folder, const evaluation_report& report);

}  // namespace cli
}  // namespace mano

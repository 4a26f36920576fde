#pragma once
// The CLI side of manifests (eval, calibrate, predict --manifest): the sets a run selects, their
// scores, and eval's plots.

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

// Scores one labeled (or unlabeled) set of a manifest, with `fixed_options` when given, else with
// the resolver's options for its shape.
result score_set(const io::manifest_set& set, option_resolver& resolver, const input_args& input,
                 const options* fixed_options);

// The labeled sets of a manifest scored for eval and calibrate.
struct scored_sets {
    std::vector<labeled_set> sets;  // on the family's branch when one was chosen
    options used;                   // the options of the first set (the family's branch included)
    std::optional<normalization_choice> choice;
    std::vector<labeled_set> per_set;  // with --normalization family: MaNo on each set's own criterion
};

// Scores every selected set of a manifest, with labels. With --normalization family, a first
// pass scores each set with softrun (both branches at once) and MaNo alone at the other Taylor
// orders, the branch is chosen over all sets, and a second pass scores every method on it.
scored_sets score_manifest(const io::manifest& m, const std::vector<std::string>& groups, method_args& methods,
                           const input_args& input);

// eval --plots: one SVG per summarized method in `folder`, the report's sets against the line and
// 90% band fitted on them.
void write_plots(const std::string& folder, const evaluation_report& report);

}  // namespace cli
}  // namespace mano

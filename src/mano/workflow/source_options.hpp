#pragma once
// What a labeled source set and source features teach the options, resolved once for every front
// end (docs/architecture.md, "The workflow"): the CLI reads the source files, Python and npm pass
// arrays, and all of them hand what they read to learn_from_source().

#include <cstdint>
#include <memory>
#include <string>

#include "mano/base/parallel.hpp"
#include "mano/scan/features.hpp"
#include "mano/scan/logits_view.hpp"
#include "mano/scan/options.hpp"

namespace mano {
namespace workflow {

// The inputs, each optional. How the front end's users spell the options, for messages.
struct source_inputs {
    const logits_view* logits = nullptr;    // labeled source logits, K columns (or values of options::input's kind)
    const std::int64_t* labels = nullptr;   // their labels, logits->rows() of them
    bool fit_temperature = false;           // temperature "fit": on the source logits
    bool label_marginal_of_source = false;  // label_marginal "source": the source labels' class shares
    std::shared_ptr<const feature_moments> features;  // the source features' moments (Frechet)
    parallel_for parallel = run_in_order;             // who runs the fits' passes over the source rows

    std::string source_option = "source";             // e.g. "--source-logits and --source-labels"
    std::string temperature_option = "temperature";   // e.g. "--temperature"
    std::string marginal_option = "label_marginal";   // e.g. "--label-marginal"
};

// `o` with what the inputs teach: the temperature (fit by mano::fit_temperature when asked), the
// source model of o.methods (mano::fit_source; none when every method named reads no source),
// the label marginal and the feature moments.
// Throws mano::error naming the option when an input that an option needs is missing.
options learn_from_source(options o, const source_inputs& given);

}  // namespace workflow
}  // namespace mano

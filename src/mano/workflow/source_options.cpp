#include "mano/workflow/source_options.hpp"

#include <optional>
#include <vector>

#include "mano/base/error.hpp"
#include "mano/shift/source_fit.hpp"

namespace mano {
namespace workflow {

options learn_from_source(options o, const source_inputs& given) {
    // source rows of another input kind (the target's: the same model's outputs) as logits
    std::vector<double> converted;
    std::optional<logits_view> as_logits;
    if (given.logits && o.input != input_kind::logits) {
        try {
            converted = logits_of(*given.logits, o.input);
        } catch (const error& e) {
            throw error(given.source_option + ": " + e.what());
        }
        as_logits.emplace(converted.data(), given.logits->rows(), classes_of(o.input, given.logits->cols()));
    }
    const logits_view* source = as_logits ? &*as_logits : given.logits;
    if (source) {
        if (source->rows() == 0) throw error(given.source_option + ": the source set has no rows");
        if (!given.labels) throw error(given.source_option + ": the source logits need their labels");
        if (given.fit_temperature) o.temperature = fit_temperature(*source, given.labels, o.architecture, given.parallel);
        // default methods are resolved per set later: fit what every default could need; methods
        // named that read no source (MaNo alone) fit nothing
        std::vector<method> fitting = o.methods;
        bool needed = fitting.empty();
        for (const method m : o.methods) needed = needed || (info_of(m).needs & needs_source);
        if (fitting.empty())
            for (const auto& m : method_table)
                if (m.by_default && m.fit_source) fitting.push_back(m.id);
        if (needed) o.source = fit_source(*source, given.labels, o.temperature, fitting, o.architecture, given.parallel);
        else check_source(*source, given.labels, given.parallel);
        if (given.label_marginal_of_source)
            o.label_marginal = label_frequencies(given.labels, source->rows(), source->cols());
    } else if (given.fit_temperature) {
        throw error(given.temperature_option + " 'fit' needs labeled source logits (" + given.source_option + ")");
    } else if (given.label_marginal_of_source) {
        throw error(given.marginal_option + " 'source' needs " + given.source_option);
    }
    if (given.features) o.source_features = given.features;
    return o;
}

}  // namespace workflow
}  // namespace mano

#include "mano/workflow/source_options.hpp"

#include "mano/base/error.hpp"
#include "mano/shift/source_fit.hpp"

namespace mano {
namespace workflow {

options learn_from_source(options o, const source_inputs& given) {
    if (given.logits) {
        if (given.logits->rows() == 0) throw error(given.source_option + ": the source set has no rows");
        if (!given.labels) throw error(given.source_option + ": the source logits need their labels");
        if (given.fit_temperature) o.temperature = fit_temperature(*given.logits, given.labels, o.architecture);
        // default methods are resolved per set later: fit what every default could need; methods
        // named that read no source (MaNo alone) fit nothing
        std::vector<method> fitting = o.methods;
        bool needed = fitting.empty();
        for (const method m : o.methods) needed = needed || (info_of(m).needs & needs_source);
        if (fitting.empty())
            for (const auto& m : method_table)
                if (m.by_default && m.fit_source) fitting.push_back(m.id);
        if (needed) o.source = fit_source(*given.logits, given.labels, o.temperature, fitting, o.architecture);
        else check_source(*given.logits, given.labels);
        if (given.label_marginal_of_source)
            o.label_marginal = label_frequencies(given.labels, given.logits->rows(), given.logits->cols());
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

// COT's label marginal (`--label-marginal FILE`): the whole input is the JSON text, read as the CLI
// reads it (an array of K numbers), then validated as options. A believed marginal has K finite
// masses >= 0 summing to 1.
#include <cmath>
#include <string>
#include <vector>

#include <mano/scan/options.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    mano_fuzz::fuzz_json(data, size, "marginal.json", "label marginal", [](const nlohmann::json& j) {
        mano::options o;
        o.label_marginal = j.get<std::vector<double>>();
        o.validate();
        double sum = 0;
        for (const double m : o.label_marginal) {
            if (!(std::isfinite(m) && m >= 0)) mano_fuzz::finding("a marginal with a negative or non-finite mass was accepted");
            sum += m;
        }
        if (!o.label_marginal.empty() && !(std::abs(sum - 1) < 1e-3)) mano_fuzz::finding("a marginal not summing to 1 was accepted");
    });
    return 0;
}

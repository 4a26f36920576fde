// COT's label marginal (`--label-marginal FILE`): the whole input is the JSON text, read as the CLI
// reads it (an array of K numbers), then validated as options. A believed marginal has K finite
// masses >= 0 summing to 1.
#include <cmath>
#include <string>
#include <vector>

#include <mano/options.hpp>

#include "fuzz_support.hpp"
#include "io/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = "marginal.json";
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const nlohmann::json j = mano::io::parse_json(text, path, "label marginal");
        mano::options o;
        o.label_marginal = j.get<std::vector<double>>();
        o.validate();
        double sum = 0;
        for (const double m : o.label_marginal) {
            if (!(std::isfinite(m) && m >= 0)) mano_fuzz::finding("a marginal with a negative or non-finite mass was accepted");
            sum += m;
        }
        if (!o.label_marginal.empty() && !(std::abs(sum - 1) < 1e-3)) mano_fuzz::finding("a marginal not summing to 1 was accepted");
    } catch (const mano::error& e) {
        const std::string message = e.what();
        if (message.empty() || message.find_first_of("\n\r") != std::string::npos)
            mano_fuzz::finding("an empty or multi-line error: " + message);
    } catch (const nlohmann::json::exception&) {
        // The CLI reports these as "PATH: the label marginal must be a JSON array of K numbers summing to 1".
    }
    return 0;
}

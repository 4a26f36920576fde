// The logit-only baselines (every method the table computes from logits alone) against the
// NumPy/SciPy/POT reference (tests/golden/make_baselines_golden.py), on every SIMD architecture
// this CPU offers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "../support.hpp"

TEST_CASE("logit-only baselines match the NumPy/SciPy/POT reference on every architecture", "[golden]") {
    const auto cases = mano_test::golden_cases("baselines.json");
    REQUIRE(cases.size() >= 20);
    const auto archs = mano_test::kernels_to_test();
    for (const auto& c : cases) {
        const mano_test::npy_file file(mano_test::data_path(c.at("file").get<std::string>()));
        for (const auto& arch : archs) {
            mano::options o;
            o.temperature = c.at("temperature").get<double>();
            o.architecture = arch;
            const auto got = mano::score(file.view(), o).to_json().at("methods");
            for (const auto& [method, values] : c.at("expected").items()) {
                for (const auto& [key, value] : values.items()) {
                    INFO("case '" << c.at("name").get<std::string>() << "' on " << arch << ": " << method << "." << key);
                    const double g = got.at(method).at(key).get<double>(), e = value.get<double>();
                    // relative 1e-6, with an absolute floor for values near 0 (a COT error of 1e-12)
                    CHECK(std::abs(g - e) <= 1e-6 * std::max(std::abs(e), 1e-3));
                }
            }
        }
    }
}

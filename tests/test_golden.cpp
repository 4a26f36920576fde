// The core against the float64 NumPy reference (tests/golden/make_golden.py), on every SIMD
// architecture this CPU offers.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "support.hpp"

using mano_test::close;

namespace {

mano::options options_from(const nlohmann::json& j) {
    mano::options o;
    o.p = j.value("p", o.p);
    o.eta = j.value("eta", o.eta);
    o.taylor_order = j.value("taylor_order", o.taylor_order);
    o.norm = mano::parse_normalization(j.value("normalization", std::string("softrun")));
    o.batch_size = j.value("batch_size", std::int64_t{0});
    if (j.contains("fixed_criterion")) o.criterion = j.at("fixed_criterion").get<double>();
    return o;
}

}  // namespace

TEST_CASE("golden vectors match the NumPy reference on every architecture", "[golden]") {
    const auto cases = mano_test::golden_cases("mano.json");
    REQUIRE(cases.size() >= 40);
    const auto archs = mano_test::kernels_to_test();
    REQUIRE(!archs.empty());
    for (const auto& c : cases) {
        const mano_test::npy_file file(mano_test::data_path(c.at("file").get<std::string>()));
        const auto& expected = c.at("expected");
        for (const auto& arch : archs) {
            INFO("case '" << c.at("name").get<std::string>() << "' on " << arch);
            auto opts = options_from(c.at("options"));
            opts.architecture = arch;
            const auto r = mano::score(file.view(), opts);
            CHECK(r.n == file.reader->rows());
            CHECK(r.k == file.reader->cols());
            CHECK(mano::normalization_name(r.mano->used) == expected.at("normalization").get<std::string>());
            CHECK(close(r.mano->criterion, expected.at("criterion").get<double>(), 1e-6));
            CHECK(close(r.value(mano::method::mano).value(), expected.at("score").get<double>(), 1e-6));
            if (expected.contains("batches")) CHECK(r.mano->batches == expected.at("batches").get<std::size_t>());
        }
    }
}

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

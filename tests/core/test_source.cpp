// The source model the source-based baselines read (temperature fit, accuracy, ConfScore, ATC
// thresholds) against the NumPy/SciPy reference (tests/golden/make_source_golden.py), and bad input.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <limits>

#include <mano/shift/source_fit.hpp>
#include <nlohmann/json.hpp>

#include "support.hpp"

using Catch::Contains;
using mano_test::close;

namespace {

nlohmann::json golden_cases() { return mano_test::golden_cases("source.json"); }

nlohmann::json golden_case(const std::string& name) {
    for (const auto& c : golden_cases())
        if (c.at("name") == name) return c;
    FAIL("no golden source case named " << name);
    return {};
}

void check_same(const mano::source_model& a, const mano::source_model& b) {
    CHECK(a.n == b.n);
    CHECK(a.k == b.k);
    CHECK(a.temperature == b.temperature);
    CHECK(a.accuracy == b.accuracy);
    CHECK(a.confscore == b.confscore);
    CHECK(a.atc_mc_threshold == b.atc_mc_threshold);
    CHECK(a.atc_ne_threshold == b.atc_ne_threshold);
}

// The view's rows as doubles with `pad` NaN-filled elements after each row.
std::vector<double> padded_copy(const mano::logits_view& v, std::size_t pad) {
    const float* src = static_cast<const float*>(v.data());
    std::vector<double> out(v.rows() * (v.cols() + pad), std::numeric_limits<double>::quiet_NaN());
    for (std::size_t r = 0; r < v.rows(); ++r)
        for (std::size_t c = 0; c < v.cols(); ++c) out[r * (v.cols() + pad) + c] = src[r * v.cols() + c];
    return out;
}

}  // namespace

TEST_CASE("source statistics and temperature match the NumPy/SciPy reference", "[source][golden]") {
    const auto cases = golden_cases();
    REQUIRE(cases.size() >= 10);
    for (const auto& c : cases) {
        INFO("case '" << c.at("name").get<std::string>() << "'");
        const mano_test::npy_file file(mano_test::data_path(c.at("file").get<std::string>()));
        const auto labels = c.at("labels").get<std::vector<std::int64_t>>();
        REQUIRE(labels.size() == file.reader->rows());
        if (c.contains("fitted_temperature")) {
            const double t = mano::fit_temperature(file.view(), labels.data());
            CHECK(close(t, c.at("fitted_temperature").get<double>(), 1e-6));
        } else {
            CHECK_THROWS_WITH(mano::fit_temperature(file.view(), labels.data()),
                              Contains(c.at("fit_fails").get<std::string>()));
        }
        for (const auto& e : c.at("expected")) {
            const double t = e.at("temperature").get<double>();
            INFO("temperature " << t);
            const auto m = mano::fit_source(file.view(), labels.data(), t);
            CHECK(m.n == file.reader->rows());
            CHECK(m.k == file.reader->cols());
            CHECK(m.temperature == t);
            CHECK(m.accuracy == Approx(e.at("accuracy").get<double>()).margin(1e-9));
            CHECK(m.confscore == Approx(e.at("confscore").get<double>()).margin(1e-9));
            CHECK(m.atc_mc_threshold == Approx(e.at("atc_mc_threshold").get<double>()).margin(1e-9));
            CHECK(m.atc_ne_threshold == Approx(e.at("atc_ne_threshold").get<double>()).margin(1e-9));
        }
    }
}

TEST_CASE("every dtype and row stride gives the same source model", "[source]") {
    SECTION("float32 and a padded float64 copy") {
        const auto c = golden_case("k10");
        const mano_test::npy_file file(mano_test::data_path(c.at("file").get<std::string>()));
        const auto labels = c.at("labels").get<std::vector<std::int64_t>>();
        const auto& v = file.view();
        const auto wide = padded_copy(v, 3);
        const mano::logits_view strided(wide.data(), v.rows(), v.cols(), v.cols() + 3);
        check_same(mano::fit_source(strided, labels.data(), 0.7), mano::fit_source(v, labels.data(), 0.7));
        CHECK(mano::fit_temperature(strided, labels.data()) == mano::fit_temperature(v, labels.data()));
    }
    SECTION("float16 and bfloat16 of the same grid values") {
        const auto c = golden_case("ties_f16");
        const mano_test::npy_file file(mano_test::data_path(c.at("file").get<std::string>()));
        const auto labels = c.at("labels").get<std::vector<std::int64_t>>();
        const auto& v = file.view();
        REQUIRE(v.type() == mano::dtype::float16);
        const auto* half = static_cast<const std::uint16_t*>(v.data());
        std::vector<std::uint16_t> bf(v.rows() * v.cols());
        for (std::size_t i = 0; i < bf.size(); ++i) {
            const float f = mano::half_to_float(half[i]);
            std::uint32_t bits;
            std::memcpy(&bits, &f, sizeof bits);
            bf[i] = static_cast<std::uint16_t>(bits >> 16);
            REQUIRE(mano::bfloat16_to_float(bf[i]) == f);  // grid values are exact in bfloat16
        }
        const mano::logits_view bview(bf.data(), mano::dtype::bfloat16, v.rows(), v.cols());
        check_same(mano::fit_source(bview, labels.data(), 1.0), mano::fit_source(v, labels.data(), 1.0));
        CHECK(mano::fit_temperature(bview, labels.data()) == mano::fit_temperature(v, labels.data()));
    }
}

TEST_CASE("the fitted temperature scales with the logits", "[source]") {
    const auto c = golden_case("k1000");
    const mano_test::npy_file file(mano_test::data_path(c.at("file").get<std::string>()));
    const auto labels = c.at("labels").get<std::vector<std::int64_t>>();
    auto scaled = padded_copy(file.view(), 0);
    for (double& x : scaled) x *= 40;
    const mano::logits_view v(scaled.data(), file.view().rows(), file.view().cols());
    const double t = mano::fit_temperature(file.view(), labels.data());
    CHECK(close(mano::fit_temperature(v, labels.data()), 40 * t, 1e-10));
}

TEST_CASE("source model JSON round trip", "[source][json]") {
    const auto c = golden_case("k2");
    const mano_test::npy_file file(mano_test::data_path(c.at("file").get<std::string>()));
    const auto labels = c.at("labels").get<std::vector<std::int64_t>>();
    const auto m = mano::fit_source(file.view(), labels.data(), mano::fit_temperature(file.view(), labels.data()));
    const auto text = m.to_json().dump();
    check_same(mano::source_model::from_json(nlohmann::json::parse(text)), m);

    auto j = m.to_json();
    j["format"] = "mano-accumulator";
    CHECK_THROWS_WITH(mano::source_model::from_json(j), Contains("not a mano source model"));
    j = m.to_json();
    j["version"] = 2;
    CHECK_THROWS_WITH(mano::source_model::from_json(j), Contains("unsupported version 2"));
    j = m.to_json();
    j.erase("atc_ne_threshold");
    CHECK_THROWS_WITH(mano::source_model::from_json(j), Contains("atc_ne_threshold"));
    j = m.to_json();
    j["accuracy"] = 1.5;
    CHECK_THROWS_WITH(mano::source_model::from_json(j), Contains("values out of range"));
}

TEST_CASE("bad source input is reported clearly", "[source][validation]") {
    // 3 rows x 3 classes; the label is the argmax in rows 0 and 1 only.
    std::vector<float> q = {2, 0, 1, 0, 3, 1, 1, 0, 0.5f};
    std::vector<std::int64_t> y = {0, 1, 2};
    const mano::logits_view v(q.data(), 3, 3);

    std::vector<std::int64_t> bad = {0, 3, 1};
    CHECK_THROWS_WITH(mano::fit_source(v, bad.data(), 1), Contains("source row 1: label 3 is outside [0, 3)"));
    bad = {0, 1, -1};
    CHECK_THROWS_WITH(mano::fit_temperature(v, bad.data()), Contains("source row 2: label -1 is outside [0, 3)"));
    CHECK_THROWS_WITH(mano::fit_source(v, nullptr, 1), Contains("source labels are missing"));
    CHECK_THROWS_WITH(mano::fit_source(mano::logits_view(static_cast<const float*>(nullptr), 0, 3), y.data(), 1),
                      Contains("0 rows"));
    CHECK_THROWS_WITH(mano::fit_source(mano::logits_view(q.data(), 3, 1), y.data(), 1),
                      Contains("at least 2 columns (classes); got 1"));

    for (double t : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()})
        CHECK_THROWS_WITH(mano::fit_source(v, y.data(), t), Contains("temperature must be a finite number > 0"));

    auto with_nan = q;
    with_nan[2 * 3 + 1] = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH(mano::fit_source(mano::logits_view(with_nan.data(), 3, 3), y.data(), 1),
                      Contains("source row 2, column 1: logit is NaN"));
    auto with_inf = q;
    with_inf[1] = -std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH(mano::fit_temperature(mano::logits_view(with_inf.data(), 3, 3), y.data()),
                      Contains("source row 0, column 1: logit is -Inf"));
    const std::vector<double> far = {1e308, -1e308, 0, 1, 0, 0};
    CHECK_THROWS_WITH(mano::fit_source(mano::logits_view(far.data(), 2, 3), y.data(), 1), Contains("too far apart"));

    const std::vector<std::int64_t> argmax = {0, 1, 0};
    CHECK_THROWS_WITH(mano::fit_temperature(v, argmax.data()), Contains("every source prediction is correct"));
    const std::vector<std::int64_t> lowest = {1, 0, 1};
    CHECK_THROWS_WITH(mano::fit_temperature(v, lowest.data()), Contains("do not favour the true labels"));
    const double t = mano::fit_temperature(v, y.data());
    REQUIRE(t > 1e-3);
    REQUIRE(t < 1e3);
    std::vector<double> huge(q.begin(), q.end()), tiny(q.begin(), q.end());
    for (double& x : huge) x *= 1e6;
    for (double& x : tiny) x *= 1e-6;
    CHECK_THROWS_WITH(mano::fit_temperature(mano::logits_view(huge.data(), 3, 3), y.data()),
                      Contains("above the largest supported one, 1000 (source accuracy 66.6667%)"));
    CHECK_THROWS_WITH(mano::fit_temperature(mano::logits_view(tiny.data(), 3, 3), y.data()),
                      Contains("below the smallest supported one, 0.001"));
}

TEST_CASE("label_frequencies: the class shares of the labels, every label in [0, K)", "[source]") {
    const std::vector<std::int64_t> labels{0, 2, 2, 1, 2};
    const auto f = mano::label_frequencies(labels.data(), labels.size(), 4);
    CHECK(f == std::vector<double>{0.2, 0.2, 0.6, 0.0});
    const std::vector<std::int64_t> bad{0, 4};
    CHECK_THROWS_WITH(mano::label_frequencies(bad.data(), bad.size(), 4), Catch::Contains("label 4 is outside [0, 4)"));
    CHECK_THROWS_WITH(mano::label_frequencies(bad.data(), 0, 4), Catch::Contains("no labels"));
}

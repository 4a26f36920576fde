// Dispersion (class dispersion of the features per predicted class) against the reference of the
// authors' formula (tests/golden/make_features_golden.py): streaming and merging, precision,
// state round trips, bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <mano/scan/features.hpp>
#include <nlohmann/json.hpp>

#include "features_support.hpp"

using namespace mano_test::feature_test;

TEST_CASE("Dispersion matches the reference of the authors' formula", "[features][golden]") {
    const auto cases = golden().at("dispersion");
    REQUIRE(cases.size() >= 4);
    for (const auto& c : cases) {
        INFO("case '" << c.at("name").get<std::string>() << "'");
        const features f(c.at("features").get<std::string>());
        const auto predicted = predicted_of(c);
        REQUIRE(predicted.size() == f.rows());
        mano::class_dispersion disp(f.dim());
        disp.push(f.data(), predicted.data(), f.rows());
        CHECK(disp.n() == f.rows());
        if (c.contains("error"))
            CHECK_THROWS_WITH(disp.score(), Catch::Contains(c.at("error").get<std::string>()));
        else
            CHECK(matches(disp.score(), c.at("expected").get<double>()));
    }
}

TEST_CASE("Dispersion: pushing in chunks and merging shards equals one push", "[features]") {
    const auto c = golden().at("dispersion").at(2);
    const features f(c.at("features").get<std::string>());
    const auto predicted = predicted_of(c);
    mano::class_dispersion one(f.dim()), parts(f.dim());
    one.push(f.data(), predicted.data(), f.rows());
    for (std::size_t first = 0, step = 1; first < f.rows(); first += step, step = step * 5 % 23 + 1) {
        const std::size_t count = std::min(step, f.rows() - first);
        mano::class_dispersion part(f.dim());
        part.push(f.data() + first * f.dim(), predicted.data() + first, count);
        parts.merge(part);
    }
    CHECK(parts.n() == one.n());
    CHECK(parts.classes() == one.classes());
    CHECK(mano_test::close(parts.score(), one.score(), 1e-12));
}

TEST_CASE("Dispersion keeps its precision when features have huge means", "[features]") {
    const features source("data/golden/features_d16_source.npy");
    auto far_source = source.copy();
    for (auto& x : far_source) x += 1e8;  // naive sums of squares would lose every digit here
    const auto c = golden().at("dispersion").at(1);
    const auto predicted = predicted_of(c);
    mano::class_dispersion near(source.dim()), far(source.dim());
    near.push(source.data(), predicted.data(), source.rows());
    far.push(far_source.data(), predicted.data(), source.rows());
    CHECK(mano_test::close(far.score(), near.score(), 1e-6));
}

TEST_CASE("to_json / from_json round-trips the class dispersion", "[features]") {
    const features f("data/golden/features_d16_target.npy");
    const std::size_t half = f.rows() / 2, d = f.dim();
    const auto predicted = predicted_of(golden().at("dispersion").at(2));
    mano::class_dispersion all(d), part(d);
    all.push(f.data(), predicted.data(), f.rows());
    part.push(f.data(), predicted.data(), half);
    auto back = mano::class_dispersion::from_json(nlohmann::json::parse(part.to_json().dump()));
    CHECK(back.to_json() == part.to_json());
    back.push(f.data() + half * d, predicted.data() + half, f.rows() - half);
    CHECK(mano_test::close(back.score(), all.score(), 1e-12));
}

TEST_CASE("bad features, classes and states are refused with a clear message", "[features][validation]") {
    using Catch::Contains;
    CHECK_THROWS_WITH(mano::class_dispersion(0), Contains("D >= 1"));

    const std::vector<double> rows(5 * 3, 1.0);
    const std::vector<std::int64_t> predicted{0, 1, -1, 1};
    mano::class_dispersion disp(3);
    CHECK_THROWS_WITH(disp.push(rows.data(), predicted.data(), 4), Contains("row 2: predicted class is -1"));
    CHECK(disp.n() == 0);
    CHECK_THROWS_WITH(disp.score(), Contains("no rows"));
    const std::vector<std::int64_t> one_class{7, 7, 7};
    disp.push(rows.data(), one_class.data(), 3);
    CHECK_THROWS_WITH(disp.score(), Contains("all rows are predicted as one class; Dispersion needs at least two "
                                             "predicted classes") && Contains("class 7"));
    const std::vector<std::int64_t> other{1, 2, 3};
    disp.push(rows.data(), other.data(), 3);
    CHECK_THROWS_WITH(disp.score(), Contains("same mean feature vector"));  // all rows are equal
    CHECK_THROWS_WITH(disp.merge(mano::class_dispersion(2)), Contains("different dimensions"));
    // finite features whose class means are too far apart to square (a fuzzed state found it): an
    // error, not an infinite score
    mano::class_dispersion huge(1);
    const std::vector<double> far{-4.6e307, 4.6e307};
    const std::vector<std::int64_t> two{0, 1};
    huge.push(far.data(), two.data(), 2);
    CHECK_THROWS_WITH(huge.score(), Contains("overflows") && Contains("scale the features down"));

    auto disp_state = disp.to_json();
    disp_state["classes"][0]["class"] = -3;
    CHECK_THROWS_WITH(mano::class_dispersion::from_json(disp_state), Contains("class -3"));
}

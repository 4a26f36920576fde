// The Frechet distance of feature moments against the NumPy/SciPy reference
// (tests/golden/make_features_golden.py): the moments, streaming and merging, precision, state
// round trips, bad input. (Dispersion, the other feature-based estimator: test_dispersion.cpp.)
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <mano/scan/features.hpp>
#include <nlohmann/json.hpp>

#include "features_support.hpp"

using namespace mano_test::feature_test;

TEST_CASE("Frechet distance matches the scipy.linalg.sqrtm reference", "[features][golden]") {
    const auto cases = golden().at("frechet");
    REQUIRE(cases.size() >= 9);
    for (const auto& c : cases) {
        INFO("case '" << c.at("name").get<std::string>() << "'");
        const features source(c.at("source").get<std::string>()), target(c.at("target").get<std::string>());
        const auto a = moments_of(source), b = moments_of(target);
        const double expected = c.at("expected").get<double>();
        const double got = mano::frechet_distance(a, b);
        CHECK(std::isfinite(got));
        CHECK(got >= 0);
        CHECK(matches(got, expected));
        CHECK(matches(mano::frechet_distance(b, a), expected));  // symmetric
    }
}

TEST_CASE("feature moments match numpy mean and numpy.cov", "[features][golden]") {
    const auto cases = golden().at("moments");
    for (const auto& c : cases) {
        INFO(c.at("features").get<std::string>());
        const auto m = moments_of(features(c.at("features").get<std::string>()));
        CHECK(all_close(m.mean(), c.at("mean").get<std::vector<double>>(), 1e-12));
        CHECK(all_close(m.covariance(), c.at("covariance").get<std::vector<double>>(), 1e-12));
    }
}

TEST_CASE("pushing in chunks and merging shards equals one push", "[features]") {
    const features source("data/golden/features_d64_source.npy"), target("data/golden/features_d64_target.npy");
    const std::size_t n = source.rows(), d = source.dim();
    const auto whole = moments_of(source);
    mano::feature_moments chunked(d), merged(d);
    for (std::size_t first = 0, step = 1; first < n; first += step, step = step * 3 % 17 + 1) {
        const std::size_t count = std::min(step, n - first);
        chunked.push(source.data() + first * d, count);
        merged.merge(moments_of(source.data() + first * d, count, d));
    }
    merged.merge(mano::feature_moments(d));  // an empty shard changes nothing
    const auto b = moments_of(target);
    for (const auto* m : {&chunked, &merged}) {
        CHECK(m->n() == n);
        CHECK(all_close(m->mean(), whole.mean(), 1e-12));
        CHECK(all_close(m->covariance(), whole.covariance(), 1e-12));
        CHECK(mano_test::close(mano::frechet_distance(*m, b), mano::frechet_distance(whole, b), 1e-10));
    }
}

TEST_CASE("moments keep their precision when features have huge means", "[features]") {
    const features source("data/golden/features_d16_source.npy"), target("data/golden/features_d16_target.npy");
    auto far_source = source.copy(), far_target = target.copy();
    for (auto& x : far_source) x += 1e8;  // naive sums of squares would lose every digit here
    for (auto& x : far_target) x += 1e8;
    const auto a = moments_of(far_source.data(), source.rows(), source.dim());
    const auto b = moments_of(far_target.data(), target.rows(), target.dim());
    CHECK(all_close(a.covariance(), moments_of(source).covariance(), 1e-6));
    CHECK(mano_test::close(mano::frechet_distance(a, b),
                           mano::frechet_distance(moments_of(source), moments_of(target)), 1e-6));
}

TEST_CASE("to_json / from_json round-trips the feature moments", "[features]") {
    const features f("data/golden/features_d16_target.npy");
    const std::size_t half = f.rows() / 2, d = f.dim();
    const auto whole = moments_of(f);
    const auto first = moments_of(f.data(), half, d);
    auto restored = mano::feature_moments::from_json(nlohmann::json::parse(first.to_json().dump()));
    CHECK(restored.to_json() == first.to_json());
    restored.push(f.data() + half * d, f.rows() - half);
    CHECK(all_close(restored.covariance(), whole.covariance(), 1e-12));
}

TEST_CASE("bad features and moments states are refused with a clear message", "[features][validation]") {
    using Catch::Contains;
    CHECK_THROWS_WITH(mano::feature_moments(0), Contains("D >= 1"));

    std::vector<double> rows(5 * 3, 1.0);
    rows[4 * 3 + 2] = std::numeric_limits<double>::quiet_NaN();
    mano::feature_moments m(3);
    m.push(rows.data(), 2);
    CHECK_THROWS_WITH(m.push(rows.data(), 5), Contains("row 6, column 2: feature is NaN"));
    CHECK(m.n() == 2);  // all-or-nothing
    rows[4 * 3 + 2] = -std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH(m.push(rows.data(), 5), Contains("feature is -Inf"));
    CHECK_THROWS_WITH(m.push(rows.data(), 5, 1000), Contains("row 1004, column 2"));  // numbered from first_row
    try {
        m.push(rows.data(), 5);
        FAIL("a -Inf feature was accepted");
    } catch (const mano::row_input_error& e) {
        CHECK(e.which == mano::row_input_error::input::features);  // a front end names the features' file
    }
    CHECK_THROWS_WITH(m.merge(mano::feature_moments(4)), Contains("different dimensions (D = 3 and 4)"));
    CHECK_THROWS_WITH(mano::frechet_distance(m, mano::feature_moments(4)), Contains("same dimension"));
    CHECK_THROWS_WITH(mano::frechet_distance(m, moments_of(rows.data(), 1, 3)),
                      Contains("at least 2 rows in each set") && Contains("target has 1"));
    CHECK_THROWS_WITH(mano::feature_moments(3).covariance(), Contains("at least 2 feature rows"));
    // finite features too far apart to square: an error, not an infinite distance
    const std::vector<double> far{-4.6e307, 4.6e307};
    mano::feature_moments a(1);
    a.push(far.data(), 2);
    const std::vector<double> near{0.0, 1.0};
    mano::feature_moments c(1);
    c.push(near.data(), 2);
    CHECK_THROWS_WITH(mano::frechet_distance(a, c), Contains("overflows"));

    CHECK_THROWS_WITH(mano::feature_moments::from_json({{"format", "mano-accumulator"}}), Contains("not a mano feature"));
    auto state = moments_of(rows.data(), 3, 3).to_json();
    state["mean"] = {1.0, 2.0};
    CHECK_THROWS_WITH(mano::feature_moments::from_json(state), Contains("needs 3 values"));
    state.erase("mean");
    CHECK_THROWS_WITH(mano::feature_moments::from_json(state), Contains("feature moments state"));
}

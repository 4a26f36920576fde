// The feature-based estimators (Frechet distance, Dispersion) against the NumPy/SciPy reference
// (tests/golden/make_features_golden.py), streaming and merging, state round trips, bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>

#include <mano/features.hpp>
#include <nlohmann/json.hpp>

#include "support.hpp"

namespace {

struct features {
    explicit features(const std::string& relative) : file(mano_test::data_path(relative)) {
        REQUIRE(file.view().type() == mano::dtype::float64);
    }
    const double* data() const { return static_cast<const double*>(file.view().data()); }
    std::size_t rows() const { return file.view().rows(); }
    std::size_t dim() const { return file.view().cols(); }
    std::vector<double> copy() const { return {data(), data() + rows() * dim()}; }
    mano_test::npy_file file;
};

nlohmann::json golden() {
    std::ifstream in(mano_test::data_path("golden/features.json"));
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

// 1e-6 relative, or 1e-9 absolute for values near 0 (a distance between identical sets)
bool matches(double got, double expected) {
    return std::abs(got - expected) <= std::max(1e-6 * std::abs(expected), 1e-9);
}

bool all_close(const std::vector<double>& a, const std::vector<double>& b, double rel) {
    if (a.size() != b.size()) return false;
    double scale = 0;
    for (const double x : b) scale = std::max(scale, std::abs(x));
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > rel * scale) return false;
    return true;
}

mano::feature_moments moments_of(const double* rows, std::size_t n, std::size_t d) {
    mano::feature_moments m(d);
    m.push(rows, n);
    return m;
}

mano::feature_moments moments_of(const features& f) { return moments_of(f.data(), f.rows(), f.dim()); }

std::vector<std::int64_t> predicted_of(const nlohmann::json& c) { return c.at("predicted").get<std::vector<std::int64_t>>(); }

}  // namespace

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

    const auto c = golden().at("dispersion").at(1);
    const auto predicted = predicted_of(c);
    mano::class_dispersion near(source.dim()), far(source.dim());
    near.push(source.data(), predicted.data(), source.rows());
    far.push(far_source.data(), predicted.data(), source.rows());
    CHECK(mano_test::close(far.score(), near.score(), 1e-6));
}

TEST_CASE("to_json / from_json round-trips both states", "[features]") {
    const features f("data/golden/features_d16_target.npy");
    const std::size_t half = f.rows() / 2, d = f.dim();
    const auto whole = moments_of(f);
    const auto first = moments_of(f.data(), half, d);
    auto restored = mano::feature_moments::from_json(nlohmann::json::parse(first.to_json().dump()));
    CHECK(restored.to_json() == first.to_json());
    restored.push(f.data() + half * d, f.rows() - half);
    CHECK(all_close(restored.covariance(), whole.covariance(), 1e-12));

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
    CHECK_THROWS_WITH(mano::feature_moments(0), Contains("D >= 1"));
    CHECK_THROWS_WITH(mano::class_dispersion(0), Contains("D >= 1"));

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
    auto disp_state = disp.to_json();
    disp_state["classes"][0]["class"] = -3;
    CHECK_THROWS_WITH(mano::class_dispersion::from_json(disp_state), Contains("class -3"));
}

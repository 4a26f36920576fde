// Student's t quantile and cdf (prediction intervals) against 40-digit references
// (tests/golden/make_student_t_golden.py), their consistency with each other, and their refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include <mano/base/error.hpp>
#include <mano/calibration/student_t.hpp>

#include "support.hpp"

namespace {

// 1e-10 relative; exact where the reference is 0 (the median, and tails below the double range).
bool near(double actual, double expected) {
    if (expected == 0) return actual == 0;
    return std::abs(actual - expected) <= 1e-10 * std::abs(expected);
}

}  // namespace

TEST_CASE("Student t quantiles and cdf match 40-digit references", "[student_t]") {
    const auto cases = mano_test::golden_cases("student_t.json");
    REQUIRE(cases.size() >= 100);
    for (const auto& c : cases) {
        const auto dof = c.at("dof").get<double>();
        const auto expected = c.at("expected").get<double>();
        if (c.at("kind") == "quantile") {
            const auto p = c.at("probability").get<double>();
            INFO("quantile of " << p << " at dof " << dof);
            const double actual = mano::student_t_quantile(p, dof);
            INFO("got " << actual << ", expected " << expected);
            CHECK(near(actual, expected));
        } else {
            const auto t = c.at("t").get<double>();
            INFO("cdf at t = " << t << ", dof " << dof);
            const double actual = mano::student_t_cdf(t, dof);
            INFO("got " << actual << ", expected " << expected);
            CHECK(near(actual, expected));
        }
    }
}

TEST_CASE("the Student t quantile inverts the cdf across dof and tails", "[student_t]") {
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> log10_dof(0, 6), log10_p(-10, std::log10(0.5));
    for (int i = 0; i < 500; ++i) {
        const double dof = std::pow(10.0, log10_dof(gen)), p = std::pow(10.0, log10_p(gen));
        INFO("p = " << p << ", dof = " << dof);
        const double t = mano::student_t_quantile(p, dof);
        CHECK(t < 0);
        CHECK(std::abs(mano::student_t_cdf(t, dof) - p) <= 1e-12 * p);
        // Symmetry, with the upper tail probability that 1 - p really holds after rounding.
        const double upper = 1 - p;
        CHECK(mano::student_t_quantile(upper, dof) == Approx(-mano::student_t_quantile(1 - upper, dof)).epsilon(1e-14));
    }
    CHECK(mano::student_t_quantile(0.5, 3.7) == 0);
    CHECK(mano::student_t_cdf(0, 3.7) == 0.5);
    CHECK(mano::student_t_cdf(std::numeric_limits<double>::infinity(), 3.7) == 1);
    CHECK(mano::student_t_cdf(-std::numeric_limits<double>::infinity(), 3.7) == 0);
    // The Cauchy distribution (dof 1) in closed form; tails beyond 1e154 need log-space arithmetic.
    CHECK(mano::student_t_quantile(1e-300, 1) == Approx(-1 / (3.14159265358979323846 * 1e-300)).epsilon(1e-12));
    // A quantile beyond the double range (tiny dof) is infinite, not NaN or a wrong finite value.
    CHECK(mano::student_t_quantile(0.2, 0.001) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("Student t functions refuse invalid arguments with a message", "[student_t]") {
    using Catch::Matchers::Contains;
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    for (double p : {0.0, 1.0, -0.1, 1.5, nan, inf})
        CHECK_THROWS_WITH(mano::student_t_quantile(p, 3), Contains("the probability must be in (0, 1)"));
    CHECK_THROWS_WITH(mano::student_t_quantile(1.5, 3), Contains("(got 1.5)"));
    for (double dof : {0.0, -1.0, nan, inf}) {
        CHECK_THROWS_WITH(mano::student_t_quantile(0.9, dof), Contains("degrees of freedom must be a finite number > 0"));
        CHECK_THROWS_WITH(mano::student_t_cdf(1.0, dof), Contains("degrees of freedom must be a finite number > 0"));
    }
    CHECK_THROWS_AS(mano::student_t_cdf(nan, 3), mano::error);
    CHECK_THROWS_WITH(mano::student_t_cdf(nan, 3), Contains("t is NaN"));
}

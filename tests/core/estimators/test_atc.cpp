// ATC: the threshold rule on distinct source scores, ties and bad input (its fitted thresholds are
// checked against the reference in tests/core/test_source.cpp).
#include <catch2/catch.hpp>

#include <cmath>

#include <mano/shift/source_fit.hpp>

#include "../support.hpp"

using Catch::Contains;

TEST_CASE("ATC threshold: distinct score values are the candidates", "[source][atc]") {
    // C = 2 correct: #{s > 0.7} = 2, so fp = fn = 0 at t = 0.7.
    CHECK(mano::atc_threshold({0.9, 0.8, 0.7, 0.6}, {true, true, false, false}) == 0.7);
    // Gaps 1, 1, 2 at 0.1, 0.2, 0.3: the first smallest wins.
    CHECK(mano::atc_threshold({0.3, 0.2, 0.2, 0.1}, {true, true, false, false}) == 0.1);
    // Tied scores stay on one side: at 0.5, #{s > 0.5} = 1 is 2 away from C = 3, at 0.2 it is 1 away
    // (a walk over positions would stop inside the tie at 0.5 with fp = fn), in any input order.
    CHECK(mano::atc_threshold({0.2, 0.5, 0.5, 0.5, 0.9}, {false, true, false, true, true}) == 0.2);
    CHECK(mano::atc_threshold({0.5, 0.9, 0.5, 0.2, 0.5}, {true, true, false, false, true}) == 0.2);
    // 100% accuracy: the lowest score; 0%: the highest (the walk starts at the lowest score).
    CHECK(mano::atc_threshold({0.4, 0.3, 0.8}, {true, true, true}) == 0.3);
    CHECK(mano::atc_threshold({0.4, 0.3, 0.8}, {false, false, false}) == 0.8);
    CHECK(mano::atc_threshold({-0.5}, {true}) == -0.5);

    CHECK_THROWS_WITH(mano::atc_threshold({}, {}), Contains("no source scores"));
    CHECK_THROWS_WITH(mano::atc_threshold({0.1, 0.2}, {true}), Contains("2 scores but 1 correctness flags"));
    CHECK_THROWS_WITH(mano::atc_threshold({0.1, std::nan("")}, {true, false}), Contains("source score 1 is NaN"));
}

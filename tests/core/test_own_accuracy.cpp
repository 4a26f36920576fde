// The interval of a set's own accuracy (src/mano/prediction/own_accuracy.hpp): ends computed by
// SciPy (scipy.stats.binom.pmf summed over the candidates, as tests/cli/line_reference.py
// own_ends does), and the normal form beyond exact_rows_max against the normal quantile.
#include <catch2/catch.hpp>

#include <cmath>

#include "mano/prediction/own_accuracy.hpp"
#include "mano/calibration/student_t.hpp"

using namespace mano;

TEST_CASE("a set's own accuracy: the binomial mixture's quantiles, as SciPy gives them") {
    // one candidate: Binomial(20, 0.8)'s 5% and 95% quantiles
    auto ends = own_accuracy_ends({{0.8, 1}}, 1, 20, 0.9);
    CHECK(ends.first == Approx(0.65));
    CHECK(ends.second == Approx(0.95));
    // weighted candidates, one above 1 (clipped), and a total that counts a new set
    ends = own_accuracy_ends({{0.7, 1}, {0.9, 2}, {1.2, 1}}, 4.5, 50, 0.9);
    CHECK(ends.first == Approx(0.66));
    CHECK(ends.second == Approx(1.0));
    // two rows near 0.97: one wrong row is within the interval
    ends = own_accuracy_ends({{0.97, 1}}, 1, 2, 0.9);
    CHECK(ends.first == Approx(0.5));
    CHECK(ends.second == Approx(1.0));
}

TEST_CASE("a set's own accuracy beyond exact_rows_max: each binomial as its normal") {
    const auto ends = own_accuracy_ends({{0.5, 1}}, 1, 1000000, 0.9);
    const double half = normal_quantile(0.95) * std::sqrt(0.25 / 1e6);
    CHECK(ends.first == Approx(0.5 - half).epsilon(1e-9));
    CHECK(ends.second == Approx(0.5 + half).epsilon(1e-9));
    // a point mass at 1 stays there
    CHECK(own_accuracy_ends({{1.0, 1}}, 1, 1000000, 0.9).first == Approx(1.0).epsilon(1e-15));
}

TEST_CASE("interval candidates: the interval's own quantiles at its level") {
    const auto c = interval_candidates(0.6, 0.1, 0.9, 0);
    REQUIRE(c.size() == 200);
    // the 10th and 190th of 200 are the 5% and 95% quantiles' neighbours: (9.5 / 200) = 4.75%
    CHECK(c[9].value == Approx(0.6 + 0.1 / normal_quantile(0.95) * normal_quantile(0.0475)));
    CHECK(c[190].value == Approx(0.6 - 0.1 / normal_quantile(0.95) * normal_quantile(0.0475)));
}

// The audited interval near accuracy 1 (src/mano/audit/ppi.hpp, docs/audit.md "The interval"): the
// PPI interval joined with the score set at the correctness model's variance for each candidate
// accuracy. With a model that gives every row the same f, that set is the Wilson score interval
// with the finite-population factor, so an audit without errors is not a point at 1.
// The numbers: tests/reference/audit_reference.py's ppi() (NumPy, SciPy's brentq) on the same rows,
// and the closed form below:
//   from scipy.stats import norm, beta; z = norm.ppf(0.95); k = z * z * (1 - 100 / 10000) / 100
//   1 / (1 + k)             -> 0.9739138346189481 (Wilson's lower end for 100 of 100, times the factor)
//   beta.ppf(0.05, 100, 1)  -> 0.9704869503929601 (Clopper-Pearson's one-sided 95% bound, for scale)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <tuple>
#include <vector>

#include "mano/audit/ppi.hpp"
#include "mano/calibration/correctness_model.hpp"
#include "mano/scan/correctness_histogram.hpp"

namespace {

// A labeled result of 2 classes: `right` correct and `wrong` wrong rows at each (confidence, class).
mano::result labeled_rows(const std::vector<std::tuple<double, std::size_t, std::size_t, std::size_t>>& groups) {
    mano::result r;
    r.k = 2;
    mano::correctness_histogram h(2);
    h.labeled = true;
    std::size_t right_all = 0;
    for (const auto& [confidence, predicted, right, wrong] : groups) {
        for (std::size_t i = 0; i < right + wrong; ++i) h.add(confidence, predicted, i < right);
        r.n += right + wrong;
        right_all += right;
    }
    r.accuracy = static_cast<double>(right_all) / static_cast<double>(r.n);
    r.correctness = h;
    return r;
}

mano::calibration model_calibration(double intercept, double slope) {
    mano::calibration c;
    c.k = 2;
    c.correctness = mano::correctness_model{};
    c.correctness->intercept = intercept;
    c.correctness->slope = slope;
    c.correctness->classes = 2;
    return c;
}

}  // namespace

TEST_CASE("100 labels all correct: the lower end is the labels' own binomial bound, not a point at 1", "[audit]") {
    // f = 0.99 on every row; the set's accuracy is 0.97 (9700 of 10000), the audit 100 of 100 right
    const auto c = model_calibration(std::log(0.99 / 0.01), 0);
    const auto all = labeled_rows({{0.95, 0, 9700, 300}});
    const auto a = mano::audit(c, all, labeled_rows({{0.95, 0, 100, 0}}), 0.9);
    CHECK(a.method == "ppi");
    CHECK(a.accuracy == Approx(1.0).epsilon(1e-12));
    CHECK(a.lower == Approx(0.9739138346189481).epsilon(1e-9));  // PPI alone gave 0.9917
    CHECK(a.lower < 0.975);
    CHECK(a.lower > 0.9704869503929601);
    CHECK(a.upper == 1.0);
    // 95 of 100: the score set's lower end (Wilson's), the t interval's upper end
    const auto five = mano::audit(c, all, labeled_rows({{0.95, 0, 95, 5}}), 0.9);
    CHECK(five.accuracy == Approx(0.95).epsilon(1e-12));
    CHECK(five.lower == Approx(0.9011547344951834).epsilon(1e-9));
    CHECK(five.upper == Approx(0.9869441417054694).epsilon(1e-9));
}

TEST_CASE("the score set widens an audit whose rows all fall in one cell of a two-cell set", "[audit]") {
    // f = the cell's mean confidence: 0.6 on 100 rows (60 right), 0.95 on 100 (95 right); the
    // cases of tests/core/test_audit.cpp's "the audited interval", which PPI alone gave as
    // [0.651, 1] and [0.784, 0.866] (the set's accuracy, 0.775, outside)
    const auto c = model_calibration(0, 1);
    const auto all = labeled_rows({{0.6, 0, 60, 40}, {0.95, 1, 95, 5}});
    const auto twelve = mano::audit(c, all, labeled_rows({{0.6, 0, 4, 2}, {0.95, 1, 6, 0}}), 0.9);
    CHECK(twelve.accuracy == Approx(0.8333333333333333).epsilon(1e-12));
    CHECK(twelve.lower == Approx(0.6417022973431873).epsilon(1e-9));
    CHECK(twelve.upper == 1.0);
    const auto same = mano::audit(c, all, labeled_rows({{0.95, 1, 20, 0}}), 0.9);
    CHECK(same.accuracy == Approx(0.825).epsilon(1e-12));
    CHECK(same.lower == Approx(0.6825230740424046).epsilon(1e-9));
    CHECK(same.upper == Approx(0.9231596904956976).epsilon(1e-9));
    CHECK((same.lower < 0.775 && 0.775 < same.upper));
}

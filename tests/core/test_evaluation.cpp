// The statistics that compare estimators across shifted test sets, against SciPy and NumPy
// (tests/golden/make_evaluation_golden.py), and their refusals of data they cannot judge.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <utility>

#include <nlohmann/json.hpp>

#include <mano/calibration/statistics.hpp>

#include "support.hpp"

namespace {

// 1e-12 relative, or 1e-12 absolute for values near zero (the perfectly linear case's MAE).
bool near(double actual, double expected) {
    return std::abs(actual - expected) <= 1e-12 * std::max({1.0, std::abs(actual), std::abs(expected)});
}

}  // namespace

TEST_CASE("evaluation statistics match SciPy and NumPy", "[evaluation]") {
    const auto cases = mano_test::golden_cases("evaluation.json");
    REQUIRE(cases.size() >= 11);
    for (const auto& c : cases) {
        INFO("case '" << c.at("name").get<std::string>() << "'");
        const auto scores = c.at("scores").get<std::vector<double>>();
        const auto accuracies = c.at("accuracies").get<std::vector<double>>();
        const auto& e = c.at("expected");
        const auto s = mano::summarize(scores, accuracies);
        CHECK(s.n == scores.size());
        CHECK(near(s.pearson, e.at("pearson").get<double>()));
        CHECK(near(s.r2, e.at("r2").get<double>()));
        CHECK(near(s.spearman, e.at("spearman").get<double>()));
        CHECK(near(s.kendall, e.at("kendall").get<double>()));
        CHECK(near(s.mae, e.at("mae").get<double>()));
        CHECK(s.pearson == mano::pearson(scores, accuracies));
        CHECK(s.spearman == mano::spearman(scores, accuracies));
        CHECK(s.kendall == mano::kendall_tau_b(scores, accuracies));
        CHECK(s.mae == mano::loo_mae(scores, accuracies));
        const auto fit = mano::fit_line(scores, accuracies);
        CHECK(near(fit.slope, e.at("slope").get<double>()));
        CHECK(near(fit.intercept, e.at("intercept").get<double>()));
        CHECK(near(fit.residual_se, e.at("residual_se").get<double>()));
        CHECK(fit.n == scores.size());
        CHECK(fit.x_min == *std::min_element(scores.begin(), scores.end()));
        CHECK(fit.x_max == *std::max_element(scores.begin(), scores.end()));
    }
}

TEST_CASE("kendall_tau_b matches the pairwise definition on many tied sets", "[evaluation]") {
    std::mt19937_64 gen(31);
    std::uniform_int_distribution<int> level(0, 40);
    std::vector<double> x(1001), y(1001);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = level(gen) / 40.0;
        y[i] = 0.5 * x[i] + level(gen) / 80.0;
    }
    double concordant_minus_discordant = 0, untied_x = 0, untied_y = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        for (std::size_t j = i + 1; j < x.size(); ++j) {
            const double dx = x[i] - x[j], dy = y[i] - y[j];
            concordant_minus_discordant += (dx * dy > 0) - (dx * dy < 0);
            untied_x += dx != 0;
            untied_y += dy != 0;
        }
    const double tau = concordant_minus_discordant / std::sqrt(untied_x * untied_y);
    CHECK(near(mano::kendall_tau_b(x, y), tau));
    CHECK(near(mano::kendall_tau_b(y, x), tau));
}

TEST_CASE("rank statistics only flip sign when the score is a decreasing function of it", "[evaluation]") {
    const std::vector<double> score{0.3, 0.1, 0.7, 0.5, 0.5, 0.9, 0.2};
    const std::vector<double> accuracy{0.55, 0.40, 0.80, 0.61, 0.72, 0.93, 0.41};
    std::vector<double> entropy(score.size());
    for (std::size_t i = 0; i < score.size(); ++i) entropy[i] = -std::log(score[i]);
    CHECK(near(mano::spearman(entropy, accuracy), -mano::spearman(score, accuracy)));
    CHECK(near(mano::kendall_tau_b(entropy, accuracy), -mano::kendall_tau_b(score, accuracy)));
}

TEST_CASE("fit_line with two sets, or constant accuracies", "[evaluation]") {
    const auto two = mano::fit_line({0.25, 0.75}, {0.5, 0.75});
    CHECK(two.slope == 0.5);
    CHECK(two.intercept == 0.375);
    CHECK(std::isnan(two.residual_se));
    const auto flat = mano::fit_line({0.1, 0.4, 0.3}, {0.6, 0.6, 0.6});
    CHECK(flat.slope == 0);
    CHECK(near(flat.intercept, 0.6));
    CHECK(flat.residual_se == 0);
}

TEST_CASE("evaluation refuses data it cannot judge, saying why", "[evaluation][validation]") {
    const std::vector<double> s{0.1, 0.2, 0.3}, a{0.5, 0.7, 0.6};
    CHECK_THROWS_WITH(mano::pearson(s, {0.5, 0.7}), Catch::Contains("3 scores but 2 accuracies"));
    CHECK_THROWS_WITH(mano::summarize({0.1, 0.2}, {0.5, 0.7, 0.6}), Catch::Contains("one score and one accuracy"));
    CHECK_THROWS_WITH(mano::spearman({0.1}, {0.5}), Catch::Contains("at least 2 test sets (got 1)"));
    CHECK_THROWS_WITH(mano::fit_line({}, {}), Catch::Contains("at least 2 test sets (got 0)"));
    CHECK_THROWS_WITH(mano::loo_mae({0.1, 0.2}, {0.5, 0.7}), Catch::Contains("leave-one-out MAE needs at least 3"));
    CHECK_THROWS_WITH(mano::summarize({0.1, 0.2}, {0.5, 0.7}), Catch::Contains("at least 3 test sets (got 2)"));

    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH(mano::pearson({0.1, nan, 0.3}, a), Catch::Contains("scores[1] is NaN"));
    CHECK_THROWS_WITH(mano::kendall_tau_b(s, {0.5, 0.7, -inf}), Catch::Contains("accuracies[2] is -Inf"));
    CHECK_THROWS_WITH(mano::fit_line({inf, 0.2, 0.3}, a), Catch::Contains("scores[0] is +Inf"));

    const std::vector<double> same{0.4, 0.4, 0.4};
    using statistic = double (*)(const std::vector<double>&, const std::vector<double>&);
    for (const auto& [name, f] : {std::pair<std::string, statistic>{"Pearson", mano::pearson},
                                  {"Spearman", mano::spearman}, {"Kendall", mano::kendall_tau_b}}) {
        CHECK_THROWS_WITH(f(same, a), Catch::Contains("all scores are equal") && Catch::Contains("undefined"));
        CHECK_THROWS_WITH(f(s, same), Catch::Contains("all accuracies are equal") && Catch::Contains(name));
    }
    CHECK_THROWS_WITH(mano::fit_line(same, a), Catch::Contains("all scores are equal") && Catch::Contains("cannot be fitted"));
    // equal but for rounding (MDE saturated at log K, a few ulps apart on the scalar kernel): equal
    const std::vector<double> ulps{5.991464547107982, 5.991464547107983, 5.991464547107981};
    CHECK_THROWS_WITH(mano::fit_line(ulps, a), Catch::Contains("all scores are equal"));
    CHECK_THROWS_WITH(mano::pearson(ulps, a), Catch::Contains("all scores are equal"));
    CHECK(mano::fit_line({5.9914, 5.9915, 5.9916}, a).slope != 0);
    CHECK_THROWS_WITH(mano::summarize(same, a), Catch::Contains("all scores are equal"));
    CHECK_THROWS_WITH(mano::loo_mae({0.2, 0.2, 0.2, 0.9}, {0.5, 0.6, 0.7, 0.9}),
                      Catch::Contains("leaving out test set 3 leaves all other scores equal"));
    CHECK_THROWS_WITH(mano::loo_mae({0.9, 0.2, 0.9, 0.9}, {0.5, 0.6, 0.7, 0.9}),
                      Catch::Contains("leaving out test set 1"));
}

// True accuracy from labels, standard errors, evaluation over sets, calibration and prediction.
#include <catch2/catch.hpp>

#include <cmath>

#include "support.hpp"

using mano_test::close;
using mano_test::random_logits;

namespace {

std::vector<std::int64_t> argmax_rows(const std::vector<float>& q, std::size_t k) {
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < q.size() / k; ++i)
        out.push_back(std::max_element(q.begin() + i * k, q.begin() + (i + 1) * k) - (q.begin() + i * k));
    return out;
}

// A labeled set whose score and accuracy are given directly.
mano::labeled_set made_set(const std::string& name, double score, double accuracy, const std::string& group = "") {
    mano::labeled_set s;
    s.name = name;
    s.group = group;
    s.scores.n = 1000;
    s.scores.k = 10;
    s.scores.confscore = score;
    s.scores.se[static_cast<int>(mano::method::confscore)] = 0.01;
    s.scores.accuracy = accuracy;
    return s;
}

}  // namespace

TEST_CASE("labels give the true accuracy, merged across shards") {
    const std::size_t n = 900, k = 7;
    const auto q = random_logits(n, k, 2.0, 3);
    auto labels = argmax_rows(q, k);
    for (std::size_t i = 0; i < n; i += 3) labels[i] = (labels[i] + 1) % k;  // a third are wrong
    mano::options o;
    o.methods = {mano::method::mano};
    const mano::logits_view all(q.data(), n, k);
    mano::accumulator a(k, o), b(k, o);
    mano::row_inputs first, second;
    first.labels = labels.data();
    second.labels = labels.data() + 400;
    a.push(all.slice(0, 400), first);
    b.push(all.slice(400, n - 400), second);
    a.merge(b);
    const auto r = mano::accumulator::from_json(a.to_json()).finalize();
    REQUIRE(r.accuracy);
    CHECK(*r.accuracy == Approx(2.0 / 3.0).epsilon(1e-12));
    CHECK(r.to_json().at("accuracy").get<double>() == *r.accuracy);

    SECTION("a label outside [0, K) is an error naming the row, and the state is unchanged") {
        auto bad = labels;
        bad[5] = 7;
        mano::accumulator c(k, o);
        mano::row_inputs in;
        in.labels = bad.data();
        in.first_row = 100;
        CHECK_THROWS_WITH(c.push(all.slice(0, 10), in), Catch::Contains("row 105") && Catch::Contains("label 7"));
        CHECK(c.rows() == 0);
    }
    SECTION("labels for some pushes but not others are refused") {
        mano::accumulator c(k, o);
        c.push(all.slice(0, 10), first);
        CHECK_THROWS_WITH(c.push(all.slice(10, 10)), Catch::Contains("labels"));
        mano::accumulator d(k, o);
        d.push(all.slice(0, 10));
        CHECK_THROWS_WITH(d.merge(c), Catch::Contains("labels"));
    }
}

TEST_CASE("standard errors of the averages follow the per-row sample variance") {
    const std::size_t n = 2000, k = 10;
    const auto q = random_logits(n, k, 3.0, 8);
    mano::options o;
    o.methods = {mano::method::mano, mano::method::confscore, mano::method::entropy};
    o.norm = mano::normalization::softmax;
    const mano::logits_view all(q.data(), n, k);
    const auto r = mano::score(all, o);
    double sum = 0, sum_sq = 0, pow_sum = 0, pow_sq = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const float* row = q.data() + i * k;
        const double m = *std::max_element(row, row + k);
        double s = 0;
        for (std::size_t c = 0; c < k; ++c) s += std::exp(row[c] - m);
        double a = 0;
        for (std::size_t c = 0; c < k; ++c) a += std::pow(std::exp(row[c] - m) / s, 4.0) / k;
        sum += 1 / s;
        sum_sq += 1 / (s * s);
        pow_sum += a;
        pow_sq += a * a;
    }
    const double nn = static_cast<double>(n);
    const double conf_se = std::sqrt((sum_sq - sum * sum / nn) / (nn - 1) / nn);
    CHECK(close(*r.se[static_cast<int>(mano::method::confscore)], conf_se, 1e-6));
    const double mean = pow_sum / nn;
    const double mano_se = 0.25 * std::pow(mean, -0.75) * std::sqrt((pow_sq - pow_sum * pow_sum / nn) / (nn - 1) / nn);
    CHECK(close(*r.se[static_cast<int>(mano::method::mano)], mano_se, 1e-5));
    CHECK(r.se[static_cast<int>(mano::method::entropy)]);
    CHECK_FALSE(r.se[static_cast<int>(mano::method::nuclear)]);
    CHECK(r.to_json().at("methods").at("mano").contains("se"));
    SECTION("the state keeps them through JSON and merge") {
        mano::accumulator a(k, o), b(k, o);
        a.push(all.slice(0, 777));
        b.push(all.slice(777, n - 777));
        a.merge(mano::accumulator::from_json(b.to_json()));
        const auto merged = a.finalize();
        CHECK(close(*merged.se[static_cast<int>(mano::method::mano)], *r.se[static_cast<int>(mano::method::mano)], 1e-9));
    }
}

TEST_CASE("calibration fits the line and predicts with a t interval") {
    std::vector<mano::labeled_set> sets;
    const std::vector<double> scores{0.2, 0.35, 0.4, 0.55, 0.7, 0.8};
    const std::vector<double> noise{0.01, -0.02, 0.015, 0.0, -0.01, 0.012};
    for (std::size_t i = 0; i < scores.size(); ++i)
        sets.push_back(made_set("s" + std::to_string(i), scores[i], 0.5 * scores[i] + 0.3 + noise[i]));
    std::vector<std::string> notes;
    const auto cal = mano::calibrate(sets, mano::options{}, &notes);
    REQUIRE(cal.methods.size() == 1);
    const auto& mc = cal.methods.front();
    CHECK(mc.m == mano::method::confscore);
    CHECK(mc.fit.n == 6);
    CHECK(mc.fit.x_min == 0.2);
    CHECK(mc.fit.x_max == 0.8);
    CHECK(cal.k == 10);
    CHECK(cal.opts.methods == std::vector<mano::method>{mano::method::confscore});

    const auto p = mano::predict(mc, 0.5, 0.01, 0.9);
    const double xbar = 0.5, sxx = mc.score_sxx;
    const double var = mc.fit.residual_se * mc.fit.residual_se * (1 + 1.0 / 6 + (0.5 - xbar) * (0.5 - xbar) / sxx) +
                       mc.fit.slope * mc.fit.slope * 1e-4;
    const double half = mano::student_t_quantile(0.95, 4) * std::sqrt(var);
    const double fitted = mc.fit.slope * 0.5 + mc.fit.intercept;
    CHECK(mc.score_mean == Approx(xbar).epsilon(1e-12));
    CHECK(p.accuracy == Approx(fitted).epsilon(1e-12));
    CHECK(p.lower == Approx(fitted - half).epsilon(1e-12));
    CHECK(p.upper == Approx(fitted + half).epsilon(1e-12));
    CHECK_FALSE(p.extrapolated);
    CHECK(mano::predict(mc, 0.5, std::nullopt, 0.9).upper < p.upper);  // the score's own noise widens it
    CHECK(mano::predict(mc, 0.5, 0.01, 0.5).upper < p.upper);
    const auto far = mano::predict(mc, 5.0, std::nullopt, 0.9);
    CHECK(far.extrapolated);
    CHECK(far.accuracy == 1.0);  // clipped
    CHECK(far.upper == 1.0);
    CHECK_THROWS_WITH(mano::predict(mc, 0.5, std::nullopt, 1.0), Catch::Contains("level"));

    SECTION("JSON round trip and validation") {
        const auto back = mano::calibration::from_json(cal.to_json());
        CHECK(back.to_json() == cal.to_json());
        auto j = cal.to_json();
        j["methods"]["confscore"]["n"] = 2;
        CHECK_THROWS_WITH(mano::calibration::from_json(j), Catch::Contains("inconsistent"));
        j = cal.to_json();
        j["methods"]["nonsense"] = j["methods"]["confscore"];
        CHECK_THROWS_WITH(mano::calibration::from_json(j), Catch::Contains("unknown method"));
        j = cal.to_json();
        j.erase("k");
        CHECK_THROWS_AS(mano::calibration::from_json(j), mano::error);
        CHECK_THROWS_WITH(mano::calibration::from_json(nlohmann::json::array()), Catch::Contains("not a mano calibration"));
    }
    SECTION("a result with another K is refused") {
        mano::result r;
        r.k = 5;
        r.confscore = 0.4;
        CHECK_THROWS_WITH(mano::predict(cal, r, 0.9), Catch::Contains("5 classes"));
    }
    SECTION("too few sets, or constant scores") {
        CHECK_THROWS_WITH(mano::calibrate({sets[0], sets[1]}, mano::options{}), Catch::Contains("at least 3"));
        std::vector<mano::labeled_set> flat{made_set("a", 0.5, 0.6), made_set("b", 0.5, 0.7), made_set("c", 0.5, 0.8)};
        CHECK_THROWS_WITH(mano::calibrate(flat, mano::options{}), Catch::Contains("no method"));
    }
}

TEST_CASE("evaluate reports every set and the paper's statistics, per group too") {
    std::vector<mano::labeled_set> sets;
    for (int i = 0; i < 6; ++i)
        sets.push_back(made_set("s" + std::to_string(i), 0.1 * i, 0.3 + 0.09 * i + (i % 2 ? 0.01 : -0.01), i < 3 ? "a" : "b"));
    const auto report = mano::evaluate(sets);
    CHECK(report.at("sets").size() == 6);
    CHECK(report.at("sets")[4].at("group") == "b");
    CHECK(report.at("sets")[4].at("accuracy").get<double>() == *sets[4].scores.accuracy);
    std::vector<double> x, y;
    for (const auto& s : sets) {
        x.push_back(*s.scores.confscore);
        y.push_back(*s.scores.accuracy);
    }
    const auto expected = mano::summarize(x, y);
    CHECK(report.at("summary").at("confscore").at("r2").get<double>() == expected.r2);
    CHECK(report.at("summary").at("confscore").at("kendall").get<double>() == expected.kendall);
    CHECK(report.at("groups").contains("a"));
    CHECK(report.at("groups").contains("b"));
    sets[1].scores.confscore = 0.0;  // three sets of group a: 0, 0, 0.2 still vary
    sets[2].scores.confscore = 0.0;
    sets[0].scores.confscore = 0.0;
    const auto flat = mano::evaluate(sets);
    CHECK_FALSE(flat.at("groups").at("a").contains("confscore"));
    CHECK(flat.at("notes").size() == 1);
}

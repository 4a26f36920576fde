// The family workflow (src/mano/workflow/family.hpp): which passes score which sets, the branch chosen
// for all of them, sets that cannot be scored again, and the JSON the bindings pass around.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "support.hpp"

using mano_test::random_logits;

namespace {

// Six sets of 400 x 10 logits, sharper (more accurate) as i grows, in two groups; labels agree
// with the argmax on a growing share of rows.
struct family_data {
    std::vector<std::vector<float>> logits;
    std::vector<std::vector<std::int64_t>> labels;
    std::vector<std::string> names, groups;
    static constexpr std::size_t n = 400, k = 10;

    family_data() {
        for (int i = 0; i < 6; ++i) {
            logits.push_back(random_logits(n, k, 0.5 + 0.5 * i, 11 + i));
            std::vector<std::int64_t> y(n);
            for (std::size_t r = 0; r < n; ++r) {
                const float* row = logits.back().data() + r * k;
                const auto top = std::max_element(row, row + k) - row;
                y[r] = (r % 10) < static_cast<std::size_t>(4 + i) ? top : (top + 1) % k;
            }
            labels.push_back(y);
            names.push_back("set" + std::to_string(i));
            groups.push_back(i % 2 ? "odd" : "even");
        }
    }

    mano::result score(std::size_t i, const mano::options& o) const {
        mano::accumulator acc(k, o);
        mano::row_inputs in;
        in.labels = labels[i].data();
        acc.push(mano::logits_view(logits[i].data(), n, k), in);
        return acc.finalize();
    }
};

mano::options base_options() {
    mano::options o;
    o.methods = {mano::method::mano, mano::method::confscore, mano::method::nuclear_softrun};
    return o;
}

}  // namespace

TEST_CASE("a family is scored, its branch chosen and every set scored again on it") {
    const family_data data;
    std::vector<std::string> calls;
    const auto scorer = [&](std::size_t i, const mano::workflow::pass& p) -> std::optional<mano::workflow::scored_set> {
        calls.push_back(p.to_json().dump() + "#" + std::to_string(i));
        const mano::options o = p.apply(base_options());
        return mano::workflow::scored_set{data.score(i, o), o};
    };
    mano::workflow::family_options f;
    f.taylor_orders = {1, 2, 3};
    std::vector<std::string> warned;
    const auto scored = mano::workflow::score_family(data.names, data.groups, f, scorer,
                                                     [&](std::size_t, const std::string& m) { warned.push_back(m); });
    REQUIRE(scored.choice);
    CHECK(warned.empty());
    // 6 first, 6 x 2 variants (order 2 is the softrun scan's own), 6 on the branch
    REQUIRE(calls.size() == 24);
    CHECK(calls[0] == R"({"correctness_histogram":true,"normalization":"softrun","pass":"first"}#0)");
    CHECK(calls[6] == R"({"methods":["mano"],"normalization":"taylor","pass":"variant","taylor_order":1}#0)");
    CHECK(calls[12] == R"({"methods":["mano"],"normalization":"taylor","pass":"variant","taylor_order":3}#0)");
    CHECK(calls[18].find(R"("pass":"rescore")") != std::string::npos);
    // every variant weighed, and the sets are exactly the branch's scores
    CHECK(scored.choice->errors.size() == 4);
    for (std::size_t i = 0; i < 6; ++i) {
        mano::options on_branch = base_options();
        on_branch.norm = scored.choice->norm;
        on_branch.taylor_order = scored.choice->taylor_order;
        CHECK(scored.sets[i].scores.value(mano::method::mano).value() ==
              data.score(i, on_branch).value(mano::method::mano).value());
        CHECK(scored.per_set[i].scores.mano->variants.count("taylor3") == 1);
    }
    CHECK(scored.used.norm == scored.choice->norm);

    SECTION("the evaluation and the calibration record the branch") {
        std::vector<std::string> notes;
        const auto evaluation = mano::workflow::evaluate(scored, &notes);
        REQUIRE(evaluation.per_set);
        const auto j = evaluation.to_json();
        CHECK(j.at("normalization").at("variant") == scored.choice->variant());
        CHECK(j.at("normalization").contains("per_set"));
        const auto c = mano::workflow::calibrate(scored, &notes);
        REQUIRE(c.normalization);
        CHECK(c.normalization->variant() == scored.choice->variant());
        CHECK(c.opts.norm == scored.choice->norm);
    }

    SECTION("the scored family goes through JSON unchanged") {
        const auto back = mano::workflow::scored_family::from_json(scored.to_json());
        CHECK(back.to_json() == scored.to_json());
        CHECK_THROWS_WITH(mano::workflow::scored_family::from_json({{"sets", nlohmann::json::array()}, {"other", 1}}),
                          Catch::Contains("unknown key \"other\""));
    }
}

TEST_CASE("an order that fails on one set is left out of that set's choice, with a warning") {
    const family_data data;
    const auto scorer = [&](std::size_t i, const mano::workflow::pass& p) -> std::optional<mano::workflow::scored_set> {
        if (p.kind == mano::workflow::pass::role::variant && i == 4) throw mano::error("no rows left");
        const mano::options o = p.apply(base_options());
        return mano::workflow::scored_set{data.score(i, o), o};
    };
    mano::workflow::family_options f;
    f.taylor_orders = {3};
    std::vector<std::pair<std::size_t, std::string>> warned;
    const auto scored = mano::workflow::score_family(data.names, data.groups, f, scorer,
                                                     [&](std::size_t i, const std::string& m) { warned.emplace_back(i, m); });
    REQUIRE(warned.size() == 1);
    CHECK(warned[0].first == 4);
    CHECK(warned[0].second == "Taylor order 3 left out of the choice (no rows left)");
    CHECK(scored.per_set[4].scores.mano->variants.count("taylor3") == 0);
    CHECK(scored.choice->errors.count("taylor3") == 0);  // weighed only where every set has it
}

TEST_CASE("sets given as results keep their scan, on the chosen branch") {
    const family_data data;
    const auto scorer = [&](std::size_t i, const mano::workflow::pass& p) -> std::optional<mano::workflow::scored_set> {
        if (p.kind != mano::workflow::pass::role::first) return std::nullopt;
        const mano::options o = p.apply(base_options());
        return mano::workflow::scored_set{data.score(i, o), o};
    };
    const auto scored = mano::workflow::score_family(data.names, data.groups, {}, scorer, nullptr);
    REQUIRE(scored.choice);
    for (std::size_t i = 0; i < 6; ++i)
        CHECK(scored.sets[i].scores.value(mano::method::mano).value() ==
              scored.per_set[i].scores.mano->variants.at(scored.choice->variant()));
    const bool moved = std::any_of(scored.per_set.begin(), scored.per_set.end(), [&](const mano::labeled_set& s) {
        return s.scores.mano->used != scored.choice->norm;
    });
    // the softrun baseline leaves every set when one was scored on the other branch
    CHECK(static_cast<bool>(scored.sets[0].scores[mano::method::nuclear_softrun]) == !moved);
    CHECK(scored.notes.empty() == !moved);
}

TEST_CASE("without a family, one pass scores each set as it is") {
    const family_data data;
    int calls = 0;
    const auto scorer = [&](std::size_t i, const mano::workflow::pass& p) -> std::optional<mano::workflow::scored_set> {
        ++calls;
        CHECK_FALSE(p.norm);
        mano::options o = p.apply(base_options());
        return mano::workflow::scored_set{data.score(i, o), o};
    };
    mano::workflow::family_options f;
    f.family = false;
    const auto scored = mano::workflow::score_family(data.names, data.groups, f, scorer, nullptr);
    CHECK(calls == 6);
    CHECK_FALSE(scored.choice);
    CHECK(scored.per_set.empty());
}

TEST_CASE("family options are checked") {
    using mano::workflow::family_options;
    CHECK(family_options::from_json({{"taylor_orders", {1, 3.0}}}).taylor_orders == std::vector<int>{1, 3});
    CHECK_THROWS_WITH(family_options::from_json({{"taylor_orders", {0}}}), Catch::Contains("from 1 to 170"));
    CHECK_THROWS_WITH(family_options::from_json({{"taylor_orders", 2}}), Catch::Contains("must be a list"));
    CHECK_THROWS_WITH(family_options::from_json({{"family", "yes"}}), Catch::Contains("true or false"));
    CHECK_THROWS_WITH(family_options::from_json({{"orders", {2}}}), Catch::Contains("unknown key \"orders\""));
}

TEST_CASE("the monitoring rules: the reference period's line, the points below it, too-small points") {
    using namespace mano::monitoring;
    std::vector<point> points;
    for (const double y : {0.90, 0.92, 0.88, 0.91, 0.70, 0.89}) points.push_back({y, 0.02, 500});
    // NumPy: mean and sample sd of the first four
    const double mean = 0.9025, sd = 0.017078251276599347;
    const auto a = assess(points, 4, 0, 2.0);
    CHECK(a.line.mean == Approx(mean).epsilon(1e-12));
    CHECK(a.line.sd == Approx(sd).epsilon(1e-12));
    CHECK(a.line.value == Approx(mean - 3 * sd).epsilon(1e-12));
    CHECK(a.alerts == std::vector<std::size_t>{4});
    // 1.645 * 2 * 0.02 = 0.0658 > 0.05: 500 * (0.0658 / 0.05)^2 = 865.9 -> 866 rows
    REQUIRE(a.noise);
    CHECK(a.noise->half_width == Approx(0.0658));
    CHECK(a.noise->rows_needed == 866);
    CHECK_FALSE(assess(points, 4, 0, 1.0).noise);  // 0.0329: small enough
    CHECK_FALSE(assess(points, 4, 0, std::nullopt).noise);
    // a point's own slope (its prediction's, at its score) wins over the line's; points with
    // neither are left out of the median
    auto own = points;
    for (std::size_t i = 4; i < own.size(); ++i) own[i].slope = 2.0;
    REQUIRE(assess(own, 4, 0, 1.0).noise);
    CHECK(assess(own, 4, 0, std::nullopt).noise->half_width == Approx(0.0658));
    own[5].slope = 0.5;  // median of {0.0658, 0.01645}: the upper one
    CHECK(assess(own, 4, 0, std::nullopt).noise->half_width == Approx(0.0658));
    own[4].slope.reset();
    CHECK_FALSE(assess(own, 4, 0, std::nullopt).noise);  // 0.01645 alone

    const auto given = assess(points, 0, 0.895, std::nullopt);
    CHECK(given.line.reference == 0);
    CHECK(given.alerts == std::vector<std::size_t>{2, 4, 5});
    CHECK(given.to_json().at("threshold").contains("mean") == false);

    points[1].estimate.reset();
    CHECK_THROWS_WITH(assess(points, 2, 0, std::nullopt), "a reference period needs at least 2 points with a value (it has 1)");
    // every point in the reference period: not enough points yet, its line over the 5 estimates
    const auto waiting = assess(points, 6, 0, std::nullopt);
    CHECK(waiting.waiting);
    CHECK(waiting.alerts.empty());
    CHECK(waiting.line.value == Approx(assess(points, 6, 0, std::nullopt).line.mean - 3 * waiting.line.sd));
    CHECK_FALSE(assess(points, 5, 0, std::nullopt).waiting);
    CHECK_THROWS_WITH(assess(points, 0, std::nan(""), std::nullopt), "the alert threshold must be a number");
    CHECK_THROWS_WITH(points_from_json({{{"estimate", "x"}}}), Catch::Contains("\"estimate\" must be a number"));
    CHECK(points_from_json({{{"estimate", nullptr}, {"rows", 3}}}).front().rows == 3);
    // a value no accuracy has is refused, naming the point (a damaged history, a wrong input)
    CHECK_THROWS_WITH(assess(points_from_json({{{"estimate", 0.9}}, {{"estimate", 1e300}}}), 0, 0.5, std::nullopt),
                      "point 1: its estimate 1e+300 is not an accuracy in [0, 1]");
    CHECK_THROWS_WITH(assess(points_from_json({{{"estimate", 0.9}, {"score_se", -1}}}), 0, 0.5, std::nullopt),
                      "point 0: its score's standard error is negative");
}

TEST_CASE("the monitoring rules one point at a time: what assess gives, in the same order of errors") {
    using namespace mano::monitoring;
    std::vector<point> points;
    for (const double y : {0.90, 0.92, 0.88, 0.91, 0.70, 0.89, 0.95}) points.push_back({y, 0.03, 400, 1.5});
    timeline_check check(3, 0, 2.0);
    std::vector<std::size_t> alerts;
    for (std::size_t i = 0; i < points.size(); ++i)
        if (check.add(points[i])) alerts.push_back(i);
    const auto streamed = check.finish();
    const auto whole = assess(points, 3, 0, 2.0);
    CHECK(streamed.to_json() == whole.to_json());
    CHECK(alerts == whole.alerts);
    CHECK(alerts == std::vector<std::size_t>{4});
    // NumPy: the first three's mean 0.9 and sample sd 0.02
    CHECK(streamed.line.mean == Approx(0.9).epsilon(1e-12));
    CHECK(streamed.line.sd == Approx(0.02).epsilon(1e-12));
    timeline_check all_reference(3, 0, std::nullopt);
    for (std::size_t i = 0; i < 3; ++i) all_reference.add(points[i]);
    const auto waiting = all_reference.finish();
    CHECK(waiting.waiting);
    CHECK(waiting.line.mean == Approx(0.9).epsilon(1e-12));
    CHECK(waiting.to_json().at("waiting") == true);
    // a cron job's first report after one point: waiting, and no line yet
    timeline_check first(1, 0, std::nullopt);
    first.add(points[0]);
    const auto lone = first.finish();
    CHECK(lone.waiting);
    CHECK(lone.to_json().at("threshold") == nlohmann::json{{"reference", 1}});
    timeline_check one_value(2, 0, std::nullopt);
    one_value.add({std::nullopt, std::nullopt, 10, std::nullopt});
    one_value.add(points[0]);
    CHECK_THROWS_WITH(one_value.add(points[1]), "a reference period needs at least 2 points with a value (it has 1)");
}

TEST_CASE("a family of binary sets scores no Taylor variant and takes softmax", "[accumulator]") {
    // K = 2: the Taylor rows are one-hot (options.hpp, taylor_defined), so no order is weighed
    const std::size_t n = 400, k = 2;
    std::vector<std::vector<float>> logits;
    std::vector<std::vector<std::int64_t>> labels;
    const std::vector<std::string> names{"b0", "b1", "b2", "b3", "b4", "b5"}, groups{"x", "y", "z", "x", "y", "z"};
    for (int i = 0; i < 6; ++i) {
        logits.push_back(random_logits(n, k, 0.5 + 0.5 * i, 31 + i));
        std::vector<std::int64_t> y(n);
        for (std::size_t r = 0; r < n; ++r) {
            const std::int64_t top = logits.back()[r * k + 1] > logits.back()[r * k] ? 1 : 0;
            y[r] = (r % 10) < static_cast<std::size_t>(4 + i) ? top : 1 - top;
        }
        labels.push_back(y);
    }
    std::size_t variant_passes = 0;
    const auto scorer = [&](std::size_t i, const mano::workflow::pass& p) -> std::optional<mano::workflow::scored_set> {
        variant_passes += p.kind == mano::workflow::pass::role::variant ? 1 : 0;
        const mano::options o = p.apply(base_options());
        mano::accumulator acc(k, o);
        mano::row_inputs in;
        in.labels = labels[i].data();
        acc.push(mano::logits_view(logits[i].data(), n, k), in);
        return mano::workflow::scored_set{acc.finalize(), o};
    };
    mano::workflow::family_options f;
    f.taylor_orders = {1, 2, 3};
    const auto scored = mano::workflow::score_family(names, groups, f, scorer, nullptr);
    CHECK(variant_passes == 0);
    REQUIRE(scored.choice);
    CHECK(scored.choice->variant() == "softmax");
    for (const auto& [name, error] : scored.choice->errors) CHECK(name == "softmax");
    for (const auto& s : scored.sets) CHECK(s.scores.mano->used == mano::normalization::softmax);
}

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
    s.scores[mano::method::confscore] = mano::estimate{score};
    s.scores[mano::method::confscore]->se = 0.01;
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
    CHECK(close(*r[mano::method::confscore]->se, conf_se, 1e-6));
    const double mean = pow_sum / nn;
    const double mano_se = 0.25 * std::pow(mean, -0.75) * std::sqrt((pow_sq - pow_sum * pow_sum / nn) / (nn - 1) / nn);
    CHECK(close(*r[mano::method::mano]->se, mano_se, 1e-5));
    CHECK(r[mano::method::entropy]->se);
    CHECK_FALSE(r[mano::method::nuclear]);  // not asked for: no estimate, no standard error
    CHECK(r.to_json().at("methods").at("mano").contains("se"));
    SECTION("the state keeps them through JSON and merge") {
        mano::accumulator a(k, o), b(k, o);
        a.push(all.slice(0, 777));
        b.push(all.slice(777, n - 777));
        a.merge(mano::accumulator::from_json(b.to_json()));
        const auto merged = a.finalize();
        CHECK(close(*merged[mano::method::mano]->se, *r[mano::method::mano]->se, 1e-9));
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

    // one group: leave-one-out folds, too few for jackknife+ at 90%
    REQUIRE(mc.folds.size() == 6);
    double rms = 0;
    for (const auto& f : mc.folds) rms += f.residuals.at(0) * f.residuals.at(0);
    rms = std::sqrt(rms / 6);
    const auto held_out = mano::predict(mc, 0.5, std::nullopt, 0.9);
    const double cv_half = mano::student_t_quantile(0.95, 5) * rms;
    CHECK(held_out.lower == Approx(held_out.accuracy - cv_half).epsilon(1e-12));
    CHECK(held_out.upper == Approx(held_out.accuracy + cv_half).epsilon(1e-12));

    // without folds: the t interval of the whole fit
    auto mc_whole = mc;
    mc_whole.folds.clear();
    const auto p = mano::predict(mc_whole, 0.5, 0.01, 0.9);
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
    CHECK(mano::predict(mc_whole, 0.5, std::nullopt, 0.9).upper < p.upper);  // the score's own noise widens it
    CHECK(mano::predict(mc_whole, 0.5, 0.01, 0.5).upper < p.upper);
    const auto far = mano::predict(mc_whole, 5.0, std::nullopt, 0.9);
    CHECK(far.extrapolated);
    CHECK(far.accuracy == 1.0);  // clipped
    CHECK(far.upper == 1.0);
    // the interval lies wholly above 1: it keeps its width at the top rather than become [1, 1]
    {
        const double dx = 5.0 - xbar;
        const double far_half = mano::student_t_quantile(0.95, 4) * mc.fit.residual_se * std::sqrt(1 + 1.0 / 6 + dx * dx / sxx);
        CHECK(far.out_of_range == 1);
        CHECK(far.lower == Approx(1 - 2 * far_half).epsilon(1e-12));
        CHECK(far.to_json().at("out_of_range") == "above");
        const auto low = mano::predict(mc_whole, -5.0, std::nullopt, 0.9);
        CHECK(low.out_of_range == -1);
        CHECK(low.accuracy == 0.0);
        CHECK(low.lower == 0.0);
        const double low_dx = -5.0 - xbar;
        const double low_half =
            mano::student_t_quantile(0.95, 4) * mc.fit.residual_se * std::sqrt(1 + 1.0 / 6 + low_dx * low_dx / sxx);
        CHECK(low.upper == Approx(2 * low_half).epsilon(1e-12));
        // a score of 1e308 (the line at +inf): the whole of [0, 1], not a point
        const auto huge = mano::predict(mc_whole, 1e308, std::nullopt, 0.9);
        CHECK(huge.lower == 0.0);
        CHECK(huge.upper == 1.0);
        CHECK(huge.out_of_range == 1);
        // within [0, 1] nothing changes, and the JSON has no out_of_range
        CHECK(p.out_of_range == 0);
        CHECK_FALSE(p.to_json().contains("out_of_range"));
        // the leave-one-out (t) path and jackknife+ keep their widths too
        const auto folds_far = mano::predict(mc, 50.0, std::nullopt, 0.9);
        CHECK(folds_far.upper == 1.0);
        CHECK(folds_far.upper - folds_far.lower == Approx(held_out.upper - held_out.lower).epsilon(1e-12));
        CHECK(folds_far.out_of_range == 1);
    }
    CHECK_THROWS_WITH(mano::predict(mc, 0.5, std::nullopt, 1.0), Catch::Contains("level"));
    // 0.5 + level / 2 rounds to 1 here: the range's message, not student_t_quantile's
    CHECK_THROWS_WITH(mano::predict(mc, 0.5, std::nullopt, 0.9999999999999999),
                      Catch::Equals("the interval level must be in (0, 0.999999], e.g. 0.9 (got 0.99999999999999989)"));
    CHECK_NOTHROW(mano::predict(mc, 0.5, std::nullopt, mano::max_interval_level));

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
    SECTION("a calibration must agree with itself") {
        auto j = cal.to_json();
        j["k"] = 10.0;  // a whole number written as a float (Python's json) is that number
        j["version"] = j["version"].get<int>() * 1.0;
        CHECK(mano::calibration::from_json(j).to_json() == cal.to_json());
        j = cal.to_json();
        j["k"] = 10.5;
        CHECK_THROWS_WITH(mano::calibration::from_json(j), Catch::Contains("\"k\" must be a whole number >= 0 (got 10.5)"));
        j = cal.to_json();
        j["methods"]["confscore"]["slope"] = "steep";
        CHECK_THROWS_WITH(mano::calibration::from_json(j),
                          Catch::Contains("calibration: method 'confscore': \"slope\" must be a number (got \"steep\")"));
        j = cal.to_json();
        j["options"]["p"] = "4";
        CHECK_THROWS_WITH(mano::calibration::from_json(j), Catch::Contains("options: \"p\" must be a number"));
        j = cal.to_json();
        j["options"]["methods"] = nlohmann::json::array({"mano"});
        CHECK_THROWS_WITH(mano::calibration::from_json(j), Catch::Contains("'confscore' is calibrated but \"options\" do not score it"));
        j = cal.to_json();
        j["options"]["methods"].push_back("atc_mc");
        CHECK_THROWS_WITH(mano::calibration::from_json(j), Catch::Contains("'atc_mc' needs the source model"));
        j = cal.to_json();
        j["options"]["taylor_order"] = 171;
        CHECK_THROWS_WITH(mano::calibration::from_json(j), Catch::Contains("from 1 to 170"));
    }
    SECTION("scoring options for predictions: K checked, methods that keep every row bounded") {
        auto wide = cal;
        wide.opts.methods = {mano::method::confscore, mano::method::cot};
        std::vector<mano::method> left;
        CHECK(mano::scoring_options(wide, 1000, 10, mano::input_kind::logits, &left).methods == wide.opts.methods);
        CHECK(left.empty());
        CHECK(mano::scoring_options(wide, 200001, 10, mano::input_kind::logits, &left).methods == std::vector<mano::method>{mano::method::confscore});
        CHECK(left == std::vector<mano::method>{mano::method::cot});
        left.clear();
        CHECK(mano::scoring_options(wide, 0, 10, mano::input_kind::logits, &left).methods == std::vector<mano::method>{mano::method::confscore});
        CHECK(left == std::vector<mano::method>{mano::method::cot});
        CHECK_THROWS_WITH(mano::scoring_options(wide, 1000, 11, mano::input_kind::logits), Catch::Contains("the logits have 11 classes but the calibration"));
    }
    SECTION("the calibration's input kind: a set read as another is refused, before and after scoring") {
        CHECK_THROWS_WITH(mano::scoring_options(cal, 1000, 10, mano::input_kind::probabilities),
                          Catch::Contains("the set is read as input probabilities but the calibration was fitted on input logits"));
        mano::result r;
        r.k = 10;
        r.input = mano::input_kind::probabilities;
        r[mano::method::confscore] = mano::estimate{0.4};
        CHECK_THROWS_WITH(mano::predict(cal, r, 0.9), Catch::Contains("fitted on input logits"));
        auto binary = cal;
        binary.opts.input = mano::input_kind::binary_logit;
        CHECK_THROWS_WITH(mano::scoring_options(binary, 1000, 10, mano::input_kind::binary_logit),
                          Catch::Contains("input binary-logit takes one column per row"));
    }
    SECTION("a result with another K is refused") {
        mano::result r;
        r.k = 5;
        r[mano::method::confscore] = mano::estimate{0.4};
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
    REQUIRE(report.sets.size() == 6);
    CHECK(report.sets[4].group == "b");
    std::vector<double> x, y;
    for (const auto& s : sets) {
        x.push_back(*s.scores.value(mano::method::confscore));
        y.push_back(*s.scores.accuracy);
    }
    const auto expected = mano::summarize(x, y);
    CHECK(report.summary.at(mano::method::confscore).r2 == expected.r2);
    CHECK(report.summary.at(mano::method::confscore).kendall == expected.kendall);
    CHECK(report.groups.count("a"));
    CHECK(report.groups.count("b"));
    const auto j = report.to_json();
    CHECK(j.at("sets").size() == 6);
    CHECK(j.at("sets")[4].at("group") == "b");
    CHECK(j.at("sets")[4].at("accuracy").get<double>() == *sets[4].scores.accuracy);
    CHECK(j.at("summary").at("confscore").at("r2").get<double>() == expected.r2);
    CHECK(j.at("groups").at("b").at("confscore").at("n") == 3);
    CHECK(j.at("notes").empty());
    sets[1].scores[mano::method::confscore]->value = 0.0;  // three sets of group a: 0, 0, 0.2 still vary
    sets[2].scores[mano::method::confscore]->value = 0.0;
    sets[0].scores[mano::method::confscore]->value = 0.0;
    const auto flat = mano::evaluate(sets);
    CHECK_FALSE(flat.groups.at("a").count(mano::method::confscore));
    REQUIRE(flat.notes.size() == 1);
    CHECK_THAT(flat.notes[0], Catch::Contains("confscore (group a): no summary"));
    CHECK(flat.to_json().at("groups").at("a") == nlohmann::json::object());
}

TEST_CASE("jackknife+ intervals over groups") {
    mano::method_calibration mc;
    mc.m = mano::method::confscore;
    mc.fit.slope = 1;
    mc.fit.intercept = 0;
    mc.fit.n = 10;
    mc.fit.x_min = 0;
    mc.fit.x_max = 1;
    mano::group_fold a{"a", 1.0, 0.0, {0.01, -0.02, 0.03, 0.04, -0.05}};
    mano::group_fold b{"b", 0.9, 0.1, {0.06, -0.07, 0.08, -0.09, 0.1}};
    mc.folds = {a, b};
    // level 0.8, 10 sets: the 9th smallest upper end and the 2nd smallest lower end
    const auto p = mano::predict(mc, 0.5, std::nullopt, 0.8);
    std::vector<double> low, high;
    for (const auto& f : mc.folds)
        for (const double r : f.residuals) {
            low.push_back(f.slope * 0.5 + f.intercept - std::abs(r));
            high.push_back(f.slope * 0.5 + f.intercept + std::abs(r));
        }
    std::sort(low.begin(), low.end());
    std::sort(high.begin(), high.end());
    CHECK(p.accuracy == 0.5);
    CHECK(p.lower == Approx(low[1]).epsilon(1e-12));
    CHECK(p.upper == Approx(high[8]).epsilon(1e-12));
    // at 95% the 11th of 10 upper ends does not exist: the held-out residuals' t interval instead
    for (auto& f : mc.folds)
        for (double& r : f.residuals) r /= 10;  // within [0, 1] after t(1) = 12.7
    const auto wide = mano::predict(mc, 0.5, std::nullopt, 0.95);
    double ms = 0;
    for (const auto& f : mc.folds)
        for (const double r : f.residuals) ms += r * r / 10;
    CHECK(wide.upper == Approx(0.5 + mano::student_t_quantile(0.975, 1) * std::sqrt(ms)).epsilon(1e-12));
}

TEST_CASE("interval coverage over the sets with a true accuracy") {
    const auto estimate = [](double accuracy, double lower, double upper) {
        mano::prediction p;
        p.accuracy = accuracy;
        p.lower = lower;
        p.upper = upper;
        return p;
    };
    mano::set_prediction held, missed, unlabeled;
    held.accuracy = 0.5;
    held.methods[mano::method::confscore] = estimate(0.52, 0.45, 0.6);
    held.estimate = mano::set_estimate{mano::method::confscore, held.methods.at(mano::method::confscore), mano::regime::general};
    missed.accuracy = 0.8;
    missed.methods[mano::method::confscore] = estimate(0.7, 0.65, 0.75);
    unlabeled.methods[mano::method::confscore] = estimate(0.1, 0.0, 0.2);
    const auto c = mano::coverage({held, missed, unlabeled});
    REQUIRE(c.methods.size() == 1);
    const auto& confscore = c.methods.at(mano::method::confscore);
    CHECK(confscore.covered == 1);
    CHECK(confscore.sets == 2);
    CHECK(confscore.rate == 0.5);
    CHECK(confscore.mae == Approx((0.02 + 0.1) / 2).epsilon(1e-12));
    CHECK(confscore.width == Approx((0.15 + 0.1) / 2).epsilon(1e-12));
    REQUIRE(c.estimate);
    CHECK(c.estimate->sets == 1);
    CHECK(c.estimate->rate == 1.0);
    const auto j = c.to_json();
    CHECK(j.at("confscore").at("covered") == 1);
    CHECK(j.at("estimate").at("width").get<double>() == c.estimate->width);
    CHECK(mano::coverage({unlabeled}).empty());
}

TEST_CASE("shift diagnostics: class proportions against calibration sets as confident") {
    mano::shift_reference ref;
    ref.proportions = {0.25, 0.25, 0.25, 0.25};
    ref.sets = {{0.9, 0.05}, {0.85, 0.1}, {0.8, 0.02}, {0.7, 0.2}, {0.5, 0.4}};
    CHECK(ref.range_at(0.95) == 0.1);  // beyond every set: the three most confident ones
    CHECK(ref.range_at(0.88) == 0.1);
    CHECK(ref.range_at(0.75) == 0.1);
    CHECK(ref.range_at(0.6) == 0.2);
    CHECK(ref.range_at(0.1) == 0.4);
    mano::result r;
    r.n = 100;
    r.k = 4;
    r.predicted = {70, 10, 10, 10};
    CHECK(mano::class_shift(r, ref.proportions) == Approx(0.45).epsilon(1e-12));
    r.predicted = {1, 2, 3};
    CHECK_THROWS_WITH(mano::class_shift(r, ref.proportions), Catch::Contains("classes"));
}

TEST_CASE("results and states carry predicted class counts and both softrun branches") {
    const std::size_t n = 600, k = 6;
    const auto q = random_logits(n, k, 2.0, 11);
    mano::options o;
    o.methods = {mano::method::mano};
    const mano::logits_view all(q.data(), n, k);
    mano::accumulator a(k, o), b(k, o);
    a.push(all.slice(0, 250));
    b.push(all.slice(250, n - 250));
    a.merge(mano::accumulator::from_json(b.to_json()));
    const auto r = a.finalize();
    const auto argmax = argmax_rows(q, k);
    std::vector<std::uint64_t> counts(k, 0);
    for (const auto c : argmax) counts[static_cast<std::size_t>(c)] += 1;
    CHECK(r.predicted == counts);
    REQUIRE(r.confidence);
    REQUIRE(r.mano->variants.size() == 2);
    mano::options forced = o;
    for (const auto& [name, norm] : {std::pair<std::string, mano::normalization>{"softmax", mano::normalization::softmax},
                                     {"taylor2", mano::normalization::taylor}}) {
        forced.norm = norm;
        CHECK(close(r.mano->variants.at(name), mano::score(all, forced).value(mano::method::mano).value(), 1e-12));
    }
    const auto j = r.to_json();
    const auto back = mano::result::from_json(j);
    CHECK(back.predicted == r.predicted);
    CHECK(back.mano->variants == r.mano->variants);
    auto bad = j;
    bad["predicted"][0] = bad["predicted"][0].get<std::uint64_t>() + 1;
    CHECK_THROWS_WITH(mano::result::from_json(bad), Catch::Contains("sum to n"));
    bad = j;
    bad["methods"]["mano"]["variants"]["taylor0"] = 0.3;
    CHECK_THROWS_WITH(mano::result::from_json(bad), Catch::Contains("variant"));
    auto state = a.to_json();
    state["predicted"][1] = state["predicted"][1].get<std::uint64_t>() + 5;
    CHECK_THROWS_WITH(mano::accumulator::from_json(state), Catch::Contains("predicted"));
}

TEST_CASE("a weighted line is the line of each set repeated as often as its weight") {
    const std::vector<double> x = {0.2, 0.35, 0.5, 0.55, 0.8}, y = {0.31, 0.42, 0.58, 0.57, 0.83}, w = {3, 1, 2, 1, 4};
    std::vector<double> xs, ys;
    for (std::size_t i = 0; i < x.size(); ++i)
        for (int r = 0; r < static_cast<int>(w[i]); ++r) xs.push_back(x[i]), ys.push_back(y[i]);
    const auto weighted = mano::fit_line(x, y, w), repeated = mano::fit_line(xs, ys);
    CHECK(weighted.slope == Approx(repeated.slope).epsilon(1e-12));
    CHECK(weighted.intercept == Approx(repeated.intercept).epsilon(1e-12));
    CHECK(weighted.residual_se == Approx(repeated.residual_se).epsilon(1e-12));
    CHECK(weighted.n == x.size());
    CHECK_THROWS_WITH(mano::fit_line(x, y, {1, 1}), Catch::Contains("2 weights for 5 test sets"));
    CHECK_THROWS_WITH(mano::fit_line(x, y, {1, 0, 1, 1, 1}), Catch::Contains("above 0"));
}

TEST_CASE("a label-shifted copy draws rows of each class with replacement, the same rows on every platform") {
    // pinned against tests/reference/copies_reference.py (Python integers: exact anywhere)
    std::vector<std::int64_t> labels(50);
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int64_t>(i % 4);
    mano::label_shift_copies o;
    o.seed = 7;
    o.max_rows = 12;
    CHECK(mano::label_shift_copy_rows(labels, 4, o, 2, 0) ==
          std::vector<std::uint64_t>{28, 45, 17, 45, 3, 41, 33, 13, 5, 7, 49, 7});
    CHECK(mano::label_shift_copy_rows(labels, 4, o, 2, 1) ==
          std::vector<std::uint64_t>{12, 14, 20, 12, 0, 36, 13, 34, 41, 41, 13, 43});
    // classes the set lacks get no rows; at most max_rows, at most the set's rows
    std::vector<std::int64_t> two(50, 0);
    std::fill(two.begin() + 30, two.end(), 3);
    o.seed = 0;
    o.max_rows = 10;
    CHECK(mano::label_shift_copy_rows(two, 4, o, 0, 5) == std::vector<std::uint64_t>{48, 37, 42, 42, 40, 6, 34, 36, 33, 45});
    o.max_rows = 1000;
    CHECK(mano::label_shift_copy_rows(two, 4, o, 0, 0).size() == 50);
    CHECK_THROWS_WITH(mano::label_shift_copy_rows({0, 5}, 4, o, 0, 0), Catch::Contains("label 5 is outside [0, 4)"));
    CHECK_THROWS_WITH(mano::label_shift_copies::from_json({{"copies", 101}}, "x"), Catch::Contains("copies"));
    CHECK_THROWS_WITH(mano::label_shift_copies::from_json({{"alphas", {0.5, -1}}}, "x"), Catch::Contains("alphas"));
}

TEST_CASE("a score that does not vary beyond rounding or its own noise is neither fitted nor summarized") {
    // confscore varies; entropy by rounding only (MaNo's Taylor branch at K = 2 did: 0.8408964 ± 1e-8);
    // atc_mc by 1e-4 where each set's own standard error is 1e-2
    std::vector<mano::labeled_set> sets;
    for (int i = 0; i < 6; ++i) {
        auto s = made_set("s" + std::to_string(i), 0.5 + 0.08 * i, 0.4 + 0.1 * i, "g" + std::to_string(i % 3));
        s.scores[mano::method::entropy] = mano::estimate{0.8408964 + 1e-8 * (i % 2)};
        s.scores[mano::method::atc_mc] = mano::estimate{0.3 + 1e-4 * i};
        s.scores[mano::method::atc_mc]->se = 1e-2;
        sets.push_back(s);
    }
    std::vector<std::string> notes;
    const auto cal = mano::calibrate(sets, mano::options{}, &notes);
    REQUIRE(cal.methods.size() == 1);
    CHECK(cal.methods[0].m == mano::method::confscore);
    CHECK(cal.recommended == mano::method::confscore);
    REQUIRE(notes.size() == 2);
    CHECK_THAT(notes[0], Catch::StartsWith("entropy: not calibrated: its scores do not vary across the sets beyond rounding"));
    CHECK_THAT(notes[1], Catch::StartsWith("atc_mc: not calibrated: its scores spread across the sets by 0.000170783") &&
                             Catch::Contains("standard error 0.01"));
    const auto report = mano::evaluate(sets);
    CHECK(report.summary.count(mano::method::confscore));
    CHECK_FALSE(report.summary.count(mano::method::entropy));
    CHECK_FALSE(report.summary.count(mano::method::atc_mc));
    CHECK_THAT(report.notes.front(), Catch::StartsWith("entropy: no summary: its scores do not vary"));
    // the same spread with a standard error ten times smaller is a score that varies
    for (auto& s : sets) s.scores[mano::method::atc_mc]->se = 1e-3;
    CHECK(mano::calibrate(sets, mano::options{}).methods.size() == 2);
}

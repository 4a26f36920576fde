// One normalization for a family of sets (src/mano/calibration/normalization_choice.cpp): MaNo's branch
// chosen once for all the sets by the held-out error of its line, else by the pooled criterion.
#include <catch2/catch.hpp>

#include <string>

#include "support.hpp"

namespace {

// A set whose MaNo result carries both softrun branches, as a softrun scan gives them.
mano::labeled_set family_set(const std::string& name, const std::string& group, double softmax, double taylor,
                             double phi, double accuracy) {
    mano::labeled_set s;
    s.name = name;
    s.group = group;
    s.scores.n = 500;
    s.scores.k = 4;
    mano::mano_result m;
    m.criterion = phi;
    m.used = phi > 5 ? mano::normalization::softmax : mano::normalization::taylor;
    m.variants = {{"softmax", softmax}, {"taylor2", taylor}};
    s.scores.mano = m;
    s.scores[mano::method::mano] = mano::estimate{phi > 5 ? softmax : taylor};
    s.scores[mano::method::confscore_softrun] = mano::estimate{accuracy + 0.1};
    s.scores.accuracy = accuracy;
    return s;
}

}  // namespace

TEST_CASE("one normalization for a family of sets") {
    // softmax scores follow accuracy on one line; the Taylor ones jump between groups
    std::vector<mano::labeled_set> sets;
    const std::vector<std::string> groups{"a", "a", "a", "b", "b", "b", "c", "c", "c"};
    for (int i = 0; i < 9; ++i) {
        const double acc = 0.3 + 0.07 * i;
        sets.push_back(family_set("s" + std::to_string(i), groups[i], 0.2 + 0.5 * acc + 0.002 * (i % 3),
                                  0.1 + 0.2 * acc + (i >= 6 ? 0.15 : 0.0), i % 2 ? 4.8 : 5.3, acc));
    }
    const mano::options opts;
    const auto choice = mano::choose_normalization(sets, opts);
    CHECK(choice.by == "leave-one-group-out");
    CHECK(choice.variant() == "softmax");
    REQUIRE(choice.errors.size() == 2);
    CHECK(choice.errors.at("softmax") < choice.errors.at("taylor2"));

    SECTION("unlabeled sets: the criterion over all their rows") {
        auto unlabeled = sets;
        for (auto& s : unlabeled) s.scores.accuracy.reset();
        unlabeled[0].scores.n = 4500;  // Phi 5.3 on most rows
        const auto pooled = mano::choose_normalization(unlabeled, opts);
        CHECK(pooled.by == "pooled criterion");
        CHECK(pooled.pooled_criterion == Approx((4500 * 5.3 + 4 * 500 * 5.3 + 4 * 500 * 4.8) / 8500.0).epsilon(1e-12));
        CHECK(pooled.variant() == "softmax");
        for (auto& s : unlabeled) s.scores.n = 500;
        unlabeled[0].scores.mano->criterion = 0.1;
        CHECK(mano::choose_normalization(unlabeled, opts).variant() == "taylor2");
    }
    SECTION("binary sets: softmax, the only branch a K = 2 scan gives (options.hpp, taylor_defined)") {
        auto binary = sets;
        for (auto& s : binary) {
            s.scores.k = 2;
            s.scores.mano->used = mano::normalization::softmax;
            s.scores.mano->variants.erase("taylor2");
            s.scores.mano->criterion = 0.7;  // below eta, as a usual binary model's
        }
        CHECK(mano::choose_normalization(binary, opts).variant() == "softmax");
        for (auto& s : binary) s.scores.accuracy.reset();
        const auto pooled = mano::choose_normalization(binary, opts);
        CHECK(pooled.by == "pooled criterion");
        CHECK(pooled.variant() == "softmax");
    }
    SECTION("calibrate records the branch and fits MaNo on it; mixed-branch softrun baselines leave") {
        std::vector<std::string> notes;
        const auto cal = mano::calibrate(sets, opts, &notes);
        REQUIRE(cal.normalization);
        CHECK(cal.opts.norm == mano::normalization::softmax);
        const auto& mc = *std::find_if(cal.methods.begin(), cal.methods.end(), [](auto& x) { return x.m == mano::method::mano; });
        CHECK(mc.fit.x_min == Approx(sets[0].scores.mano->variants.at("softmax")));
        CHECK(std::none_of(cal.methods.begin(), cal.methods.end(), [](auto& x) { return x.m == mano::method::confscore_softrun; }));
        CHECK(notes.size() == 1);
        CHECK(mc.folds.size() == 3);
        CHECK(cal.recommended == mano::method::mano);
        const auto back = mano::calibration::from_json(cal.to_json());
        CHECK(back.to_json() == cal.to_json());

        // a per-set softrun result on the other branch is predicted through its variants
        auto taylor_side = family_set("t", "", 0.45, 0.2, 4.0, 0.5).scores;
        const auto p = mano::predict(cal, taylor_side, 0.9);
        CHECK(p.methods.at(mano::method::mano).score == 0.45);
        REQUIRE(p.estimate);
        CHECK(p.estimate->m == mano::method::mano);
        CHECK(p.estimate->regime == mano::regime::general);
        const auto j = p.to_json();
        CHECK(j.at("methods").at("mano").at("score").get<double>() == 0.45);
        CHECK(j.at("estimate").at("method") == "mano");
        CHECK(j.at("estimate").at("interval")[1].get<double>() == p.methods.at(mano::method::mano).upper);
        taylor_side.mano->variants.clear();
        CHECK_THROWS_WITH(mano::predict(cal, taylor_side, 0.9), Catch::Contains("score the set with the calibration's options"));
    }
    SECTION("per-set criterion on request") {
        const auto literal = mano::calibrate(sets, opts, nullptr, false);
        CHECK_FALSE(literal.normalization);
        CHECK(literal.opts.norm == mano::normalization::softrun);
    }
    SECTION("a set without both branches cannot join a family choice") {
        sets[4].scores.mano->variants.clear();
        CHECK_THROWS_WITH(mano::choose_normalization(sets, opts), Catch::Contains("s4"));
    }
}

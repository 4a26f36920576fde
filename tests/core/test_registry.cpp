// The estimator table: its rules for defaults and inputs, and that the results agree with it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "support.hpp"

using mano_test::random_logits;

namespace {

std::set<std::string> names_of(const std::vector<mano::method>& methods) {
    std::set<std::string> out;
    for (const auto m : methods) out.insert(mano::method_name(m));
    return out;
}

}  // namespace

TEST_CASE("every method has one name that parses back, in table order", "[registry]") {
    std::set<std::string> seen;
    for (int i = 0; i < mano::method_count; ++i) {
        const auto& m = mano::method_table[i];
        CHECK(static_cast<int>(m.id) == i);
        CHECK(seen.insert(m.name).second);
        CHECK(mano::parse_method(m.name) == m.id);
        CHECK(std::string(m.summary).size() > 10);
        CHECK(std::string(m.formula).size() > 10);
        CHECK(std::string(m.fails).size() > 10);
        CHECK((m.needs & ~0xFu) == 0u);
    }
    CHECK_THROWS_WITH(mano::parse_method("manoo"), Catch::Contains("unknown method 'manoo'; known methods: mano, confscore"));
}

TEST_CASE("default methods follow the table's inputs and size limits", "[registry]") {
    using mano::method;
    const auto small = names_of(mano::default_methods(10, 100));
    CHECK(small == std::set<std::string>{"mano", "confscore", "entropy", "nuclear", "mde", "cot", "confscore_softrun",
                                         "nuclear_softrun"});
    // up to K = 100 the nuclear norms and COT (a small set); beyond, neither (COT's exact solver
    // is bounded in time by N K^2 only up to keeps_rows_max_k)
    CHECK(names_of(mano::default_methods(mano::nuclear_default_max_k, 100)) == small);
    CHECK(mano::cot_default_max_k == mano::keeps_rows_max_k);
    CHECK(names_of(mano::default_methods(mano::cot_default_max_k, 100)).count("cot") == 1);
    CHECK(names_of(mano::default_methods(mano::cot_default_max_k + 1, 100)) ==
          std::set<std::string>{"mano", "confscore", "entropy", "mde", "confscore_softrun"});
    // COT only up to cot_default_max_logits logits, and only when the row count is known: an
    // accumulator's defaults (rows unknown) keep no rows
    CHECK(names_of(mano::default_methods(10, mano::cot_default_max_logits / 10)).count("cot") == 1);
    CHECK(names_of(mano::default_methods(10, mano::cot_default_max_logits / 10 + 1)).count("cot") == 0);
    CHECK(names_of(mano::default_methods(10)).count("cot") == 0);
    CHECK(mano::accumulator(10).opts().methods == mano::default_methods(10));
    // inputs switch on the methods that need them, and only those
    const auto source = names_of(mano::default_methods(10, 0, mano::needs_source));
    CHECK(source.count("atc_mc") + source.count("atc_ne") + source.count("doc") == 3);
    CHECK(source.count("agreement") + source.count("dispersion") + source.count("frechet") == 0);
    CHECK(names_of(mano::default_methods(10, 0, mano::needs_features)).count("frechet") == 0);
    const auto all = mano::default_methods(10, 100, 0xF);
    // every method the table has on by default
    std::size_t by_default = 0;
    for (const auto& m : mano::method_table) by_default += m.by_default ? 1 : 0;
    CHECK(all.size() == by_default);
    CHECK(std::is_sorted(all.begin(), all.end()));
    for (const auto m : all) CHECK(mano::info_of(m).by_default);
}

TEST_CASE("the table as JSON", "[registry]") {
    const auto j = mano::methods_json();
    REQUIRE(j.at("methods").size() == static_cast<std::size_t>(mano::method_count));
    const auto& cot = j.at("methods").at(static_cast<int>(mano::method::cot));
    CHECK(cot.at("name") == "cot");
    CHECK(cot.at("returns") == "accuracy");
    CHECK(cot.at("cost") == "keeps_rows");
    CHECK(cot.at("default_max_logits") == mano::cot_default_max_logits);
    CHECK(cot.at("assumes_class_proportions") == true);
    CHECK(cot.at("fits_on_source") == false);
    const auto& mlls = j.at("methods").at(static_cast<int>(mano::method::mlls));
    CHECK(mlls.at("estimates_label_shift") == true);
    CHECK(mlls.at("fits_on_source") == true);
    CHECK(mlls.at("detail") == "iterations");
    CHECK(mano::label_shift_method() == mano::method::mlls);
    const auto& softrun = j.at("methods").at(static_cast<int>(mano::method::nuclear_softrun));
    CHECK(softrun.at("on_softrun_branch") == true);
    CHECK(softrun.at("gram_matrices") == 2);
    CHECK(j.at("methods").at(0).at("softrun_variants") == true);
    const auto& frechet = j.at("methods").at(static_cast<int>(mano::method::frechet));
    CHECK(frechet.at("needs") == nlohmann::json{"features", "source_features"});
    CHECK(!frechet.contains("default_max_k"));
}

TEST_CASE("a result has each asked method, as the kind of number the table says", "[registry]") {
    // every method, every input: the result JSON holds each method once, with "score" or
    // "accuracy" as its table entry says
    const std::size_t n = 300, k = 6, d = 5;
    const auto q = random_logits(n, k, 2.0, 5), q2 = random_logits(n, k, 2.0, 6), features = random_logits(n, d, 1.0, 7);
    std::vector<std::int64_t> labels(n);
    for (std::size_t i = 0; i < n; ++i) labels[i] = static_cast<std::int64_t>((i * 5) % k);
    std::vector<double> source_features(200 * d);
    for (std::size_t i = 0; i < source_features.size(); ++i) source_features[i] = std::cos(0.3 * static_cast<double>(i));
    const mano::logits_view all(q.data(), n, k), second(q2.data(), n, k), feats(features.data(), n, d);
    mano::options o;
    for (const auto& m : mano::method_table) o.methods.push_back(m.id);
    o.source = mano::fit_source(all, labels.data(), 1.0, o.methods);
    auto moments = std::make_shared<mano::feature_moments>(d);
    moments->push(source_features.data(), 200);
    o.source_features = moments;
    mano::accumulator acc(k, o);
    acc.push(all, {&second, &feats});
    const auto r = acc.finalize();
    const auto j = r.to_json();
    REQUIRE(j.at("methods").size() == static_cast<std::size_t>(mano::method_count));
    for (const auto& m : mano::method_table) {
        INFO(m.name);
        const auto& entry = j.at("methods").at(m.name);
        CHECK(entry.contains(mano::returns_name(m.returns)));
    }
    const auto values = r.values();
    REQUIRE(values.size() == static_cast<std::size_t>(mano::method_count));
    for (std::size_t i = 0; i < values.size(); ++i) CHECK(values[i].m == mano::method_table[i].id);
}

TEST_CASE("an accumulator keeps its methods in table order, each once", "[registry]") {
    mano::options a, b;
    a.methods = {mano::method::cot, mano::method::mano, mano::method::mano};
    b.methods = {mano::method::mano, mano::method::cot};
    const auto q = random_logits(40, 4, 1.0, 3);
    mano::accumulator x(4, a), y(4, b);
    CHECK(x.opts().methods == b.methods);
    x.push(mano::logits_view(q.data(), 20, 4));
    y.push(mano::logits_view(q.data() + 80, 20, 4));
    x.merge(y);  // the same methods, given in another order
    CHECK(x.rows() == 40);
}

// Bad input is a mano::error naming what is wrong, never a crash or a silent wrong number.
#include <catch2/catch.hpp>

#include <limits>

#include "support.hpp"

using mano_test::random_logits;

TEST_CASE("non-finite logits name their row and column", "[validation]") {
    const std::size_t n = 50, k = 8;
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()}) {
        auto q = random_logits(n, k, 1.0, 21);
        q[7 * k + 5] = bad;
        mano::accumulator acc(k);
        acc.push(mano::logits_view(q.data(), 3, k));  // rows 0-2 are fine
        const auto before = acc.to_json();
        const std::string what = std::isnan(bad) ? "NaN" : bad > 0 ? "+Inf" : "-Inf";
        CHECK_THROWS_WITH(acc.push(mano::logits_view(q.data(), n, k).slice(3, n - 3)),
                          Catch::Contains("row 7, column 5") && Catch::Contains(what));
        CHECK(acc.to_json() == before);  // a failed push leaves the state as it was
    }
    // q - max(q) overflows: the one difference the kernel cannot represent
    const double big = std::numeric_limits<double>::max();
    std::vector<double> huge = {big, -big, 0, 1, 2, 3, 4, 5};
    CHECK_THROWS_WITH(mano::score(mano::logits_view(huge.data(), 2, 4)), Catch::Contains("row 0") && Catch::Contains("too large"));
    // in float the same difference overflows, and the row goes through double instead
    std::vector<float> huge_f = {3e38f, -3e38f, 0, 1, 2, 3, 4, 5};
    mano::options softmax;
    softmax.norm = mano::normalization::softmax;
    const auto r = mano::score(mano::logits_view(huge_f.data(), 2, 4), softmax);
    std::vector<double> huge_d(huge_f.begin(), huge_f.end());
    CHECK(r.value(mano::method::mano).value() == Approx(mano::score(mano::logits_view(huge_d.data(), 2, 4), softmax).value(mano::method::mano).value()).epsilon(1e-12));
}

TEST_CASE("empty input and too few classes are refused", "[validation]") {
    std::vector<float> q(10, 0.0f);
    CHECK_THROWS_WITH(mano::score(mano::logits_view(q.data(), 0, 5)), Catch::Contains("0 rows"));
    CHECK_THROWS_WITH(mano::score(mano::logits_view(q.data(), 10, 1)), Catch::Contains("at least 2 columns"));
    mano::accumulator acc(5);
    CHECK_THROWS_WITH(acc.push(mano::logits_view(q.data(), 2, 4)), Catch::Contains("4 columns") && Catch::Contains("5"));
}

TEST_CASE("invalid options are refused by name", "[validation]") {
    auto refused = [](auto change, const std::string& name) {
        mano::options o;
        change(o);
        CHECK_THROWS_WITH(mano::accumulator(4, o), Catch::Contains(name));
    };
    refused([](mano::options& o) { o.p = 1.0; }, "p must");
    refused([](mano::options& o) { o.p = 0.5; }, "p must");
    refused([](mano::options& o) { o.p = std::numeric_limits<double>::quiet_NaN(); }, "p must");
    refused([](mano::options& o) { o.taylor_order = 0; }, "taylor_order");
    refused([](mano::options& o) { o.batch_size = -1; }, "batch_size");
    refused([](mano::options& o) { o.eta = std::numeric_limits<double>::infinity(); }, "eta");
    refused([](mano::options& o) { o.criterion = std::numeric_limits<double>::quiet_NaN(); }, "criterion");
    CHECK_THROWS_WITH(mano::parse_normalization("sparsemax"), Catch::Contains("softrun, softmax, taylor"));
}

TEST_CASE("a Taylor polynomial that overflows double is an error only when Taylor is used", "[validation]") {
    std::vector<double> q = {1e200, -3e199, 2.0, 5e199, 1.0, -1e200};
    mano::options o;
    o.norm = mano::normalization::taylor;
    CHECK_THROWS_WITH(mano::score(mano::logits_view(q.data(), 2, 3), o), Catch::Contains("row 0") && Catch::Contains("Taylor"));
    o.norm = mano::normalization::softmax;
    const auto r = mano::score(mano::logits_view(q.data(), 2, 3), o);
    CHECK(r.value(mano::method::mano).value() == Approx(std::pow((1.0 + 1.0) / 6.0, 0.25)));  // both rows one-hot
}

TEST_CASE("merging different options or malformed states is refused", "[validation]") {
    mano::options o;
    o.p = 3;
    mano::accumulator a(4), b(4, o), c(5);
    CHECK_THROWS_WITH(a.merge(b), Catch::Contains("different p"));
    CHECK_THROWS_WITH(a.merge(c), Catch::Contains("columns"));
    std::vector<float> source_q = {2, 0, 0, 0, 0, 3, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0};
    std::vector<std::int64_t> labels = {0, 1, 1, 2}, other_labels = {0, 1, 0, 2};
    mano::options with_source, other_source;
    with_source.source = mano::fit_source(mano::logits_view(source_q.data(), 4, 4), labels.data(), 1.0);
    other_source.source = mano::fit_source(mano::logits_view(source_q.data(), 4, 4), other_labels.data(), 1.0);
    mano::accumulator s1(4, with_source), s2(4, other_source), s3(4, with_source);
    CHECK_THROWS_WITH(s1.merge(s2), Catch::Contains("different source models"));
    CHECK_NOTHROW(s1.merge(s3));
    auto state = a.to_json();
    state["n"] = 3;
    state["batch"]["rows"] = 2;
    CHECK_THROWS_WITH(mano::accumulator::from_json(state), Catch::Contains("accumulator state"));
    CHECK_THROWS_WITH(mano::accumulator::from_json(nlohmann::json::parse("{\"format\":\"mano-accumulator\"}")),
                      Catch::Contains("accumulator state"));
    CHECK_THROWS_WITH(mano::accumulator::from_json(nlohmann::json::array()), Catch::Contains("not a mano accumulator state"));
}

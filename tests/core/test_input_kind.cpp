// The input kinds of the core (src/mano/scan/input_kind.hpp): rows of probabilities or a binary
// column turned into logits inside the accumulator's push, equal to pushing those logits; the
// count of logit rows that look like probabilities through merges and states; the kind in the
// options, results and states; and the refusals. The references are the logits computed here
// with <cmath>, the formulas of the header.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <vector>

#include "support.hpp"

using mano_test::random_logits;

namespace {

std::vector<double> softmax_rows(const std::vector<float>& q, std::size_t n, std::size_t k) {
    std::vector<double> p(n * k);
    for (std::size_t r = 0; r < n; ++r) {
        double top = q[r * k], sum = 0;
        for (std::size_t c = 1; c < k; ++c) top = std::max(top, static_cast<double>(q[r * k + c]));
        for (std::size_t c = 0; c < k; ++c) sum += p[r * k + c] = std::exp(q[r * k + c] - top);
        for (std::size_t c = 0; c < k; ++c) p[r * k + c] /= sum;
    }
    return p;
}

mano::options kind(mano::input_kind input) {
    mano::options o;
    o.methods = {mano::method::mano, mano::method::confscore, mano::method::entropy};
    o.input = input;
    return o;
}

}  // namespace

TEST_CASE("probabilities and binary columns are read as the logits they stand for", "[input]") {
    const std::size_t n = 700, k = 6;
    const auto q = random_logits(n, k, 2.0, 3);
    auto p = softmax_rows(q, n, k);
    p[4 * k + 2] = 0;  // a zero: floored before the log
    double row4 = 0;
    for (std::size_t c = 0; c < k; ++c) row4 += p[4 * k + c];
    for (std::size_t c = 0; c < k; ++c) p[4 * k + c] /= row4;
    std::vector<double> logp(n * k);
    for (std::size_t i = 0; i < p.size(); ++i) logp[i] = std::log(std::max(p[i], static_cast<double>(FLT_MIN)));
    const mano::logits_view pv(p.data(), n, k), lv(logp.data(), n, k);
    mano::accumulator probs(k, kind(mano::input_kind::probabilities)), logits(k, kind(mano::input_kind::logits));
    probs.push(pv.slice(0, 300), {});
    probs.push(pv.slice(300, 400), {});
    logits.push(lv, {});
    const auto a = probs.finalize(), b = logits.finalize();
    CHECK(a.input == mano::input_kind::probabilities);
    CHECK(a.to_json().at("input") == "probabilities");
    CHECK(!b.to_json().contains("input"));
    for (const auto m : {mano::method::mano, mano::method::confscore, mano::method::entropy})
        CHECK(*a.value(m) == Approx(*b.value(m)).epsilon(1e-12));

    // one column: z -> [0, z]; p -> log [1 - p, p]
    std::vector<double> z(n), zz(2 * n), pz(n), lz(2 * n);
    for (std::size_t r = 0; r < n; ++r) {
        z[r] = q[r * k] - q[r * k + 1];
        zz[2 * r] = 0, zz[2 * r + 1] = z[r];
        pz[r] = 1 / (1 + std::exp(-z[r]));
        lz[2 * r] = std::log(std::max(1 - pz[r], static_cast<double>(FLT_MIN)));
        lz[2 * r + 1] = std::log(std::max(pz[r], static_cast<double>(FLT_MIN)));
    }
    pz[0] = 1;  // its class 0 floored
    lz[0] = std::log(static_cast<double>(FLT_MIN)), lz[1] = 0;
    for (const auto& [input, column, two] : {std::make_tuple(mano::input_kind::binary_logit, &z, &zz),
                                             std::make_tuple(mano::input_kind::binary_probability, &pz, &lz)}) {
        auto with_agreement = kind(input), plain = kind(mano::input_kind::logits);
        with_agreement.methods.push_back(mano::method::agreement);
        plain.methods.push_back(mano::method::agreement);
        mano::accumulator one(2, with_agreement), both(2, plain);
        CHECK(one.columns() == 1);
        const mano::logits_view cv(column->data(), n, 1), tv(two->data(), n, 2);
        mano::row_inputs second;
        second.second = &cv;  // a second model's column is read as the same kind
        one.push(cv, second);
        mano::row_inputs second_two;
        second_two.second = &tv;
        both.push(tv, second_two);
        for (const auto m : {mano::method::mano, mano::method::confscore, mano::method::agreement})
            CHECK(*one.finalize().value(m) == Approx(*both.finalize().value(m)).epsilon(1e-12));
    }
}

TEST_CASE("logits that look like probabilities are counted, merged and kept in states", "[input]") {
    const std::size_t n = 500, k = 5;
    const auto p = softmax_rows(random_logits(n, k, 1.0, 9), n, k);
    const auto q = random_logits(n, k, 1.0, 10);
    const mano::logits_view pv(p.data(), n, k), qv(q.data(), n, k);
    mano::accumulator a(k, kind(mano::input_kind::logits)), b(k, kind(mano::input_kind::logits));
    a.push(pv.slice(0, 250), {});
    b.push(pv.slice(250, 250), {});
    CHECK(a.to_json().at("probability_rows") == 250);
    a.merge_as_shard(b);
    CHECK(a.finalize().looks_like_probabilities);
    CHECK(a.finalize().to_json().at("looks_like_probabilities") == true);
    const auto restored = mano::accumulator::from_json(a.to_json());
    CHECK(restored.finalize().looks_like_probabilities);
    // one row of logits among them: no flag; logits alone: nothing in the state
    mano::accumulator c(k, kind(mano::input_kind::logits));
    c.push(qv.slice(0, 1), {});
    a.merge_as_shard(c);
    CHECK(!a.finalize().looks_like_probabilities);
    CHECK(!c.to_json().contains("probability_rows"));
    CHECK(!mano::score(qv, kind(mano::input_kind::logits)).to_json().contains("looks_like_probabilities"));
    // states of other input kinds do not merge; a count above n is refused
    mano::accumulator d(k, kind(mano::input_kind::probabilities));
    d.push(pv.slice(0, 10), {});
    CHECK_THROWS_WITH(b.merge(d), Catch::Contains("input kinds"));
    auto j = b.to_json();
    j["probability_rows"] = 251;
    CHECK_THROWS_WITH(mano::accumulator::from_json(j), Catch::Contains("inconsistent sums or row counts"));
    CHECK(mano::options::from_json(d.opts().to_json()).input == mano::input_kind::probabilities);
}

TEST_CASE("rows that are not of the input kind are refused, naming the row and column", "[input]") {
    std::vector<double> p = {0.2, 0.8, 0.5, 0.5, 1.5, -0.5};
    mano::accumulator a(2, kind(mano::input_kind::probabilities));
    CHECK_THROWS_WITH(a.push(mano::logits_view(p.data(), 3, 2), {}), Catch::Contains("row 2, column 0: 1.5 is not a probability"));
    CHECK(a.rows() == 0);  // all or nothing
    std::vector<double> half = {0.25, 0.25};
    CHECK_THROWS_WITH(a.push(mano::logits_view(half.data(), 1, 2), {}), Catch::Contains("row 0: its probabilities sum to 0.5, not 1"));
    std::vector<double> z = {1.0, NAN};
    mano::accumulator b(2, kind(mano::input_kind::binary_logit));
    CHECK_THROWS_WITH(b.push(mano::logits_view(z.data(), 2, 1), {}), Catch::Contains("row 1: logit is NaN"));
    CHECK_THROWS_WITH(mano::accumulator(3, kind(mano::input_kind::binary_logit)), Catch::Contains("2 classes, not 3"));
    CHECK_THROWS_WITH(mano::classes_of(mano::input_kind::logits, 1), Catch::Contains("give input binary-logit or binary-probability"));
    CHECK_THROWS_WITH(mano::classes_of(mano::input_kind::binary_probability, 4), Catch::Contains("takes one column per row"));
    CHECK_THROWS_WITH(mano::parse_input_kind("softmax"), Catch::Contains("is not one of logits, probabilities"));
    CHECK_THROWS_WITH(b.push(mano::logits_view(p.data(), 3, 2), {}), Catch::Contains("the rows have 2 columns but this accumulator takes 1"));
}

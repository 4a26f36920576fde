// Streaming behaviour: chunking, merging, serialization, input types and architectures.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>

#include <Eigen/SVD>

#include "mano/detail/state.hpp"
#include "support.hpp"

using mano_test::close;
using mano_test::random_logits;

namespace {

#if defined(__EMSCRIPTEN__)
constexpr const char* baseline_architecture = "wasm-simd128";
#else
constexpr const char* baseline_architecture = "scalar";
#endif

mano::result push_in_parts(const std::vector<float>& q, std::size_t k, const std::vector<std::size_t>& cuts,
                           const mano::options& o) {
    const std::size_t n = q.size() / k;
    mano::logits_view all(q.data(), n, k);
    mano::accumulator total(k, o);
    std::size_t first = 0;
    for (const std::size_t cut : cuts) {
        mano::accumulator part(k, o);
        part.push(all.slice(first, cut - first));
        total.merge(part);
        first = cut;
    }
    mano::accumulator last(k, o);
    last.push(all.slice(first, n - first));
    total.merge(last);
    return total.finalize();
}

void check_same(const mano::result& a, const mano::result& b, double rel) {
    CHECK(a.n == b.n);
    CHECK(a.mano->used == b.mano->used);
    CHECK(close(a.value(mano::method::mano).value(), b.value(mano::method::mano).value(), rel));
    CHECK(close(a.mano->criterion, b.mano->criterion, rel));
    CHECK(a.mano->batches == b.mano->batches);
}

}  // namespace

TEST_CASE("merge(a, b) equals one push of all rows", "[accumulator]") {
    const std::size_t n = 1000, k = 17;
    const auto q = random_logits(n, k, 2.0, 11);
    for (const auto norm : {mano::normalization::softrun, mano::normalization::softmax, mano::normalization::taylor}) {
        mano::options o;
        o.norm = norm;
        const auto whole = mano::score(mano::logits_view(q.data(), n, k), o);
        check_same(push_in_parts(q, k, {1, 333, 334, 900}, o), whole, 1e-12);
        check_same(push_in_parts(q, k, {0, 500}, o), whole, 1e-12);
    }
}

TEST_CASE("batch mode merges at batch boundaries and refuses others", "[accumulator]") {
    const std::size_t n = 300, k = 10;
    const auto q = random_logits(n, k, 3.0, 12);
    mano::options o;
    o.batch_size = 64;
    const auto whole = mano::score(mano::logits_view(q.data(), n, k), o);
    CHECK(whole.mano->batches == 5);
    check_same(push_in_parts(q, k, {64, 192}, o), whole, 1e-12);
    CHECK_THROWS_WITH(push_in_parts(q, k, {100}, o), Catch::Contains("multiple of batch_size (64)"));
}

TEST_CASE("pushing in chunks of any size equals one push", "[accumulator]") {
    const std::size_t n = 5000, k = 9;
    const auto q = random_logits(n, k, 2.0, 13);
    mano::logits_view all(q.data(), n, k);
    mano::options o;
    o.batch_size = 128;
    mano::accumulator chunked(k, o);
    for (std::size_t first = 0, step = 1; first < n; first += step, step = step * 3 % 1999 + 1)
        chunked.push(all.slice(first, std::min(step, n - first)));
    check_same(chunked.finalize(), mano::score(all, o), 1e-12);
}

TEST_CASE("to_json / from_json round-trips the state exactly", "[accumulator]") {
    const std::size_t n = 700, k = 12;
    const auto q = random_logits(n, k, 2.0, 14);
    mano::logits_view all(q.data(), n, k);
    mano::options o;
    o.batch_size = 100;
    o.p = 3.5;
    o.taylor_order = 3;
    mano::accumulator first(k, o);
    first.push(all.slice(0, 300));
    const auto text = first.to_json().dump();
    auto restored = mano::accumulator::from_json(nlohmann::json::parse(text));
    CHECK(restored.to_json() == first.to_json());
    restored.push(all.slice(300, 400));
    const auto expected = mano::score(all, o);
    const auto got = restored.finalize();
    CHECK(got.value(mano::method::mano).value() == expected.value(mano::method::mano).value());
    CHECK(got.mano->criterion == expected.mano->criterion);
}

TEST_CASE("result::from_json inverts to_json for every method", "[accumulator]") {
    const std::size_t n = 400, k = 8;
    const auto q = random_logits(n, k, 2.0, 21);
    std::vector<std::int64_t> labels(n);
    for (std::size_t i = 0; i < n; ++i) labels[i] = static_cast<std::int64_t>(i % k);
    mano::logits_view all(q.data(), n, k);
    mano::options o;
    o.batch_size = 50;
    o.source = mano::fit_source(all, labels.data(), 1.0);
    o.methods = {mano::method::mano, mano::method::confscore, mano::method::entropy, mano::method::nuclear,
                 mano::method::mde, mano::method::cot, mano::method::atc_mc, mano::method::atc_ne, mano::method::doc,
                 mano::method::confscore_softrun, mano::method::nuclear_softrun, mano::method::agreement};
    mano::accumulator acc(k, o);
    mano::row_inputs extra;
    extra.second = &all;
    extra.labels = labels.data();
    acc.push(all, extra);
    const auto r = acc.finalize();
    const auto j = r.to_json();
    CHECK(mano::result::from_json(nlohmann::json::parse(j.dump())).to_json() == j);
    auto broken = j;
    broken["methods"]["mano"].erase("criterion");
    CHECK_THROWS_WITH(mano::result::from_json(broken), Catch::Contains("method \"mano\" needs a number \"criterion\""));
    CHECK_THROWS_WITH(mano::result::from_json(nlohmann::json{{"n", 3}, {"k", 2}, {"methods", {{"bogus", {}}}}}),
                      Catch::Contains("bogus"));
    CHECK_THROWS_WITH(mano::result::from_json(nlohmann::json{{"n", -1}, {"k", 2}, {"methods", nlohmann::json::object()}}),
                      Catch::Contains("\"n\" must be a whole number"));
}

TEST_CASE("float16, bfloat16, float64 and strided views widen to the same numbers", "[accumulator]") {
    const std::size_t n = 64, k = 11;
    std::vector<std::uint16_t> half(n * k), bf(n * k);
    std::vector<float> from_half(n * k), from_bf(n * k);
    std::mt19937 gen(3);
    std::uniform_int_distribution<int> mantissa(0, 1023), exponent(10, 17), sign(0, 1);
    for (std::size_t i = 0; i < n * k; ++i) {
        // random finite halves, including subnormals (exponent field 0) now and then
        const int e = (i % 13 == 0) ? 0 : exponent(gen);
        half[i] = static_cast<std::uint16_t>((sign(gen) << 15) | (e << 10) | mantissa(gen));
        from_half[i] = mano::half_to_float(half[i]);
        bf[i] = static_cast<std::uint16_t>((sign(gen) << 15) | ((124 + e % 8) << 7) | (mantissa(gen) & 127));
        from_bf[i] = mano::bfloat16_to_float(bf[i]);
    }
    CHECK(mano::half_to_float(0x3c00) == 1.0f);
    CHECK(mano::half_to_float(0xc000) == -2.0f);
    CHECK(mano::half_to_float(0x0001) == std::ldexp(1.0f, -24));
    CHECK(mano::half_to_float(0x7bff) == 65504.0f);
    CHECK(mano::bfloat16_to_float(0x3f80) == 1.0f);
    const auto a = mano::score(mano::logits_view(half.data(), mano::dtype::float16, n, k));
    const auto b = mano::score(mano::logits_view(from_half.data(), n, k));
    CHECK(a.value(mano::method::mano).value() == b.value(mano::method::mano).value());
    const auto c = mano::score(mano::logits_view(bf.data(), mano::dtype::bfloat16, n, k));
    const auto d = mano::score(mano::logits_view(from_bf.data(), n, k));
    CHECK(c.value(mano::method::mano).value() == d.value(mano::method::mano).value());
    std::vector<double> wide(from_half.begin(), from_half.end());
    // float64 rows take the kernel's double path (scanned in double, q - max rounded to float)
    CHECK(mano::score(mano::logits_view(wide.data(), n, k)).value(mano::method::mano).value() == Approx(b.value(mano::method::mano).value()).epsilon(1e-7));
    std::vector<float> strided(n * (k + 5), 1e30f);  // padding that must never be read
    for (std::size_t i = 0; i < n; ++i)
        std::copy(&from_half[i * k], &from_half[i * k] + k, &strided[i * (k + 5)]);
    CHECK(mano::score(mano::logits_view(strided.data(), n, k, k + 5)).value(mano::method::mano).value() == b.value(mano::method::mano).value());
}

TEST_CASE("every architecture the CPU offers gives the same result", "[architecture]") {
    const auto archs = mano_test::kernels_to_test();
    REQUIRE(!archs.empty());
    CHECK(archs.back() == baseline_architecture);  // the portable baseline is always there
    for (const std::size_t k : {2, 7, 16, 37, 1001}) {
        const std::size_t n = 97;
        for (const double scale : {0.3, 3.0, 40.0}) {
            const auto q = random_logits(n, k, scale, static_cast<unsigned>(k * 31 + scale));
            for (const auto norm : {mano::normalization::softmax, mano::normalization::taylor}) {
                for (const double p : {2.0, 4.0, 7.5}) {
                    mano::options o;
                    o.norm = norm;
                    o.p = p;
                    o.architecture = archs.back();
                    const auto reference = mano::score(mano::logits_view(q.data(), n, k), o);
                    for (const auto& arch : archs) {
                        o.architecture = arch;
                        const auto r = mano::score(mano::logits_view(q.data(), n, k), o);
                        INFO(arch << " K=" << k << " scale=" << scale << " p=" << p << " "
                                  << mano::normalization_name(norm));
                        CHECK(close(r.value(mano::method::mano).value(), reference.value(mano::method::mano).value(), 1e-6));
                        CHECK(close(r.mano->criterion, reference.mano->criterion, 1e-6));
                    }
                }
            }
        }
    }
}

TEST_CASE("MANO_ARCH selects the kernel; unknown names are refused", "[architecture]") {
    ::setenv("MANO_ARCH", baseline_architecture, 1);
    CHECK(mano::accumulator(4).architecture() == baseline_architecture);
    ::setenv("MANO_ARCH", "neon", 1);
    CHECK_THROWS_WITH(mano::accumulator(4), Catch::Contains("MANO_ARCH") && Catch::Contains(baseline_architecture));
    ::unsetenv("MANO_ARCH");
    CHECK(mano::accumulator(4).architecture() == mano::available_architectures().front());
    mano::options o;
    o.architecture = "avx3000";
    CHECK_THROWS_WITH(mano::accumulator(4, o), Catch::Contains("not a known architecture"));
}

TEST_CASE("softrun picks softmax only when the criterion is strictly above eta", "[accumulator]") {
    const auto q = random_logits(50, 6, 2.0, 15);
    mano::options o;
    o.criterion = o.eta;
    CHECK(mano::score(mano::logits_view(q.data(), 50, 6), o).mano->used == mano::normalization::taylor);
    o.criterion = std::nextafter(o.eta, 10.0);
    CHECK(mano::score(mano::logits_view(q.data(), 50, 6), o).mano->used == mano::normalization::softmax);
}

namespace {

// Options that ask for every method of the table, with what each needs: a labeled source set of
// `source_rows` (K classes, fitted at temperature 1.3) and source feature moments of d dimensions.
mano::options every_method(std::size_t k, std::size_t d, std::size_t source_rows, std::uint64_t seed) {
    const auto source_q = random_logits(source_rows, k, 2.5, seed);
    std::vector<std::int64_t> source_labels(source_rows);
    for (std::size_t i = 0; i < source_rows; ++i) source_labels[i] = static_cast<std::int64_t>((i * 7) % k);
    std::vector<double> source_features((source_rows + 100) * d);
    for (std::size_t i = 0; i < source_features.size(); ++i) source_features[i] = std::sin(0.37 * static_cast<double>(i));
    mano::options o;
    for (int m = 0; m < mano::method_count; ++m) o.methods.push_back(static_cast<mano::method>(m));
    o.temperature = 1.3;
    o.source = mano::fit_source(mano::logits_view(source_q.data(), source_rows, k), source_labels.data(), o.temperature, o.methods);
    auto moments = std::make_shared<mano::feature_moments>(d);
    moments->push(source_features.data(), source_rows + 100);
    o.source_features = moments;
    return o;
}

}  // namespace

TEST_CASE("merge and JSON state equal one pass for every streaming method", "[accumulator]") {
    const std::size_t n = 600, k = 7, d = 5;
    const auto q = random_logits(n, k, 2.5, 16), q2 = random_logits(n, k, 2.5, 17);
    const auto features = random_logits(n, d, 1.0, 18);
    const mano::options o = every_method(k, d, 300, 19);

    const mano::logits_view all(q.data(), n, k), all2(q2.data(), n, k), feats(features.data(), n, d);
    mano::accumulator whole(k, o);
    whole.push(all, {&all2, &feats});
    const auto expected = whole.finalize().to_json();
    CHECK(expected.at("methods").size() == static_cast<std::size_t>(mano::method_count));

    mano::accumulator merged(k, o);
    for (const auto& [first, count] : std::vector<std::pair<std::size_t, std::size_t>>{{0, 1}, {1, 250}, {251, 349}}) {
        mano::accumulator part(k, o);
        const auto a = all.slice(first, count), b = all2.slice(first, count), f = feats.slice(first, count);
        part.push(a, {&b, &f});
        // every shard travels as JSON, as it would between workers
        merged.merge(mano::accumulator::from_json(nlohmann::json::parse(part.to_json().dump())));
    }
    const auto got = merged.finalize().to_json();
    for (const auto& [name, values] : expected.at("methods").items()) {
        for (const auto& [key, value] : values.items()) {
            if (!value.is_number_float()) continue;
            INFO(name << "." << key);
            CHECK(close(got.at("methods").at(name).at(key).get<double>(), value.get<double>(), 1e-10));
        }
    }
    mano::accumulator without_features(k, o);
    without_features.push(all.slice(0, 10));
    CHECK_THROWS_WITH(merged.merge(without_features), Catch::Contains("extra inputs"));
}

TEST_CASE("a failed push leaves each method's state as it was; the retry gives one pass's result", "[accumulator][validation]") {
    // K = 300 and a temperature: blocks of 109 rows (256 with a Gram matrix), so the bad row, in
    // the push's third block, comes after every component has taken two blocks of it.
    const std::size_t n = 600, k = 300, d = 4, bad_row = 550;
    const auto q = random_logits(n, k, 2.5, 31), q2 = random_logits(n, k, 2.5, 32);
    const auto features = random_logits(n, d, 1.0, 33);
    auto broken = q;
    broken[bad_row * k + 3] = std::numeric_limits<float>::quiet_NaN();
    const mano::options base = every_method(k, d, 200, 34);

    const mano::logits_view all(q.data(), n, k), bad(broken.data(), n, k), all2(q2.data(), n, k), feats(features.data(), n, d);
    const auto push = [&](mano::accumulator& acc, const mano::logits_view& rows, std::size_t first, std::size_t count) {
        const auto b = all2.slice(first, count), f = feats.slice(first, count);
        acc.push(rows.slice(first, count), {&b, &f});
    };
    for (int m = 0; m < mano::method_count; ++m) {
        mano::options o = base;
        o.methods = {static_cast<mano::method>(m)};
        INFO(mano::method_name(o.methods.front()));
        mano::accumulator acc(k, o);
        push(acc, all, 0, 100);
        const auto before = acc.to_json();
        CHECK_THROWS_WITH(push(acc, bad, 100, 500), Catch::Contains("row 550"));
        CHECK(acc.to_json() == before);
        push(acc, all, 100, 500);
        mano::accumulator once(k, o);
        push(once, all, 0, n);
        const auto got = acc.finalize().to_json().at("methods"), expected = once.finalize().to_json().at("methods");
        REQUIRE(expected.size() == 1);
        for (const auto& [key, value] : expected.begin().value().items()) {
            if (!value.is_number_float()) continue;
            INFO(key);
            CHECK(close(got.begin().value().at(key).get<double>(), value.get<double>(), 1e-12));
        }
    }
}

TEST_CASE("nuclear norms of fewer rows than classes keep the rows and match an SVD", "[accumulator]") {
    // sum of singular values of the double softmax rows, from Eigen's SVD of P itself (an independent
    // route: mano uses the eigenvalues of P P^T while N <= K, of P^T P beyond)
    const auto reference = [](const std::vector<float>& q, std::size_t n, std::size_t k) {
        Eigen::MatrixXd p(n, k);
        for (std::size_t i = 0; i < n; ++i) {
            double top = q[i * k], sum = 0;
            for (std::size_t j = 0; j < k; ++j) top = std::max(top, static_cast<double>(q[i * k + j]));
            for (std::size_t j = 0; j < k; ++j) sum += p(i, j) = std::exp(q[i * k + j] - top);
            p.row(i) /= sum;
        }
        const Eigen::JacobiSVD<Eigen::MatrixXd> svd(p);
        return svd.singularValues().sum() / std::sqrt(static_cast<double>(n) * std::min(n, k));
    };
    const std::size_t k = 300;
    const auto q = random_logits(450, k, 3.0, 41);
    mano::options o;
    o.methods = {mano::method::nuclear, mano::method::nuclear_softrun};
    o.norm = mano::normalization::softmax;
    for (const std::size_t n : {1, 7, 299, 300, 301, 450}) {
        INFO("N=" << n << " K=" << k);
        const mano::logits_view view(q.data(), n, k);
        const auto r = mano::score(view, o);
        CHECK(close(*r.value(mano::method::nuclear), reference(q, n, k), 1e-7));  // the kernel's exps are float: ~2e-8
        CHECK(close(*r.value(mano::method::nuclear_softrun), *r.value(mano::method::nuclear), 1e-12));
        // the state holds the rows while N <= K, the Gram matrix beyond; both survive JSON
        mano::accumulator acc(k, o);
        acc.push(view);
        const auto state = acc.to_json();
        CHECK(state.at("methods").at("nuclear").contains(n <= k ? "rows" : "gram"));
        CHECK(close(*mano::accumulator::from_json(state).finalize().value(mano::method::nuclear), *r.value(mano::method::nuclear), 1e-12));
        // two halves merged: rows + rows can become a Gram matrix
        mano::accumulator a(k, o), b(k, o);
        a.push(view.slice(0, n / 2));
        b.push(view.slice(n / 2, n - n / 2));
        a.merge(mano::accumulator::from_json(b.to_json()));
        CHECK(close(*a.finalize().value(mano::method::nuclear), *r.value(mano::method::nuclear), 1e-10));
    }
    mano::accumulator acc(k, o);
    acc.push(mano::logits_view(q.data(), 5, k));
    auto state = acc.to_json();
    state["methods"]["nuclear"]["rows"].erase(state["methods"]["nuclear"]["rows"].begin());
    CHECK_THROWS_WITH(mano::accumulator::from_json(state), Catch::Contains("method nuclear: \"rows\" keeps 1499 values") &&
                                                              Catch::Contains("5 rows of K = 300 need 1500"));
}

TEST_CASE("the next row's first pass, done inside this row's second, changes nothing", "[accumulator]") {
    // Above 128 classes a row's pass 1 (maximum, Taylor range) runs inside the previous row's
    // pass 2 where both take the common paths. Single-row pushes never look ahead, so they must
    // give exactly what one push gives. Among the rows, each followed by an ordinary one: a
    // constant row (uniform Taylor values), a confident row, a row whose Taylor values are too
    // large for float powers, and a row whose q - max overflows float (both take other paths, so
    // the row after them is scanned on its own).
    for (const std::size_t k : {129, 300, 1001}) {
        const std::size_t n = 24;
        auto q = random_logits(n, k, 2.5, 70 + static_cast<unsigned>(k));
        std::fill(q.begin() + 3 * k, q.begin() + 4 * k, 1.5f);
        q[7 * k + 1] = 60.0f;
        for (std::size_t j = 0; j < k; ++j) q[11 * k + j] *= 1e5f;
        q[15 * k + 2] = 3e38f;
        q[15 * k + 3] = -3e38f;
        const mano::logits_view all(q.data(), n, k);
        for (const auto norm : {mano::normalization::softrun, mano::normalization::softmax, mano::normalization::taylor}) {
            for (const double p : {2.0, 4.0, 2.5}) {
                for (const bool outputs : {false, true}) {
                    mano::options o;
                    o.methods = {mano::method::mano, mano::method::confscore, mano::method::entropy,
                                 mano::method::confscore_softrun};
                    if (outputs) o.methods.push_back(mano::method::nuclear_softrun);
                    o.norm = norm;
                    o.p = p;
                    mano::accumulator one_by_one(k, o);
                    for (std::size_t first = 0; first < n; ++first) one_by_one.push(all.slice(first, 1));
                    const auto a = mano::score(all, o).to_json().at("methods");
                    const auto b = one_by_one.finalize().to_json().at("methods");
                    for (const auto& [name, values] : a.items()) {
                        for (const auto& [key, value] : values.items()) {
                            if (!value.is_number_float()) continue;
                            INFO("K=" << k << " p=" << p << " " << mano::normalization_name(norm) << ": " << name
                                      << "." << key);
                            // the nuclear norm's Gram sums differ in order between the two
                            CHECK(close(b.at(name).at(key).get<double>(), value.get<double>(),
                                        name == "nuclear_softrun" ? 1e-10 : 1e-13));
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("a row per lane (K <= 128) gives what one row at a time gives", "[accumulator]") {
    // Without per-row outputs, rows of up to 128 classes go a row per vector lane; asking for a
    // nuclear norm (which needs the probability rows) sends them through the per-row path. Among
    // the rows: a constant one (uniform Taylor values: the lanes hand it to the per-row path) and
    // a confident one. A row's lane does not see its neighbours, so pushes of single rows (lanes
    // padded with copies) give exactly what one push gives.
    for (const std::size_t k : {2, 9, 16, 17, 100, 128}) {
        const std::size_t n = 203;
        auto q = random_logits(n, k, 2.5, 50 + static_cast<unsigned>(k));
        std::fill(q.begin() + 5 * k, q.begin() + 6 * k, 1.5f);
        q[9 * k + 1] = 60.0f;
        const mano::logits_view all(q.data(), n, k);
        mano::options lanes;
        lanes.methods = {mano::method::mano, mano::method::confscore, mano::method::entropy, mano::method::mde,
                         mano::method::confscore_softrun};
        for (const auto norm : {mano::normalization::softmax, mano::normalization::taylor}) {
            for (const double p : {2.0, 4.0}) {
                lanes.norm = norm;
                lanes.p = p;
                mano::options per_row = lanes;
                per_row.methods.push_back(mano::method::nuclear_softrun);
                mano::accumulator one_by_one(k, lanes);
                for (std::size_t first = 0; first < n; ++first) one_by_one.push(all.slice(first, 1));
                const auto a = mano::score(all, lanes).to_json().at("methods");
                const auto b = one_by_one.finalize().to_json().at("methods");
                const auto c = mano::score(all, per_row).to_json().at("methods");
                for (const auto& [name, values] : a.items()) {
                    for (const auto& [key, value] : values.items()) {
                        if (!value.is_number_float()) continue;
                        INFO("K=" << k << " p=" << p << " " << mano::normalization_name(norm) << ": " << name << "." << key);
                        CHECK(close(b.at(name).at(key).get<double>(), value.get<double>(), 1e-13));
                        CHECK(close(c.at(name).at(key).get<double>(), value.get<double>(), 1e-6));
                    }
                }
            }
        }
    }
}

namespace {

std::vector<std::string> shard_list(const nlohmann::json& state) { return state.at("shards").get<std::vector<std::string>>(); }

mano::accumulator through_json(const mano::accumulator& acc) {
    return mano::accumulator::from_json(nlohmann::json::parse(acc.to_json().dump()));
}

}  // namespace

TEST_CASE("a state names its shards; merging one shard twice is refused", "[accumulator][shards]") {
    const std::size_t n = 900, k = 6;
    const auto q = random_logits(n, k, 2.0, 60);
    const mano::logits_view all(q.data(), n, k);
    mano::options o;
    o.methods = {mano::method::mano, mano::method::confscore, mano::method::mde};
    const auto shard = [&](std::size_t first, std::size_t count) {
        mano::accumulator acc(k, o);
        acc.push(all.slice(first, count));
        return acc;
    };
    const auto a = shard(0, 300), b = shard(300, 300), c = shard(600, 300);

    // a shard's own rows are named by a hash of its state: the same state gives the same name
    const auto a_state = a.to_json();
    REQUIRE(shard_list(a_state).size() == 1);
    CHECK(shard_list(a_state)[0].size() == 16);
    CHECK(shard_list(shard(0, 300).to_json()) == shard_list(a_state));
    CHECK(shard_list(b.to_json()) != shard_list(a_state));
    CHECK(a.shards() == std::vector<std::uint64_t>{std::stoull(shard_list(a_state)[0], nullptr, 16)});
    // ... and that name is the hash of the state with no shards named yet
    auto unnamed = a_state;
    unnamed["shards"] = nlohmann::json::array();
    CHECK(a.shards()[0] == mano::detail::json_hash(unnamed));
    CHECK(through_json(a).to_json() == a_state);

    // merged states list every shard, sorted, whatever the order of the merge
    auto ab = through_json(a);
    ab.merge(through_json(b));
    auto ba = through_json(b);
    ba.merge(through_json(a));
    auto names = shard_list(a_state);
    names.push_back(shard_list(b.to_json())[0]);
    std::sort(names.begin(), names.end());
    CHECK(shard_list(ab.to_json()) == names);
    CHECK(shard_list(ba.to_json()) == names);
    CHECK(through_json(ab).shards() == ab.shards());

    // one shard twice: directly, through a merged state that holds it, or as the same state again
    const auto repeated = Catch::Contains("shard " + shard_list(a_state)[0] + " is already in this accumulator");
    auto twice = through_json(a);
    CHECK_THROWS_WITH(twice.merge(through_json(a)), repeated);
    CHECK_THROWS_WITH(twice.merge(through_json(a)), Catch::Contains("merging one shard twice would count its rows twice"));
    CHECK_THROWS_WITH(twice.merge(ab), repeated);
    CHECK_THROWS_WITH(ab.merge(through_json(shard(0, 300))), repeated);
    const auto before = ab.to_json();
    CHECK_THROWS(ab.merge(through_json(a)));
    CHECK(ab.to_json() == before);  // a refused merge changes nothing
    CHECK_THROWS_WITH(ab.merge(ab), Catch::Contains("into itself"));

    // merge_as_shard: an accumulator's own rows come in as the shard its state names
    mano::accumulator total(k, o);
    total.merge_as_shard(a);
    CHECK(total.shards() == a.shards());
    CHECK_THROWS_WITH(total.merge_as_shard(a), repeated);
    CHECK_THROWS_WITH(total.merge(through_json(a)), repeated);
    auto same_rows = shard(0, 300);
    CHECK_THROWS_WITH(same_rows.merge_as_shard(a), repeated);  // two states of identical sums are one shard

    // parts of one shard (threads, row ranges) join: one shard, whose name is the whole state's
    mano::accumulator parts(k, o);
    parts.merge(a);
    parts.merge(b);
    parts.merge(c);
    mano::accumulator whole(k, o);
    whole.push(all);
    CHECK(parts.shards().size() == 1);
    CHECK(parts.finalize().n == n);
    CHECK(shard_list(parts.to_json()).size() == 1);
    // a state with merged shards and rows of its own names both
    auto abc = through_json(ab);
    abc.push(all.slice(600, 300));
    CHECK(abc.shards().size() == 3);
    CHECK(abc.finalize().value(mano::method::mano).value() == Approx(whole.finalize().value(mano::method::mano).value()).epsilon(1e-12));
    CHECK_THROWS_WITH(through_json(abc).merge(through_json(b)),
                      Catch::Contains("shard " + shard_list(b.to_json())[0] + " is already in this accumulator"));

    // own rows keep their name once shards come in: a later merge or push cannot rename them away
    {
        auto x = shard(0, 300), y = shard(300, 300);
        x.merge_as_shard(y);
        CHECK_THROWS_WITH(y.merge_as_shard(x), Catch::Contains("is already in this accumulator"));
        CHECK(y.finalize().n == 300);  // y counts its rows once (it would have said 900)
        auto z = shard(0, 300);
        const auto z_state = z.to_json();
        z.merge_as_shard(shard(300, 300));
        CHECK_THROWS_WITH(z.merge(mano::accumulator::from_json(z_state)), Catch::Contains("is already in this accumulator"));
        z.push(all.slice(600, 300));  // new own rows after the merge: a shard of their own
        CHECK(z.shards().size() == 3);
        CHECK(z.finalize().n == 900);
    }
    // a label tells apart shards of identical content; the same label again is the same shard
    {
        auto p0 = shard(0, 300), p1 = shard(0, 300), again = shard(0, 300);
        p0.set_shard_label("partition 0");
        p1.set_shard_label("partition 1");
        again.set_shard_label("partition 0");
        CHECK(p0.shards() != p1.shards());
        mano::accumulator sum(k, o);
        sum.merge(through_json(p0));
        sum.merge(through_json(p1));
        CHECK(sum.finalize().n == 600);
        CHECK_THROWS_WITH(sum.merge(through_json(again)), Catch::Contains("is already in this accumulator"));
        CHECK_THROWS_WITH(p0.set_shard_label(std::string(mano::max_shard_label + 1, 'x')), Catch::Contains("4096"));
        mano::accumulator unlabeled(k, o);
        unlabeled.push(all.slice(0, 300));
        CHECK(unlabeled.shards() == a.shards());  // no label: named by content alone, as before
    }
}

TEST_CASE("an empty state names no shard and merges any number of times", "[accumulator][shards]") {
    mano::options o;
    o.methods = {mano::method::mano};
    const mano::accumulator empty(3, o);
    CHECK(empty.shards().empty());
    CHECK(shard_list(empty.to_json()).empty());
    mano::accumulator total(3, o);
    for (int i = 0; i < 3; ++i) total.merge(through_json(empty));
    CHECK(total.rows() == 0);
    CHECK(total.shards().empty());
    const auto q = random_logits(10, 3, 1.0, 61);
    total.push(mano::logits_view(q.data(), 10, 3));
    total.merge(through_json(empty));
    CHECK(total.shards().size() == 1);
}

TEST_CASE("shard lists are checked on load", "[accumulator][shards][validation]") {
    const auto q = random_logits(40, 4, 1.0, 62);
    mano::options o;
    o.methods = {mano::method::mano};
    mano::accumulator acc(4, o);
    acc.push(mano::logits_view(q.data(), 40, 4));
    const auto good = acc.to_json();
    const auto refused = [&](const nlohmann::json& shards, const std::string& needle) {
        auto j = good;
        j["shards"] = shards;
        INFO(shards.dump());
        CHECK_THROWS_WITH(mano::accumulator::from_json(j), Catch::Contains(needle));
    };
    const std::string one = shard_list(good)[0];
    refused(nlohmann::json::array(), "names 0 shards for 40 rows");
    refused({one, one}, "distinct ids of 16 hexadecimal digits in ascending order");
    refused({"00000000000000ff", "00000000000000fe"}, "ascending order");
    refused({"00000000000000FF"}, "16 hexadecimal digits");
    refused({"ff"}, "16 hexadecimal digits");
    refused({7}, "16 hexadecimal digits");
    refused("00000000000000ff", "must be a list of shard ids");
    nlohmann::json too_many = nlohmann::json::array();
    for (int i = 0; i < 41; ++i) too_many.push_back(mano::shard_name(static_cast<std::uint64_t>(i)));
    refused(too_many, "names 41 shards for 40 rows");
    auto missing = good;
    missing.erase("shards");
    CHECK_THROWS_WITH(mano::accumulator::from_json(missing), Catch::Contains("accumulator state"));
    auto old = good;
    old["version"] = 5;
    CHECK_THROWS_WITH(mano::accumulator::from_json(old), Catch::Contains("unsupported version 5") &&
                                                             Catch::Contains("emit it again with this mano"));
    auto empty = mano::accumulator(4, o).to_json();
    empty["shards"] = {one};
    CHECK_THROWS_WITH(mano::accumulator::from_json(empty), Catch::Contains("names 1 shards for 0 rows"));
}

TEST_CASE("shard names are the same in every build: a hash of values, not of memory", "[accumulator][shards]") {
    // the same numbers on every platform: WebAssembly's 32-bit size_t, any kernel
    const nlohmann::json tree = {{"null", nullptr},         {"flag", true},
                                 {"negative", -3},          {"count", std::uint64_t{12345678901}},
                                 {"zero", -0.0},            {"third", 1.0 / 3.0},
                                 {"text", "nine char"},     {"list", {1, 2.5, "x", nlohmann::json::array()}},
                                 {"nested", {{"b", 1}, {"a", nlohmann::json::object()}}}};
    CHECK(mano::shard_name(mano::detail::json_hash(tree)) == "625cca017d73edf4");
    auto changed = tree;
    changed["zero"] = 0.0;
    CHECK(mano::detail::json_hash(changed) != mano::detail::json_hash(tree));
    changed = tree;
    changed["count"] = 12345678901.0;  // a whole number as a double is another value than the integer
    CHECK(mano::detail::json_hash(changed) != mano::detail::json_hash(tree));
    CHECK(mano::shard_name(0x3f9a) == "0000000000003f9a");
    // rows of equal logits give exact sums on every kernel, hence one state and one name everywhere
    std::vector<float> flat(3 * 4, 0.0f);
    mano::options o;
    o.methods = {mano::method::mano, mano::method::confscore, mano::method::nuclear, mano::method::cot};
    o.norm = mano::normalization::softmax;
    std::set<std::string> names;
    for (const auto& arch : mano_test::kernels_to_test()) {
        o.architecture = arch;
        mano::accumulator acc(4, o);
        acc.push(mano::logits_view(flat.data(), 3, 4));
        names.insert(shard_list(acc.to_json())[0]);
    }
    CHECK(names == std::set<std::string>{"a84244ab772f5f85"});
}

TEST_CASE("whole numbers in a state must be JSON integers in range", "[accumulator][validation]") {
    // nlohmann's get<int>() truncates 2.5 and converts 6e81 with undefined behaviour (found by
    // fuzz_state): every whole number a state holds is checked as a JSON integer first.
    const auto q = random_logits(40, 4, 1.0, 63);
    mano::options o;
    o.methods = {mano::method::mano, mano::method::confscore};
    mano::accumulator acc(4, o);
    acc.push(mano::logits_view(q.data(), 40, 4));
    const auto good = acc.to_json();
    const auto refused = [&](const nlohmann::json::json_pointer& at, const nlohmann::json& value, const std::string& needle) {
        auto j = good;
        j[at] = value;
        INFO(at.to_string() << " = " << value.dump());
        CHECK_THROWS_WITH(mano::accumulator::from_json(j), Catch::Contains(needle));
    };
    using ptr = nlohmann::json::json_pointer;
    refused(ptr("/version"), 6.111e81, "unsupported version");
    refused(ptr("/version"), 6.0, "unsupported version");
    refused(ptr("/version"), 4294967302ULL, "unsupported version");  // 6 modulo 2^32
    refused(ptr("/taylor_overflow_row"), 2.5, "\"taylor_overflow_row\" must be a whole number");
    refused(ptr("/taylor_overflow_row"), -7, "\"taylor_overflow_row\" must be a whole number from -1");
    refused(ptr("/options/taylor_order"), 1e300, "\"taylor_order\" must be a whole number from 1 to 170");
    refused(ptr("/options/batch_size"), 1e300, "\"batch_size\" must be a whole number");
    refused(ptr("/predicted/0"), 1e300, "\"predicted\" must be a whole number");
    refused(ptr("/predicted/0"), -1, "\"predicted\" must be a whole number");
    refused(ptr("/n"), 40.5, "\"n\" must be a whole number >= 0 (got 40.5)");
    refused(ptr("/phi_sum"), "12", "\"phi_sum\" must be a number (got \"12\")");
    CHECK_NOTHROW(mano::accumulator::from_json(good));
    // whole numbers written as floats (Python's json, JavaScript) are those numbers
    auto floats = good;
    floats["version"] = 7.0;
    floats["n"] = 40.0;
    floats["k"] = 4.0;
    floats["options"]["taylor_order"] = 2.0;
    CHECK(mano::accumulator::from_json(floats).to_json() == good);
}

TEST_CASE("states that no rows can give are refused", "[accumulator][validation]") {
    const std::size_t n = 60, k = 5;
    const auto q = random_logits(n, k, 2.0, 64);
    mano::options o;
    o.methods = {mano::method::mano, mano::method::nuclear, mano::method::mde, mano::method::cot};
    mano::accumulator acc(k, o);
    acc.push(mano::logits_view(q.data(), n, k));
    const auto good = acc.to_json();
    REQUIRE_NOTHROW(mano::accumulator::from_json(good));
    using ptr = nlohmann::json::json_pointer;
    const auto refused = [&](const std::function<void(nlohmann::json&)>& tamper, const std::string& needle) {
        auto j = good;
        tamper(j);
        CHECK_THROWS_WITH(mano::accumulator::from_json(j), Catch::Contains(needle));
    };
    // the criterion's sum below n log K flips MaNo's branch
    refused([](nlohmann::json& j) { j["phi_sum"] = 0.0; }, "inconsistent sums");
    refused([&](nlohmann::json& j) { j["phi_sum"] = 0.99 * n * std::log(5.0); }, "inconsistent sums");
    // sum_k p^p is at least K^(1-p) on every softmax row
    refused([](nlohmann::json& j) { j["methods"]["mano"]["sum_softmax"] = {0.0, 0.0}; }, "below n K^(1-p)");
    // COT's rows are softmax rows
    refused([](nlohmann::json& j) {
        for (auto& x : j["methods"]["cot"]) x = 0.0;
    }, "softmax rows");
    // the Gram matrix keeps its upper triangle and sums to n
    refused([&](nlohmann::json& j) {
        auto& g = j["methods"]["nuclear"]["gram"];
        for (std::size_t a = 0; a < k; ++a)
            for (std::size_t b = a + 1; b < k; ++b) std::swap(g[a * k + b], g[b * k + a]);
    }, "below its diagonal");
    refused([](nlohmann::json& j) { j["methods"]["nuclear"]["gram"][0] = 1e308; }, "outside [0, n]");
    refused([](nlohmann::json& j) { j["methods"]["nuclear"]["gram"][0] = j["methods"]["nuclear"]["gram"][0].get<double>() + 5; },
            "\"gram\" sums to");
    // MDE's energies: a spread that overflows
    refused([](nlohmann::json& j) {
        j["methods"]["mde"]["max"] = 1e308;
        j["methods"]["mde"]["shift"] = -1e308;
    }, "energies' sums are inconsistent");
    // no message prints a number as 309 digits
    auto j = good;
    j["methods"]["nuclear"]["gram"][0] = 1e308;
    try {
        mano::accumulator::from_json(j);
    } catch (const mano::error& e) {
        CHECK(std::string(e.what()).size() < 200);
        CHECK_THAT(e.what(), Catch::Contains("1e+308"));
    }
}

TEST_CASE("a K beyond the limit is refused before anything is allocated", "[accumulator][validation]") {
    mano::options o;
    o.methods = {mano::method::cot};
    CHECK_THROWS_WITH(mano::accumulator(std::numeric_limits<std::size_t>::max(), o), Catch::Contains("more than the 1048576"));
    CHECK_THROWS_WITH(mano::accumulator(mano::max_classes + 1, o), Catch::Contains("more than the 1048576"));
    CHECK_NOTHROW(mano::accumulator(mano::max_classes, mano::options{}));
}

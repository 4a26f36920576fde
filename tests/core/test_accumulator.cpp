// Streaming behaviour: chunking, merging, serialization, input types and architectures. (What one
// estimator alone does: tests/core/estimators.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

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
                if (k == 2 && norm == mano::normalization::taylor) continue;  // not defined (options.hpp)
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
    // K = 2 too: a binary model, whose softrun methods read the softmax branch (options.hpp)
    for (const std::size_t k : {std::size_t{7}, std::size_t{2}}) {
        const std::size_t n = 600, d = 5;
        INFO("K = " << k);
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
            if (k == 2 && norm == mano::normalization::taylor) continue;  // not defined (options.hpp)
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

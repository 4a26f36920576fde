// Accumulator states: the shards a state names (one merged twice is refused), and the states no
// rows can give, refused on load.
#include <catch2/catch.hpp>

#include <functional>
#include <limits>
#include <set>
#include <string>

#include "mano/base/detail/json_fields.hpp"
#include "support.hpp"

using mano_test::random_logits;

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

// Audit mode in the core (src/mano/audit/audit_sample.hpp, correctness.hpp, audit.hpp): the sampler's
// fixed sequence for a seed, which every platform and the WebAssembly build must give (the
// expected rows come from an independent Python implementation of splitmix64 and Floyd's
// algorithm), the correctness histogram through merges and states, and the interval formulas.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "mano/audit/ppi.hpp"
#include "mano/base/number_text.hpp"
#include "mano/calibration/correctness_model.hpp"
#include "mano/scan/correctness_histogram.hpp"
#include "support.hpp"

using mano_test::random_logits;

TEST_CASE("the audit sampler draws the same rows for a seed everywhere", "[audit]") {
    mano::detail::splitmix64 g{0};
    CHECK(g.next() == 0xe220a8397b1dcdafULL);  // splitmix64's published first output for seed 0
    CHECK(g.next() == 0x6e789e6aa1b965f4ULL);
    CHECK(g.next() == 0x06c45d188009454fULL);
    mano::detail::splitmix64 h{12345};
    std::vector<std::uint64_t> below;
    for (const std::uint64_t bound : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{10},
                                      std::uint64_t{1000}, (std::uint64_t{1} << 63) + 1, ~std::uint64_t{0}})
        below.push_back(mano::detail::uniform_below(h, bound));
    CHECK(below == std::vector<std::uint64_t>{0, 1, 0, 0, 363, 6779582880647741134ULL, 3405751836678233477ULL});

    CHECK(mano::audit_sample(1000, 10, 42) == std::vector<std::uint64_t>{45, 66, 180, 404, 451, 674, 714, 803, 874, 974});
    CHECK(mano::audit_sample(2000, 5, 7) == std::vector<std::uint64_t>{252, 366, 1164, 1619, 1674});
    CHECK(mano::audit_sample(10, 10, 3) == std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    CHECK(mano::audit_sample(std::uint64_t{1} << 40, 4, mano::audit_max_seed) ==
          std::vector<std::uint64_t>{129724844742ULL, 667942980669ULL, 742763299212ULL, 1072527669628ULL});

    CHECK_THROWS_WITH(mano::audit_sample(10, 11, 1), Catch::Contains("more than the set's 10 rows"));
    CHECK_THROWS_WITH(mano::audit_sample(10, 0, 1), Catch::Contains("below the 2 rows an audit needs"));
    CHECK(mano::audit_min_rows == 2);  // what audit_sample draws at least is what parse_audit takes back
    CHECK_THROWS_WITH(mano::audit_sample(10, 1, 1),
                      "a budget of 1 row is below the 2 rows an audit needs (its interval needs 2 labeled rows); give a budget "
                      "of 2 or more");
    CHECK_THROWS_WITH(mano::audit_sample(1, 2, 1), Catch::Contains("the set has 1 row, fewer than the 2 an audit needs"));
    CHECK(mano::audit_sample(2, 2, 1) == std::vector<std::uint64_t>{0, 1});
    CHECK_THROWS_WITH(mano::audit_sample(10, 2, mano::audit_max_seed + 1), Catch::Contains("2^53 - 1"));

    const std::string csv = mano::audit_csv({3, 5}, 10, 4, 9, "a.npy");
    CHECK(csv.rfind("# mano audit: 2 of the 10 rows of a.npy", 0) == 0);
    CHECK(csv.substr(csv.find('\n') + 1) == "row,weight\n3,1\n5,1\n");
}

TEST_CASE("an audit file belongs to the set it was drawn from: another size is refused, another name warned of",
          "[audit]") {
    const auto labeled = [](const std::string& csv) {
        std::string out;
        std::size_t at = 0;
        for (std::size_t line = 0; at < csv.size(); ++line) {
            const auto end = csv.find('\n', at);
            out += csv.substr(at, end - at) + (line == 0 ? "" : line == 1 ? ",label" : ",1") + "\n";
            at = end + 1;
        }
        return out;
    };
    const auto rows = mano::audit_sample(2000, 2, 9);
    const std::string drawn = labeled(mano::audit_csv(rows, 2000, 4, 9, "data/day1_logits.npy"));
    try {
        mano::parse_audit(drawn, "rows.csv", 4000, 4, "data/day2_logits.npy");
        FAIL("an audit of a 2000-row set was accepted for a 4000-row set");
    } catch (const mano::error& e) {
        CHECK(std::string(e.what()) ==
              "rows.csv, line 1: this audit was drawn from the 2000 rows of data/day1_logits.npy, but the set has 4000 rows: "
              "its labels are another set's rows; draw the audit from this set (mano audit)");
    }
    const auto other_name = mano::parse_audit(drawn, "rows.csv", 2000, 4, "data/day2_logits.npy");
    CHECK(other_name.drawn_rows == std::optional<std::uint64_t>(2000));
    CHECK(other_name.drawn_from == "data/day1_logits.npy");
    REQUIRE(other_name.warnings.size() == 1);
    CHECK(other_name.warnings[0] == "rows.csv was drawn from data/day1_logits.npy, not from data/day2_logits.npy (both have "
                                    "2000 rows): check that its labels are this set's rows");
    CHECK(other_name.to_json().at("warnings") == other_name.warnings);
    // the same file in another folder, an array's draw, or no set name: no warning
    CHECK(mano::parse_audit(drawn, "rows.csv", 2000, 4, "/elsewhere/day1_logits.npy").warnings.empty());
    CHECK(mano::parse_audit(drawn, "rows.csv", 2000, 4).warnings.empty());
    const std::string from_array = labeled(mano::audit_csv(rows, 2000, 4, 9, mano::audit_array_source));
    CHECK(mano::parse_audit(from_array, "rows.csv", 2000, 4, "day2_logits.npy").warnings.empty());
    // a file without mano's first line is read as before
    CHECK(mano::parse_audit("row,weight,label\n3,1,1\n8,1,0\n", "rows.csv", 4000, 4, "x.npy").warnings.empty());
}

namespace {

// The labeled file of audit_sample(n, budget, seed) as mano audit writes it, every label 1, with
// `edit` applied to its lines (0: the record of the draw, 1: the header, 2...: the rows).
std::string drawn_file(std::uint64_t n, std::uint64_t budget, std::uint64_t seed,
                       const std::function<void(std::vector<std::string>&)>& edit = {}) {
    const std::string csv = mano::audit_csv(mano::audit_sample(n, budget, seed), n, 4, seed, "set.npy");
    std::vector<std::string> lines;
    for (std::size_t at = 0; at < csv.size();) {
        const auto end = csv.find('\n', at);
        lines.push_back(csv.substr(at, end - at) + (lines.empty() ? "" : lines.size() == 1 ? ",label" : ",1"));
        at = end + 1;
    }
    if (edit) edit(lines);
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

std::string refusal(const std::function<void()>& read) {
    try {
        read();
    } catch (const mano::error& e) {
        return e.what();
    }
    return "accepted";
}

}  // namespace

TEST_CASE("an audit file's rows are the draw its first line records, recomputed, not trusted", "[audit]") {
    const auto drawn = mano::audit_sample(2000, 30, 5);
    const auto read = [](const std::string& text) { return refusal([&] { mano::parse_audit(text, "rows.csv", 2000, 4, "set.npy"); }); };
    CHECK(mano::parse_audit(drawn_file(2000, 30, 5), "rows.csv", 2000, 4).rows == drawn);
    // a drawn row swapped for another (line 3 is the first row)
    std::uint64_t other = drawn[3] + 1;
    while (std::find(drawn.begin(), drawn.end(), other) != drawn.end()) ++other;
    CHECK(read(drawn_file(2000, 30, 5, [&](auto& l) { l[5] = std::to_string(other) + ",1,1"; })) ==
          "rows.csv, line 6, column 1 (row): row " + std::to_string(other) +
              " is not in the draw of seed 5 (30 of the 2000 rows) that line 1 records: the rows or line 1 were edited; label "
              "the rows of that draw, or draw them again (mano audit)");
    // the seed or the count edited in the first line: the rows are not that draw
    const auto seed6 = [](auto& l) { l[0].replace(l[0].find("seed 5"), 6, "seed 6"); };
    CHECK_THAT(read(drawn_file(2000, 30, 5, seed6)),
               Catch::StartsWith("rows.csv, line 3, column 1 (row): row " + std::to_string(drawn[0]) + " is not in the draw of seed 6 (30"));
    const auto count29 = [](auto& l) { l[0].replace(l[0].find("30 of"), 5, "29 of"); };
    CHECK_THAT(read(drawn_file(2000, 30, 5, count29)),
               Catch::Contains("is not in the draw of seed 5 (29 of the 2000 rows) that line 1 records (30 rows given)"));
    // a drawn row left out
    CHECK(read(drawn_file(2000, 30, 5, [](auto& l) { l.erase(l.begin() + 4); })) ==
          "rows.csv: row " + std::to_string(drawn[2]) + " of the draw of seed 5 (30 of the 2000 rows) that line 1 records is "
          "not labeled (29 rows given): label every row drawn (leaving rows out biases the accuracy), or draw them again (mano audit)");
    // a record that does not read as one, or records a draw no audit makes
    CHECK_THAT(read(drawn_file(2000, 30, 5, [](auto& l) { l[0].replace(l[0].find("seed 5"), 6, "seed five"); })),
               Catch::StartsWith("rows.csv, line 1: this line starts as mano audit's record of the draw but does not read as one"));
    CHECK_THAT(read(drawn_file(2000, 30, 5, [](auto& l) { l[0].replace(l[0].find("30 of"), 5, "1 of"); })),
               Catch::StartsWith("rows.csv, line 1: the draw this line records (1 of the 2000 rows with seed 5) cannot be checked: "
                                 "a budget of 1 row is below the 2 rows an audit needs"));
    // rows listed by hand (no record of a draw): read as they are, but at least audit_min_rows
    CHECK(mano::parse_audit("row,weight,label\n7,1,0\n3,1,2\n", "a.csv", 10, 4).rows == std::vector<std::uint64_t>{3, 7});
    CHECK(read("row,weight,label\n7,1,0\n") ==
          "rows.csv: 1 labeled row; an audit needs at least 2: label every row mano audit drew (draw 2 or more)");
}

TEST_CASE("labels are whole numbers as every label reader takes them: 3.0 is 3, 3.5 is refused", "[audit]") {
    std::int64_t v = 0;
    for (const auto& [text, want] : std::vector<std::pair<std::string, std::int64_t>>{
             {"3", 3}, {"+3", 3}, {"-1", -1}, {"3.0", 3}, {"3e0", 3}, {"30e-1", 3}, {"-0.0", 0}})
        CHECK((mano::parse_whole_label(text, v) && v == want));
    for (const std::string text : {"3.5", "", "cat", "+-3", "++3", " 3", "nan", "inf", "1e19", "0x3"})
        CHECK_FALSE(mano::parse_whole_label(text, v));
    const auto got = mano::parse_audit(drawn_file(2000, 4, 5, [](auto& l) {
        for (std::size_t i = 2; i < l.size(); ++i) l[i] = l[i].substr(0, l[i].rfind(',')) + ",3.0";
    }), "rows.csv", 2000, 4);
    CHECK(got.labels == std::vector<std::int64_t>{3, 3, 3, 3});
    CHECK_THAT(refusal([] { mano::parse_audit("row,weight,label\n1,1,2.5\n2,1,0\n", "a.csv", 10, 4); }),
               Catch::Contains("a.csv, line 2, column 3 (label): \"2.5\" is not a class index"));
    CHECK_THAT(refusal([] { mano::parse_audit("row,weight,label\n1,1,4.0\n2,1,0\n", "a.csv", 10, 4); }),
               Catch::Contains("label 4.0 is outside the classes 0 to 3"));
}

TEST_CASE("labeled rows given as lists: the file's rules, and the draw when its seed comes with them", "[audit]") {
    const auto drawn = mano::audit_sample(2000, 30, 5);
    std::vector<std::int64_t> rows(drawn.rbegin(), drawn.rend()), labels(30, 1);
    const auto got = mano::audit_rows(rows, labels, 2000, 4, "audit", 5, 2000);
    CHECK(got.rows == drawn);
    CHECK(got.seed == std::optional<std::uint64_t>(5));
    CHECK(mano::audit_rows(rows, labels, 2000, 4, "audit").rows == drawn);  // no seed: nothing to check against
    const auto refused = [&](std::vector<std::int64_t> r, std::vector<std::int64_t> y, std::optional<std::uint64_t> seed,
                             std::optional<std::uint64_t> n = std::nullopt) {
        return refusal([&] { mano::audit_rows(r, y, 2000, 4, "audit", seed, n); });
    };
    auto swapped = rows;
    std::int64_t other = rows[4] + 1;
    while (std::find(rows.begin(), rows.end(), other) != rows.end()) ++other;
    swapped[4] = other;
    CHECK(refused(swapped, labels, 5) == "audit: rows[4]: row " + std::to_string(other) +
                                             " is not in the draw of seed 5 (30 of the 2000 rows): the rows or the seed were "
                                             "changed; give the rows mano audit drew with that seed, or draw them again");
    CHECK_THAT(refused(rows, labels, 6), Catch::StartsWith("audit: rows[0]: row " + std::to_string(rows[0]) + " is not in the draw of seed 6"));
    CHECK_THAT(refused({rows.begin(), rows.end() - 1}, {labels.begin(), labels.end() - 1}, 5),
               Catch::Contains("is not in the draw of seed 5 (29 of the 2000 rows)"));
    CHECK_THAT(refused(rows, labels, 5, 1000), Catch::StartsWith("audit: the rows were drawn from a set of 1000 rows (n_rows)"));
    CHECK_THAT(refused(rows, labels, mano::audit_max_seed + 1), Catch::StartsWith("audit: seed 9007199254740992: the seed"));
    CHECK(refused({3}, {0}, std::nullopt) ==
          "audit: 1 labeled row; an audit needs at least 2: label every row mano audit drew (draw 2 or more)");
    CHECK(refused({3, 2000}, {0, 0}, std::nullopt) ==
          "audit: rows[1] is 2000, outside the set's rows 0 to 1999; give the rows mano audit drew (they count from 0)");
    CHECK(refused({3, 3}, {0, 1}, std::nullopt) == "audit: row 3 is listed twice (rows[0] and rows[1]); label each row once");
    CHECK(refused({3, 4}, {0, 4}, std::nullopt) == "audit: labels[1] is 4, outside the classes 0 to 3; give row 4's true class");
    CHECK(refused({3, 4}, {0}, std::nullopt) == "audit: 2 rows but 1 labels; give one label per audited row");
}

TEST_CASE("an audit file is read back with its labels, or refused in one line", "[audit]") {
    const auto got = mano::parse_audit("# drawn\nlabel,row,weight,note\n3,7,1,x\n\n0,2,1.0,\"a, b\"\r\n", "a.csv", 10, 4);
    CHECK(got.rows == std::vector<std::uint64_t>{2, 7});
    CHECK(got.labels == std::vector<std::int64_t>{0, 3});
    const auto refused = [](const std::string& text) {
        try {
            mano::parse_audit(text, "a.csv", 10, 4);
        } catch (const mano::error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(refused("row,weight,label\n10,1,0\n") ==
          "a.csv, line 2, column 1 (row): row 10 is outside the set's rows 0 to 9 (rows count from 0); audit rows of this set");
    CHECK(refused("row,weight,label\n1,1,0\n1,1,2\n") ==
          "a.csv, line 3, column 1 (row): row 1 is listed twice (also on line 2); list each audited row once");
    CHECK_THAT(refused("row,weight,label\n1,0.5,0\n"), Catch::Contains("only the uniform design is implemented"));
    CHECK_THAT(refused("row,weight,label\n1,1,4\n"), Catch::Contains("label 4 is outside the classes 0 to 3"));
    CHECK_THAT(refused("row,weight\n1,1\n"), Catch::Contains("line 1: the header (row,weight) has no column label"));
    CHECK_THAT(refused(""), Catch::Contains("a.csv: empty"));
    CHECK_THAT(refused("row,weight,label\n"), Catch::Contains("no audited rows"));
    CHECK_THAT(refused("row,weight,label\n1,1,2.5\n"), Catch::Contains("\"2.5\" is not a class index"));
    CHECK_THAT(refused("row,weight,label\n1,1\n"), Catch::Contains("2 fields but the header has 3"));
    CHECK_THAT(refused("row,weight,label\n1,1," + std::string(5000, '1') + "\n"), Catch::Contains("over the 4096"));
}

TEST_CASE("the correctness histogram merges, goes through states and results, and is checked", "[audit]") {
    const std::size_t n = 1200, k = 7;
    const auto q = random_logits(n, k, 3.0, 17);
    std::vector<std::int64_t> labels(n);
    for (std::size_t i = 0; i < n; ++i) labels[i] = static_cast<std::int64_t>((i * 7919) % k);
    const mano::logits_view all(q.data(), n, k);
    mano::options o;
    o.methods = {mano::method::confscore};
    o.correctness_histogram = true;
    o.temperature = 1.5;
    mano::accumulator whole(k, o), first(k, o), second(k, o);
    mano::row_inputs in;
    in.labels = labels.data();
    whole.push(all, in);
    first.push(all.slice(0, 500), in);
    in.labels = labels.data() + 500;
    second.push(all.slice(500, n - 500), in);
    first.merge(mano::accumulator::from_json(nlohmann::json::parse(second.to_json().dump())));
    const auto a = whole.finalize(), b = first.finalize();
    REQUIRE(a.correctness);
    REQUIRE(b.correctness);
    CHECK(a.correctness->labeled);
    CHECK(a.correctness->rows() == n);
    CHECK(static_cast<double>(a.correctness->correct()) == Approx(*a.accuracy * n));
    // each cell: the same rows and correct rows; the confidence sums to rounding
    for (std::size_t bin = 0; bin < mano::correctness_bins; ++bin)
        for (std::size_t c = 0; c < k; ++c) {
            CHECK(a.correctness->cell(bin, c).rows == b.correctness->cell(bin, c).rows);
            CHECK(a.correctness->cell(bin, c).correct == b.correctness->cell(bin, c).correct);
            CHECK(a.correctness->cell(bin, c).confidence == Approx(b.correctness->cell(bin, c).confidence).epsilon(1e-12));
        }
    // the result's JSON and back
    const auto back = mano::result::from_json(a.to_json());
    REQUIRE(back.correctness);
    CHECK(back.correctness->to_json() == a.correctness->to_json());
    // states: refused when the histogram is missing, altered, or there without the option
    auto state = whole.to_json();
    auto bad = state;
    bad.erase("correctness");
    CHECK_THROWS_WITH(mano::accumulator::from_json(bad), Catch::Contains("which it lacks"));
    bad = state;
    bad["correctness"]["cells"][0]["rows"] = bad["correctness"]["cells"][0]["rows"].get<int>() + 1;
    CHECK_THROWS_WITH(mano::accumulator::from_json(bad), Catch::Contains("correctness"));
    bad = state;
    bad["correctness"]["cells"][0]["confidence"] = 1e9;
    CHECK_THROWS_WITH(mano::accumulator::from_json(bad), Catch::Contains("outside what its"));
    bad = state;
    bad["options"]["correctness_histogram"] = false;
    CHECK_THROWS_WITH(mano::accumulator::from_json(bad), Catch::Contains("no options ask for"));
    // without the option, none: states and results as before
    mano::options plain = o;
    plain.correctness_histogram = false;
    mano::accumulator none(k, plain);
    none.push(all);
    CHECK(!none.finalize().correctness);
    CHECK(!none.to_json().contains("correctness"));
    CHECK_THROWS_WITH(first.merge(none), Catch::Contains("correctness_histogram"));
}

TEST_CASE("normal quantiles and Wilson intervals", "[audit]") {
    CHECK(mano::normal_quantile(0.95) == Approx(1.6448536269514722).epsilon(1e-14));
    CHECK(mano::normal_quantile(0.975) == Approx(1.959963984540054).epsilon(1e-14));
    CHECK(mano::normal_quantile(1e-10) == Approx(-6.361340902404056).epsilon(1e-12));
    // scipy.stats.norm.ppf and the Wilson formula: 80 of 100 at 90%
    const auto [lo, hi] = mano::wilson_interval(80, 100, 0.9);
    CHECK(lo == Approx(0.7266961911903833).epsilon(1e-12));
    CHECK(hi == Approx(0.8574981763397123).epsilon(1e-12));
}

TEST_CASE("labels for a width: at least the 2 rows an audit needs, all rows of a set under 10, none for one row",
          "[audit]") {
    // the numbers: tests/reference/audit_reference.py's labels_for_width (SciPy's t and normal quantiles)
    mano::calibration c;  // no correctness model: the Wilson bound
    CHECK(!mano::labels_for_width(c, 1, 0.1, 0.9, 0.9).has_value());
    CHECK(!mano::labels_for_width(c, 0, 0.1, 0.9, 0.9).has_value());
    CHECK(!mano::labels_for_width(c, 1000, 0.3, 0.5, 0.9).has_value());  // already narrow enough
    const auto two = mano::labels_for_width(c, 2, 0.1, 0.9, 0.9);
    REQUIRE(two.has_value());
    CHECK(two->n == 2);
    CHECK(two->method == std::string("wilson"));
    const auto no_model = mano::labels_for_width(c, 1000, 0.3, 0.8, 0.9);
    REQUIRE(no_model.has_value());
    CHECK((no_model->n == 41 && no_model->method == "wilson"));
    c.correctness = mano::correctness_model{};
    c.correctness->residual_variance = 0.1;
    const auto expect = [&](std::size_t rows, double lo, double hi, double width, std::size_t n, const char* method) {
        const auto got = mano::labels_for_width(c, rows, lo, hi, 0.9, width);
        REQUIRE(got.has_value());
        CHECK(got->n == n);
        CHECK(got->method == std::string(method));
    };
    expect(1000, 0.3, 0.8, 0.25, 21, "ppi");
    expect(40, 0.3, 0.8, 0.25, 15, "ppi");  // 15 of 40 rows: the finite population helps
    expect(1000, 0.3, 0.8, 0.05, 305, "ppi");
    expect(1000, 0.2, 0.8, 0.5, 9, "wilson");  // 9 labels' Wilson interval is narrow enough
    expect(12, 0.1, 0.9, 0.25, 10, "ppi");
    expect(5, 0.1, 0.9, 0.25, 5, "wilson");  // fewer rows than PPI needs: label them all
    expect(2, 0.1, 0.9, 0.25, 2, "wilson");
    c.correctness->residual_variance = 0.02;
    expect(1000, 0.6, 0.9, 0.25, 10, "ppi");  // PPI from its first n
    expect(1000, 0.6, 0.9, 0.1, 32, "ppi");
}

namespace {

// A labeled result of 2 classes whose histogram holds `rows` of (confidence, predicted class, correct).
mano::result hand_result(const std::vector<std::tuple<double, std::size_t, bool>>& rows) {
    mano::result r;
    r.n = rows.size();
    r.k = 2;
    mano::correctness_histogram h(2);
    h.labeled = true;
    std::size_t right = 0;
    for (const auto& [confidence, predicted, correct] : rows) {
        h.add(confidence, predicted, correct);
        right += correct ? 1 : 0;
    }
    r.accuracy = static_cast<double>(right) / static_cast<double>(rows.size());
    r.correctness = h;
    return r;
}

std::vector<std::tuple<double, std::size_t, bool>> rows_of(std::size_t right_a, std::size_t wrong_a, std::size_t right_b,
                                                          std::size_t wrong_b) {
    std::vector<std::tuple<double, std::size_t, bool>> rows;
    for (std::size_t i = 0; i < right_a + wrong_a; ++i) rows.emplace_back(0.6, 0, i < right_a);
    for (std::size_t i = 0; i < right_b + wrong_b; ++i) rows.emplace_back(0.95, 1, i < right_b);
    return rows;
}

}  // namespace

TEST_CASE("the audited interval: PPI with Student t and pseudo-rows from 10 labels, Wilson below", "[audit]") {
    // f = the cell's mean confidence (intercept 0, slope 1): 0.6 on 100 rows (60 right), 0.95 on 100
    // (95 right). The numbers: tests/reference/audit_reference.py's audited() on these rows.
    mano::calibration c;
    c.k = 2;
    c.correctness = mano::correctness_model{};
    c.correctness->slope = 1;
    c.correctness->classes = 2;
    const auto all = hand_result(rows_of(60, 40, 95, 5));
    const auto twelve = mano::audit(c, all, hand_result(rows_of(4, 2, 6, 0)), 0.9);
    CHECK(twelve.method == "ppi");
    CHECK(twelve.reason.empty());
    CHECK(twelve.accuracy == Approx(0.8333333333333333).epsilon(1e-12));
    CHECK(twelve.lower == Approx(0.6417022973431873).epsilon(1e-9));
    CHECK(twelve.upper == 1.0);
    // 20 right rows of one cell: every c - f is 0.05, so without the pseudo-rows the interval would
    // have no width
    const auto same = mano::audit(c, all, hand_result(rows_of(0, 0, 20, 0)), 0.9);
    CHECK(same.accuracy == Approx(0.825).epsilon(1e-12));
    CHECK(same.lower == Approx(0.6825230740424046).epsilon(1e-9));
    CHECK(same.upper == Approx(0.9231596904956976).epsilon(1e-9));
    CHECK(same.wilson_lower == Approx(0.8808421626390356).epsilon(1e-12));
    CHECK(same.to_json().count("reason") == 0);
    // 9 labels: Wilson on the labels alone, with the reason
    const auto nine = mano::audit(c, all, hand_result(rows_of(3, 2, 4, 0)), 0.9);
    CHECK(nine.method == "wilson");
    CHECK(nine.reason == "n < 10 labels: Wilson on the labels alone");
    CHECK(nine.to_json().at("reason") == "n < 10 labels: Wilson on the labels alone");
    CHECK(nine.accuracy == Approx(7.0 / 9).epsilon(1e-12));
    CHECK(nine.lower == Approx(0.5036427823767539).epsilon(1e-12));
    CHECK(nine.upper == Approx(0.9235052624456036).epsilon(1e-12));
    CHECK((nine.lower == nine.wilson_lower && nine.upper == nine.wilson_upper));
    c.correctness.reset();  // no model: Wilson, with that reason
    const auto plain = mano::audit(c, all, hand_result(rows_of(0, 0, 20, 0)), 0.9);
    CHECK(plain.method == "wilson");
    CHECK_THAT(plain.reason, Catch::Contains("no correctness model"));
}

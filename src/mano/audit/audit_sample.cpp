// The audit sample and its file (audit_sample.hpp).
#include "mano/audit/audit_sample.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <set>
#include <tuple>

#include "mano/base/error.hpp"
#include "mano/base/number_text.hpp"
#include "mano/base/text.hpp"

namespace mano {

std::vector<std::uint64_t> audit_sample(std::uint64_t n_rows, std::uint64_t budget, std::uint64_t seed) {
    if (seed > audit_max_seed)
        throw error("the seed " + std::to_string(seed) + " is above " + std::to_string(audit_max_seed) +
                    " (2^53 - 1, the largest whole number every front end carries exactly); give a smaller seed");
    const std::string least = std::to_string(audit_min_rows);
    if (budget < audit_min_rows)
        throw error("a budget of " + std::to_string(budget) + (budget == 1 ? " row" : " rows") + " is below the " + least +
                    " rows an audit needs (its interval needs " + least + " labeled rows); give a budget of " + least +
                    " or more");
    if (budget > audit_max_rows)
        throw error("a budget of " + std::to_string(budget) + " rows is above the " + std::to_string(audit_max_rows) +
                    " an audit may have");
    if (n_rows < audit_min_rows)
        throw error("the set has " + std::to_string(n_rows) + (n_rows == 1 ? " row" : " rows") + ", fewer than the " + least +
                    " an audit needs; its accuracy is its labels' (label it whole)");
    if (budget > n_rows)
        throw error("a budget of " + std::to_string(budget) + " rows is more than the set's " + std::to_string(n_rows) +
                    " rows; label them all, or give a budget up to " + std::to_string(n_rows));
    // Floyd's algorithm: for j = N - n .. N - 1, t uniform on [0, j]; take t, or j when t is taken
    // already. Every n-subset is equally likely, with n draws and O(n) memory whatever N.
    detail::splitmix64 g{seed};
    std::set<std::uint64_t> taken;  // a tree, not a hash table: the WebAssembly build stays smaller
    std::vector<std::uint64_t> rows;
    rows.reserve(static_cast<std::size_t>(budget));
    for (std::uint64_t j = n_rows - budget; j < n_rows; ++j) {
        const std::uint64_t t = detail::uniform_below(g, j + 1);
        const std::uint64_t pick = taken.count(t) ? j : t;
        taken.insert(pick);
        rows.push_back(pick);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
}

std::string audit_csv(const std::vector<std::uint64_t>& rows, std::uint64_t n_rows, std::size_t k, std::uint64_t seed,
                      const std::string& source) {
    std::string out = "# mano audit: " + std::to_string(rows.size()) + " of the " + std::to_string(n_rows) + " rows of " +
                      printable(source, 1024) + " drawn uniformly without replacement with seed " + std::to_string(seed) +
                      " (splitmix64 and Floyd); add a column label with each row's true class (0 to " +
                      std::to_string(k == 0 ? 0 : k - 1) + ") and give this file to mano predict --audit\n";
    out += "row,weight\n";
    for (const auto r : rows) out += std::to_string(r) + ",1\n";
    return out;
}

nlohmann::json audit_labels::to_json() const {
    nlohmann::json j = {{"rows", rows}, {"labels", labels}};
    if (!warnings.empty()) j["warnings"] = warnings;
    return j;
}

namespace {

bool blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && blank(s.back())) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// "FILE, line L" and, for a field, ", column C (name)"
struct place {
    const std::string& file;
    std::size_t line;
    std::string at(std::size_t column = 0, const std::string& name = "") const {
        std::string s = file + ", line " + std::to_string(line);
        if (column > 0) s += ", column " + std::to_string(column) + (name.empty() ? "" : " (" + name + ")");
        return s + ": ";
    }
};

// The fields of one line, separated by commas; a field may be quoted ("a,b", "" for a quote).
std::vector<std::string> split(std::string_view line, const place& where) {
    std::vector<std::string> fields;
    std::size_t i = 0;
    for (;;) {
        while (i < line.size() && blank(line[i])) ++i;
        std::string field;
        if (i < line.size() && line[i] == '"') {
            ++i;
            for (;;) {
                if (i >= line.size())
                    throw error(where.at(fields.size() + 1) + "a quoted field has no closing quote; close it, or leave the "
                                                              "quotes out");
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        field += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                field += line[i++];
            }
            while (i < line.size() && blank(line[i])) ++i;
            if (i < line.size() && line[i] != ',')
                throw error(where.at(fields.size() + 1) + "text after the closing quote of a field; quote the whole field");
        } else {
            const std::size_t end = std::min(line.find(',', i), line.size());
            field = std::string(trim(line.substr(i, end - i)));
            i = end;
        }
        if (field.size() > audit_max_field_bytes)
            throw error(where.at(fields.size() + 1) + "a field of " + std::to_string(field.size()) + " bytes, over the " +
                        std::to_string(audit_max_field_bytes) + " a field of an audit file may have");
        fields.push_back(std::move(field));
        if (i >= line.size()) break;
        ++i;  // the comma
    }
    return fields;
}

// A whole number written as digits; nullopt otherwise. Values beyond 18 digits come back as the
// largest int64 (out of any range the caller checks).
std::optional<std::int64_t> whole(std::string_view s) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    std::int64_t v = 0;
    for (const char c : s) {
        if (v > 99999999999999999) return std::numeric_limits<std::int64_t>::max();
        v = v * 10 + (c - '0');
    }
    return v;
}

std::string rows_text(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " row" : " rows"); }

// The last component of a path ("/" or "\\" separated).
std::string_view base_name(std::string_view path) {
    const auto slash = path.find_last_of("/\\");
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// What audit_csv's first line says of the draw into `out` (B, N, S and SOURCE); false when the
// line is not audit_csv's. A line that starts as audit_csv's but does not read as one is refused:
// an edited record of the draw is not trusted, and not silently dropped either.
bool read_draw(std::string_view line, const place& where, audit_labels& out) {
    constexpr std::string_view lead = "# mano audit: ", of_the = " of the ", rows_of = " rows of ",
                               drawn = " drawn uniformly without replacement with seed ";
    if (line.substr(0, lead.size()) != lead) return false;
    const auto a = line.find(of_the), b = line.find(rows_of), c = line.rfind(drawn);
    std::optional<std::int64_t> budget, n, seed;
    if (a != std::string_view::npos && b != std::string_view::npos && c != std::string_view::npos && a < b && b < c) {
        budget = whole(line.substr(lead.size(), a - lead.size()));
        n = whole(line.substr(a + of_the.size(), b - a - of_the.size()));
        const auto rest = line.substr(c + drawn.size());
        seed = whole(rest.substr(0, std::min(rest.find(' '), rest.size())));
    }
    if (!budget || !n || !seed)
        throw error(where.at() + "this line starts as mano audit's record of the draw but does not read as one (\"# mano "
                                 "audit: B of the N rows of FILE drawn uniformly without replacement with seed S ...\"): was "
                                 "it edited? restore it, or draw the rows again (mano audit)");
    out.budget = static_cast<std::uint64_t>(*budget);
    out.drawn_rows = static_cast<std::uint64_t>(*n);
    out.seed = static_cast<std::uint64_t>(*seed);
    out.drawn_from = std::string(line.substr(b + rows_of.size(), c - b - rows_of.size()));
    return true;
}

// A labeled row and where it was given: its line in a file, its index in a list.
struct entry {
    std::uint64_t row;
    std::size_t at;
    std::int64_t label;
    bool operator<(const entry& o) const { return std::tie(row, at) < std::tie(o.row, o.at); }
};

// Where labeled rows were given, for messages: a file (its name, and the column of its rows) or a
// list (its name; column 0). One function for both keeps the WebAssembly module small.
struct given_as {
    const std::string& who;
    std::size_t row_column;
    std::string at(std::size_t at) const {  // "FILE, line L, column C (row): " or "NAME: rows[i]: "
        return row_column ? place{who, at}.at(row_column, "row") : who + ": rows[" + std::to_string(at) + "]: ";
    }
};

// Refuses a row listed twice (side by side once sorted) and fewer labeled rows than an audit needs.
void check_count(const std::vector<entry>& entries, const given_as& given) {
    for (std::size_t i = 1; i < entries.size(); ++i) {
        const entry &first = entries[i - 1], &again = entries[i];
        if (again.row != first.row) continue;
        const std::string row = "row " + std::to_string(again.row) + " is listed twice (";
        throw error(given.row_column ? given.at(again.at) + row + "also on line " + std::to_string(first.at) +
                                           "); list each audited row once"
                                     : given.who + ": " + row + "rows[" + std::to_string(first.at) + "] and rows[" +
                                           std::to_string(again.at) + "]); label each row once");
    }
    if (entries.size() < audit_min_rows)
        throw error(given.who + ": " + std::to_string(entries.size()) + " labeled " + (entries.size() == 1 ? "row" : "rows") +
                    "; an audit needs at least " + std::to_string(audit_min_rows) + ": label every row mano audit drew (draw " +
                    std::to_string(audit_min_rows) + " or more)");
}

// The rows (ascending, each once) against `drawn`, the rows audit_sample draws with `seed` for
// drawn.size() of n_rows: the first row given (by `at`) that is not drawn, or else the first
// drawn row not given, refused in one line.
void check_drawn(const std::vector<entry>& entries, const std::vector<std::uint64_t>& drawn, const given_as& given,
                 std::uint64_t seed, std::uint64_t n_rows) {
    const std::string draw = "the draw of seed " + std::to_string(seed) + " (" + std::to_string(drawn.size()) + " of the " +
                             std::to_string(n_rows) + " rows)" + (given.row_column ? " that line 1 records" : "");
    const entry* extra = nullptr;
    for (const auto& e : entries)
        if (!std::binary_search(drawn.begin(), drawn.end(), e.row) && (!extra || e.at < extra->at)) extra = &e;
    const std::string listed = entries.size() == drawn.size() ? "" : " (" + rows_text(entries.size()) + " given)";
    if (extra)
        throw error(given.at(extra->at) + "row " + std::to_string(extra->row) + " is not in " + draw + listed + ": " +
                    (given.row_column ? "the rows or line 1 were edited; label the rows of that draw, or draw them again "
                                        "(mano audit)"
                                      : "the rows or the seed were changed; give the rows mano audit drew with that seed, or "
                                        "draw them again"));
    if (entries.size() == drawn.size()) return;
    std::size_t i = 0;
    while (i < entries.size() && entries[i].row == drawn[i]) ++i;
    throw error(given.who + ": row " + std::to_string(drawn[i]) + " of " + draw + " is not labeled" + listed +
                ": label every row drawn (leaving rows out biases the accuracy), or draw them again (mano audit)");
}

void fill(audit_labels& out, const std::vector<entry>& entries) {
    for (const auto& e : entries) {
        out.rows.push_back(e.row);
        out.labels.push_back(e.label);
    }
}

// The header's columns row, weight and label (1-based).
struct columns {
    std::size_t row = 0, weight = 0, label = 0;
};

columns header_columns(const std::vector<std::string>& header, std::string_view content, const place& where,
                       const std::string& classes) {
    columns out;
    for (std::size_t c = 0; c < header.size(); ++c) {
        const std::string name = lower(header[c]);
        auto* slot = name == "row" ? &out.row : name == "weight" ? &out.weight : name == "label" ? &out.label : nullptr;
        if (!slot) continue;
        if (*slot)
            throw error(where.at() + "the header names the column " + name + " twice (columns " + std::to_string(*slot) +
                        " and " + std::to_string(c + 1) + "); keep one");
        *slot = c + 1;
    }
    const char* missing = !out.row ? "row" : !out.weight ? "weight" : !out.label ? "label" : nullptr;
    if (missing)
        throw error(where.at() + "the header (" + printable(content, 200) + ") has no column " + missing +
                    (std::string(missing) == "label"
                         ? "; add a column label with each row's true class (" + classes + ")"
                         : "; an audit file has the columns row, weight and label (mano audit writes row,weight)"));
    return out;
}

// One labeled line's row and label, checked.
entry read_entry(const std::vector<std::string>& fields, const columns& at, const place& where, std::uint64_t n_rows,
                 std::size_t k, const std::string& classes) {
    const std::string& row_text = fields[at.row - 1];
    const auto row = whole(row_text);
    if (!row)
        throw error(where.at(at.row, "row") + (row_text.empty() ? std::string("no row number") : "\"" + printable(row_text, 40) + "\" is not a row number") +
                    "; rows are whole numbers from 0 to " + std::to_string(n_rows - 1) + " (they count from 0)");
    if (static_cast<std::uint64_t>(*row) >= n_rows)
        throw error(where.at(at.row, "row") + "row " + printable(row_text, 40) + " is outside the set's rows 0 to " +
                    std::to_string(n_rows - 1) + " (rows count from 0); audit rows of this set");
    const std::string& weight_text = fields[at.weight - 1];
    double weight = 0;
    if (!parse_real(weight_text, weight) || !std::isfinite(weight))
        throw error(where.at(at.weight, "weight") +
                    (weight_text.empty() ? std::string("no weight") : "\"" + printable(weight_text, 40) + "\" is not a number") +
                    "; every row's weight is 1 (the uniform sample mano audit draws)");
    if (weight != 1)
        throw error(where.at(at.weight, "weight") + "weight " + printable(weight_text, 40) +
                    ": only the uniform design is implemented (weight 1 for every row); draw the rows with mano audit and "
                    "keep its weights");
    const std::string& label_text = fields[at.label - 1];
    std::int64_t label = 0;
    if (!parse_whole_label(label_text, label))
        throw error(where.at(at.label, "label") +
                    (label_text.empty() ? std::string("no label") : "\"" + printable(label_text, 40) + "\" is not a class index") +
                    "; label every audited row with its true class, a whole number from " + classes);
    if (label < 0 || static_cast<std::uint64_t>(label) >= k)
        throw error(where.at(at.label, "label") + "label " + printable(label_text, 40) + " is outside the classes " + classes +
                    " of these logits");
    return {static_cast<std::uint64_t>(*row), where.line, label};
}

// The rows audit_csv's first line records, recomputed (audit_sample), or the line refused.
std::vector<std::uint64_t> recorded_draw(const audit_labels& out, std::uint64_t n_rows, const place& where) {
    if (*out.drawn_rows != n_rows)
        throw error(where.at() + "this audit was drawn from the " + std::to_string(*out.drawn_rows) + " rows of " +
                    printable(out.drawn_from, 200) + ", but the set has " + std::to_string(n_rows) +
                    " rows: its labels are another set's rows; draw the audit from this set (mano audit)");
    try {
        return audit_sample(n_rows, *out.budget, *out.seed);
    } catch (const error& e) {
        throw error(where.at() + "the draw this line records (" + std::to_string(*out.budget) + " of the " +
                    std::to_string(n_rows) + " rows with seed " + std::to_string(*out.seed) + ") cannot be checked: " + e.what() +
                    "; draw the rows again (mano audit)");
    }
}

}  // namespace

audit_labels parse_audit(std::string_view text, const std::string& file_name, std::uint64_t n_rows, std::size_t k,
                         const std::string& set_name) {
    const std::string file = printable(file_name, 512);
    if (text.size() > audit_max_bytes)
        throw error(file + ": " + std::to_string(text.size()) + " bytes, over the " + std::to_string(audit_max_bytes >> 20) +
                    " MiB an audit file may have; an audit lists at most " + std::to_string(audit_max_rows) + " rows");
    if (n_rows == 0 || k < 2)
        throw error(file + ": the set to audit has " + (n_rows == 0 ? "no rows" : "fewer than 2 classes"));
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a spreadsheet's byte-order mark
    const std::string classes = "0 to " + std::to_string(k - 1);
    std::size_t header_size = 0;
    columns at;
    std::vector<entry> entries;
    std::vector<std::uint64_t> drawn;
    audit_labels out;
    std::size_t line_number = 0;
    for (std::size_t from = 0; from < text.size();) {
        const std::size_t end = std::min(text.find('\n', from), text.size());
        std::string_view line = text.substr(from, end - from);
        from = end + 1;
        const place where{file, ++line_number};
        if (line.size() > audit_max_line_bytes)
            throw error(where.at() + "a line of " + std::to_string(line.size()) + " bytes, over the " +
                        std::to_string(audit_max_line_bytes) + " a line of an audit file may have");
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        const std::string_view content = trim(line);
        if (line_number == 1 && read_draw(content, where, out)) drawn = recorded_draw(out, n_rows, where);
        if (content.empty() || content.front() == '#') continue;
        const auto fields = split(line, where);
        if (header_size == 0) {
            at = header_columns(fields, content, where, classes);
            header_size = fields.size();
            continue;
        }
        if (fields.size() != header_size)
            throw error(where.at() + std::to_string(fields.size()) + (fields.size() == 1 ? " field" : " fields") +
                        " but the header has " + std::to_string(header_size) + "; give every line the header's columns");
        if (entries.size() == audit_max_rows)
            throw error(where.at() + "more than the " + std::to_string(audit_max_rows) + " rows an audit may have");
        entries.push_back(read_entry(fields, at, where, n_rows, k, classes));
    }
    if (header_size == 0)
        throw error(file + ": empty; an audit file starts with the header row,weight,label (mano audit writes row,weight: add "
                           "a column label)");
    if (entries.empty())
        throw error(file + ": no audited rows after the header; label the rows mano audit drew, one line each");
    std::sort(entries.begin(), entries.end());  // by row, then line: a row listed twice lies side by side
    const given_as given{file, at.row};
    check_count(entries, given);
    if (out.drawn_rows) check_drawn(entries, drawn, given, *out.seed, n_rows);
    fill(out, entries);
    const std::string set = printable(set_name, 1024);
    if (out.drawn_rows && !set_name.empty() && out.drawn_from != audit_array_source &&
        base_name(out.drawn_from) != base_name(set))
        out.warnings.push_back(file + " was drawn from " + printable(out.drawn_from, 200) + ", not from " + set +
                               " (both have " + std::to_string(n_rows) + " rows): check that its labels are this set's rows");
    return out;
}

audit_labels audit_rows(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& labels, std::uint64_t n_rows,
                        std::size_t k, const std::string& name, std::optional<std::uint64_t> seed,
                        std::optional<std::uint64_t> drawn_rows) {
    const std::string who = printable(name, 200);
    if (n_rows == 0 || k < 2) throw error(who + ": the set to audit has " + (n_rows == 0 ? "no rows" : "fewer than 2 classes"));
    if (rows.size() != labels.size())
        throw error(who + ": " + rows_text(rows.size()) + " but " + std::to_string(labels.size()) +
                    " labels; give one label per audited row");
    if (rows.size() > audit_max_rows)
        throw error(who + ": " + rows_text(rows.size()) + ", more than the " + std::to_string(audit_max_rows) + " an audit may have");
    if (drawn_rows && *drawn_rows != n_rows)
        throw error(who + ": the rows were drawn from a set of " + rows_text(*drawn_rows) + " (n_rows), but the set has " +
                    rows_text(n_rows) + ": they are another set's rows; draw the audit from this set");
    std::vector<entry> entries;
    entries.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const bool row_out = rows[i] < 0 || static_cast<std::uint64_t>(rows[i]) >= n_rows;
        if (row_out || labels[i] < 0 || static_cast<std::uint64_t>(labels[i]) >= k)
            throw error(who + (row_out ? ": rows[" : ": labels[") + std::to_string(i) + "] is " +
                        std::to_string(row_out ? rows[i] : labels[i]) +
                        (row_out ? ", outside the set's rows 0 to " + std::to_string(n_rows - 1) +
                                       "; give the rows mano audit drew (they count from 0)"
                                 : ", outside the classes 0 to " + std::to_string(k - 1) + "; give row " +
                                       std::to_string(rows[i]) + "'s true class"));
        entries.push_back({static_cast<std::uint64_t>(rows[i]), i, labels[i]});
    }
    std::sort(entries.begin(), entries.end());
    const given_as given{who, 0};
    check_count(entries, given);
    audit_labels out;
    if (seed) {
        std::vector<std::uint64_t> drawn;
        try {
            drawn = audit_sample(n_rows, entries.size(), *seed);
        } catch (const error& e) {
            throw error(who + ": seed " + std::to_string(*seed) + ": " + e.what());
        }
        check_drawn(entries, drawn, given, *seed, n_rows);
        out.seed = seed;
        out.budget = entries.size();
        out.drawn_rows = n_rows;
    }
    fill(out, entries);
    return out;
}

}  // namespace mano

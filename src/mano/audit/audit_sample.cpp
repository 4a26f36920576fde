// The audit sample and its file (audit_sample.hpp).
#include "mano/audit/audit_sample.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <set>
#include <tuple>

#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

std::vector<std::uint64_t> audit_sample(std::uint64_t n_rows, std::uint64_t budget, std::uint64_t seed) {
    if (seed > audit_max_seed)
        throw error("the seed " + std::to_string(seed) + " is above " + std::to_string(audit_max_seed) +
                    " (2^53 - 1, the largest whole number every front end carries exactly); give a smaller seed");
    if (budget == 0) throw error("an audit needs a budget of at least 1 row (2 or more for an interval)");
    if (budget > audit_max_rows)
        throw error("a budget of " + std::to_string(budget) + " rows is above the " + std::to_string(audit_max_rows) +
                    " an audit may have");
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

// A whole number written as digits, an optional '-' in front when `sign`; nullopt otherwise.
// Values beyond 18 digits come back as the largest int64 (out of any range the caller checks).
std::optional<std::int64_t> whole(std::string_view s, bool sign) {
    bool negative = false;
    if (sign && !s.empty() && s.front() == '-') negative = true, s.remove_prefix(1);
    if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    std::int64_t v = 0;
    for (const char c : s) {
        if (v > 99999999999999999) return negative ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
        v = v * 10 + (c - '0');
    }
    return negative ? -v : v;
}

// The last component of a path ("/" or "\\" separated).
std::string_view base_name(std::string_view path) {
    const auto slash = path.find_last_of("/\\");
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// What audit_csv's first line says of the draw: its N and SOURCE into `out`; nothing when the
// line is not audit_csv's.
void read_draw(std::string_view line, audit_labels& out) {
    constexpr std::string_view lead = "# mano audit: ", of_the = " of the ", rows_of = " rows of ",
                               drawn = " drawn uniformly without replacement with seed ";
    if (line.substr(0, lead.size()) != lead) return;
    const auto a = line.find(of_the), b = line.find(rows_of), c = line.rfind(drawn);
    if (a == std::string_view::npos || b == std::string_view::npos || c == std::string_view::npos || !(a < b && b < c)) return;
    const auto n = whole(line.substr(a + of_the.size(), b - a - of_the.size()), false);
    if (!n) return;
    out.drawn_rows = static_cast<std::uint64_t>(*n);
    out.drawn_from = std::string(line.substr(b + rows_of.size(), c - b - rows_of.size()));
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
    std::vector<std::string> header;
    std::size_t column_row = 0, column_weight = 0, column_label = 0;  // 1-based; 0 = none
    std::vector<std::tuple<std::uint64_t, std::size_t, std::int64_t>> entries;  // row, line, label
    audit_labels out;
    std::size_t line_number = 0;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        ++line_number;
        const place where{file, line_number};
        if (line.size() > audit_max_line_bytes)
            throw error(where.at() + "a line of " + std::to_string(line.size()) + " bytes, over the " +
                        std::to_string(audit_max_line_bytes) + " a line of an audit file may have");
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        const std::string_view content = trim(line);
        if (line_number == 1) {
            read_draw(content, out);
            if (out.drawn_rows && *out.drawn_rows != n_rows)
                throw error(where.at() + "this audit was drawn from the " + std::to_string(*out.drawn_rows) + " rows of " +
                            printable(out.drawn_from, 200) + ", but the set has " + std::to_string(n_rows) +
                            " rows: its labels are another set's rows; draw the audit from this set (mano audit)");
        }
        if (content.empty() || content.front() == '#') continue;
        auto fields = split(line, where);
        if (header.empty()) {
            header = fields;
            for (std::size_t c = 0; c < header.size(); ++c) {
                const std::string name = lower(header[c]);
                auto* slot = name == "row" ? &column_row : name == "weight" ? &column_weight : name == "label" ? &column_label : nullptr;
                if (!slot) continue;
                if (*slot)
                    throw error(where.at() + "the header names the column " + name + " twice (columns " + std::to_string(*slot) +
                                " and " + std::to_string(c + 1) + "); keep one");
                *slot = c + 1;
            }
            const char* missing = !column_row ? "row" : !column_weight ? "weight" : !column_label ? "label" : nullptr;
            if (missing)
                throw error(where.at() + "the header (" + printable(content, 200) + ") has no column " + missing +
                            (std::string(missing) == "label"
                                 ? "; add a column label with each row's true class (" + classes + ")"
                                 : "; an audit file has the columns row, weight and label (mano audit writes row,weight)"));
            continue;
        }
        if (fields.size() != header.size())
            throw error(where.at() + std::to_string(fields.size()) + (fields.size() == 1 ? " field" : " fields") +
                        " but the header has " + std::to_string(header.size()) + "; give every line the header's columns");
        if (entries.size() == audit_max_rows)
            throw error(where.at() + "more than the " + std::to_string(audit_max_rows) + " rows an audit may have");
        const std::string& row_text = fields[column_row - 1];
        const auto row = whole(row_text, false);
        if (!row)
            throw error(where.at(column_row, "row") + (row_text.empty() ? std::string("no row number") : "\"" + printable(row_text, 40) + "\" is not a row number") +
                        "; rows are whole numbers from 0 to " + std::to_string(n_rows - 1) + " (they count from 0)");
        if (static_cast<std::uint64_t>(*row) >= n_rows)
            throw error(where.at(column_row, "row") + "row " + printable(row_text, 40) + " is outside the set's rows 0 to " +
                        std::to_string(n_rows - 1) + " (rows count from 0); audit rows of this set");
        const std::string& weight_text = fields[column_weight - 1];
        char* stop = nullptr;
        const double weight = weight_text.empty() ? std::nan("") : std::strtod(weight_text.c_str(), &stop);
        if (weight_text.empty() || stop != weight_text.c_str() + weight_text.size() || !std::isfinite(weight))
            throw error(where.at(column_weight, "weight") +
                        (weight_text.empty() ? std::string("no weight") : "\"" + printable(weight_text, 40) + "\" is not a number") +
                        "; every row's weight is 1 (the uniform sample mano audit draws)");
        if (weight != 1)
            throw error(where.at(column_weight, "weight") + "weight " + printable(weight_text, 40) +
                        ": only the uniform design is implemented (weight 1 for every row); draw the rows with mano audit and "
                        "keep its weights");
        const std::string& label_text = fields[column_label - 1];
        const auto label = whole(label_text, true);
        if (!label)
            throw error(where.at(column_label, "label") +
                        (label_text.empty() ? std::string("no label") : "\"" + printable(label_text, 40) + "\" is not a class index") +
                        "; label every audited row with its true class, a whole number from " + classes);
        if (*label < 0 || static_cast<std::uint64_t>(*label) >= k)
            throw error(where.at(column_label, "label") + "label " + printable(label_text, 40) + " is outside the classes " +
                        classes + " of these logits");
        entries.emplace_back(static_cast<std::uint64_t>(*row), line_number, *label);
    }
    if (header.empty())
        throw error(file + ": empty; an audit file starts with the header row,weight,label (mano audit writes row,weight: add "
                           "a column label)");
    if (entries.empty())
        throw error(file + ": no audited rows after the header; label the rows mano audit drew, one line each");
    std::sort(entries.begin(), entries.end());  // by row, then line: a row listed twice lies side by side
    for (std::size_t i = 1; i < entries.size(); ++i)
        if (std::get<0>(entries[i]) == std::get<0>(entries[i - 1]))
            throw error(place{file, std::get<1>(entries[i])}.at(column_row, "row") + "row " +
                        std::to_string(std::get<0>(entries[i])) + " is listed twice (also on line " +
                        std::to_string(std::get<1>(entries[i - 1])) + "); list each audited row once");
    for (const auto& [row, line, label] : entries) {
        out.rows.push_back(row);
        out.labels.push_back(label);
    }
    const std::string set = printable(set_name, 1024);
    if (out.drawn_rows && !set_name.empty() && out.drawn_from != audit_array_source &&
        base_name(out.drawn_from) != base_name(set))
        out.warnings.push_back(file + " was drawn from " + printable(out.drawn_from, 200) + ", not from " + set +
                               " (both have " + std::to_string(n_rows) + " rows): check that its labels are this set's rows");
    return out;
}

}  // namespace mano

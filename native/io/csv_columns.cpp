#include "io/csv_columns.hpp"

#include "io/header.hpp"

#include <algorithm>
#include <cmath>

namespace mano {
namespace io {

namespace {

enum class column_kind { logits, pandas_index, id, label };

// A name as the rules read it: spaces around dropped, lower case, and ' ', '-', '.' and a
// camelCase step ("sampleId") as '_'.
std::string normalized(const std::string& name) {
    const auto first = name.find_first_not_of(" \t");
    if (first == std::string::npos) return {};
    const std::string s = name.substr(first, name.find_last_not_of(" \t") - first + 1);
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool upper = c >= 'A' && c <= 'Z';
        if (upper && i > 0 && s[i - 1] >= 'a' && s[i - 1] <= 'z') out += '_';
        out += upper ? static_cast<char>(c - 'A' + 'a') : c == ' ' || c == '-' || c == '.' ? '_' : c;
    }
    return out;
}

bool is_id_name(const std::string& s) {
    for (const char* id : {"id", "index", "row", "row_id", "idx", "sample", "sample_id", "uid", "uuid", "key"})
        if (s == id) return true;
    for (const std::string tail : {"_id", "_idx", "_index", "_key"})
        if (s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0) return true;
    return false;
}

column_kind kind_of(const std::string& name, std::size_t j) {
    const std::string s = normalized(name);
    if (j == 0 && (s.empty() || name == "Unnamed: 0")) return column_kind::pandas_index;
    if (is_id_name(s)) return column_kind::id;
    if (s == "label" || s == "labels" || s == "y" || s == "target") return column_kind::label;
    return column_kind::logits;
}

// Each column's kind. A first column named otherwise, before logit columns named 0, 1, 2, ... (as
// pandas names an array's columns), is pandas' index under its name: pd.DataFrame(a) with
// df.index.name set, df.to_csv().
std::vector<column_kind> kinds_of(const std::vector<std::string>& names) {
    std::vector<column_kind> kinds;
    for (std::size_t j = 0; j < names.size(); ++j) kinds.push_back(kind_of(names[j], j));
    if (kinds.size() < 2 || kinds[0] != column_kind::logits) return kinds;
    const std::string first = normalized(names[0]);
    if (first.find_first_not_of("0123456789") == std::string::npos) return kinds;  // a number, as the others are
    std::size_t next = 0;
    for (std::size_t j = 1; j < names.size(); ++j)
        if (kinds[j] == column_kind::logits && normalized(names[j]) != std::to_string(next++)) return kinds;
    if (next > 0) kinds[0] = column_kind::pandas_index;
    return kinds;
}

// A name as a message shows it: quoted when short, else only its length (as native/io/csv.cpp
// shows fields).
std::string shown_name(const std::string& name) {
    if (name.size() <= 24) return "'" + printable(name, 24) + "'";
    return "a name of " + std::to_string(name.size()) + " bytes";
}

std::string column_text(const std::vector<std::string>& names, std::size_t j) {
    return "column " + std::to_string(j + 1) + " (" + shown_name(names[j]) + ")";
}

std::size_t resolve_option(const std::string& file, const std::vector<std::string>& names, std::size_t fields,
                           const std::string& want, bool index_only) {
    if (!index_only)
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == want) return i;
    if (!want.empty() && want.size() <= 18 && want.find_first_not_of("0123456789") == std::string::npos) {
        const std::size_t index = std::stoull(want);
        if (index >= fields)
            detail::fail(file, "label column " + want + " is out of range: the rows have " + std::to_string(fields) +
                                   " columns (0-based indices 0 to " + std::to_string(fields - 1) + ")");
        return index;
    }
    if (names.empty())
        detail::fail(file, "has no header, so the label column must be a 0-based index, not '" + printable(want, 60) + "'");
    std::string list;
    for (std::size_t i = 0; i < names.size() && i < 50; ++i) list += (i ? ", " : "") + shown_name(names[i]);
    if (names.size() > 50) list += ", ...";
    detail::fail(file, "has no column '" + printable(want, 60) + "'; its header has " + list);
}

}  // namespace

std::size_t csv_columns::logit_columns(std::size_t fields) const { return fields - dropped.size() - (label ? 1 : 0); }

csv_columns resolve_csv_columns(const std::string& file, const std::vector<std::string>& names, std::size_t fields,
                                const std::string& label_option, const std::string& option_name, bool index_only,
                                bool for_labels) {
    csv_columns out;
    const std::string how = " with " + option_name + " (a name or 0-based index)";
    if (!label_option.empty()) out.label = resolve_option(file, names, fields, label_option, index_only);
    // without the option, the one column named as labels is the label column; several are refused
    const bool named = !out.label;
    const std::vector<column_kind> kinds = kinds_of(names);
    if (named) {
        std::string listed;
        std::size_t count = 0;
        for (std::size_t j = 0; j < names.size(); ++j)
            if (kinds[j] == column_kind::label) {
                listed += (count++ ? ", " : "") + shown_name(names[j]);
                out.label = j;
            }
        if (count > 1)
            detail::fail(file, "has " + std::to_string(count) + " columns named as labels (" + listed +
                                   "): say which one holds the labels" + how);
    }
    // every column that is no class, in column order, said
    for (std::size_t j = 0; j < names.size(); ++j) {
        const column_kind kind = kinds[j];
        if (out.label == j && named)
            out.notes.push_back(column_text(names, j) + " holds labels, not a class: it is the label column, left out of the logits");
        if (out.label == j || kind == column_kind::logits) continue;
        out.dropped.push_back(j);
        out.notes.push_back(column_text(names, j) +
                            (kind == column_kind::pandas_index ? " is pandas' index column, not a class"
                             : kind == column_kind::id         ? " holds ids, not a class"
                                                               : " is named as labels but " + column_text(names, *out.label) +
                                                                     " is the label column") +
                            ": left out of the logits");
    }
    if (for_labels && !out.label) {
        if (out.logit_columns(fields) != 1)
            detail::fail(file, "has " + std::to_string(out.logit_columns(fields)) + " columns; say which one holds the labels" + how);
        std::size_t j = 0;
        for (const std::size_t d : out.dropped) j += d == j ? 1 : 0;  // the one column not left out (dropped ascends)
        out.label = j;
    }
    if (!for_labels && out.logit_columns(fields) == 0)
        detail::fail(file, std::string("has no logit columns besides the ") +
                               (out.dropped.empty() ? "label column" : "label and the columns left out"));
    const std::string where = printable(file) + ": ";
    for (auto& note : out.notes) note.insert(0, where);
    return out;
}

// What the first rows of logit column c read like: an index counting up by 1 from 0 or 1, or
// ids (whole numbers, no two the same), or neither; and whether any value is not whole.
namespace {

struct column_look {
    bool counts = true, distinct_whole = true, fraction = false;
};

column_look look_of(const double* logits, std::size_t rows, std::size_t stride, std::size_t c) {
    column_look look;
    std::vector<double> values;
    for (std::size_t i = 0; i < rows; ++i) {
        const double v = logits[i * stride + c];
        const bool whole = std::isfinite(v) && v == std::floor(v);
        look.fraction = look.fraction || !whole;
        look.counts = look.counts && whole && v == logits[c] + static_cast<double>(i) && (logits[c] == 0 || logits[c] == 1);
        values.push_back(v);
    }
    // a column of probabilities may read 0, 1: an index counts past 1
    look.counts = look.counts && logits[c] + static_cast<double>(rows - 1) >= 2;
    std::sort(values.begin(), values.end());
    look.distinct_whole = !look.fraction && std::adjacent_find(values.begin(), values.end()) == values.end();
    return look;
}

}  // namespace

void check_index_column(const std::string& file, const std::vector<std::string>& names, const csv_columns& columns,
                        std::size_t fields, const double* logits, std::size_t rows, std::size_t stride) {
    const bool first_is_logit = columns.label != std::size_t{0} && (columns.dropped.empty() || columns.dropped[0] != 0);
    const std::size_t cols = columns.logit_columns(fields);
    if (!first_is_logit || cols < 2 || rows < 2) return;
    const column_look first = look_of(logits, rows, stride, 0);
    bool others_count = false, others_fractions = true;
    for (std::size_t c = 1; c < cols; ++c) {
        const column_look other = look_of(logits, rows, stride, c);
        others_count = others_count || other.counts;
        others_fractions = others_fractions && other.fraction;
    }
    // an index counts where no other column does; ids are distinct whole numbers beside fractions
    // (3 rows at least: a probability column saturated at 0 or 1 has 2 distinct values at most)
    const bool index = first.counts && !others_count;
    const bool ids = first.distinct_whole && rows >= 3 && others_fractions;
    if (!index && !ids) return;
    const std::string how = index ? std::string("count ") + (logits[0] == 0 ? "0, 1, 2" : "1, 2, 3") + ", ..."
                                  : "are whole numbers, no two the same, beside the other columns' fractions";
    detail::fail(file, (names.empty() ? std::string("column 1") : column_text(names, 0)) +
                           " holds an index or ids, not a class's logits: its first " + std::to_string(rows) + " rows " +
                           how + "; drop the column (pandas: to_csv(index=False)) or name it 'index' or 'id'" +
                           (names.empty() ? " in a header line" : "") + ", and mano leaves it out");
}

}  // namespace io
}  // namespace mano

#include "io/csv_columns.hpp"

#include "io/header.hpp"

namespace mano {
namespace io {

namespace {

enum class column_kind { logits, pandas_index, id, label };

column_kind kind_of(const std::string& name, std::size_t j) {
    const auto first = name.find_first_not_of(" \t");
    std::string s = first == std::string::npos ? std::string() : name.substr(first, name.find_last_not_of(" \t") - first + 1);
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (j == 0 && (s.empty() || name == "Unnamed: 0")) return column_kind::pandas_index;
    if (s == "id" || s == "index") return column_kind::id;
    if (s == "label" || s == "labels" || s == "y" || s == "target") return column_kind::label;
    return column_kind::logits;
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
    if (named) {
        std::string listed;
        std::size_t count = 0;
        for (std::size_t j = 0; j < names.size(); ++j)
            if (kind_of(names[j], j) == column_kind::label) {
                listed += (count++ ? ", " : "") + shown_name(names[j]);
                out.label = j;
            }
        if (count > 1)
            detail::fail(file, "has " + std::to_string(count) + " columns named as labels (" + listed +
                                   "): say which one holds the labels" + how);
    }
    // every column that is no class, in column order, said
    for (std::size_t j = 0; j < names.size(); ++j) {
        const column_kind kind = kind_of(names[j], j);
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

}  // namespace io
}  // namespace mano

#include "io/csv_columns.hpp"

#include <algorithm>
#include <charconv>

#include "io/header.hpp"

namespace mano {
namespace io {

namespace {

enum class column_kind { logits, pandas_index, id, label };

std::string lowered(const std::string& name) {
    const auto first = name.find_first_not_of(" \t");
    if (first == std::string::npos) return {};
    std::string s = name.substr(first, name.find_last_not_of(" \t") - first + 1);
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

column_kind kind_of(const std::string& name, std::size_t j) {
    const std::string s = lowered(name);
    if (j == 0 && (s.empty() || name == "Unnamed: 0")) return column_kind::pandas_index;
    if (s == "id" || s == "index") return column_kind::id;
    if (s == "label" || s == "labels" || s == "y" || s == "target") return column_kind::label;
    return column_kind::logits;
}

// A name as a message shows it: quoted when short, else only its length (native/io/csv.cpp).
std::string shown_name(const std::string& name) {
    constexpr std::size_t most = 24;
    if (name.size() <= most) return "'" + printable(name, most) + "'";
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
    std::size_t index = 0;
    const auto [end, ec] = std::from_chars(want.data(), want.data() + want.size(), index);
    if (ec == std::errc() && end == want.data() + want.size() && !want.empty()) {
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
    const std::string where = printable(file);
    if (!label_option.empty()) out.label = resolve_option(file, names, fields, label_option, index_only);
    std::vector<std::size_t> label_like;
    for (std::size_t j = 0; j < names.size(); ++j) {
        if (out.label == j) continue;
        const column_kind kind = kind_of(names[j], j);
        if (kind == column_kind::label) label_like.push_back(j);
        if (kind != column_kind::pandas_index && kind != column_kind::id) continue;
        out.dropped.push_back(j);
        out.notes.push_back(where + ": " + column_text(names, j) +
                            (kind == column_kind::pandas_index ? " is pandas' index column" : " holds ids") +
                            ", not a class: left out of the logits");
    }
    if (!out.label && label_like.size() > 1) {
        std::string list;
        for (std::size_t i = 0; i < label_like.size(); ++i) list += (i ? ", " : "") + shown_name(names[label_like[i]]);
        detail::fail(file, "has " + std::to_string(label_like.size()) + " columns named as labels (" + list +
                               "): say which one holds the labels with " + option_name + " (a name or 0-based index)");
    }
    if (!out.label && label_like.size() == 1) {
        out.label = label_like[0];
        label_like.clear();
        out.notes.push_back(where + ": " + column_text(names, *out.label) +
                            " holds labels, not a class: it is the label column, left out of the logits");
    }
    for (const std::size_t j : label_like) {
        out.dropped.push_back(j);
        out.notes.push_back(where + ": " + column_text(names, j) + " is named as labels but " +
                            column_text(names, *out.label) + " is the label column: left out of the logits");
    }
    std::sort(out.dropped.begin(), out.dropped.end());
    if (for_labels && !out.label) {
        if (out.logit_columns(fields) != 1)
            detail::fail(file, "has " + std::to_string(out.logit_columns(fields)) +
                                   " columns; say which one holds the labels with " + option_name +
                                   " (a name or 0-based index)");
        for (std::size_t j = 0; !out.label; ++j)
            if (!std::binary_search(out.dropped.begin(), out.dropped.end(), j)) out.label = j;
    }
    if (!for_labels && out.logit_columns(fields) == 0)
        detail::fail(file, std::string("has no logit columns besides the ") +
                               (out.dropped.empty() ? "label column" : "label and the columns left out"));
    return out;
}

}  // namespace io
}  // namespace mano

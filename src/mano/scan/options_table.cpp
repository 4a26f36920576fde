#include "mano/scan/options_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

namespace {

const option_row& row_of(std::string_view name) {
    for (const option_row& r : option_rows)
        if (r.name == name) return r;
    throw error("'" + printable(std::string(name), 60) + "' is not an option of the table (src/mano/scan/options_table.hpp)");
}

// A bound as text: whole rows and whole numbers without a fraction, others as number_text.
std::string bound_text(double x) { return number_text(x); }

// The value as an error shows it: to 17 digits, so that 0.9999999999999999 does not read as 1.
std::string got_text(double x) {
    char got[32];
    std::snprintf(got, sizeof got, "%.17g", x);
    return got;
}

const char* type_name(option_type t) {
    switch (t) {
        case option_type::real: return "number";
        case option_type::whole: return "whole number";
        case option_type::whole_list: return "list of whole numbers";
        case option_type::text: return "text";
        case option_type::text_list: return "list of texts";
    }
    return "unknown";
}

bool whole_row(const option_row& r) { return r.type == option_type::whole || r.type == option_type::whole_list; }

// What a message says the value must be: "in (0, 0.999999], e.g. 0.9", "a whole number from 1 to 170".
std::string must_be(const option_row& r) {
    if (!r.says.empty()) return std::string(r.says);
    if (whole_row(r)) return std::string("a whole number ") + option_range_words(r.name);
    if (r.has_min && r.has_max)
        return option_range(r.name) + (r.example.empty() ? "" : ", e.g. " + std::string(r.example));
    return "a finite number" + (r.has_min || r.has_max ? " " + option_range_words(r.name) : std::string());
}

std::string camel_case(std::string_view name) {
    std::string out;
    bool upper = false;
    for (const char c : name) {
        if (c == '_') {
            upper = true;
            continue;
        }
        out += upper ? static_cast<char>(c - 'a' + 'A') : c;
        upper = false;
    }
    return out;
}

}  // namespace

bool option_allows(const option_row& r, double x) noexcept {
    if (!std::isfinite(x)) return false;
    if (whole_row(r) && x != std::floor(x)) return false;
    if (r.has_min && !(r.min_inclusive ? x >= r.min : x > r.min)) return false;
    if (r.has_max && !(r.max_inclusive ? x <= r.max : x < r.max)) return false;
    return true;
}

bool option_allows(std::string_view name, double value) { return option_allows(row_of(name), value); }

std::string option_range(std::string_view name) {
    const option_row& r = row_of(name);
    if (r.has_min && r.has_max)
        return std::string("in ") + (r.min_inclusive ? "[" : "(") + bound_text(r.min) + ", " + bound_text(r.max) +
               (r.max_inclusive ? "]" : ")");
    if (r.has_min) return (r.min_inclusive ? ">= " : "> ") + bound_text(r.min);
    if (r.has_max) return (r.max_inclusive ? "<= " : "< ") + bound_text(r.max);
    return "";
}

std::string option_range_words(std::string_view name) {
    const option_row& r = row_of(name);
    if (r.has_min && r.has_max && r.min_inclusive && r.max_inclusive)
        return "from " + bound_text(r.min) + " to " + bound_text(r.max);
    if (r.has_min && r.has_max) return option_range(name);
    if (r.has_min) return (r.min_inclusive ? "at least " : "greater than ") + bound_text(r.min);
    if (r.has_max) return (r.max_inclusive ? "at most " : "less than ") + bound_text(r.max);
    return "";
}

front_end parse_front_end(const std::string& name) {
    if (name == "cli") return front_end::cli;
    if (name == "python") return front_end::python;
    if (name == "npm") return front_end::npm;
    if (name == "core") return front_end::core;
    throw error("front end '" + printable(name, 30) + "' is not one of cli, python, npm, core");
}

std::string option_spelling(std::string_view name, front_end f) {
    switch (f) {
        case front_end::cli: {
            std::string out = "--" + std::string(name);
            std::replace(out.begin(), out.end(), '_', '-');
            return out;
        }
        case front_end::npm: return camel_case(name);
        case front_end::python:
        case front_end::core: return std::string(name);
    }
    return std::string(name);
}

void check_option(std::string_view name, double value, const std::string& spelling) {
    const option_row& r = row_of(name);
    if (option_allows(r, value)) return;
    throw error(spelling + " must be " + must_be(r) + " (got " + got_text(value) + ")");
}

void check_option(std::string_view name, const nlohmann::json& value, const std::string& spelling) {
    const option_row& r = row_of(name);
    const auto number = [&](const nlohmann::json& v, const std::string& what) {
        if (v.is_number() && !v.is_boolean()) return check_option(name, v.get<double>(), what);
        if (v.is_string() && (v == "NaN" || v == "Infinity" || v == "-Infinity"))
            return check_option(name, v == "NaN" ? std::nan("") : v == "Infinity" ? HUGE_VAL : -HUGE_VAL, what);
        throw error(what + " must be " + must_be(r) + " (got " + printable(v.dump(), 40) + ")");
    };
    switch (r.type) {
        case option_type::real:
        case option_type::whole: return number(value, spelling);
        case option_type::whole_list:
            if (!value.is_array())
                throw error(spelling + " must be a list of whole numbers " + option_range_words(name) + " (got " +
                            printable(value.dump(), 40) + ")");
            for (const auto& v : value) number(v, spelling + " entries");
            return;
        case option_type::text:
            if (!value.is_string()) throw error(spelling + " must be " + type_name(r.type) + " (got " + printable(value.dump(), 40) + ")");
            return;
        case option_type::text_list:
            if (!value.is_array() || !std::all_of(value.begin(), value.end(), [](const nlohmann::json& v) { return v.is_string(); }))
                throw error(spelling + " must be a " + type_name(r.type) + " (got " + printable(value.dump(), 40) + ")");
            return;
    }
}

void check_criterion_with_family(bool family, bool criterion_given, front_end f) {
    if (!family || !criterion_given) return;
    const bool cli = f == front_end::cli;
    const std::string softrun = cli ? "--normalization softrun" : f == front_end::python ? "normalization='softrun'" : "normalization 'softrun'";
    throw error(option_spelling("criterion", f) + " fixes the softrun branch; give it with " + softrun + ", not " +
                (cli ? "family" : "'family'"));
}

std::vector<std::size_t> select_groups(const std::vector<std::string>& set_groups, const std::vector<std::string>& wanted,
                                       const std::string& where) {
    std::vector<std::size_t> kept;
    for (const auto& g : wanted)
        if (std::find(set_groups.begin(), set_groups.end(), g) == set_groups.end())
            throw error(where + ": no set has the group \"" + g + "\"");
    for (std::size_t i = 0; i < set_groups.size(); ++i)
        if (wanted.empty() || std::find(wanted.begin(), wanted.end(), set_groups[i]) != wanted.end()) kept.push_back(i);
    return kept;
}

nlohmann::json options_json() {
    nlohmann::json rows = nlohmann::json::array();
    for (const option_row& r : option_rows) {
        nlohmann::json j = {{"name", r.name}, {"type", type_name(r.type)}, {"default", r.default_value},
                            {"meaning", r.meaning}, {"ties", r.ties}, {"range", option_range(r.name)}};
        if (r.has_min) j["min"] = r.min, j["min_inclusive"] = r.min_inclusive;
        if (r.has_max) j["max"] = r.max, j["max_inclusive"] = r.max_inclusive;
        rows.push_back(std::move(j));
    }
    return rows;
}

nlohmann::json options_request(const nlohmann::json& request) {
    if (!request.is_object()) throw error("an options request must be a JSON object");
    const front_end f = parse_front_end(request.value("front_end", std::string("core")));
    const nlohmann::json values = request.value("values", nlohmann::json::object());
    for (const auto& [name, value] : values.items())
        if (!value.is_null()) check_option(name, value, option_spelling(name, f));
    const auto given = [&](const char* name) { return values.contains(name) && !values.at(name).is_null(); };
    check_criterion_with_family(given("normalization") && values.at("normalization") == "family", given("criterion"), f);
    nlohmann::json out = {{"table", options_json()}};
    if (request.contains("set_groups"))
        out["kept"] = select_groups(request.at("set_groups").get<std::vector<std::string>>(),
                                    request.value("groups", std::vector<std::string>{}), request.value("where", std::string("sets")));
    return out;
}

}  // namespace mano

#pragma once
// Every option a front end passes to the core, declared once: its name (the core's JSON key, in
// snake_case), type, default, range and the rule that ties it to others. The CLI's validators, the
// core's own checks, the Python package and the npm package read the ranges from here, and each
// front end's spelling (--taylor-order, taylor_order, taylorOrder) appears only in its errors.
// tests/structure/check_limits.py parses the rows below and fails where a front end writes a
// bound again; docs/architecture.md ("How to add an option") says how to add a row.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mano {

enum class option_type { real, whole, whole_list, text, text_list };

// One option, every fact a named field (the rows below set them with the named setters).
struct option_row {
    std::string_view name;  // snake_case, the core's key
    option_type type = option_type::real;
    std::string_view default_value;  // as text; "" when none
    bool has_min = false;
    double min = 0;
    bool min_inclusive = false;
    bool has_max = false;
    double max = 0;
    bool max_inclusive = false;
    std::string_view example;  // a good value, shown in a range error ("" when none)
    std::string_view says;     // the range in words when the generated ones would mislead ("" else)
    std::string_view meaning;
    std::string_view ties;  // the rule that ties it to other options ("" when none)

    constexpr option_row defaulting_to(std::string_view v) const { auto r = *this; r.default_value = v; return r; }
    constexpr option_row above(double v) const { auto r = *this; r.has_min = true, r.min = v, r.min_inclusive = false; return r; }
    constexpr option_row at_least(double v) const { auto r = *this; r.has_min = true, r.min = v, r.min_inclusive = true; return r; }
    constexpr option_row below(double v) const { auto r = *this; r.has_max = true, r.max = v, r.max_inclusive = false; return r; }
    constexpr option_row at_most(double v) const { auto r = *this; r.has_max = true, r.max = v, r.max_inclusive = true; return r; }
    constexpr option_row for_example(std::string_view v) const { auto r = *this; r.example = v; return r; }
    constexpr option_row range_in_words(std::string_view v) const { auto r = *this; r.says = v; return r; }
    constexpr option_row means(std::string_view v) const { auto r = *this; r.meaning = v; return r; }
    constexpr option_row tied(std::string_view v) const { auto r = *this; r.ties = v; return r; }
};

constexpr option_row option(std::string_view name, option_type type) {
    option_row r;
    r.name = name;
    r.type = type;
    return r;
}

// One row per option. A bound's literal is written only here.
inline constexpr option_row option_rows[] = {
    // The two-sided quantiles are taken at 0.5 + level / 2 and student_t.hpp's are accurate up to
    // 1 - 1e-10; nearer 1 that probability rounds to 1 in double and the interval is unbounded.
    option("level", option_type::real).defaulting_to("0.9").above(0).at_most(0.999999).for_example("0.9")
        .means("the prediction interval's level (a one-in-a-million miss at most)"),
    option("p", option_type::real).defaulting_to("4").above(1).means("the L_p norm of MaNo"),
    option("eta", option_type::real).defaulting_to("5").means("softrun threshold: softmax when the criterion > eta"),
    // 1/n! underflows a double beyond n = 170.
    option("taylor_order", option_type::whole).defaulting_to("2").at_least(1).at_most(170)
        .means("order n of the Taylor expansion of exp in MaNo's Taylor normalization"),
    option("taylor_orders", option_type::whole_list).defaulting_to("2").at_least(1).at_most(170)
        .means("the Taylor orders a family's branch is chosen among").tied("with normalization family only"),
    option("batch_size", option_type::whole).defaulting_to("0").at_least(0)
        .range_in_words("0 (whole set) or a positive number of rows")
        .means("official-code mode: average the scores of batches of B rows"),
    option("criterion", option_type::real).means("official-code mode: a fixed criterion instead of the one computed")
        .tied("fixes the softrun branch: not with normalization family"),
    option("temperature", option_type::real).defaulting_to("1").above(0)
        .means("temperature of the softmax-based baselines").tied("fit needs a labeled source set"),
    option("normalization", option_type::text).defaulting_to("softrun")
        .means("softrun | softmax | taylor, and family for a family of sets").tied("family: one branch chosen for all the sets"),
    option("methods", option_type::text_list).means("the methods to compute (mano methods lists them)")
        .tied("each method needs its inputs (registry.hpp)"),
    option("groups", option_type::text_list).means("only the sets of these groups").tied("each group must name at least one set"),
};

// The row of `name`; a name not in the table does not compile where it is a constant expression.
constexpr const option_row& option_row_of(std::string_view name) {
    for (const option_row& r : option_rows)
        if (r.name == name) return r;
    throw "mano: an option not in options_table.hpp";  // unreachable for the table's names
}

inline constexpr double max_interval_level = option_row_of("level").max;
inline constexpr int max_taylor_order = static_cast<int>(option_row_of("taylor_order").max);

// Whether the value is within the row's range (a finite number, whole for whole rows).
bool option_allows(const option_row& row, double value) noexcept;
bool option_allows(std::string_view name, double value);

// The range as the CLI's help shows it ("in (0, 0.999999]", "> 1", "" for any finite number).
std::string option_range(std::string_view name);
// The range in words, as errors say it ("from 1 to 170", "greater than 1").
std::string option_range_words(std::string_view name);

// The front ends, for the spelling of an option in their errors.
enum class front_end { core, cli, python, npm };
front_end parse_front_end(const std::string& name);  // "cli", "python", "npm", "core"
// --taylor-order (cli), taylor_order (python, core), taylorOrder (npm).
std::string option_spelling(std::string_view name, front_end f);

// Throws mano::error "<spelling> must be <range> (got x)" when the value is outside its row's range.
void check_option(std::string_view name, double value, const std::string& spelling);
// The same for a JSON value: a number (or "NaN", "Infinity", "-Infinity", the numbers JSON lacks),
// a list for list rows; a value of another type is refused the same way.
void check_option(std::string_view name, const nlohmann::json& value, const std::string& spelling);

// A fixed criterion decides softrun's branch per set, so it cannot go with the normalization
// family, which chooses one branch for all the sets: throws mano::error in the front end's words.
void check_criterion_with_family(bool family, bool criterion_given, front_end f);

// The sets kept by a group selection (indices into set_groups, in order; all when wanted is
// empty); throws mano::error "<where>: no set has the group \"g\"" for a group no set has.
std::vector<std::size_t> select_groups(const std::vector<std::string>& set_groups, const std::vector<std::string>& wanted,
                                       const std::string& where);

// The table as JSON: [{"name", "type", "default", "min"?, "min_inclusive"?, "max"?, ...}].
nlohmann::json options_json();

// One call for the bindings: {"front_end": "python", "values": {name: value}, "groups"?: [...],
// "set_groups"?: [...], "where"?: "..."} checks every value (and criterion against normalization
// "family"), selects the groups, and returns {"table": options_json(), "kept"?: [indices]}.
nlohmann::json options_request(const nlohmann::json& request);

}  // namespace mano

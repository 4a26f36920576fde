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

struct option_row {
    std::string_view name;           // snake_case, the core's key
    option_type type;
    std::string_view default_value;  // as text; "" when none
    bool has_min;
    double min;
    bool min_inclusive;
    bool has_max;
    double max;
    bool max_inclusive;
    std::string_view example;  // a good value, shown in a range error ("" when none)
    std::string_view says;     // the range in words when the generated ones would mislead ("" else)
    std::string_view meaning;
    std::string_view ties;     // the rule that ties it to other options ("" when none)
};

inline constexpr double no_bound = 0;

// One row per option. A bound's literal is written only here.
inline constexpr option_row option_rows[] = {
    // The two-sided quantiles are taken at 0.5 + level / 2 and student_t.hpp's are accurate up to
    // 1 - 1e-10; nearer 1 that probability rounds to 1 in double and the interval is unbounded.
    {"level", option_type::real, "0.9", true, 0, false, true, 0.999999, true, "0.9", "",
     "the prediction interval's level (a one-in-a-million miss at most)", ""},
    {"p", option_type::real, "4", true, 1, false, false, no_bound, false, "", "", "the L_p norm of MaNo", ""},
    {"eta", option_type::real, "5", false, no_bound, false, false, no_bound, false, "", "",
     "softrun threshold: softmax when the criterion > eta", ""},
    // 1/n! underflows a double beyond n = 170.
    {"taylor_order", option_type::whole, "2", true, 1, true, true, 170, true, "", "",
     "order n of the Taylor expansion of exp in MaNo's Taylor normalization", ""},
    {"taylor_orders", option_type::whole_list, "2", true, 1, true, true, 170, true, "", "",
     "the Taylor orders a family's branch is chosen among", "with normalization family only"},
    {"batch_size", option_type::whole, "0", true, 0, true, false, no_bound, false, "",
     "0 (whole set) or a positive number of rows", "official-code mode: average the scores of batches of B rows", ""},
    {"criterion", option_type::real, "", false, no_bound, false, false, no_bound, false, "", "",
     "official-code mode: a fixed criterion instead of the one computed", "fixes the softrun branch: not with normalization family"},
    {"temperature", option_type::real, "1", true, 0, false, false, no_bound, false, "", "",
     "temperature of the softmax-based baselines", "fit needs a labeled source set"},
    {"normalization", option_type::text, "softrun", false, no_bound, false, false, no_bound, false, "", "",
     "softrun | softmax | taylor, and family for a family of sets", "family: one branch chosen for all the sets"},
    {"methods", option_type::text_list, "", false, no_bound, false, false, no_bound, false, "", "",
     "the methods to compute (mano methods lists them)", "each method needs its inputs (registry.hpp)"},
    {"groups", option_type::text_list, "", false, no_bound, false, false, no_bound, false, "", "",
     "only the sets of these groups", "each group must name at least one set"},
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

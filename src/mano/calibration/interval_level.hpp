#pragma once

#include <string>

#include "mano/scan/options_table.hpp"

namespace mano {

// The levels an interval may be asked for: the row "level" of the options table
// (scan/options_table.hpp), (0, max_interval_level].
inline bool interval_level_ok(double level) { return option_allows("level", level); }

// What a front end's message says of the range ("in (0, 0.999999]").
inline std::string interval_level_range() { return option_range("level"); }

// Throws mano::error "<name> must be in (0, 0.999999], e.g. 0.9 (got x)" outside the range.
inline void check_interval_level(double level, const std::string& name = "the interval level") {
    check_option("level", level, name);
}

}  // namespace mano

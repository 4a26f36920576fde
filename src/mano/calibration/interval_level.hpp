#pragma once

#include <cstdio>
#include <string>

#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

// The levels an interval may be asked for: (0, max_interval_level]. The two-sided quantiles are
// taken at 0.5 + level / 2, and student_t.hpp's quantiles are accurate up to 1 - 1e-10; nearer 1
// that probability rounds to 1 in double (level = 1 - 2^-53) and the interval is unbounded.
// 0.999999 is a one-in-a-million miss, already beyond what any calibration's tails can support.
constexpr double max_interval_level = 0.999999;

inline bool interval_level_ok(double level) { return level > 0 && level <= max_interval_level; }

// What a front end's message says of the range ("in (0, 0.999999]").
inline std::string interval_level_range() { return "in (0, " + number_text(max_interval_level) + "]"; }

// Throws mano::error "<name> must be in (0, 0.999999], e.g. 0.9 (got x)" outside the range; the
// level is shown to 17 digits, so that 0.9999999999999999 does not read as 1.
inline void check_interval_level(double level, const std::string& name = "the interval level") {
    if (interval_level_ok(level)) return;
    char got[32];
    std::snprintf(got, sizeof got, "%.17g", level);
    throw error(name + " must be " + interval_level_range() + ", e.g. 0.9 (got " + got + ")");
}

}  // namespace mano

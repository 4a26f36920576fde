#pragma once
// Numbers written as text (a CSV field, an audit file's field): one rule for every reader that
// takes them, native and WebAssembly, so a file one reader accepts the others accept too.

#include <cstdint>
#include <string_view>

namespace mano {

// A finite or infinite decimal number as std::from_chars reads it (no leading space, no
// hexadecimal, locale-independent), with one optional '+' in front; false for anything else.
bool parse_real(std::string_view text, double& value);

// A class label: a whole number, written as digits ("3", "-1", "+3") or as a decimal whose value
// is whole ("3.0", "3e0": pandas writes an integer column that held a NaN as floats); false for
// anything else ("3.5", "", "cat", beyond int64).
bool parse_whole_label(std::string_view text, std::int64_t& value);

}  // namespace mano

#pragma once
// Text that came from a file or the command line (a set name, a key, a path, a field), made safe
// to put in a one-line message on a terminal.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mano {

// At most `max` bytes of `text` ("..." marks a cut), printable ASCII and printable UTF-8 kept,
// every other byte written as \xNN: controls, C1 controls, bytes that are not well-formed UTF-8,
// and the characters that print as nothing or rearrange the text around them (zero-width and
// bidirectional formatting, line and paragraph separators, the byte-order mark). A name cannot
// move the cursor, clear the screen, split the line or reorder it.
std::string printable(std::string_view text, std::size_t max = std::string_view::npos);

// A number for a message: 6 significant digits, an exponent where that is shorter (1e+300, not
// std::to_string's 301 digits; 1e-07, not 0.000000).
std::string number_text(double x);

// The parts with `separator` between them ("a, b, c").
std::string join(const std::vector<std::string>& parts, std::string_view separator);

}  // namespace mano

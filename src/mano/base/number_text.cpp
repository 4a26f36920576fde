// Numbers written as text (number_text.hpp).
#include "mano/base/number_text.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>

namespace mano {

namespace {

// One '+' in front is dropped; a second sign after it is refused.
bool drop_plus(std::string_view& text) {
    if (text.empty() || text.front() != '+') return true;
    text.remove_prefix(1);
    return text.empty() || (text.front() != '+' && text.front() != '-');
}

}  // namespace

bool parse_real(std::string_view text, double& value) {
    if (!drop_plus(text) || text.empty()) return false;
#if defined(__cpp_lib_to_chars)
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
#else
    // libc++ 14 (Emscripten) has no floating-point from_chars: strtod on a copy, refusing what
    // from_chars refuses (leading space or sign, hexadecimal, out of range).
    const std::string copy(text);
    const char first = copy[copy[0] == '-' ? 1 : 0];
    if (first == '\0' || first == '+' || first == '-' || std::isspace(static_cast<unsigned char>(first)) ||
        copy.find_first_of("xX") != std::string::npos)
        return false;
    errno = 0;
    char* end = nullptr;
    value = std::strtod(copy.c_str(), &end);
    return errno != ERANGE && end == copy.c_str() + copy.size();
#endif
}

bool parse_whole_label(std::string_view text, std::int64_t& value) {
    if (!drop_plus(text)) return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) return true;
    double d = 0;  // "3.0", as pandas writes integer columns that had a NaN
    if (!parse_real(text, d) || !(d >= -9.2e18 && d <= 9.2e18) || d != static_cast<double>(static_cast<std::int64_t>(d)))
        return false;
    value = static_cast<std::int64_t>(d);
    return true;
}

}  // namespace mano

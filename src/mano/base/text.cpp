#include "mano/base/text.hpp"

#include <cstdint>
#include <cstdio>

namespace mano {

namespace {

// Code points that print as nothing or rearrange the text around them: C1 controls, zero-width
// and bidirectional formatting characters, line and paragraph separators, the byte-order mark.
bool invisible(std::uint32_t cp) {
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0xAD || cp == 0x61C || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF ||
           (cp >= 0xFFF9 && cp <= 0xFFFB) || cp == 0xFFFE || cp == 0xFFFF || (cp >= 0xE0000 && cp <= 0xE007F);
}

// The length of the well-formed UTF-8 sequence at the start of `s` and its code point; 0 if none.
std::size_t utf8_sequence(std::string_view s, std::uint32_t& cp) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = byte(0);
    std::size_t n = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, low = c == 0xE0 ? 0xA0 : 0x80, high = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, low = c == 0xF0 ? 0x90 : 0x80, high = c == 0xF4 ? 0x8F : 0xBF;
    if (n == 0 || s.size() < n || byte(1) < low || byte(1) > high) return 0;
    cp = c & (0x7F >> n);
    for (std::size_t i = 1; i < n; ++i) {
        if ((byte(i) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (byte(i) & 0x3F);
    }
    return n;
}

}  // namespace

std::string printable(std::string_view text, std::size_t max) {
    const bool cut = text.size() > max;
    if (cut) text = text.substr(0, max);
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size() + 3);
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7F) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        std::uint32_t cp = 0;
        const std::size_t n = c >= 0x80 ? utf8_sequence(text.substr(i), cp) : 0;
        if (n > 0 && !invisible(cp)) {
            out.append(text.substr(i, n));
            i += n;
            continue;
        }
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
        ++i;
    }
    return cut ? out + "..." : out;
}

std::string number_text(double x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", x);
    return buffer;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
    std::string out;
    for (const auto& part : parts) {
        if (!out.empty()) out += separator;
        out += part;
    }
    return out;
}

}  // namespace mano

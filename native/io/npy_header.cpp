// The .npy header rules (header.hpp): the dict literal NumPy writes, its dtype and shape, and the
// data size they imply.
#include "io/header.hpp"

#include <cctype>
#include <cstring>
#include <limits>

namespace mano {
namespace io {
namespace detail {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The header is a Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
class header_parser {
public:
    header_parser(const std::string& where, const std::string& text) : where_(where), text_(text) {}

    npy_header parse() {
        npy_header h;
        bool has_descr = false, has_fortran = false, has_shape = false;
        skip_space();
        expect('{');
        skip_space();
        while (peek() != '}') {
            const std::string key = string_literal();
            skip_space();
            expect(':');
            skip_space();
            if (key == "descr") {
                if (has_descr) bad("has 'descr' twice");
                if (peek() == '[') bad("has a structured dtype (a list of fields); it must hold a plain float or integer array");
                if (peek() != '\'' && peek() != '"') bad("has a 'descr' that is not a dtype string");
                h.descr = string_literal();
                has_descr = true;
            } else if (key == "fortran_order") {
                if (has_fortran) bad("has 'fortran_order' twice");
                const std::string word = identifier();
                if (word != "True" && word != "False")
                    bad("has fortran_order " + (word.empty() ? std::string("missing") : "'" + printable(word, 60) + "'") + ", not True or False");
                h.fortran = word == "True";
                has_fortran = true;
            } else if (key == "shape") {
                if (has_shape) bad("has 'shape' twice");
                h.shape = shape_tuple();
                has_shape = true;
            } else {
                bad("has an unexpected entry '" + printable(key, 60) + "'");
            }
            skip_space();
            if (peek() == ',') {
                ++at_;
                skip_space();
            } else if (peek() != '}') {
                bad("is not a valid dictionary (expected ',' or '}' at character " + std::to_string(at_) + ")");
            }
        }
        ++at_;
        skip_space();
        if (at_ != text_.size()) bad("has text after its dictionary");
        if (!has_descr) bad("has no 'descr' (dtype) entry");
        if (!has_fortran) bad("has no 'fortran_order' entry");
        if (!has_shape) bad("has no 'shape' entry");
        return h;
    }

private:
    [[noreturn]] void bad(const std::string& what) { fail(where_, "the .npy header " + what); }
    char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
    void skip_space() {
        while (at_ < text_.size() && is_space(text_[at_])) ++at_;
    }
    void expect(char c) {
        if (peek() != c)
            bad("is not a valid dictionary (expected '" + std::string(1, c) + "' at character " + std::to_string(at_) + ")");
        ++at_;
    }
    std::string string_literal() {
        const char quote = peek();
        if (quote != '\'' && quote != '"') bad("is not a valid dictionary (expected a quoted key)");
        const auto end = text_.find(quote, at_ + 1);
        if (end == std::string::npos) bad("has an unterminated string");
        std::string s = text_.substr(at_ + 1, end - at_ - 1);
        at_ = end + 1;
        return s;
    }
    std::string identifier() {
        const auto start = at_;
        while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) ++at_;
        return text_.substr(start, at_ - start);
    }
    std::vector<std::uint64_t> shape_tuple() {
        const auto start = at_;
        if (peek() != '(') bad("has a 'shape' that is not a tuple");
        ++at_;
        std::vector<std::uint64_t> shape;
        bool comma = false;  // after the last dimension
        skip_space();
        while (peek() != ')') {
            if (peek() == '-') bad("has a negative dimension in its shape " + rest_of_tuple(start));
            if (!std::isdigit(static_cast<unsigned char>(peek()))) bad("has an invalid shape " + rest_of_tuple(start));
            std::uint64_t value = 0;
            while (std::isdigit(static_cast<unsigned char>(peek()))) {
                const auto digit = static_cast<std::uint64_t>(peek() - '0');
                if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
                    bad("has a shape too large to address: " + rest_of_tuple(start));
                value = value * 10 + digit;
                ++at_;
            }
            if (peek() == 'L') ++at_;  // Python 2 long
            shape.push_back(value);
            if (shape.size() > 64) bad("has a shape of more than 64 dimensions");
            skip_space();
            comma = peek() == ',';
            if (comma) {
                ++at_;
                skip_space();
            } else if (peek() != ')') {
                bad("has an invalid shape " + rest_of_tuple(start));
            }
        }
        // Python reads (2) as the number 2: a tuple of one needs its comma, as NumPy writes (2,).
        if (shape.size() == 1 && !comma) bad("has a 'shape' that is not a tuple: " + rest_of_tuple(start) + " (a 1-D shape is written (N,))");
        ++at_;
        return shape;
    }
    std::string rest_of_tuple(std::size_t start) const {
        const auto end = text_.find(')', start);
        return printable(std::string_view(text_).substr(start, end == std::string::npos ? 40 : end - start + 1), 60);
    }

    const std::string& where_;
    const std::string& text_;
    std::size_t at_ = 0;
};

}  // namespace

npy_header read_npy_header(const std::string& where, byte_stream& in, std::uint64_t total) {
    unsigned char preamble[8] = {};
    const std::size_t got = static_cast<std::size_t>(std::min<std::uint64_t>(total, 8));
    in.read(preamble, got);
    if (got == 0) fail(where, "is empty");
    if (std::memcmp(preamble, "\x93NUMPY", std::min<std::size_t>(got, 6)) != 0)
        fail(where, "is not a .npy file (its first bytes are not the .npy magic string, byte 0x93 then NUMPY)");
    if (got < 8) fail(where, "is truncated inside its .npy header (" + std::to_string(total) + " bytes)");
    const int major = preamble[6], minor = preamble[7];
    if (major < 1 || major > 3 || minor != 0)
        fail(where, "has .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                        "; only versions 1.0, 2.0 and 3.0 exist");
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    if (total < 8 + length_bytes) fail(where, "is truncated inside its .npy header (" + std::to_string(total) + " bytes)");
    unsigned char len[4] = {};
    in.read(len, length_bytes);
    std::uint64_t header_len = len[0] | (len[1] << 8);
    if (major > 1) header_len |= (static_cast<std::uint64_t>(len[2]) << 16) | (static_cast<std::uint64_t>(len[3]) << 24);
    const std::uint64_t prefix = 8 + length_bytes;
    if (header_len > npy_max_header_bytes)
        fail(where, "has a .npy header of " + std::to_string(header_len) + " bytes, over mano's limit of " +
                        std::to_string(npy_max_header_bytes) + " (NumPy writes about 128 bytes for an array mano can read)");
    if (header_len > total - prefix)
        fail(where, "is truncated inside its .npy header: the header needs " + std::to_string(header_len) +
                        " bytes but only " + std::to_string(total - prefix) + " follow");
    std::string text(static_cast<std::size_t>(header_len), '\0');
    in.read(text.data(), text.size());
    npy_header h = header_parser(where, text).parse();
    h.data_offset = prefix + header_len;
    return h;
}

std::optional<element_type> npy_element(const std::string& descr) {
    if (descr.size() < 3) return std::nullopt;
    const char order = descr[0], kind = descr[1];
    if (order != '<' && order != '>' && order != '|' && order != '=') return std::nullopt;
    std::size_t size = 0;
    for (std::size_t i = 2; i < descr.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(descr[i])) || size > 100) return std::nullopt;
        size = size * 10 + static_cast<std::size_t>(descr[i] - '0');
    }
    element_type e;
    e.size = size;
    if (kind == 'f' && (size == 2 || size == 4 || size == 8)) e.kind = scalar_kind::floating;
    else if (kind == 'i' && (size == 1 || size == 2 || size == 4 || size == 8)) e.kind = scalar_kind::signed_integer;
    else if (kind == 'u' && (size == 1 || size == 2 || size == 4 || size == 8)) e.kind = scalar_kind::unsigned_integer;
    else return std::nullopt;
    const bool little = host_is_little_endian();
    e.swap = size > 1 && ((order == '<' && !little) || (order == '>' && little));
    return e;
}

void check_npy_data_size(const std::string& where, const npy_header& h, std::size_t item, std::uint64_t total) {
    std::uint64_t expected = item;
    for (const std::uint64_t extent : h.shape)
        if (__builtin_mul_overflow(expected, extent, &expected))
            fail(where, "has a shape too large to address: " + shape_text(h.shape));
    const std::uint64_t data_bytes = total - h.data_offset;
    if (data_bytes < expected)
        fail(where, "is truncated: its header promises " + shape_text(h.shape) + " '" + printable(h.descr, 60) + "' (" +
                        std::to_string(expected) + " bytes of data) but only " + std::to_string(data_bytes) +
                        " bytes follow the header");
    if (data_bytes > expected)
        fail(where, "has " + std::to_string(data_bytes - expected) +
                        " bytes after the array its header describes; the file is damaged");
}

}  // namespace detail
}  // namespace io
}  // namespace mano

#include "io/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>

#include <mano/error.hpp>

namespace mano {
namespace io {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& message) {
    throw error(path + ": " + message);
}

// The value text that follows 'key': in the header dictionary, or "" when the key is absent.
std::string dict_value(const std::string& header, const std::string& key) {
    for (const char quote : {'\'', '"'}) {
        const std::string pattern = quote + key + quote;
        auto at = header.find(pattern);
        if (at == std::string::npos) continue;
        at = header.find(':', at + pattern.size());
        if (at == std::string::npos) return "";
        ++at;
        while (at < header.size() && std::isspace(static_cast<unsigned char>(header[at]))) ++at;
        if (at >= header.size()) return "";
        if (header[at] == '(') {
            const auto end = header.find(')', at);
            return end == std::string::npos ? "" : header.substr(at, end - at + 1);
        }
        if (header[at] == '\'' || header[at] == '"') {
            const auto end = header.find(header[at], at + 1);
            return end == std::string::npos ? "" : header.substr(at + 1, end - at - 1);
        }
        auto end = at;
        while (end < header.size() && (std::isalnum(static_cast<unsigned char>(header[end])))) ++end;
        return header.substr(at, end - at);
    }
    return "";
}

std::vector<std::size_t> parse_shape(const std::string& path, const std::string& text) {
    if (text.size() < 2 || text.front() != '(' || text.back() != ')')
        fail(path, "the .npy header has no readable 'shape' entry");
    std::vector<std::size_t> shape;
    std::size_t i = 1;
    while (i + 1 < text.size()) {
        while (i + 1 < text.size() && (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == ',')) ++i;
        if (i + 1 >= text.size()) break;
        if (!std::isdigit(static_cast<unsigned char>(text[i])))
            fail(path, "the .npy header has an invalid shape " + text);
        std::size_t value = 0;
        while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
            const std::size_t digit = static_cast<std::size_t>(text[i] - '0');
            if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10)
                fail(path, "the .npy header has a shape too large to address: " + text);
            value = value * 10 + digit;
            ++i;
        }
        shape.push_back(value);
    }
    return shape;
}

std::string shape_text(const std::vector<std::size_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

namespace {

struct npy_header {
    std::string descr;
    std::vector<std::size_t> shape;
    std::uint64_t data_bytes = 0;  // bytes after the header
};

// Opens `path`, validates the magic string, version and header, and leaves `file` at the data.
npy_header open_npy(const std::string& path, std::ifstream& file) {
    file.open(path, std::ios::binary);
    if (!file) fail(path, std::string("cannot open: ") + std::strerror(errno));
    file.seekg(0, std::ios::end);
    const auto file_size = static_cast<std::uint64_t>(file.tellg());
    file.seekg(0);

    unsigned char preamble[8] = {};
    file.read(reinterpret_cast<char*>(preamble), 8);
    if (file.gcount() < 8 || std::memcmp(preamble, "\x93NUMPY", 6) != 0)
        fail(path, "not a .npy file (it does not start with the \\x93NUMPY magic string)");
    const int major = preamble[6];
    if (major < 1 || major > 3)
        fail(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(preamble[7]));
    std::uint64_t header_len = 0;
    std::size_t prefix = 10;
    if (major == 1) {
        unsigned char len[2] = {};
        file.read(reinterpret_cast<char*>(len), 2);
        header_len = len[0] | (len[1] << 8);
    } else {
        unsigned char len[4] = {};
        file.read(reinterpret_cast<char*>(len), 4);
        header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<std::uint64_t>(len[3]) << 24);
        prefix = 12;
    }
    if (!file || prefix + header_len > file_size) fail(path, "is truncated inside its .npy header");
    std::string header(header_len, '\0');
    file.read(header.data(), static_cast<std::streamsize>(header_len));

    npy_header h;
    h.descr = dict_value(header, "descr");
    const std::string fortran = dict_value(header, "fortran_order");
    h.shape = parse_shape(path, dict_value(header, "shape"));
    if (h.descr.empty()) fail(path, "the .npy header has no 'descr' (dtype) entry");
    if (fortran == "True" && h.shape.size() > 1)
        fail(path, "is stored in Fortran (column-major) order, which is not supported yet; "
                   "save np.ascontiguousarray(x) instead");
    if (fortran != "False" && fortran != "True") fail(path, "the .npy header has no valid 'fortran_order' entry");
    h.data_bytes = file_size - prefix - header_len;
    return h;
}

// Checks that the data holds exactly the elements the shape promises.
void check_size(const std::string& path, const npy_header& h, std::uint64_t item, const char* type) {
    std::uint64_t elements = 1;
    for (const std::size_t extent : h.shape) {
        if (extent != 0 && elements > std::numeric_limits<std::uint64_t>::max() / extent / item)
            fail(path, "has a shape too large to address: " + shape_text(h.shape));
        elements *= extent;
    }
    const std::uint64_t expected = elements * item;
    if (h.data_bytes < expected)
        fail(path, "is truncated: its header promises " + shape_text(h.shape) + " " + type + " (" +
                       std::to_string(expected) + " bytes of data) but only " + std::to_string(h.data_bytes) +
                       " bytes follow the header");
    if (h.data_bytes > expected)
        fail(path, "has " + std::to_string(h.data_bytes - expected) +
                       " bytes after the array its header describes; the file is damaged");
}

}  // namespace

npy_reader::npy_reader(const std::string& path) : path_(path) {
    const npy_header h = open_npy(path, file_);
    const std::string& descr = h.descr;
    if (descr == "<f4") type_ = dtype::float32;
    else if (descr == "<f8") type_ = dtype::float64;
    else if (descr == "<f2") type_ = dtype::float16;
    else if (descr == ">f2" || descr == ">f4" || descr == ">f8")
        fail(path, "holds big-endian floats (dtype '" + descr + "'), which are not supported yet; "
                   "save it little-endian, e.g. np.save(f, x.astype(x.dtype.newbyteorder('<')))");
    else
        fail(path, "has dtype '" + descr + "'; logits and features must be float16, float32 or float64 ('<f2', '<f4', '<f8')");
    if (h.shape.size() != 2)
        fail(path, "has shape " + shape_text(h.shape) + "; logits must be a 2-D array of N rows (samples) by K columns (classes)");
    rows_ = h.shape[0];
    cols_ = h.shape[1];
    check_size(path, h, dtype_size(type_), dtype_name(type_));
}

std::vector<std::int64_t> read_labels(const std::string& path) {
    std::ifstream file;
    const npy_header h = open_npy(path, file);
    const std::string& d = h.descr;
    const bool little = d.size() == 3 && (d[0] == '<' || d[0] == '|');
    const char kind = d.size() == 3 ? d[1] : '?';
    const int bytes = d.size() == 3 ? d[2] - '0' : 0;
    if (!little || (kind != 'i' && kind != 'u') || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8))
        fail(path, "has dtype '" + d + "'; labels must be little-endian integers (e.g. '<i8' from np.int64)");
    if (!(h.shape.size() == 1 || (h.shape.size() == 2 && h.shape[1] == 1)))
        fail(path, "has shape " + shape_text(h.shape) + "; labels must be a 1-D array with one class index per row");
    check_size(path, h, static_cast<std::uint64_t>(bytes), d.c_str());
    const std::size_t n = h.shape[0];
    std::vector<unsigned char> raw(n * static_cast<std::size_t>(bytes));
    file.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
    std::vector<std::int64_t> labels(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t v = 0;
        for (int b = 0; b < bytes; ++b) v |= static_cast<std::uint64_t>(raw[i * bytes + b]) << (8 * b);
        if (kind == 'i' && bytes < 8 && (v >> (8 * bytes - 1)) & 1) v |= ~std::uint64_t{0} << (8 * bytes);  // sign-extend
        if (kind == 'u' && bytes == 8 && v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            fail(path, "label " + std::to_string(i) + " is too large");
        labels[i] = static_cast<std::int64_t>(v);
    }
    return labels;
}

logits_view npy_reader::next(std::size_t max_rows) {
    const std::size_t count = std::min(max_rows, rows_ - rows_read_);
    const std::size_t bytes = count * cols_ * dtype_size(type_);
    buffer_.resize((bytes + sizeof(double) - 1) / sizeof(double));
    if (count > 0) {
        file_.read(reinterpret_cast<char*>(buffer_.data()), static_cast<std::streamsize>(bytes));
        if (static_cast<std::size_t>(file_.gcount()) != bytes)
            fail(path_, "could not read rows " + std::to_string(rows_read_) + " to " +
                            std::to_string(rows_read_ + count - 1) + " (file changed while reading?)");
    }
    rows_read_ += count;
    switch (type_) {
        case dtype::float64: return logits_view(buffer_.data(), count, cols_);
        case dtype::float32: return logits_view(reinterpret_cast<const float*>(buffer_.data()), count, cols_);
        default: return logits_view(reinterpret_cast<const std::uint16_t*>(buffer_.data()), type_, count, cols_);
    }
}

}  // namespace io
}  // namespace mano

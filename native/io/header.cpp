// The parts of the header rules (header.hpp) that .npy (npy_header.cpp) and .safetensors
// (safetensors_header.cpp) share: messages, sizes, byte streams, member names.
#include "io/header.hpp"

#include <algorithm>
#include <cstring>

namespace mano {
namespace io {
namespace detail {

void fail(const std::string& where, const std::string& message) { throw error(printable(where + ": " + message)); }

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& where, const std::string& what) {
    std::uint64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product)) fail(where, what + " is too large to address");
    return product;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

bool host_is_little_endian() noexcept {
    const std::uint16_t one = 1;
    unsigned char first = 0;
    std::memcpy(&first, &one, 1);
    return first == 1;
}

void byte_stream::skip(std::uint64_t n) {
    unsigned char scratch[1 << 14];
    while (n > 0) {
        const std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(n, sizeof scratch));
        read(scratch, piece);
        n -= piece;
    }
}

void memory_stream::read(void* out, std::size_t n) {
    if (n > size_ - position_)
        fail(where_, "is truncated: it has " + std::to_string(size_) + " bytes but " + std::to_string(position_ + n) +
                         " are needed");
    std::memcpy(out, data_ + position_, n);
    position_ += n;
}

std::string wanted_member(const std::string& key, const std::string& default_name) {
    std::string wanted = key;
    if (wanted.size() > 4 && wanted.compare(wanted.size() - 4, 4, ".npy") == 0) wanted.resize(wanted.size() - 4);
    return wanted.empty() ? default_name : wanted;
}

void fail_no_member(const std::string& path, const std::vector<std::string>& names, std::size_t count,
                    const std::string& wanted, bool key_given, const char* how_to_choose) {
    std::string list;
    for (std::size_t i = 0; i < names.size() && i < 50; ++i) list += (i ? ", " : "") + ("'" + printable(names[i], 60) + "'");
    if (count > 50) list += ", ... (" + std::to_string(count) + " in all)";
    fail(path, "has no array '" + printable(wanted, 60) + "'; it holds " + list + (key_given ? std::string() : std::string(" (") + how_to_choose + ")"));
}

}  // namespace detail
}  // namespace io
}  // namespace mano

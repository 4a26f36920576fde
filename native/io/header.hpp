#pragma once
// The header rules of .npy and .safetensors, bytes in and a checked description out, with no
// file access of their own. The native readers (npy.cpp, npz.cpp, safetensors.cpp) hand them a
// file's bytes; the npm package links them (the mano_formats library, native/io/CMakeLists.txt),
// and its readers (web/src/loaders.js) hand them the bytes of a Blob or ArrayBuffer. One
// implementation of each format's rules, limits and messages serves both targets.
// Not part of the io API: only native/io/*.cpp and bindings/wasm include it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <mano/base/error.hpp>
#include <mano/base/text.hpp>

#include "io/reader.hpp"

namespace mano {
namespace io {
namespace detail {

// Throws mano::error("WHERE: MESSAGE"); WHERE is a path, or "path: member 'x.npy'". Control
// characters (from a damaged file's text) are escaped, so the message stays one line.
[[noreturn]] void fail(const std::string& where, const std::string& message);
// Text taken from a file, safe to put in a one-line message (mano/base/text.hpp).
using ::mano::printable;

// a * b, or a mano::error naming `what` when it does not fit in 64 bits.
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& where, const std::string& what);

// "(3, 4)", "(12,)", "()": a shape as NumPy prints it.
std::string shape_text(const std::vector<std::uint64_t>& shape);

enum class scalar_kind { floating, bfloat, signed_integer, unsigned_integer };

struct element_type {
    scalar_kind kind = scalar_kind::floating;
    std::size_t size = 4;
    bool swap = false;  // stored in the other byte order than this machine's
};

bool host_is_little_endian() noexcept;

// Bytes read in order from the start of an array's container (a file region or a zip member).
class byte_stream {
public:
    virtual ~byte_stream() = default;
    // Exactly n bytes, or a mano::error saying where the data ends.
    virtual void read(void* out, std::size_t n) = 0;
    virtual void skip(std::uint64_t n);
    // What only the end can tell: a zip member's CRC-32, the end of a deflate stream.
    virtual void finish() {}
};

// Bytes already in memory: the first `size` bytes of the input named `where`.
class memory_stream final : public byte_stream {
public:
    memory_stream(const unsigned char* data, std::size_t size, std::string where)
        : data_(data), size_(size), where_(std::move(where)) {}
    void read(void* out, std::size_t n) override;

private:
    const unsigned char* data_;
    std::size_t size_, position_ = 0;
    std::string where_;
};

// .npy

// The .npy header: the dtype text, shape, order and where the data starts.
struct npy_header {
    std::string descr;
    std::vector<std::uint64_t> shape;
    bool fortran = false;
    std::uint64_t data_offset = 0;  // bytes before the data (magic, version, length, header)
};

// The most bytes read_npy_header() reads: magic, version, length and the longest header.
inline constexpr std::uint64_t npy_max_prefix_bytes = 12 + npy_max_header_bytes;

// Reads and validates a .npy header from `in`, whose total size is `total` bytes.
npy_header read_npy_header(const std::string& where, byte_stream& in, std::uint64_t total);
// The element type of a descr ('<f4', '>i8', '|u1'); nullopt when mano cannot read it.
std::optional<element_type> npy_element(const std::string& descr);
// Checks that exactly the bytes the shape promises follow the header.
void check_npy_data_size(const std::string& where, const npy_header& h, std::size_t item, std::uint64_t total);

// .safetensors

// The format caps its JSON header at 100 MB.
inline constexpr std::uint64_t safetensors_header_max_bytes = 100'000'000;

// One tensor of a .safetensors file, its entry checked (its data span lies in the data section
// and holds exactly what its dtype and shape need, when mano knows the dtype's size).
struct safetensors_tensor {
    std::string where;  // "PATH: tensor 'NAME'"
    std::string dtype;
    std::vector<std::uint64_t> shape;
    std::uint64_t offset = 0;  // of its data, from the start of the file
    std::uint64_t bytes = 0;
};

// The length of the JSON header of a .safetensors file of `size` bytes whose first
// min(size, 8) bytes are `first`: checked against the format's limit and the file's size.
std::uint64_t safetensors_header_length(const std::string& path, std::uint64_t size, const unsigned char* first);

// Exactly n bytes at `offset` of the file (offset + n <= 8 + its header length).
using read_at_function = std::function<void(std::uint64_t offset, void* out, std::size_t n)>;

// Reads the header of a .safetensors file of `size` bytes through `read`, checking every entry
// and the data section (tensors back to back, nothing else), and returns the tensor `key` names,
// else the only one, else `default_name`. A missing one is refused, listing what the file holds
// and ending with `how_to_choose` ("choose one with --key").
safetensors_tensor read_safetensors_header(const std::string& path, std::uint64_t size, const read_at_function& read,
                                           const std::string& key, const std::string& default_name,
                                           const char* how_to_choose);
// The same, for a caller that holds the header: `header` is the JSON text that follows the 8-byte
// length (checked first with safetensors_header_length). The run limit is checked over the whole
// text before the parse, so a header with a too-long string and another fault names the string.
safetensors_tensor parse_safetensors_header(const std::string& path, std::uint64_t size, const std::string& header,
                                            const std::string& key, const std::string& default_name,
                                            const char* how_to_choose);
// The element type of a dtype ("F32", "BF16", "I64"); nullopt for one mano cannot read.
std::optional<element_type> safetensors_element(const std::string& dtype);

// Containers (.npz, .safetensors)

// The name choose_member() looks for: `key` without ".npy", else `default_name`.
std::string wanted_member(const std::string& key, const std::string& default_name);
// Refuses a container of `count` arrays that has none named `wanted`, listing up to 50 of `names`
// (every array's name, or only the first ones); `how_to_choose` ends the message when no key was
// given.
[[noreturn]] void fail_no_member(const std::string& path, const std::vector<std::string>& names, std::size_t count,
                                 const std::string& wanted, bool key_given, const char* how_to_choose);

}  // namespace detail
}  // namespace io
}  // namespace mano

// .safetensors: an 8-byte little-endian header length, a JSON header
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the data.
#include <nlohmann/json.hpp>

#include "io/detail.hpp"
#include "io/json.hpp"

namespace mano {
namespace io {
namespace detail {

namespace {

// The safetensors format caps its JSON header at 100 MB.
constexpr std::uint64_t safetensors_header_max_bytes = 100'000'000;

struct tensor {
    std::string where;
    std::string dtype;
    std::vector<std::uint64_t> shape;
    std::uint64_t offset = 0;  // absolute, in the file
    std::uint64_t bytes = 0;
};

std::uint64_t unsigned_value(const nlohmann::json& v, const std::string& where, const char* what) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
        // dump() recurses once per nesting level: a list nested 10^5 deep would overflow the stack.
        fail(where, std::string("its ") + what + " holds " + (v.is_primitive() ? clip(v.dump()) : std::string("an ") + v.type_name()) +
                        ", not a non-negative integer");
    return v.get<std::uint64_t>();
}

std::optional<element_type> safetensors_element(const std::string& dtype) {
    element_type e;
    e.swap = !host_is_little_endian();  // safetensors data is little-endian
    if (dtype == "F16") e = {scalar_kind::floating, 2, e.swap};
    else if (dtype == "BF16") e = {scalar_kind::bfloat, 2, e.swap};
    else if (dtype == "F32") e = {scalar_kind::floating, 4, e.swap};
    else if (dtype == "F64") e = {scalar_kind::floating, 8, e.swap};
    else if (dtype == "I8") e = {scalar_kind::signed_integer, 1, false};
    else if (dtype == "I16") e = {scalar_kind::signed_integer, 2, e.swap};
    else if (dtype == "I32") e = {scalar_kind::signed_integer, 4, e.swap};
    else if (dtype == "I64") e = {scalar_kind::signed_integer, 8, e.swap};
    else if (dtype == "U8") e = {scalar_kind::unsigned_integer, 1, false};
    else if (dtype == "U16") e = {scalar_kind::unsigned_integer, 2, e.swap};
    else if (dtype == "U32") e = {scalar_kind::unsigned_integer, 4, e.swap};
    else if (dtype == "U64") e = {scalar_kind::unsigned_integer, 8, e.swap};
    else return std::nullopt;
    return e;
}

tensor find_tensor(const file_handle& file, const read_options& opts, const std::string& default_name) {
    const std::string& path = file.path();
    const std::uint64_t size = file.size();
    if (size < 8) fail(path, "is not a .safetensors file: it is shorter than the 8-byte header length (" + std::to_string(size) + " bytes)");
    unsigned char len[8];
    file.read_at(0, len, 8);
    std::uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | len[i];
    if (header_len > safetensors_header_max_bytes)
        fail(path, "is not a valid .safetensors file: its header length " + std::to_string(header_len) +
                       " is over the format's limit of " + std::to_string(safetensors_header_max_bytes) + " bytes");
    if (header_len > size - 8)
        fail(path, "is not a valid .safetensors file: its header length " + std::to_string(header_len) +
                       " is larger than the rest of the file (" + std::to_string(size - 8) + " bytes)");
    std::string text(static_cast<std::size_t>(header_len), '\0');
    file.read_at(8, text.data(), text.size());
    const nlohmann::json header = parse_json(text, path, "is not a valid .safetensors file: its header");
    if (!header.is_object()) fail(path, "is not a valid .safetensors file: its header is not a JSON object");
    std::vector<std::string> names;
    for (const auto& item : header.items())
        if (item.key() != "__metadata__") names.push_back(item.key());
    const std::string name = names[choose_member(path, names, opts.key, default_name, "a .safetensors file")];
    tensor t;
    t.where = path + ": tensor '" + clip(name, 200) + "'";
    const nlohmann::json& entry = header.at(name);
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
        fail(t.where, "its header entry needs \"dtype\", \"shape\" and \"data_offsets\"");
    const auto& dtype = entry.at("dtype");
    const auto& shape = entry.at("shape");
    const auto& offsets = entry.at("data_offsets");
    if (!dtype.is_string()) fail(t.where, "its dtype is not a string");
    if (!shape.is_array()) fail(t.where, "its shape is not a list");
    if (!offsets.is_array() || offsets.size() != 2) fail(t.where, "its data_offsets is not a list [begin, end]");
    t.dtype = dtype.get<std::string>();
    for (const auto& d : shape) t.shape.push_back(unsigned_value(d, t.where, "shape"));
    const std::uint64_t begin = unsigned_value(offsets[0], t.where, "data_offsets");
    const std::uint64_t end = unsigned_value(offsets[1], t.where, "data_offsets");
    const std::uint64_t data_size = size - 8 - header_len;
    if (begin > end || end > data_size)
        fail(t.where, "its data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                          "] lie outside the data section (" + std::to_string(data_size) + " bytes; is the file truncated?)");
    t.offset = 8 + header_len + begin;
    t.bytes = end - begin;
    return t;
}

void check_tensor_bytes(const tensor& t, std::size_t item) {
    std::uint64_t expected = item;
    for (const std::uint64_t extent : t.shape)
        if (__builtin_mul_overflow(expected, extent, &expected))
            fail(t.where, "has a shape too large to address: " + shape_text(t.shape));
    if (expected != t.bytes)
        fail(t.where, "has shape " + shape_text(t.shape) + " of " + clip(t.dtype) + " (" + std::to_string(expected) +
                          " bytes) but its data_offsets span " + std::to_string(t.bytes) + " bytes");
}

}  // namespace

std::unique_ptr<matrix_reader> open_safetensors_matrix(shared_file file, const read_options& opts) {
    const tensor t = find_tensor(*file, opts, "logits");
    const auto e = safetensors_element(t.dtype);
    if (!e || !float_dtype(*e))
        fail(t.where, "has dtype " + clip(t.dtype) + "; logits and features must be F16, BF16, F32 or F64");
    check_matrix_shape(t.where, t.shape);
    check_tensor_bytes(t, e->size);
    dense_array a;
    a.file = file;
    a.offset = t.offset;
    a.where = t.where;
    a.element = *e;
    a.rows = t.shape[0];
    a.cols = t.shape[1];
    return make_dense_reader(file->path(), std::move(a));
}

std::vector<std::int64_t> read_safetensors_labels(shared_file file, const read_options& opts) {
    const tensor t = find_tensor(*file, opts, "labels");
    const auto e = safetensors_element(t.dtype);
    if (!e || (e->kind != scalar_kind::signed_integer && e->kind != scalar_kind::unsigned_integer))
        fail(t.where, "has dtype " + clip(t.dtype) + "; labels must be integers (I8 to I64 or U8 to U64)");
    const std::uint64_t n = label_count(t.where, t.shape);
    check_tensor_bytes(t, e->size);
    file_stream in(file, t.offset, t.bytes, t.where);
    return read_label_stream(t.where, *e, n, in);
}

}  // namespace detail
}  // namespace io
}  // namespace mano

// .safetensors: an 8-byte little-endian header length, a JSON header
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the data:
// every tensor's bytes, back to back in some order, and nothing else.
// The header rules are in header.cpp, shared with the npm package.
#include "io/detail.hpp"

namespace mano {
namespace io {
namespace detail {

namespace {

// The tensor `opts.key` names (else the only one, else `default_name`), its header checked.
safetensors_tensor find_tensor(const file_handle& file, const read_options& opts, const std::string& default_name) {
    return read_safetensors_header(
        file.path(), file.size(), [&file](std::uint64_t offset, void* out, std::size_t n) { file.read_at(offset, out, n); },
        opts.key, default_name, "choose one with --key");
}

}  // namespace

std::unique_ptr<matrix_reader> open_safetensors_matrix(shared_file file, const read_options& opts) {
    const safetensors_tensor t = find_tensor(*file, opts, "logits");
    const auto e = safetensors_element(t.dtype);
    if (!e || !float_dtype(*e))
        fail(t.where, "has dtype " + printable(t.dtype, 60) + "; logits and features must be F16, BF16, F32 or F64");
    check_matrix_shape(t.where, t.shape);
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
    const safetensors_tensor t = find_tensor(*file, opts, "labels");
    const auto e = safetensors_element(t.dtype);
    if (!e || (e->kind != scalar_kind::signed_integer && e->kind != scalar_kind::unsigned_integer))
        fail(t.where, "has dtype " + printable(t.dtype, 60) + "; labels must be integers (I8 to I64 or U8 to U64)");
    const std::uint64_t n = label_count(t.where, t.shape);
    check_label_rows(t.where, n, opts);
    file_stream in(file, t.offset, t.bytes, t.where);
    return read_label_stream(t.where, *e, n, in);
}

}  // namespace detail
}  // namespace io
}  // namespace mano

// The file-header rules of .npy, .safetensors and CSV, shared with the native readers
// (native/io/header.hpp, csv_columns.hpp), bound for web/src/loaders.js and csv.js, which read a
// file's first bytes and hand them over. Their errors are the file's (kind "format").
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <mano/mano.hpp>

#include "guarded.hpp"
#include "io/csv_columns.hpp"
#include "io/header.hpp"

namespace {

using emscripten::val;
using mano::wasm::copy_in;
using mano::wasm::guarded;
using nlohmann::json;


// How the JS readers decode an element type: {kind: "f"|"i"|"u", itemsize, little, dtype}, where
// dtype is the Matrix's ("float16", "bfloat16", "float32", "float64"; "int32" for integers).
json element_json(const std::optional<mano::io::detail::element_type>& e) {
    using mano::io::detail::scalar_kind;
    if (!e) return nullptr;
    const bool is_float = e->kind == scalar_kind::floating || e->kind == scalar_kind::bfloat;
    const char* dtype = e->kind == scalar_kind::bfloat ? "bfloat16"
                        : !is_float                    ? "int32"
                        : e->size == 2                 ? "float16"
                        : e->size == 4                 ? "float32"
                                                       : "float64";
    const char* kind = is_float ? "f" : e->kind == scalar_kind::signed_integer ? "i" : "u";
    // WebAssembly is little-endian: the data is big-endian exactly when it must be swapped.
    return {{"kind", kind}, {"itemsize", e->size}, {"little", !e->swap}, {"dtype", dtype}};
}

// The header of the .npy file `name` of `size` bytes, from its first min(size, NPY_MAX_PREFIX_BYTES)
// bytes: {descr, shape, shown (the shape as NumPy prints it), fortran, dataOffset, element}, where
// element is null for a dtype mano cannot read; otherwise the data's size is checked too.
std::string npy_header(const val& bytes, double size, const std::string& name) {
    return guarded([&] {
        namespace d = mano::io::detail;
        std::vector<unsigned char> buffer;
        const auto* data = copy_in(bytes, buffer);
        const auto total = static_cast<std::uint64_t>(size);
        d::memory_stream in(data, buffer.size(), name);
        const d::npy_header h = d::read_npy_header(name, in, total);
        const auto e = d::npy_element(h.descr);
        if (e) d::check_npy_data_size(name, h, e->size, total);
        return json{{"descr", h.descr},           {"shape", h.shape},
                    {"shown", d::shape_text(h.shape)}, {"fortran", h.fortran},
                    {"dataOffset", h.data_offset},   {"element", element_json(e)}}
            .dump(-1, ' ', false, json::error_handler_t::replace);  // a damaged descr may not be UTF-8
    }, "format");
}

// The length of the JSON header of the .safetensors file `name` of `size` bytes, from its first
// min(size, 8) bytes.
double safetensors_header_length(const val& bytes, double size, const std::string& name) {
    return guarded([&] {
        std::vector<unsigned char> first(8);
        copy_in(bytes, first);
        first.resize(8);
        return static_cast<double>(mano::io::detail::safetensors_header_length(name, static_cast<std::uint64_t>(size), first.data()));
    }, "format");
}

// The tensor `key` names (else the only one, else "logits") of the .safetensors file `name` of
// `size` bytes, from its JSON header (the bytes after the 8-byte length), every entry and the data
// section checked: {where, dtype, shape, shown, offset, bytes, element}.
std::string safetensors_header(const val& bytes, double size, const std::string& name, const std::string& key) {
    return guarded([&] {
        namespace d = mano::io::detail;
        std::string header(bytes["length"].as<std::size_t>(), '\0');
        val(emscripten::typed_memory_view(header.size(), reinterpret_cast<unsigned char*>(header.data()))).call<void>("set", bytes);
        const auto t = d::parse_safetensors_header(name, static_cast<std::uint64_t>(size), header, key, "logits",
                                                   "pass { key } to choose one");
        return json{{"where", t.where},   {"dtype", t.dtype},   {"shape", t.shape}, {"shown", d::shape_text(t.shape)},
                    {"offset", t.offset}, {"bytes", t.bytes}, {"element", element_json(d::safetensors_element(t.dtype))}}
            .dump(-1, ' ', false, json::error_handler_t::replace);
    }, "format");
}

// A CSV header's names, each followed by a NUL ("" without a header).
std::vector<std::string> header_names(const std::string& file, const std::string& names_text, double fields) {
    std::vector<std::string> names;
    for (std::size_t at = 0, end; (end = names_text.find('\0', at)) != std::string::npos; at = end + 1)
        names.push_back(names_text.substr(at, end - at));
    if (!names.empty() && names.size() != static_cast<std::size_t>(fields))
        throw mano::error(mano::printable(file + ": a name in its header holds a NUL byte"));
    return names;
}

// Which columns of a CSV are classes (native/io/csv_columns.hpp), from its header's names:
// {label: index or null, dropped, notes}. web/src/csv.js parses the rows.
std::string csv_columns(const std::string& file, const std::string& names_text, double fields, const std::string& label_column,
                        const std::string& option_name, bool index_only) {
    return guarded([&] {
        const auto c = mano::io::resolve_csv_columns(file, header_names(file, names_text, fields), static_cast<std::size_t>(fields),
                                                     label_column, option_name, index_only, false);
        return json{{"label", c.label ? json(*c.label) : json(nullptr)}, {"dropped", c.dropped}, {"notes", c.notes}}.dump();
    }, "format");
}

// The index rule (mano::io::check_index_column) on the first rows read: `first_rows` holds their
// logit columns as float64 bytes, row after row. "" when it passes.
std::string csv_index_column(const std::string& file, const std::string& names_text, double fields,
                             const std::string& label_column, const std::string& option_name, bool index_only,
                             const val& first_rows, double rows) {
    return guarded([&] {
        const auto names = header_names(file, names_text, fields);
        const auto n = static_cast<std::size_t>(fields);
        const auto c = mano::io::resolve_csv_columns(file, names, n, label_column, option_name, index_only, false);
        std::vector<double> values;
        copy_in(first_rows, values);
        const auto count = static_cast<std::size_t>(rows);
        if (values.size() != count * c.logit_columns(n) || count > mano::io::csv_index_rows)
            throw mano::error(file + ": the first rows' values do not fill " + std::to_string(count) + " rows");
        mano::io::check_index_column(file, names, c, n, values.data(), count, c.logit_columns(n));
        return std::string();
    }, "format");
}

}  // namespace

EMSCRIPTEN_BINDINGS(mano_formats) {
    emscripten::function("npyHeader", &npy_header);
    emscripten::function("csvColumns", &csv_columns);
    emscripten::function("csvIndexColumn", &csv_index_column);
    emscripten::constant("CSV_INDEX_ROWS", static_cast<double>(mano::io::csv_index_rows));
    emscripten::constant("NPY_MAX_PREFIX_BYTES", static_cast<double>(mano::io::detail::npy_max_prefix_bytes));
    emscripten::function("safetensorsHeaderLength", &safetensors_header_length);
    emscripten::function("safetensorsHeader", &safetensors_header);
}

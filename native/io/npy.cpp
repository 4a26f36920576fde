#include "io/reader.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>

#include "io/detail.hpp"

namespace mano {
namespace io {
namespace detail {

element_type npy_matrix_element(const std::string& where, const npy_header& h) {
    const auto e = npy_element(h.descr);
    if (!e || e->kind != scalar_kind::floating)
        fail(where, "has dtype '" + printable(h.descr, 60) +
                        "'; logits and features must be float16, float32 or float64 ('<f2', '<f4', '<f8', or '>' big-endian)");
    return *e;
}

element_type npy_label_element(const std::string& where, const npy_header& h) {
    const auto e = npy_element(h.descr);
    if (!e || (e->kind != scalar_kind::signed_integer && e->kind != scalar_kind::unsigned_integer))
        fail(where, "has dtype '" + printable(h.descr, 60) + "'; labels must be integers (int8 to int64 or uint8 to uint64, e.g. '<i8' from np.int64)");
    return *e;
}

std::unique_ptr<matrix_reader> open_npy_matrix(shared_file file) {
    const std::string& path = file->path();
    file_stream in(file, 0, file->size(), path);
    const npy_header h = read_npy_header(path, in, file->size());
    const element_type e = npy_matrix_element(path, h);
    check_matrix_shape(path, h.shape);
    check_npy_data_size(path, h, e.size, file->size());
    dense_array a;
    a.file = std::move(file);
    a.offset = h.data_offset;
    a.where = path;
    a.element = e;
    a.rows = h.shape[0];
    a.cols = h.shape[1];
    a.fortran = h.fortran;
    return make_dense_reader(path, std::move(a));
}

std::vector<std::int64_t> read_npy_labels(shared_file file, const read_options& opts) {
    const std::string& path = file->path();
    file_stream in(file, 0, file->size(), path);
    const npy_header h = read_npy_header(path, in, file->size());
    const element_type e = npy_label_element(path, h);
    const std::uint64_t n = label_count(path, h.shape);
    check_npy_data_size(path, h, e.size, file->size());
    check_label_rows(path, n, opts);
    return read_label_stream(path, e, n, in);
}

}  // namespace detail

}  // namespace io
}  // namespace mano

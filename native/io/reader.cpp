#include "io/reader.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "io/detail.hpp"

namespace mano {
namespace io {

namespace detail {

std::unique_ptr<matrix_reader> open_raw_matrix(shared_file file, std::size_t rows, std::size_t cols) {
    const std::string& path = file->path();
    std::uint64_t expected = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), &expected) ||
        __builtin_mul_overflow(expected, std::uint64_t{4}, &expected))
        fail(path, "the shape " + std::to_string(rows) + " x " + std::to_string(cols) + " is too large to address");
    if (cols == 0) fail(path, "the shape " + std::to_string(rows) + " x 0 has no columns");
    check_columns(path, cols);
    if (file->size() != expected)
        fail(path, "is " + std::to_string(file->size()) + " bytes, but raw float32 logits of shape " + std::to_string(rows) +
                       " x " + std::to_string(cols) + " take exactly " + std::to_string(expected) + " bytes (N x K x 4)");
    dense_array a;
    a.file = std::move(file);
    a.where = path;
    a.element = {scalar_kind::floating, 4, !host_is_little_endian()};
    a.rows = rows;
    a.cols = cols;
    return make_dense_reader(path, std::move(a));
}

}  // namespace detail

namespace {

enum class format { npy, npz, safetensors, csv, tsv, raw, unknown };

std::string lower_extension(const std::string& path) {
    const auto slash = path.find_last_of('/');
    const auto dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string ext = path.substr(dot);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext;
}

// Magic bytes first, then the extension, then a raw shape.
format detect(const detail::file_handle& file, const read_options& opts) {
    unsigned char head[9] = {};
    const std::size_t got = file.read_some_at(0, head, sizeof head);
    if (got >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0) return format::npy;
    if (got >= 4 && (std::memcmp(head, "PK\x03\x04", 4) == 0 || std::memcmp(head, "PK\x05\x06", 4) == 0)) return format::npz;
    if (got == 9 && head[8] == '{') {
        std::uint64_t n = 0;
        for (int i = 7; i >= 0; --i) n = (n << 8) | head[i];
        if (n >= 2 && n <= file.size() - 8) return format::safetensors;
    }
    const std::string ext = lower_extension(file.path());
    if (ext == ".npy") return format::npy;
    if (ext == ".npz") return format::npz;
    if (ext == ".safetensors") return format::safetensors;
    if (ext == ".csv") return format::csv;
    if (ext == ".tsv") return format::tsv;
    if (opts.shape) return format::raw;
    return format::unknown;
}

}  // namespace

void read_rows(matrix_reader& reader, const std::vector<std::uint64_t>& rows, void* out) {
    const std::size_t k = reader.cols(), n = rows.size();
    for (std::size_t i = 0; i < n; ++i)
        if (rows[i] >= reader.rows() || (i > 0 && rows[i] <= rows[i - 1]))
            throw error("the rows to read must be ascending and below its " + std::to_string(reader.rows()));
    const bool wide = reader.type() == dtype::float64;
    const auto copy = [&](const logits_view& view, std::size_t from, std::size_t count, std::size_t to) {
        if (wide) widen_rows(view, from, count, static_cast<double*>(out) + to * k);
        else float_rows(view, from, count, static_cast<float*>(out) + to * k);
    };
    if (reader.random_access()) {
        for (std::size_t i = 0; i < n;) {
            std::size_t j = i + 1;
            while (j < n && rows[j] == rows[j - 1] + 1 && j - i < 4096) ++j;
            copy(reader.read(rows[i], j - i), 0, j - i, i);
            i = j;
        }
        return;
    }
    const std::size_t chunk = std::max<std::size_t>(1, (std::size_t{1} << 20) / std::max<std::size_t>(1, k));
    std::size_t next = 0;
    for (std::size_t first = 0; next < n; first += chunk) {
        const std::size_t count = std::min(chunk, reader.rows() - first);
        const logits_view view = reader.read(first, count);
        for (; next < n && rows[next] < first + count; ++next) copy(view, rows[next] - first, 1, next);
    }
}

std::unique_ptr<matrix_reader> open_matrix(const std::string& path, const read_options& opts) {
    auto file = std::make_shared<const detail::file_handle>(path);
    if (file->size() == 0) detail::fail(path, "is empty");
    switch (detect(*file, opts)) {
        case format::npy: return detail::open_npy_matrix(std::move(file));
        case format::npz: return detail::open_npz_matrix(std::move(file), opts);
        case format::safetensors: return detail::open_safetensors_matrix(std::move(file), opts);
        case format::csv: return detail::open_csv_matrix(std::move(file), opts, ',');
        case format::tsv: return detail::open_csv_matrix(std::move(file), opts, '\t');
        case format::raw: return detail::open_raw_matrix(std::move(file), opts.shape->first, opts.shape->second);
        case format::unknown: break;
    }
    detail::fail(path, "unknown format (expected .npy, .npz, .csv, .tsv, .safetensors, or raw float32 with --shape N,K)");
}

std::vector<std::int64_t> read_labels(const std::string& path, const read_options& opts) {
    auto file = std::make_shared<const detail::file_handle>(path);
    if (file->size() == 0) detail::fail(path, "is empty");
    switch (detect(*file, opts)) {
        case format::npy: return detail::read_npy_labels(std::move(file), opts);
        case format::npz: return detail::read_npz_labels(std::move(file), opts);
        case format::safetensors: return detail::read_safetensors_labels(std::move(file), opts);
        case format::csv: return detail::read_csv_labels(std::move(file), opts, ',');
        case format::tsv: return detail::read_csv_labels(std::move(file), opts, '\t');
        case format::raw: break;
        case format::unknown: break;
    }
    detail::fail(path, "unknown label format (expected integer labels in .npy, .npz, .safetensors, or a .csv/.tsv "
                       "column; raw files hold only float32 logits)");
}

}  // namespace io
}  // namespace mano

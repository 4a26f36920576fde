#pragma once
// Readers for every logit file format the `mano` command takes: .npy, .npz, .csv/.tsv,
// .safetensors and raw float32. Each reads rows in chunks, so a file of any size costs only a
// chunk of memory. Every problem with a file is a mano::error whose message starts with its path.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <mano/scan/logits_view.hpp>

namespace mano {
namespace io {

// How to find the array inside a file.
struct read_options {
    // .npz / .safetensors with several arrays: the member to read (default "logits" for logits,
    // "labels" for labels; a container with one array is read whatever its name).
    std::string key;
    // Raw float32 (any file that is not .npy, .npz, .safetensors, .csv or .tsv): its N x K shape.
    std::optional<std::pair<std::size_t, std::size_t>> shape;
    // .csv/.tsv: the label column, by header name or 0-based index; it is left out of the logits
    // and read by read_labels(). Empty = the one column named label, labels, y or target, if any
    // (native/io/csv_columns.hpp: the columns that are not classes).
    std::string label_column;
    // How the caller spells the label column option in a message.
    std::string label_column_option = "--label-column";
    // .csv/.tsv: whether the first line is a header; unset = detect (a header has a field that is
    // not a number).
    std::optional<bool> header;
    // read_labels(): the number of labels the caller needs (its logits' rows). A file that holds
    // another number is refused before any label is read, so a label file costs memory for at
    // most this many labels whatever its header claims.
    std::optional<std::uint64_t> expected_rows;
};

// Limits that do not depend on the input: a file that breaks one is refused with a message that
// names the limit, so a hostile file costs bounded memory and time.
// Columns of any matrix (classes of logits, dimensions of features): a row is read whole, so this
// bounds a row's memory (4 MiB of float32) whatever the file claims.
inline constexpr std::uint64_t matrix_max_columns = max_classes;  // the core's limit (mano/scan/logits_view.hpp)
inline constexpr std::uint64_t csv_max_line_bytes = std::uint64_t{16} << 20;  // one CSV/TSV line
inline constexpr std::size_t csv_max_columns = std::size_t{1} << 18;          // fields in one CSV/TSV line
inline constexpr std::uint64_t npy_max_header_bytes = std::uint64_t{1} << 16;  // NumPy itself trusts 10000
inline constexpr std::size_t npz_max_members = std::size_t{1} << 16;
inline constexpr std::uint64_t npz_max_directory_bytes = std::uint64_t{8} << 20;  // the zip central directory
// A deflated Fortran-order .npz member is inflated to a temporary file (it cannot be read a row
// at a time otherwise): at most this many times its compressed size, and at least the floor.
inline constexpr std::uint64_t npz_fortran_inflate_ratio = 16;
inline constexpr std::uint64_t npz_fortran_inflate_floor = std::uint64_t{64} << 20;
inline constexpr std::size_t safetensors_max_tensors = std::size_t{1} << 16;
// One JSON string in the header, or one run of other bytes between {}[],: (a number, spaces).
inline constexpr std::size_t safetensors_max_string_bytes = std::size_t{1} << 20;

// An N x K matrix of logits (or features) in a file.
class matrix_reader {
public:
    virtual ~matrix_reader() = default;

    const std::string& path() const noexcept { return path_; }
    std::size_t rows() const noexcept { return rows_; }
    std::size_t cols() const noexcept { return cols_; }
    // The element type of the rows read() returns.
    dtype type() const noexcept { return type_; }
    // Whether read() takes any `first` (false: rows must be read in order from 0, e.g. a deflated
    // .npz member, which can only be inflated from its start).
    virtual bool random_access() const noexcept { return true; }
    // What the reader left out of the file or took as labels, one line each naming the file (a
    // CSV's index, id and label columns): a front end shows them as warnings.
    const std::vector<std::string>& notes() const noexcept { return notes_; }
    // Whether the file holds a label column (a CSV's), which read_labels() with the same options reads.
    bool has_labels() const noexcept { return has_labels_; }

    // Rows [first, first + count) as a C-order view, native byte order, valid until the next
    // read() on this reader. first + count must not exceed rows().
    virtual logits_view read(std::size_t first, std::size_t count) = 0;

    // An independent reader of the same file, for another thread (shares whatever was already
    // parsed, e.g. a CSV line index).
    virtual std::unique_ptr<matrix_reader> clone() const = 0;

protected:
    std::string path_;
    std::size_t rows_ = 0;
    std::size_t cols_ = 0;
    dtype type_ = dtype::float32;
    std::vector<std::string> notes_;
    bool has_labels_ = false;
};

// Opens a logits (or features) matrix; the format comes from the file's magic bytes, then its
// extension (.csv, .tsv), then `opts.shape` (raw float32).
std::unique_ptr<matrix_reader> open_matrix(const std::string& path, const read_options& opts = {});

// Rows of a matrix (`rows` ascending, each below reader.rows()) copied into `out` (rows.size() x
// cols): float64 matrices as double, every other type as float, as a scan reads them (the same
// confidences). Consecutive rows are one read each (at most 4096); a reader without random access
// (a deflated .npz member) is read in order from the start. Throws mano::error for rows out of
// order or range.
void read_rows(matrix_reader& reader, const std::vector<std::uint64_t>& rows, void* out);

// Integer class labels, one per row: a 1-D (or N x 1) integer array in .npy/.npz/.safetensors,
// or a CSV/TSV column (opts.label_column, or the only column of a one-column file).
std::vector<std::int64_t> read_labels(const std::string& path, const read_options& opts = {});

namespace detail {
class file_handle;
}

// A float32 C-order .npy array of any rank >= 1 (e.g. N x C x H x W model inputs), read one
// sample (slice along the first axis) at a time; safe to share between threads.
class tensor_reader {
public:
    explicit tensor_reader(const std::string& path);

    const std::string& path() const noexcept { return path_; }
    const std::vector<std::size_t>& shape() const noexcept { return shape_; }
    std::size_t samples() const noexcept { return shape_[0]; }
    // Floats per sample: the product of every extent but the first.
    std::size_t sample_size() const noexcept { return sample_size_; }
    // Samples [first, first + count) into out (count * sample_size() floats, native byte order).
    void read(std::size_t first, std::size_t count, float* out) const;

private:
    std::string path_;
    std::shared_ptr<const detail::file_handle> file_;
    std::vector<std::size_t> shape_;
    std::size_t sample_size_ = 0;
    std::uint64_t offset_ = 0;
    bool swap_ = false;
};

}  // namespace io
}  // namespace mano

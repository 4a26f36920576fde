#pragma once
// Pieces the readers share: positional file reads, element types and byte order, checked sizes,
// sequential byte streams, the dense (npy/npz/safetensors/raw) row reader and label conversion.
// Not part of the io API: only native/io/*.cpp include it.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <mano/base/error.hpp>
#include <mano/base/page_memory.hpp>
#include <mano/base/text.hpp>

#include "io/header.hpp"
#include "io/reader.hpp"

namespace mano {
namespace io {
namespace detail {

// A file opened once for positional reads (pread), shared by a reader and its clones: pread
// keeps no file position, so threads may read through one handle at once. Only a regular file
// opens: a FIFO, socket, device or directory is refused before anything blocks on it.
class file_handle {
public:
    explicit file_handle(const std::string& path);
    // An anonymous temporary file (std::tmpfile) already written; `path` names it in errors.
    file_handle(std::FILE* temporary, std::string path);
    ~file_handle();
    file_handle(const file_handle&) = delete;
    file_handle& operator=(const file_handle&) = delete;

    const std::string& path() const noexcept { return path_; }
    std::uint64_t size() const noexcept { return size_; }
    // Exactly n bytes at `offset`, or a mano::error (the file is shorter than its header says).
    void read_at(std::uint64_t offset, void* out, std::size_t n) const;
    // Up to n bytes at `offset`; fewer only at the end of the file.
    std::size_t read_some_at(std::uint64_t offset, void* out, std::size_t n) const;

private:
    std::string path_;
    int fd_ = -1;
    std::FILE* temporary_ = nullptr;
    std::uint64_t size_ = 0;
};

// Room for rows that a read is about to fill: grows, never shrinks, and is not zeroed first (a
// std::vector would write every byte once more before the file does; mano/base/page_memory.hpp).
// Double storage keeps every dtype aligned.
class row_buffer {
public:
    double* room(std::size_t doubles) {
        if (doubles > size_) data_ = allocate_pages<double>(doubles), size_ = doubles;
        return data_.get();
    }
    std::size_t size() const noexcept { return size_; }

private:
    page_memory<double> data_;
    std::size_t size_ = 0;
};

// Reverses the bytes of each of `count` elements of `size` bytes.
void swap_bytes(void* data, std::size_t count, std::size_t size) noexcept;
// The logits dtype of a floating element type; nullopt for integers and unsupported sizes.
std::optional<dtype> float_dtype(const element_type& e) noexcept;

// The bytes [offset, offset + length) of a file; with a CRC-32, finish() checks it once all
// bytes were read.
class file_stream final : public byte_stream {
public:
    file_stream(std::shared_ptr<const file_handle> file, std::uint64_t offset, std::uint64_t length,
                std::string where, std::optional<std::uint32_t> crc = std::nullopt);
    void read(void* out, std::size_t n) override;
    void skip(std::uint64_t n) override;
    void finish() override;
    // CRC-32 of the bytes read so far (only with a CRC to check and without skip()).
    std::uint32_t running_crc() const noexcept { return crc_; }

private:
    std::shared_ptr<const file_handle> file_;
    std::uint64_t offset_, length_, position_ = 0;
    std::string where_;
    std::optional<std::uint32_t> expected_crc_;
    std::uint32_t crc_ = 0;
    bool skipped_ = false;
};

// Where a dense array's rows are: a file, an offset, element type, shape and order.
struct dense_array {
    std::shared_ptr<const file_handle> file;
    std::uint64_t offset = 0;  // of element [0, 0]
    std::string where;         // error prefix
    element_type element;
    std::uint64_t rows = 0, cols = 0;
    bool fortran = false;  // column-major
    // A stored zip member: its CRC-32 and the CRC-32 of the bytes before the array (the .npy
    // header), checked when rows are read in order up to the last one.
    std::optional<std::uint32_t> member_crc;
    std::uint32_t header_crc = 0;
};

// A random-access reader of a dense array; its rows() x cols() checked against the file size.
std::unique_ptr<matrix_reader> make_dense_reader(const std::string& path, dense_array array);

// Reads `count` integer labels from a stream, in bounded chunks (memory grows with the data
// actually read, never with what a header claims).
std::vector<std::int64_t> read_label_stream(const std::string& where, const element_type& e, std::uint64_t count,
                                            byte_stream& in);

// Validates a labels shape: (N,) or (N, 1); returns N.
std::uint64_t label_count(const std::string& where, const std::vector<std::uint64_t>& shape);
// Validates a logits shape: (N, K).
void check_matrix_shape(const std::string& where, const std::vector<std::uint64_t>& shape);
// Refuses rows wider than matrix_max_columns (the CSV reader has its own, smaller, field limit).
void check_columns(const std::string& where, std::uint64_t cols);

// The array a container (.npz, .safetensors) holds under `opts.key`, else its only array, else
// `default_name`; `names` are the arrays' names as the user writes them (".npy" dropped).
std::size_t choose_member(const std::string& path, const std::vector<std::string>& names, const std::string& key,
                          const std::string& default_name, const char* container);
// Refuses a labels file of `count` labels when the caller needs another number.
void check_label_rows(const std::string& where, std::uint64_t count, const read_options& opts);

// The element type of a .npy logits array (a float), or a mano::error.
element_type npy_matrix_element(const std::string& where, const npy_header& h);
element_type npy_label_element(const std::string& where, const npy_header& h);

// The CRC-32 of zip members, continued over n more bytes (zlib's; defined in npz.cpp, the only
// source that needs zlib, so builds without zlib leave out .npz and nothing else).
std::uint32_t crc32_update(std::uint32_t crc, const void* bytes, std::size_t n);

// Format readers (reader.cpp picks one from the magic bytes and the extension).
using shared_file = std::shared_ptr<const file_handle>;
std::unique_ptr<matrix_reader> open_npy_matrix(shared_file file);
std::vector<std::int64_t> read_npy_labels(shared_file file, const read_options& opts);
std::unique_ptr<matrix_reader> open_npz_matrix(shared_file file, const read_options& opts);
std::vector<std::int64_t> read_npz_labels(shared_file file, const read_options& opts);
std::unique_ptr<matrix_reader> open_safetensors_matrix(shared_file file, const read_options& opts);
std::vector<std::int64_t> read_safetensors_labels(shared_file file, const read_options& opts);
std::unique_ptr<matrix_reader> open_csv_matrix(shared_file file, const read_options& opts, char delimiter);
std::vector<std::int64_t> read_csv_labels(shared_file file, const read_options& opts, char delimiter);
std::unique_ptr<matrix_reader> open_raw_matrix(shared_file file, std::size_t rows, std::size_t cols);

}  // namespace detail
}  // namespace io
}  // namespace mano

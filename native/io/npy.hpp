#pragma once
// The first .npy reader's API, kept for the code written against it (native/cli, tests/support.hpp):
// a thin wrapper over the .npy reader of io/reader.hpp that still refuses big-endian and
// Fortran-order files, as before. New code uses open_matrix().

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <mano/logits_view.hpp>

#include "io/reader.hpp"

namespace mano {
namespace io {

// Streams the rows of a 2-D .npy file (float16/32/64, C order, little-endian) in chunks, so a
// file of any size costs only one chunk of memory. Every problem with the file is a mano::error
// whose message starts with the path.
class npy_reader {
public:
    explicit npy_reader(const std::string& path);
    ~npy_reader();
    npy_reader(npy_reader&&) noexcept;
    npy_reader& operator=(npy_reader&&) noexcept;

    std::size_t rows() const noexcept { return rows_; }
    std::size_t cols() const noexcept { return cols_; }
    dtype type() const noexcept { return type_; }
    const std::string& path() const noexcept { return path_; }

    // The next at most `max_rows` rows, valid until the next call; 0 rows once all were read.
    logits_view next(std::size_t max_rows);

private:
    std::string path_;
    std::unique_ptr<matrix_reader> reader_;
    dtype type_ = dtype::float32;
    std::size_t rows_ = 0;
    std::size_t cols_ = 0;
    std::size_t rows_read_ = 0;
};

// The old read_labels(path) is read_labels(path, options) of io/reader.hpp with default options
// (a second declaration here would make a call with only a path ambiguous).

}  // namespace io
}  // namespace mano

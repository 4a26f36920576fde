#pragma once

#include <cstddef>
#include <fstream>
#include <cstdint>
#include <string>
#include <vector>

#include <mano/logits_view.hpp>

namespace mano {
namespace io {

// Streams the rows of a 2-D .npy file (float16/32/64, C order, little-endian) in chunks, so a
// file of any size costs only one chunk of memory. Every problem with the file is a mano::error
// whose message starts with the path.
class npy_reader {
public:
    explicit npy_reader(const std::string& path);

    std::size_t rows() const noexcept { return rows_; }
    std::size_t cols() const noexcept { return cols_; }
    dtype type() const noexcept { return type_; }
    const std::string& path() const noexcept { return path_; }

    // The next at most `max_rows` rows, valid until the next call; 0 rows once all were read.
    logits_view next(std::size_t max_rows);

private:
    std::string path_;
    std::ifstream file_;
    dtype type_ = dtype::float32;
    std::size_t rows_ = 0;
    std::size_t cols_ = 0;
    std::size_t rows_read_ = 0;
    std::vector<double> buffer_;  // double storage keeps every dtype aligned
};

// Class labels from an integer .npy file ((N,) or (N, 1); int8-64 or uint8-64, little-endian).
std::vector<std::int64_t> read_labels(const std::string& path);

}  // namespace io
}  // namespace mano

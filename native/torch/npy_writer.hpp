#pragma once
// An N x K float32 .npy file written row chunk by row chunk, for logits that are produced as a
// stream: N is unknown until the end, so the header reserves room and close() patches it.

#include <cstddef>
#include <cstdio>
#include <string>

namespace mano {
namespace inference {

class npy_writer {
public:
    // Creates a temporary file beside `path` at once, so a bad folder fails before any work;
    // throws mano::error naming `path` when it cannot be written.
    explicit npy_writer(std::string path);
    ~npy_writer();
    npy_writer(const npy_writer&) = delete;
    npy_writer& operator=(const npy_writer&) = delete;

    // Appends `rows` rows of `cols` floats; every call must have the same `cols`.
    void append(const float* data, std::size_t rows, std::size_t cols);
    // Writes the final shape into the header, flushes the file to disk and renames it over
    // `path`: an interrupted run leaves `path` as it was, never a partial array. Without close()
    // the destructor removes the temporary file.
    void close();

    std::size_t rows() const noexcept { return rows_; }
    std::size_t cols() const noexcept { return cols_; }

private:
    void write_header(std::size_t rows);
    [[noreturn]] void fail(const std::string& what) const;

    std::string path_;
    std::string temporary_;
    std::size_t cols_ = 0;
    std::size_t rows_ = 0;
    std::FILE* file_ = nullptr;
};

}  // namespace inference
}  // namespace mano

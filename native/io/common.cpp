#include "io/detail.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>


namespace mano {
namespace io {
namespace detail {

namespace {

[[noreturn]] void fail_not_regular(const std::string& path, mode_t mode) {
    const char* kind = S_ISDIR(mode)    ? "a directory"
                       : S_ISFIFO(mode) ? "a FIFO (named pipe)"
                       : S_ISSOCK(mode) ? "a socket"
                       : S_ISCHR(mode)  ? "a character device"
                       : S_ISBLK(mode)  ? "a block device"
                                        : "not a regular file";
    fail(path, std::string("is ") + kind + ", not a regular file (mano reads files it can seek in; save the data to a file first)");
}

}  // namespace

file_handle::file_handle(const std::string& path) : path_(path) {
    // Checked before opening: opening a device can act on it (a tape rewinds, a modem hangs up).
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) fail_not_regular(path, st.st_mode);
    // O_NONBLOCK: should the path become a FIFO after the check, opening it cannot wait for a writer.
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd_ < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
    if (::fstat(fd_, &st) != 0) {
        const int code = errno;
        ::close(fd_);
        fail(path, std::string("cannot read its size: ") + std::strerror(code));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd_);
        fail_not_regular(path, st.st_mode);
    }
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    size_ = static_cast<std::uint64_t>(st.st_size);
}

file_handle::file_handle(std::FILE* temporary, std::string path) : path_(std::move(path)), temporary_(temporary) {
    if (std::fflush(temporary_) != 0) {
        std::fclose(temporary_);
        fail(path_, std::string("cannot write the temporary file: ") + std::strerror(errno));
    }
    fd_ = ::fileno(temporary_);
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        std::fclose(temporary_);
        fail(path_, std::string("cannot read the temporary file: ") + std::strerror(errno));
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
}

file_handle::~file_handle() {
    if (temporary_) std::fclose(temporary_);
    else if (fd_ >= 0) ::close(fd_);
}

std::size_t file_handle::read_some_at(std::uint64_t offset, void* out, std::size_t n) const {
    auto* bytes = static_cast<unsigned char*>(out);
    std::size_t done = 0;
    while (done < n) {
        const std::size_t piece = std::min<std::size_t>(n - done, std::size_t{1} << 30);
        const ssize_t got = ::pread(fd_, bytes + done, piece, static_cast<off_t>(offset + done));
        if (got < 0) {
            if (errno == EINTR) continue;
            fail(path_, std::string("read error: ") + std::strerror(errno));
        }
        if (got == 0) break;
        done += static_cast<std::size_t>(got);
    }
    return done;
}

void file_handle::read_at(std::uint64_t offset, void* out, std::size_t n) const {
    if (read_some_at(offset, out, n) != n)
        fail(path_, "ends before byte " + std::to_string(offset + n) + " (did the file change while it was read?)");
}

void swap_bytes(void* data, std::size_t count, std::size_t size) noexcept {
    auto* p = static_cast<unsigned char*>(data);
    if (size < 2) return;
    for (std::size_t i = 0; i < count; ++i, p += size) std::reverse(p, p + size);
}

std::optional<dtype> float_dtype(const element_type& e) noexcept {
    if (e.kind == scalar_kind::bfloat && e.size == 2) return dtype::bfloat16;
    if (e.kind != scalar_kind::floating) return std::nullopt;
    if (e.size == 2) return dtype::float16;
    if (e.size == 4) return dtype::float32;
    if (e.size == 8) return dtype::float64;
    return std::nullopt;
}

file_stream::file_stream(std::shared_ptr<const file_handle> file, std::uint64_t offset, std::uint64_t length,
                         std::string where, std::optional<std::uint32_t> crc)
    : file_(std::move(file)), offset_(offset), length_(length), where_(std::move(where)), expected_crc_(crc) {}

void file_stream::read(void* out, std::size_t n) {
    if (n > length_ - position_)
        fail(where_, "is truncated: it has " + std::to_string(length_) + " bytes but " + std::to_string(position_ + n) +
                         " are needed");
    file_->read_at(offset_ + position_, out, n);
    if (expected_crc_) crc_ = crc32_update(crc_, out, n);
    position_ += n;
}

void file_stream::skip(std::uint64_t n) {
    if (n > length_ - position_)
        fail(where_, "is truncated: it has " + std::to_string(length_) + " bytes but " + std::to_string(position_ + n) +
                         " are needed");
    position_ += n;
    skipped_ = true;
}

void file_stream::finish() {
    if (expected_crc_ && !skipped_ && position_ == length_ && crc_ != *expected_crc_)
        fail(where_, "fails its CRC-32 check: the archive is damaged");
}

namespace {

// Checks that rows x cols x size bytes at `offset` lie inside the file (with overflow checks).
void check_dense_extent(const dense_array& a) {
    const std::uint64_t elements = checked_mul(a.rows, a.cols, a.where, "an array of " + std::to_string(a.rows) +
                                                                           " x " + std::to_string(a.cols));
    const std::uint64_t bytes = checked_mul(elements, a.element.size, a.where, "the array");
    if (a.offset > a.file->size() || bytes > a.file->size() - a.offset)
        fail(a.where, "is truncated: its data needs " + std::to_string(bytes) + " bytes at offset " +
                          std::to_string(a.offset) + " but the file has " + std::to_string(a.file->size()) + " bytes");
    if (a.rows > std::numeric_limits<std::size_t>::max() || a.cols > std::numeric_limits<std::size_t>::max())
        fail(a.where, "is too large for this machine");
}

// Transposes a column-major block (cols x count, column j at in + j * count) into row-major
// rows (count x cols), in tiles so both sides stay in cache.
template <typename T>
void transpose(const T* in, T* out, std::size_t count, std::size_t cols) {
    constexpr std::size_t tile = 32;
    for (std::size_t i0 = 0; i0 < count; i0 += tile)
        for (std::size_t j0 = 0; j0 < cols; j0 += tile) {
            const std::size_t i1 = std::min(count, i0 + tile), j1 = std::min(cols, j0 + tile);
            for (std::size_t j = j0; j < j1; ++j)
                for (std::size_t i = i0; i < i1; ++i) out[i * cols + j] = in[j * count + i];
        }
}

class dense_reader final : public matrix_reader {
public:
    dense_reader(const std::string& path, dense_array array) : array_(std::move(array)) {
        check_dense_extent(array_);
        const auto type = float_dtype(array_.element);
        if (!type) fail(array_.where, "holds no floating-point logits");
        path_ = path;
        rows_ = static_cast<std::size_t>(array_.rows);
        cols_ = static_cast<std::size_t>(array_.cols);
        type_ = *type;
        crc_ = array_.header_crc;
    }

    logits_view read(std::size_t first, std::size_t count) override {
        if (first > rows_ || count > rows_ - first)
            fail(array_.where, "rows " + std::to_string(first) + " to " + std::to_string(first + count) +
                                   " were asked for, but the array has " + std::to_string(rows_) + " rows");
        const std::size_t item = array_.element.size;
        const std::size_t bytes = count * cols_ * item;
        const std::size_t doubles = (bytes + sizeof(double) - 1) / sizeof(double);
        double* rows = buffer_.room(doubles);
        auto* out = reinterpret_cast<unsigned char*>(rows);
        if (bytes > 0) {
            if (!array_.fortran) {
                array_.file->read_at(array_.offset + static_cast<std::uint64_t>(first) * cols_ * item, out, bytes);
                track_crc(first, count, out, bytes);
            } else {
                // Column-major: one read per column gathers the chunk, then a transpose.
                auto* columns = reinterpret_cast<unsigned char*>(staging_.room(doubles));
                for (std::size_t j = 0; j < cols_; ++j)
                    array_.file->read_at(array_.offset + (static_cast<std::uint64_t>(j) * rows_ + first) * item,
                                         columns + j * count * item, count * item);
                switch (item) {
                    case 2: transpose(reinterpret_cast<const std::uint16_t*>(columns), reinterpret_cast<std::uint16_t*>(out), count, cols_); break;
                    case 4: transpose(reinterpret_cast<const std::uint32_t*>(columns), reinterpret_cast<std::uint32_t*>(out), count, cols_); break;
                    default: transpose(reinterpret_cast<const std::uint64_t*>(columns), reinterpret_cast<std::uint64_t*>(out), count, cols_); break;
                }
            }
            if (array_.element.swap) swap_bytes(out, count * cols_, item);
        }
        switch (type_) {
            case dtype::float64: return logits_view(rows, count, cols_);
            case dtype::float32: return logits_view(reinterpret_cast<const float*>(rows), count, cols_);
            default: return logits_view(reinterpret_cast<const std::uint16_t*>(rows), type_, count, cols_);
        }
    }

    std::unique_ptr<matrix_reader> clone() const override { return std::make_unique<dense_reader>(path_, array_); }

private:
    // A stored zip member's CRC-32 is checked when its rows are read in order, from row 0 to the
    // last; other orders are not checked (random access cannot afford a pass of its own).
    void track_crc(std::size_t first, std::size_t count, const unsigned char* bytes, std::size_t n) {
        if (!array_.member_crc) return;
        if (first == 0) {
            crc_ = array_.header_crc;
            crc_row_ = 0;
        }
        if (first != crc_row_) return;
        crc_ = crc32_update(crc_, bytes, n);
        crc_row_ = first + count;
        if (crc_row_ == rows_ && crc_ != *array_.member_crc)
            fail(array_.where, "fails its CRC-32 check: the archive is damaged");
    }

    dense_array array_;
    row_buffer buffer_;
    row_buffer staging_;  // Fortran order: the chunk's columns before the transpose
    std::uint32_t crc_ = 0;
    std::size_t crc_row_ = 0;
};

}  // namespace

std::unique_ptr<matrix_reader> make_dense_reader(const std::string& path, dense_array array) {
    return std::make_unique<dense_reader>(path, std::move(array));
}

namespace {

// Converts `count` stored integers to int64 (a uint64 above INT64_MAX is an error).
void append_labels(const std::string& where, const element_type& e, const unsigned char* bytes, std::size_t count,
                   std::size_t first_index, std::vector<std::int64_t>& out) {
    const std::size_t size = e.size;
    const bool little = host_is_little_endian() != e.swap;
    for (std::size_t i = 0; i < count; ++i) {
        const unsigned char* p = bytes + i * size;
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < size; ++b)
            v |= static_cast<std::uint64_t>(p[little ? b : size - 1 - b]) << (8 * b);
        if (e.kind == scalar_kind::signed_integer && size < 8 && ((v >> (8 * size - 1)) & 1))
            v |= ~std::uint64_t{0} << (8 * size);  // sign-extend
        if (e.kind == scalar_kind::unsigned_integer && v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            fail(where, "label " + std::to_string(first_index + i) + " (" + std::to_string(v) + ") is too large for a class index");
        out.push_back(static_cast<std::int64_t>(v));
    }
}

}  // namespace

std::vector<std::int64_t> read_label_stream(const std::string& where, const element_type& e, std::uint64_t count,
                                            byte_stream& in) {
    std::vector<std::int64_t> labels;
    labels.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(count, std::uint64_t{1} << 20)));
    const std::size_t chunk = (std::size_t{1} << 16) / e.size;
    std::vector<unsigned char> raw(chunk * e.size);
    for (std::uint64_t done = 0; done < count;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, count - done));
        in.read(raw.data(), n * e.size);
        append_labels(where, e, raw.data(), n, static_cast<std::size_t>(done), labels);
        done += n;
    }
    in.finish();
    return labels;
}

std::uint64_t label_count(const std::string& where, const std::vector<std::uint64_t>& shape) {
    if (!(shape.size() == 1 || (shape.size() == 2 && shape[1] == 1)))
        fail(where, "has shape " + shape_text(shape) + "; labels must be a 1-D array with one class index per row");
    return shape[0];
}

void check_matrix_shape(const std::string& where, const std::vector<std::uint64_t>& shape) {
    if (shape.size() != 2)
        fail(where, "has shape " + shape_text(shape) +
                        "; logits must be a 2-D array of N rows (samples) by K columns (classes)");
    if (shape[1] == 0) fail(where, "has shape " + shape_text(shape) + ": its rows have no columns");
    check_columns(where, shape[1]);
}

void check_columns(const std::string& where, std::uint64_t cols) {
    if (cols > matrix_max_columns)
        fail(where, "has rows of " + std::to_string(cols) + " columns, more than the " + std::to_string(matrix_max_columns) +
                        " mano reads (logits have one column per class, features one per dimension)");
}

std::size_t choose_member(const std::string& path, const std::vector<std::string>& names, const std::string& key,
                          const std::string& default_name, const char* container) {
    if (names.empty()) fail(path, std::string("is ") + container + " that holds no arrays");
    if (wanted_member(key, "").empty() && names.size() == 1) return 0;
    const std::string wanted = wanted_member(key, default_name);
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == wanted) return i;
    fail_no_member(path, names, names.size(), wanted, !key.empty(), "choose one with --key");
}

void check_label_rows(const std::string& where, std::uint64_t count, const read_options& opts) {
    if (opts.expected_rows && *opts.expected_rows != count)
        fail(where, "holds " + std::to_string(count) + " labels but " + std::to_string(*opts.expected_rows) +
                        " are needed, one per row of the logits");
}

}  // namespace detail
}  // namespace io
}  // namespace mano

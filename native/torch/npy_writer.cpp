#include "npy_writer.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

#include <mano/base/error.hpp>

namespace mano {
namespace inference {

namespace {

// Room for any 64-bit row count: the whole header (magic to '\n') is this many bytes, a
// multiple of 64 as the format asks, whatever the final shape.
constexpr std::size_t header_bytes = 128;

}  // namespace

npy_writer::npy_writer(std::string path) : path_(std::move(path)) {
    // rows go to a temporary file beside `path`, renamed over it by close() once complete
    const std::filesystem::path target(path_);
    const auto folder = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    temporary_ = (folder / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(temporary_.data());
    if (fd < 0) fail("cannot create a temporary file in its folder");
    const mode_t mask = ::umask(0);  // what a plain create would give: 0666 less the umask
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
    file_ = ::fdopen(fd, "wb");
    if (!file_) {
        ::close(fd);
        ::unlink(temporary_.c_str());
        fail("cannot create the file");
    }
    write_header(0);
}

npy_writer::~npy_writer() {
    if (!file_) return;
    std::fclose(file_);  // not closed: the run failed, and `path` keeps what it had
    ::unlink(temporary_.c_str());
}

void npy_writer::fail(const std::string& what) const {
    throw error("--out " + path_ + ": " + what + " (" + std::strerror(errno) + ")");
}

void npy_writer::write_header(std::size_t rows) {
    const std::uint16_t probe = 1;
    const bool little = *reinterpret_cast<const unsigned char*>(&probe) == 1;
    std::string dict = std::string("{'descr': '") + (little ? "<" : ">") + "f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols_) + "), }";
    const std::size_t prefix = 10;  // magic, version 1.0, 2-byte header length
    dict.append(header_bytes - prefix - dict.size() - 1, ' ');
    dict += '\n';
    const std::size_t length = dict.size();
    const unsigned char start[prefix] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<unsigned char>(length & 0xff),
                                         static_cast<unsigned char>(length >> 8)};
    if (std::fseek(file_, 0, SEEK_SET) != 0 || std::fwrite(start, 1, prefix, file_) != prefix ||
        std::fwrite(dict.data(), 1, dict.size(), file_) != dict.size())
        fail("cannot write the .npy header");
}

void npy_writer::append(const float* data, std::size_t rows, std::size_t cols) {
    static_assert(sizeof(float) == 4, "float32 logits");
    if (rows_ > 0 && cols != cols_)
        throw error("--out " + path_ + ": rows of " + std::to_string(cols) + " logits after rows of " + std::to_string(cols_));
    cols_ = cols;
    const std::size_t count = rows * cols_;
    if (count > 0 && std::fwrite(data, sizeof(float), count, file_) != count) fail("cannot write the logits");
    rows_ += rows;
}

void npy_writer::close() {
    if (!file_) return;
    if (std::fflush(file_) != 0) fail("cannot write the logits");
    write_header(rows_);
    const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
    const int status = std::fclose(file_);
    file_ = nullptr;
    if (!flushed || status != 0 || ::rename(temporary_.c_str(), path_.c_str()) != 0) {
        const int code = errno;
        ::unlink(temporary_.c_str());
        errno = code;
        fail("cannot finish the file");
    }
}

}  // namespace inference
}  // namespace mano

#pragma once
// What every libFuzzer target shares: the readers take paths, so an input becomes a file of this
// process; a reader is drained in chunks of several sizes and the results must agree; and a
// mano::error must say which file is at fault on one line. Anything else (another exception, a
// crash, a sanitizer report, a leak, a timeout) is a finding.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <mano/base/error.hpp>
#include <mano/scan/logits_view.hpp>

#include "io/json.hpp"
#include "io/reader.hpp"

namespace mano_fuzz {

// A property the code under test broke: print why and abort, so libFuzzer saves the input.
[[noreturn]] inline void finding(const std::string& what) {
    std::fprintf(stderr, "mano fuzz finding: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

// One file per process (parallel jobs and -merge children do not share it), in memory where
// /dev/shm exists; removed when the process exits normally.
class input_file {
public:
    explicit input_file(const std::string& extension) {
        const char* dir = std::getenv("MANO_FUZZ_TMPDIR");
        if (!dir || !*dir) dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : std::getenv("TMPDIR");
        if (!dir || !*dir) dir = "/tmp";
        path_ = std::string(dir) + "/mano_fuzz_" + std::to_string(getpid()) + extension;
    }
    ~input_file() { std::remove(path_.c_str()); }
    input_file(const input_file&) = delete;
    input_file& operator=(const input_file&) = delete;

    const std::string& path() const noexcept { return path_; }

    // Replaces the file's content with `size` bytes (a new extension gives a new name).
    const std::string& write(const std::uint8_t* data, std::size_t size) {
        std::FILE* f = std::fopen(path_.c_str(), "wb");
        if (!f) finding("cannot create the input file " + path_);
        if (size > 0 && std::fwrite(data, 1, size, f) != size) finding("cannot write the input file " + path_);
        if (std::fclose(f) != 0) finding("cannot write the input file " + path_);
        return path_;
    }

private:
    std::string path_;
};

// The reader API promises errors that start with the file's path and stay on one line (damaged
// files' text is escaped), so a CLI prints one clear line.
inline void check_error(const mano::error& e, const std::string& path, bool one_line = true) {
    const std::string message = e.what();
    if (message.compare(0, path.size(), path) != 0) finding("a mano::error does not start with the path: " + message);
    if (one_line && message.find_first_of("\n\r") != std::string::npos)
        finding("a mano::error spans several lines: " + message);
}

// Matrices beyond this many values are not read (a CSV header of many fields over many short lines
// claims more than it holds; its reader finds out only when it reads them).
constexpr std::size_t max_values = std::size_t{1} << 22;
// Chunkings that would take more read() calls than this are skipped (e.g. 10^7 rows of 0 columns).
constexpr std::size_t max_reads = 4096;

// Rows [first, first + count) widened to doubles, after checking the view's shape and type.
inline void read_rows(mano::io::matrix_reader& reader, std::size_t first, std::size_t count, std::vector<double>& out) {
    const mano::logits_view v = reader.read(first, count);
    if (v.rows() != count || v.cols() != reader.cols() || v.type() != reader.type())
        finding("read(" + std::to_string(first) + ", " + std::to_string(count) + ") returned a " + std::to_string(v.rows()) +
                " x " + std::to_string(v.cols()) + " " + mano::dtype_name(v.type()) + " view of a " +
                std::to_string(reader.rows()) + " x " + std::to_string(reader.cols()) + " " +
                mano::dtype_name(reader.type()) + " reader");
    const std::size_t at = out.size();
    out.resize(at + count * reader.cols());
    // Widening reads every element the view claims, so ASan sees any that lie outside the buffer.
    if (count > 0 && reader.cols() > 0) mano::widen_rows(v, 0, count, out.data() + at);
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// Reads every row in order in chunks of several sizes, then out of order and through a clone; every
// way must give the same bits. A mano::error (a damaged file found late, e.g. a CRC) propagates.
// `max_bytes` > 0: the most data the input can hold (a binary header's shape is checked against
// the file before anything is allocated, so a larger matrix is a finding).
inline void drain(mano::io::matrix_reader& reader, std::uint64_t max_bytes) {
    const std::size_t rows = reader.rows(), cols = reader.cols();
    std::uint64_t bytes = 0;
    const bool huge = __builtin_mul_overflow(std::uint64_t{rows}, std::uint64_t{cols}, &bytes) ||
                      __builtin_mul_overflow(bytes, std::uint64_t{mano::dtype_size(reader.type())}, &bytes);
    if (max_bytes > 0 && (huge || bytes > max_bytes))
        finding("a " + std::to_string(rows) + " x " + std::to_string(cols) + " " + mano::dtype_name(reader.type()) +
                " matrix was opened from an input that holds at most " + std::to_string(max_bytes) + " bytes of data");
    if (huge || (cols != 0 && rows > max_values / cols)) return;
    if (rows > max_values) return;  // rows of 0 columns: nothing to read, and counting them out is slow
    std::vector<double> whole, pieces;
    read_rows(reader, 0, rows, whole);
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{64}}) {
        if (rows / chunk > max_reads) continue;
        pieces.clear();
        for (std::size_t at = 0; at < rows; at += chunk) read_rows(reader, at, std::min(chunk, rows - at), pieces);
        if (!same_bits(whole, pieces)) finding("reading in chunks of " + std::to_string(chunk) + " rows gives other values");
    }
    if (rows > 0) {
        // Backwards: a sequential reader (a deflated .npz member) must start again.
        pieces.clear();
        read_rows(reader, rows - 1, 1, pieces);
        read_rows(reader, 0, rows - 1, pieces);
        std::vector<double> expected(whole.end() - static_cast<std::ptrdiff_t>(cols), whole.end());
        expected.insert(expected.end(), whole.begin(), whole.end() - static_cast<std::ptrdiff_t>(cols));
        if (!same_bits(expected, pieces)) finding("reading the last row first, then the others, gives other values");
    }
    std::vector<double> none;
    read_rows(reader, rows, 0, none);
    const std::unique_ptr<mano::io::matrix_reader> copy = reader.clone();
    if (!copy || copy->rows() != rows || copy->cols() != cols || copy->type() != reader.type())
        finding("clone() does not describe the same matrix");
    pieces.clear();
    read_rows(*copy, 0, rows, pieces);
    if (!same_bits(whole, pieces)) finding("a clone reads other values");
    // Out of range must be a mano::error, never a read past the end.
    try {
        read_rows(reader, rows, 1, none);
        finding("read(rows, 1) did not fail");
    } catch (const mano::error&) {
    }
}

// Opens `path` as a matrix and drains it; a mano::error is an expected outcome.
inline void fuzz_matrix(const std::string& path, const mano::io::read_options& opts, std::uint64_t max_bytes) {
    try {
        const std::unique_ptr<mano::io::matrix_reader> reader = mano::io::open_matrix(path, opts);
        if (!reader) finding("open_matrix returned no reader");
        drain(*reader, max_bytes);
    } catch (const mano::error& e) {
        check_error(e, path);
    }
}

// Reads `path` as labels; a mano::error is an expected outcome.
// `max_labels`: the most the input can hold (a byte each; more for a deflated .npz member).
inline void fuzz_labels(const std::string& path, const mano::io::read_options& opts, std::uint64_t max_labels) {
    try {
        const std::vector<std::int64_t> labels = mano::io::read_labels(path, opts);
        if (labels.size() > max_labels) finding(std::to_string(labels.size()) + " labels from an input that holds at most " + std::to_string(max_labels));
    } catch (const mano::error& e) {
        check_error(e, path);
    }
}

// A JSON file (state, calibration, label marginal): the input is parsed as the CLI parses it and
// the tree handed to `believe`, which checks what a file that is believed must satisfy. A
// mano::error on one line, or a nlohmann::json type error (which the CLI reports as "PATH: not a
// ... written by mano"), is an expected outcome.
template <class Check>
void fuzz_json(const std::uint8_t* data, std::size_t size, const std::string& path, const std::string& what,
               Check&& believe) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        believe(mano::io::parse_json(text, path, what));
    } catch (const mano::error& e) {
        const std::string message = e.what();
        if (message.empty() || message.find_first_of("\n\r") != std::string::npos)
            finding("an empty or multi-line error: " + message);
    } catch (const nlohmann::json::exception&) {
    }
}

}  // namespace mano_fuzz

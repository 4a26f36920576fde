// Test driver for the file readers (tests/readers/test_io.py, test_io_refusals.py, test_spec.py):
//   mano_io_dump matrix|labels|tensor PATH [--key K] [--shape N,K] [--label-column C] [--header yes|no]
//                [--chunk R] [--start S] [--expect-rows N]
// matrix: rows [S, N) read in chunks of R rows, then rows [0, S) through a clone(), as
// little-endian float64 on stdout; then stderr gets the reader's notes ("note: ..." each) and
// "N K dtype random|sequential".
// labels: int64 little-endian on stdout (--expect-rows: the count the caller needs).
// tensor: a model-input .npy opened with tensor_reader; stdout gets its shape.
// A mano::error exits 2 with its message on stderr.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <mano/scan/logits_view.hpp>

#include "io/reader.hpp"

namespace {

void write_le(const void* data, std::size_t count, std::size_t size) {
    // Values leave in little-endian order whatever this machine's is.
    const std::uint16_t one = 1;
    unsigned char first = 0;
    std::memcpy(&first, &one, 1);
    std::vector<unsigned char> bytes(static_cast<const unsigned char*>(data),
                                     static_cast<const unsigned char*>(data) + count * size);
    if (first != 1)
        for (std::size_t i = 0; i < count; ++i) std::reverse(bytes.begin() + i * size, bytes.begin() + (i + 1) * size);
    if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), stdout);
}

void dump_rows(mano::io::matrix_reader& reader, std::size_t first, std::size_t last, std::size_t chunk) {
    std::vector<double> widened;
    for (std::size_t at = first; at < last; at += chunk) {
        const std::size_t count = std::min(chunk, last - at);
        const mano::logits_view rows = reader.read(at, count);
        if (rows.rows() != count || rows.cols() != reader.cols() || rows.type() != reader.type())
            throw std::runtime_error("read() returned a view of the wrong shape or type");
        widened.resize(count * reader.cols());
        mano::widen_rows(rows, 0, count, widened.data());
        write_le(widened.data(), widened.size(), sizeof(double));
    }
}

int usage() {
    std::cerr << "usage: mano_io_dump matrix|labels|tensor PATH [--key K] [--shape N,K] [--label-column C] "
                 "[--header yes|no] [--chunk R] [--start S] [--expect-rows N]\n";
    return 64;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) return usage();
    const std::string what = argv[1], path = argv[2];
    mano::io::read_options opts;
    std::size_t chunk = 1000, start = 0;
    try {
        for (int i = 3; i < argc; i += 2) {
            if (i + 1 >= argc) return usage();
            const std::string flag = argv[i], value = argv[i + 1];
            if (flag == "--key") opts.key = value;
            else if (flag == "--label-column") opts.label_column = value;
            else if (flag == "--header") opts.header = value == "yes";
            else if (flag == "--chunk") chunk = std::stoul(value);
            else if (flag == "--start") start = std::stoul(value);
            else if (flag == "--expect-rows") opts.expected_rows = std::stoull(value);
            else if (flag == "--shape") {
                const auto comma = value.find(',');
                if (comma == std::string::npos) return usage();
                opts.shape = std::make_pair(std::stoul(value.substr(0, comma)), std::stoul(value.substr(comma + 1)));
            } else {
                return usage();
            }
        }
        if (chunk == 0) return usage();
        if (what == "labels") {
            const std::vector<std::int64_t> labels = mano::io::read_labels(path, opts);
            write_le(labels.data(), labels.size(), sizeof(std::int64_t));
        } else if (what == "tensor") {
            const mano::io::tensor_reader tensor(path);
            for (const std::size_t extent : tensor.shape()) std::cout << extent << " ";
            std::cout << "\n";
        } else if (what == "matrix") {
            const auto reader = mano::io::open_matrix(path, opts);
            if (reader->path() != path) throw std::runtime_error("path() is not the path opened");
            start = std::min(start, reader->rows());
            dump_rows(*reader, start, reader->rows(), chunk);
            const auto clone = reader->clone();
            if (clone->rows() != reader->rows() || clone->cols() != reader->cols()) throw std::runtime_error("clone() differs");
            dump_rows(*clone, 0, start, chunk);
            for (const auto& note : reader->notes()) std::cerr << "note: " << note << "\n";
            std::cerr << reader->rows() << " " << reader->cols() << " " << mano::dtype_name(reader->type()) << " "
                      << (reader->random_access() ? "random" : "sequential") << "\n";
        } else {
            return usage();
        }
    } catch (const mano::error& e) {
        std::fflush(stdout);
        std::cerr << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::cerr << "internal error: " << e.what() << "\n";
        return 1;
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
}

// .npz in builds without zlib (the WebAssembly build of the test suite, MANO_WITH_NPZ=OFF): every
// other format works; an .npz says what to do instead.
#include "io/detail.hpp"

namespace mano {
namespace io {
namespace detail {

namespace {

[[noreturn]] void no_npz(const shared_file& file) {
    fail(file->path(), ".npz archives need zlib, which this build does not have; "
                       "save the array as .npy (numpy.save) or use the native mano");
}

}  // namespace

std::uint32_t crc32_update(std::uint32_t, const void*, std::size_t) {
    throw error("crc32_update: no zip member is read in a build without zlib");
}

std::unique_ptr<matrix_reader> open_npz_matrix(shared_file file, const read_options&) { no_npz(file); }
std::vector<std::int64_t> read_npz_labels(shared_file file, const read_options&) { no_npz(file); }

}  // namespace detail
}  // namespace io
}  // namespace mano

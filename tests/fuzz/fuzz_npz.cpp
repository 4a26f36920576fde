// .npz: the whole input is the archive, read as logits (member "logits" or the only one) and as
// labels (member "labels" or the only one). Deflated members come from the directory's sizes, so
// the data may be up to deflate's 1032:1 larger than the input.
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static mano_fuzz::input_file file(".npz");
    const std::string& path = file.write(data, size);
    mano_fuzz::fuzz_matrix(path, {}, std::uint64_t{size} * 1032 + 64 * 1032);
    mano_fuzz::fuzz_labels(path, {}, std::uint64_t{size} * 1032 + 64 * 1032);
    return 0;
}

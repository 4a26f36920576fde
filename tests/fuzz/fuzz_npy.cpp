// .npy: the whole input is the file, read as logits and as labels.
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static mano_fuzz::input_file file(".npy");
    const std::string& path = file.write(data, size);
    mano_fuzz::fuzz_matrix(path, {}, size);
    mano_fuzz::fuzz_labels(path, {}, size);
    return 0;
}

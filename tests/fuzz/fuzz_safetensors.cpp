// .safetensors: the whole input is the file, read as logits (tensor "logits" or the only one) and
// as labels (tensor "labels" or the only one).
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static mano_fuzz::input_file file(".safetensors");
    const std::string& path = file.write(data, size);
    mano_fuzz::fuzz_matrix(path, {}, size);
    mano_fuzz::fuzz_labels(path, {}, size);
    return 0;
}

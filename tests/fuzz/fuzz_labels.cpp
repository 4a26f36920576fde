// read_labels on every format that holds labels: the first byte chooses, the rest is the file.
//   bit 0-1: .npy, .npz, .csv, .safetensors
//   bit 2-3: key (npz, safetensors) / label column (csv): "", "labels", "y", "0"
//   bit 4-5: csv header  0 detect, 1 no, 2 yes, 3 detect
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static mano_fuzz::input_file npy(".npy");
    static mano_fuzz::input_file npz(".npz");
    static mano_fuzz::input_file csv(".csv");
    static mano_fuzz::input_file safetensors(".safetensors");
    if (size == 0) return 0;
    const std::uint8_t choice = data[0];
    mano_fuzz::input_file* const files[] = {&npy, &npz, &csv, &safetensors};
    static const char* const keys[] = {"", "labels", "y", "0"};
    mano::io::read_options opts;
    if ((choice & 3) == 2) opts.label_column = keys[(choice >> 2) & 3];
    else opts.key = keys[(choice >> 2) & 3];
    if (((choice >> 4) & 3) == 1) opts.header = false;
    if (((choice >> 4) & 3) == 2) opts.header = true;
    const std::string& path = files[choice & 3]->write(data + 1, size - 1);
    mano_fuzz::fuzz_labels(path, opts, (choice & 3) == 1 ? std::uint64_t{size} * 1032 + 64 * 1032 : size);
    return 0;
}

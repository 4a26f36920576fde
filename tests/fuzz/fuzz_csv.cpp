// .csv / .tsv: the first byte chooses the options, the rest is the file.
//   bit 0-1: header  0 detect, 1 no, 2 yes, 3 detect
//   bit 2-4: label column  "", "0", "1", "label", "y", "7", "-1", "1x"
//   bit 5:   .tsv instead of .csv
//   bit 6:   also read the labels
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static mano_fuzz::input_file csv(".csv");
    static mano_fuzz::input_file tsv(".tsv");
    if (size == 0) return 0;
    const std::uint8_t choice = data[0];
    static const char* const columns[] = {"", "0", "1", "label", "y", "7", "-1", "1x"};
    mano::io::read_options opts;
    if ((choice & 3) == 1) opts.header = false;
    if ((choice & 3) == 2) opts.header = true;
    opts.label_column = columns[(choice >> 2) & 7];
    const std::string& path = ((choice >> 5) & 1 ? tsv : csv).write(data + 1, size - 1);
    mano_fuzz::fuzz_matrix(path, opts, 0);
    if ((choice >> 6) & 1) mano_fuzz::fuzz_labels(path, opts, size);
    return 0;
}

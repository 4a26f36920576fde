// Raw float32 with --shape N,K: the first five bytes choose the shape, the rest is the file.
//   byte 0: bit 0 shifts N left by 40 bits, bit 1 shifts K left by 40 bits, bit 2 uses
//           SIZE_MAX - N (overflow checks); byte 1-2: N, byte 3-4: K (little-endian)
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static mano_fuzz::input_file file(".f32");
    if (size < 5) return 0;
    std::size_t rows = data[1] | (std::size_t{data[2]} << 8), cols = data[3] | (std::size_t{data[4]} << 8);
    if (data[0] & 1) rows <<= 40;
    if (data[0] & 2) cols <<= 40;
    if (data[0] & 4) rows = SIZE_MAX - rows;
    mano::io::read_options opts;
    opts.shape = std::make_pair(rows, cols);
    const std::string& path = file.write(data + 5, size - 5);
    mano_fuzz::fuzz_matrix(path, opts, size);
    return 0;
}

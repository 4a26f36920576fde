#include "mano/scan/logits_view.hpp"

#include <algorithm>

#include "mano/base/half.hpp"

namespace mano {

namespace {

// Rows [first, first + count) of any dtype into contiguous Out values (count x K).
template <class Out>
void convert_rows(const logits_view& v, std::size_t first, std::size_t count, Out* out) {
    const std::size_t k = v.cols(), stride = v.row_stride();
    for (std::size_t r = 0; r < count; ++r) {
        const std::size_t offset = (first + r) * stride;
        Out* dst = out + r * k;
        const auto* halves = static_cast<const std::uint16_t*>(v.data()) + offset;
        switch (v.type()) {
            case dtype::float32: {
                const float* src = static_cast<const float*>(v.data()) + offset;
                std::copy(src, src + k, dst);
                break;
            }
            case dtype::float64: {
                const double* src = static_cast<const double*>(v.data()) + offset;
                std::copy(src, src + k, dst);
                break;
            }
            case dtype::float16:
                for (std::size_t c = 0; c < k; ++c) dst[c] = half_to_float(halves[c]);
                break;
            case dtype::bfloat16:
                for (std::size_t c = 0; c < k; ++c) dst[c] = bfloat16_to_float(halves[c]);
                break;
        }
    }
}

}  // namespace

void widen_rows(const logits_view& v, std::size_t first, std::size_t count, double* out) {
    convert_rows(v, first, count, out);
}

void float_rows(const logits_view& v, std::size_t first, std::size_t count, float* out) {
    if (v.type() == dtype::float64) throw error("float_rows: float64 logits stay in double");
    convert_rows(v, first, count, out);
}

}  // namespace mano

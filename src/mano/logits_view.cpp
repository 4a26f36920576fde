#include "mano/logits_view.hpp"

#include <algorithm>

#include "mano/half.hpp"

namespace mano {

void widen_rows(const logits_view& v, std::size_t first, std::size_t count, double* out) {
    const std::size_t k = v.cols(), stride = v.row_stride();
    for (std::size_t r = 0; r < count; ++r) {
        const std::size_t offset = (first + r) * stride;
        double* dst = out + r * k;
        switch (v.type()) {
            case dtype::float32: {
                const float* src = static_cast<const float*>(v.data()) + offset;
                for (std::size_t c = 0; c < k; ++c) dst[c] = src[c];
                break;
            }
            case dtype::float64: {
                const double* src = static_cast<const double*>(v.data()) + offset;
                std::copy(src, src + k, dst);
                break;
            }
            case dtype::float16: {
                const auto* src = static_cast<const std::uint16_t*>(v.data()) + offset;
                for (std::size_t c = 0; c < k; ++c) dst[c] = half_to_float(src[c]);
                break;
            }
            case dtype::bfloat16: {
                const auto* src = static_cast<const std::uint16_t*>(v.data()) + offset;
                for (std::size_t c = 0; c < k; ++c) dst[c] = bfloat16_to_float(src[c]);
                break;
            }
        }
    }
}

void float_rows(const logits_view& v, std::size_t first, std::size_t count, float* out) {
    const std::size_t k = v.cols(), stride = v.row_stride();
    for (std::size_t r = 0; r < count; ++r) {
        const std::size_t offset = (first + r) * stride;
        float* dst = out + r * k;
        switch (v.type()) {
            case dtype::float32: {
                const float* src = static_cast<const float*>(v.data()) + offset;
                std::copy(src, src + k, dst);
                break;
            }
            case dtype::float16: {
                const auto* src = static_cast<const std::uint16_t*>(v.data()) + offset;
                for (std::size_t c = 0; c < k; ++c) dst[c] = half_to_float(src[c]);
                break;
            }
            case dtype::bfloat16: {
                const auto* src = static_cast<const std::uint16_t*>(v.data()) + offset;
                for (std::size_t c = 0; c < k; ++c) dst[c] = bfloat16_to_float(src[c]);
                break;
            }
            case dtype::float64:
                throw error("float_rows: float64 logits stay in double");
        }
    }
}

}  // namespace mano

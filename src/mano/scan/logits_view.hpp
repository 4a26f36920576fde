#pragma once

#include <cstddef>
#include <cstdint>

#include "mano/base/error.hpp"

namespace mano {

// The most classes (columns) mano takes: every method keeps O(K) numbers per accumulator (the
// nuclear norms O(K^2), refused above 4 GiB), so an accumulator refuses a larger K by name before
// it allocates anything, and the file readers read no wider rows (native/io/reader.hpp).
inline constexpr std::size_t max_classes = std::size_t{1} << 20;

enum class dtype { float32, float64, float16, bfloat16 };

inline const char* dtype_name(dtype t) noexcept {
    switch (t) {
        case dtype::float32: return "float32";
        case dtype::float64: return "float64";
        case dtype::float16: return "float16";
        case dtype::bfloat16: return "bfloat16";
    }
    return "unknown";
}

inline std::size_t dtype_size(dtype t) noexcept {
    return (t == dtype::float64) ? 8 : (t == dtype::float32) ? 4 : 2;
}

// A non-owning, row-major view of N x K logits owned by the caller (a file buffer, a WASM heap
// chunk, a tensor). `row_stride` is in elements and defaults to K (contiguous rows).
class logits_view {
public:
    logits_view(const float* data, std::size_t rows, std::size_t cols, std::size_t row_stride = 0)
        : logits_view(data, dtype::float32, rows, cols, row_stride) {}
    logits_view(const double* data, std::size_t rows, std::size_t cols, std::size_t row_stride = 0)
        : logits_view(data, dtype::float64, rows, cols, row_stride) {}
    // float16 or bfloat16 rows given as their 16-bit patterns.
    logits_view(const std::uint16_t* bits, dtype type, std::size_t rows, std::size_t cols,
                std::size_t row_stride = 0)
        : logits_view(static_cast<const void*>(bits), type, rows, cols, row_stride) {
        if (type != dtype::float16 && type != dtype::bfloat16)
            throw error("a 16-bit logits view must be float16 or bfloat16");
    }

    const void* data() const noexcept { return data_; }
    dtype type() const noexcept { return type_; }
    std::size_t rows() const noexcept { return rows_; }
    std::size_t cols() const noexcept { return cols_; }
    std::size_t row_stride() const noexcept { return row_stride_; }

    // The rows [first, first + count) as a view of the same memory.
    logits_view slice(std::size_t first, std::size_t count) const {
        if (first > rows_ || count > rows_ - first)
            throw error("logits_view::slice: rows out of range");
        const auto* bytes = static_cast<const unsigned char*>(data_);
        return logits_view(bytes + first * row_stride_ * dtype_size(type_), type_, count, cols_,
                           row_stride_);
    }

private:
    logits_view(const void* data, dtype type, std::size_t rows, std::size_t cols,
                std::size_t row_stride)
        : data_(data), type_(type), rows_(rows), cols_(cols),
          row_stride_(row_stride == 0 ? cols : row_stride) {
        if (row_stride_ < cols_) throw error("logits_view: row stride is smaller than the row length");
        if (data_ == nullptr && rows_ != 0) throw error("logits_view: null data with rows > 0");
    }

    const void* data_;
    dtype type_;
    std::size_t rows_;
    std::size_t cols_;
    std::size_t row_stride_;
};

// Widens rows [first, first + count) of any supported dtype into contiguous doubles (count x K).
void widen_rows(const logits_view& v, std::size_t first, std::size_t count, double* out);

// Copies rows [first, first + count) of float32, float16 or bfloat16 logits into contiguous
// floats (count x K), exactly.
void float_rows(const logits_view& v, std::size_t first, std::size_t count, float* out);

}  // namespace mano

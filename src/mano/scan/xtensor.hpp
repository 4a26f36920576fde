#pragma once
// Zero-copy bridges between xtensor and the core: score an xtensor expression's memory in place,
// or wrap caller-owned logits as an xtensor view for inspection.

#include <array>
#include <cstddef>
#include <type_traits>

#include <xtensor/xadapt.hpp>
#include <xtensor/xlayout.hpp>

#include "mano/base/error.hpp"
#include "mano/scan/logits_view.hpp"

namespace mano {

// A logits_view over a 2-D row-major xtensor container (xtensor, xarray, adapted buffers) of
// float or double; rows may be strided, columns must be contiguous.
template <class E>
logits_view view_of(const E& e) {
    using value_type = std::decay_t<typename E::value_type>;
    static_assert(std::is_same<value_type, float>::value || std::is_same<value_type, double>::value,
                  "mano::view_of takes float or double containers");
    if (e.dimension() != 2) throw error("logits must be a 2-D array (N rows x K classes)");
    const auto& strides = e.strides();
    const std::size_t k = e.shape()[1];
    if (k > 1 && strides[1] != 1)
        throw error("logits rows must be contiguous (row-major); copy with xt::eval or a row_major container");
    const std::size_t stride = e.shape()[0] > 1 ? static_cast<std::size_t>(strides[0]) : k;
    return logits_view(e.data() + e.data_offset(), e.shape()[0], k, stride);
}

// The float32 or float64 logits of a view as a read-only xtensor expression, without copying.
template <class T>
auto as_xtensor(const logits_view& v) {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value, "float or double");
    const dtype expected = std::is_same<T, float>::value ? dtype::float32 : dtype::float64;
    if (v.type() != expected) throw error(std::string("logits are ") + dtype_name(v.type()) + ", not " + dtype_name(expected));
    const std::array<std::size_t, 2> shape = {v.rows(), v.cols()};
    const std::array<std::size_t, 2> strides = {v.row_stride(), 1};
    return xt::adapt(static_cast<const T*>(v.data()), v.rows() * v.row_stride(), xt::no_ownership(), shape, strides);
}

}  // namespace mano

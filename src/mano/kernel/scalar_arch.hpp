#pragma once
// The portable kernel's architecture: xsimd::batch<T, scalar_arch> is one plain number, so the
// one kernel source (kernel/kernel_impl.hpp, kernel/gram_impl.hpp) compiles to scalar C++ on any
// processor, as simdjson keeps a fallback implementation beside its SIMD ones. xsimd 8 has no
// such architecture; this header gives the batch type and the xsimd functions the kernel calls,
// as partial specializations and more specialized overloads, so the kernel source is unchanged.
// Comparisons and max/min follow SSE's operand order, so NaN goes where the SIMD kernels send it.

#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include <xsimd/xsimd.hpp>

namespace mano {
namespace detail {

struct scalar_arch {
    static constexpr const char* name() noexcept { return "scalar"; }
    static constexpr std::size_t alignment() noexcept { return alignof(double); }
};

}  // namespace detail
}  // namespace mano

namespace xsimd {

template <class T>
class batch_bool<T, mano::detail::scalar_arch> {
public:
    static constexpr std::size_t size = 1;
    using value_type = bool;
    using arch_type = mano::detail::scalar_arch;

    batch_bool() = default;
    batch_bool(bool v) noexcept : value(v) {}

    friend batch_bool operator|(batch_bool a, batch_bool b) noexcept { return a.value || b.value; }
    friend batch_bool operator&(batch_bool a, batch_bool b) noexcept { return a.value && b.value; }
    batch_bool operator!() const noexcept { return !value; }

    bool value = false;
};

template <class T>
class batch<T, mano::detail::scalar_arch> {
public:
    static constexpr std::size_t size = 1;
    using value_type = T;
    using arch_type = mano::detail::scalar_arch;
    using batch_bool_type = batch_bool<T, arch_type>;

    batch() = default;
    batch(T v) noexcept : value(v) {}

    template <class U>
    static batch load_aligned(const U* from) noexcept { return static_cast<T>(*from); }
    template <class U>
    static batch load_unaligned(const U* from) noexcept { return static_cast<T>(*from); }
    template <class U>
    void store_aligned(U* to) const noexcept { *to = static_cast<U>(value); }
    template <class U>
    void store_unaligned(U* to) const noexcept { *to = static_cast<U>(value); }

    friend batch operator+(batch a, batch b) noexcept { return a.value + b.value; }
    friend batch operator-(batch a, batch b) noexcept { return a.value - b.value; }
    friend batch operator*(batch a, batch b) noexcept { return a.value * b.value; }
    friend batch operator/(batch a, batch b) noexcept { return a.value / b.value; }
    batch operator-() const noexcept { return -value; }
    batch& operator+=(batch b) noexcept { value += b.value; return *this; }
    batch& operator-=(batch b) noexcept { value -= b.value; return *this; }
    batch& operator*=(batch b) noexcept { value *= b.value; return *this; }
    batch& operator/=(batch b) noexcept { value /= b.value; return *this; }
    // integer batches only (instantiated where used); shifted as unsigned, as the SIMD lanes are
    friend batch operator<<(batch a, int shift) noexcept {
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a.value) << shift);
    }

    friend batch_bool_type operator==(batch a, batch b) noexcept { return a.value == b.value; }
    friend batch_bool_type operator!=(batch a, batch b) noexcept { return a.value != b.value; }
    friend batch_bool_type operator<(batch a, batch b) noexcept { return a.value < b.value; }
    friend batch_bool_type operator<=(batch a, batch b) noexcept { return a.value <= b.value; }
    friend batch_bool_type operator>(batch a, batch b) noexcept { return a.value > b.value; }
    friend batch_bool_type operator>=(batch a, batch b) noexcept { return a.value >= b.value; }

    T value = T();
};

template <class T>
using scalar_batch = batch<T, mano::detail::scalar_arch>;

template <class T>
inline scalar_batch<T> max(const scalar_batch<T>& a, const scalar_batch<T>& b) noexcept {
    return a.value > b.value ? a.value : b.value;
}
template <class T>
inline scalar_batch<T> min(const scalar_batch<T>& a, const scalar_batch<T>& b) noexcept {
    return a.value < b.value ? a.value : b.value;
}
template <class T>
inline scalar_batch<T> abs(const scalar_batch<T>& a) noexcept {
    return std::abs(a.value);
}
// Not std::fma: without an FMA instruction that is a slow library call. kernel/kernel_math.hpp
// keeps exp exact either way (its two-part ln 2 where __FMA__ is not defined).
template <class T>
inline scalar_batch<T> fma(const scalar_batch<T>& x, const scalar_batch<T>& y, const scalar_batch<T>& z) noexcept {
    return x.value * y.value + z.value;
}
template <class T>
inline scalar_batch<T> select(const batch_bool<T, mano::detail::scalar_arch>& cond, const scalar_batch<T>& a,
                              const scalar_batch<T>& b) noexcept {
    return cond.value ? a : b;
}
template <class T>
inline bool any(const batch_bool<T, mano::detail::scalar_arch>& cond) noexcept {
    return cond.value;
}
template <class T>
inline T hadd(const scalar_batch<T>& a) noexcept {
    return a.value;
}
template <class T>
inline scalar_batch<T> haddp(const scalar_batch<T>* row) noexcept {
    return row[0];
}
template <class T>
inline scalar_batch<T> pow(const scalar_batch<T>& x, const scalar_batch<T>& y) noexcept {
    return std::pow(x.value, y.value);
}
template <class T>
inline scalar_batch<T> exp(const scalar_batch<T>& x) noexcept {
    return std::exp(x.value);
}
template <class T>
inline scalar_batch<T> log1p(const scalar_batch<T>& x) noexcept {
    return std::log1p(x.value);
}
template <class B, class T>
inline B bitwise_cast(const scalar_batch<T>& x) noexcept {
    static_assert(sizeof(typename B::value_type) == sizeof(T), "bitwise_cast keeps the size");
    typename B::value_type out;
    std::memcpy(&out, &x.value, sizeof(T));
    return out;
}

}  // namespace xsimd

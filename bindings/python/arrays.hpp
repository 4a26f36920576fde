#pragma once
// NumPy arrays as the core reads them (mano._core, module.cpp): a 2-D float array as a
// matrix_reader (rows read where they lie when each is contiguous, else copied a chunk at a time),
// integer labels, the inputs pushed beside the logits, and the threaded scan of an array.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <mano/mano.hpp>

#include "host/scan.hpp"
#include "io/reader.hpp"

namespace mano_python {

namespace py = pybind11;

// Bytes of rows copied at a time from an array whose rows are not contiguous.
inline constexpr std::size_t copy_chunk_bytes = std::size_t{1} << 22;

inline std::string shape_text(const py::array& a) {
    std::string s = "(";
    for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
    return s + (a.ndim() == 1 ? ",)" : ")");
}

inline std::string dtype_text(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

inline mano::dtype float_type(const py::array& a, const std::string& what) {
    const char kind = a.dtype().kind();
    const auto size = a.itemsize();
    if (kind == 'f' && size == 4) return mano::dtype::float32;
    if (kind == 'f' && size == 8) return mano::dtype::float64;
    if (kind == 'f' && size == 2) return mano::dtype::float16;
    throw mano::error(what + ": dtype " + dtype_text(a) +
                      " is not one mano reads (float16, float32 or float64); convert it, e.g. with .astype(numpy.float32)");
}

// A 2-D float array in memory, read as a matrix_reader: rows come as views of the array when each
// row is contiguous (any row stride), else copied a chunk at a time into C order. The CLI's
// threaded scan (host/scan.hpp) then reads it as it reads a file. It does not own the array (its
// clones are made on threads without the GIL): the caller keeps the array alive.
class array_reader : public mano::io::matrix_reader {
public:
    array_reader(const py::array& a, const std::string& what) {
        if (a.ndim() != 2)
            throw mano::error(what + ": expected a 2-D array (rows x classes), got shape " + shape_text(a));
        path_ = what;
        type_ = float_type(a, what);
        rows_ = static_cast<std::size_t>(a.shape(0));
        cols_ = static_cast<std::size_t>(a.shape(1));
        if (cols_ == 0 && rows_ > 0) throw mano::error(what + ": the array has 0 columns (shape " + shape_text(a) + ")");
        data_ = static_cast<const unsigned char*>(a.data());
        item_ = static_cast<std::size_t>(a.itemsize());
        row_step_ = a.strides(0);
        col_step_ = a.strides(1);
        const bool rows_contiguous = cols_ <= 1 || col_step_ == static_cast<py::ssize_t>(item_);
        const bool aligned = reinterpret_cast<std::uintptr_t>(data_) % item_ == 0;
        contiguous_ = rows_contiguous && aligned && row_step_ >= 0 && row_step_ % static_cast<py::ssize_t>(item_) == 0 &&
                      (rows_ <= 1 || static_cast<std::size_t>(row_step_) / item_ >= cols_);
    }

    mano::logits_view read(std::size_t first, std::size_t count) override {
        if (contiguous_) {
            const std::size_t stride = rows_ <= 1 ? cols_ : static_cast<std::size_t>(row_step_) / item_;
            return view(data_ + static_cast<py::ssize_t>(first) * row_step_, count, std::max<std::size_t>(stride, cols_));
        }
        buffer_.resize((count * cols_ * item_ + 7) / 8);
        auto* out = reinterpret_cast<unsigned char*>(buffer_.data());
        for (std::size_t r = 0; r < count; ++r) {
            const unsigned char* row = data_ + static_cast<py::ssize_t>(first + r) * row_step_;
            for (std::size_t c = 0; c < cols_; ++c)
                std::memcpy(out + (r * cols_ + c) * item_, row + static_cast<py::ssize_t>(c) * col_step_, item_);
        }
        return view(out, count, cols_);
    }

    std::unique_ptr<matrix_reader> clone() const override {
        auto copy = std::make_unique<array_reader>(*this);
        copy->buffer_.clear();
        return copy;
    }

    // Whether read() returns views of the array (else copies of its rows).
    bool contiguous() const noexcept { return contiguous_; }

private:
    mano::logits_view view(const unsigned char* p, std::size_t count, std::size_t stride) const {
        switch (type_) {
            case mano::dtype::float32: return mano::logits_view(reinterpret_cast<const float*>(p), count, cols_, stride);
            case mano::dtype::float64: return mano::logits_view(reinterpret_cast<const double*>(p), count, cols_, stride);
            default:
                return mano::logits_view(reinterpret_cast<const std::uint16_t*>(p), type_, count, cols_, stride);
        }
    }

    const unsigned char* data_ = nullptr;
    std::size_t item_ = 4;
    py::ssize_t row_step_ = 0, col_step_ = 0;
    bool contiguous_ = false;
    std::vector<double> buffer_;  // doubles: aligned for every element type
};

// Integer class labels (a 1-D or N x 1 array of any integer type), as int64, `rows` of them.
inline std::vector<std::int64_t> labels_of(const py::array& a, std::size_t rows, const std::string& what) {
    const char kind = a.dtype().kind();
    if (kind != 'i' && kind != 'u')
        throw mano::error(what + ": dtype " + dtype_text(a) + " is not an integer type (class indices in [0, K))");
    if (!(a.ndim() == 1 || (a.ndim() == 2 && a.shape(1) == 1)))
        throw mano::error(what + ": expected a 1-D array of class indices, got shape " + shape_text(a));
    const auto n = static_cast<std::size_t>(a.shape(0));
    if (n != rows)
        throw mano::error(what + ": " + std::to_string(n) + " labels for " + std::to_string(rows) + " rows");
    if (kind == 'u' && a.itemsize() == 8) {  // above 2^63 - 1 a cast to int64 would turn negative
        const auto big = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(a);
        if (!big) throw py::error_already_set();
        const auto* u = big.data();
        for (std::size_t i = 0; i < n; ++i)
            if (u[i] > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                throw mano::error(what + ": row " + std::to_string(i) + ": label " + std::to_string(u[i]) +
                                  " is not a class index");
    }
    auto as64 = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!as64) throw py::error_already_set();
    const auto* p = as64.data();
    return std::vector<std::int64_t>(p, p + n);
}

// Any object NumPy can read as an array (mano/__init__.py has already made it one).
inline py::array as_array(const py::object& o, const std::string& what) {
    auto a = py::array::ensure(o);
    if (!a) throw mano::error(what + ": expected an array, got " + py::str(py::type::of(o)).cast<std::string>());
    // numbers in the other byte order (e.g. '>f4' on x86): a native copy, as the core reads native
    if (!a.dtype().attr("isnative").cast<bool>()) a = a.attr("astype")(a.dtype().attr("newbyteorder")("="));
    return a;
}

inline std::optional<py::array> optional_array(const py::object& o, const std::string& what) {
    if (o.is_none()) return std::nullopt;
    return as_array(o, what);
}

// What is pushed beside the target logits, read and checked against them. It holds the arrays
// its readers read (an array may be a copy made here, e.g. of other-endian numbers).
struct extras {
    std::vector<std::int64_t> labels;
    bool has_labels = false;
    py::object second_array, feature_array;
    std::optional<array_reader> second, features;

    extras(const py::object& labels_in, const py::object& second_in, const py::object& features_in, std::size_t rows,
           std::size_t cols) {
        if (auto a = optional_array(labels_in, "labels")) {
            labels = labels_of(*a, rows, "labels");
            has_labels = true;
        }
        if (auto a = optional_array(second_in, "second")) {
            second_array = *a;
            second.emplace(*a, "second");
            if (second->rows() != rows || second->cols() != cols)
                throw mano::error("second: shape (" + std::to_string(second->rows()) + ", " + std::to_string(second->cols()) +
                                  ") differs from the logits' (" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
        }
        if (auto a = optional_array(features_in, "features")) {
            feature_array = *a;
            features.emplace(*a, "features");
            if (features->rows() != rows)
                throw mano::error("features: " + std::to_string(features->rows()) + " rows for " + std::to_string(rows) +
                                  " rows of logits");
        }
    }
    unsigned inputs() const {
        return (second ? unsigned(mano::needs_second) : 0u) | (features ? unsigned(mano::needs_features) : 0u);
    }
};

// Scans every row of `logits` (with the extras) into an accumulator with `opts`, on `threads`
// threads (0: every core) as `mano score` does.
inline mano::accumulator scan_array(array_reader& logits, extras& ex, const mano::options& opts, unsigned threads) {
    mano::host::scan_inputs in;
    in.logits = &logits;
    if (ex.second) in.second = &*ex.second;
    if (ex.features) in.features = &*ex.features;
    if (ex.has_labels) in.labels = &ex.labels;
    py::gil_scoped_release release;
    try {
        return mano::host::scan(in, 0, logits.rows(), opts, mano::host::thread_count(threads), nullptr);
    } catch (const mano::error& e) {
        throw mano::host::file_error("logits", e);
    }
}

}  // namespace mano_python

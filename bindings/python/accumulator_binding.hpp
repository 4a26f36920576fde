#pragma once
// mano.Accumulator's C++ side (module.cpp binds it): an accumulator that Python threads may share.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <mutex>
#include <string>
#include <utility>

#include <mano/mano.hpp>

#include "arrays.hpp"
#include "json_values.hpp"

namespace mano_python {

namespace py = pybind11;

// An accumulator that Python threads may share: each call holds its mutex, taken after the GIL
// is released (a thread never waits for one while holding the other).
class py_accumulator {
public:
    explicit py_accumulator(mano::accumulator a) : acc_(std::move(a)) {}
    py_accumulator(py_accumulator&& o) noexcept : acc_(std::move(o.acc_)) {}

    // `first_row`: the index of these rows' first in the whole input, for messages (default: the
    // rows pushed so far), e.g. a Dask partition's offset. One push of the whole array (all or
    // nothing); an array whose rows are not contiguous is copied into C order first.
    void push(const py::object& logits_in, const py::object& labels, const py::object& second, const py::object& features,
              const py::object& first_row) {
        const py::array logits_array = rows_contiguous(as_array(logits_in, "logits"), "logits");
        array_reader logits(logits_array, "logits");
        if (logits.cols() != acc_.columns())
            throw mano::error("logits: " + std::to_string(logits.cols()) + " columns, but the accumulator has " +
                              std::to_string(cols()) + " classes" +
                              (acc_.columns() == cols() ? std::string() : " (input " + std::string(mano::input_kind_name(acc_.opts().input)) +
                                                                              ": " + std::to_string(acc_.columns()) + " column)"));
        const py::object second_array = second.is_none() ? second : rows_contiguous(as_array(second, "second"), "second");
        const py::object feature_array =
            features.is_none() ? features : rows_contiguous(as_array(features, "features"), "features");
        extras ex(labels, second_array, feature_array, logits.rows(), logits.cols());
        const std::optional<std::size_t> first = first_row.is_none() ? std::nullopt : std::optional(first_row.cast<std::size_t>());
        py::gil_scoped_release release;
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto rows = logits.read(0, logits.rows());
        mano::row_inputs extra;
        std::optional<mano::logits_view> second_rows, feature_rows;
        if (ex.second) extra.second = &second_rows.emplace(ex.second->read(0, logits.rows()));
        if (ex.features) extra.features = &feature_rows.emplace(ex.features->read(0, logits.rows()));
        if (ex.has_labels) extra.labels = ex.labels.data();
        extra.first_row = first;
        try {
            acc_.push(rows, extra);
        } catch (const mano::row_input_error& e) {
            throw mano::error(std::string(e.which == mano::row_input_error::input::second ? "second: " : "features: ") + e.what());
        } catch (const mano::error& e) {
            throw mano::host::file_error("logits", e);
        }
    }
    void merge(const py_accumulator& other, bool as_shard) {
        py::gil_scoped_release release;
        if (&other == this) throw mano::error("merge: an accumulator cannot merge itself (its rows would count twice)");
        const std::scoped_lock lock(mutex_, other.mutex_);
        as_shard ? acc_.merge_as_shard(other.acc_) : acc_.merge(other.acc_);
    }
    void set_shard_label(const std::string& label) {
        const std::lock_guard<std::mutex> lock(mutex_);
        acc_.set_shard_label(label);
    }
    py::object result() const {
        nlohmann::json j;
        {
            py::gil_scoped_release release;
            const std::lock_guard<std::mutex> lock(mutex_);
            j = acc_.finalize().to_json();
        }
        return to_python(j);
    }
    py::object state() const {
        nlohmann::json j;
        {
            py::gil_scoped_release release;
            const std::lock_guard<std::mutex> lock(mutex_);
            j = acc_.to_json();
        }
        return to_python(j);
    }
    py::object options() const { return to_python(acc_.opts().to_json()); }  // fixed at construction
    py_accumulator copy() const {
        py::gil_scoped_release release;
        return py_accumulator(locked_copy());
    }
    std::size_t rows() const {
        py::gil_scoped_release release;
        const std::lock_guard<std::mutex> lock(mutex_);
        return acc_.rows();
    }
    std::size_t cols() const { return acc_.cols(); }
    std::string architecture() const { return acc_.architecture(); }
    std::vector<std::string> shards() const {
        py::gil_scoped_release release;
        const std::lock_guard<std::mutex> lock(mutex_);
        std::vector<std::string> out;
        for (const auto id : acc_.shards()) out.push_back(mano::shard_name(id));
        return out;
    }

private:
    mano::accumulator locked_copy() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return acc_;
    }
    // An array whose rows the core can read in place, else a C-order copy (for a single push).
    static py::array rows_contiguous(const py::array& a, const std::string& what) {
        if (array_reader(a, what).contiguous()) return a;
        auto c = py::array::ensure(a, py::array::c_style);
        if (!c) throw py::error_already_set();
        return c;
    }

    mano::accumulator acc_;
    mutable std::mutex mutex_;
};

}  // namespace mano_python

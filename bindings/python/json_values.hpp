#pragma once
// JSON values across pybind11 as Python dicts, lists, numbers and texts (bindings/common/json_calls.hpp
// takes and gives nlohmann::json), each converted as its JSON text would be read: what the core
// gives back (a non-finite number is None, as nlohmann::json writes null; scalars by pybind11_json),
// and what Python gives (from_python).

#include <pybind11/pybind11.h>
#include <pybind11_json/pybind11_json.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include <mano/mano.hpp>

namespace mano_python {

namespace py = pybind11;

inline py::object to_python(const nlohmann::json& j) {
    if (j.is_number_float() && !std::isfinite(j.get<double>())) return py::none();
    if (j.is_array()) {
        py::list out(j.size());
        for (std::size_t i = 0; i < j.size(); ++i) out[i] = to_python(j[i]);
        return std::move(out);
    }
    if (j.is_object()) {
        py::dict out;
        for (auto it = j.cbegin(); it != j.cend(); ++it) out[py::str(it.key())] = to_python(it.value());
        return std::move(out);
    }
    return pyjson::from_json(j);
}

// A Python value as the JSON text json.dumps writes would parse: a whole number >= 0 is unsigned
// (as nlohmann::json's parser reads one, which the core's readers check), a non-finite number and
// what JSON cannot hold (a NumPy array, a key that is not a text) are refused. `what` names the
// value in the error.
inline nlohmann::json from_python(const py::handle& value, const std::string& what) {
    if (value.is_none()) return nullptr;
    if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
    if (py::isinstance<py::int_>(value)) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
        if (!overflow) return v >= 0 ? nlohmann::json(static_cast<std::uint64_t>(v)) : nlohmann::json(static_cast<std::int64_t>(v));
        if (overflow > 0) {
            const unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
            if (!PyErr_Occurred()) return static_cast<std::uint64_t>(u);
            PyErr_Clear();
        }
        const double x = PyLong_AsDouble(value.ptr());  // beyond 64 bits, as the parser reads such a number
        if (PyErr_Occurred()) {
            PyErr_Clear();
            throw mano::error(what + ": a whole number too large for JSON");
        }
        return x;
    }
    if (py::isinstance<py::float_>(value)) {
        const double x = value.cast<double>();
        if (!std::isfinite(x)) throw mano::error(what + ": " + py::repr(value).cast<std::string>() + " is not a JSON number");
        return x;
    }
    if (py::isinstance<py::str>(value)) return value.cast<std::string>();
    if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
        nlohmann::json out = nlohmann::json::array();
        for (const py::handle item : value) out.push_back(from_python(item, what));
        return out;
    }
    if (py::isinstance<py::dict>(value)) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, item] : value.cast<py::dict>()) {
            if (!py::isinstance<py::str>(key)) throw mano::error(what + ": a key " + py::repr(key).cast<std::string>() + " is not a text");
            out[key.cast<std::string>()] = from_python(item, what);
        }
        return out;
    }
    throw mano::error(what + ": a " + py::str(value.get_type().attr("__name__")).cast<std::string>() + " is not a JSON value");
}

// A call of json_calls with the GIL released, its value back as Python's.
template <class F>
py::object released(F&& f) {
    nlohmann::json out;
    {
        py::gil_scoped_release r;
        out = f();
    }
    return to_python(out);
}

}  // namespace mano_python

#include "audit_binding.hpp"

#include <cstdint>
#include <string>

#include <mano/mano.hpp>

#include "json_calls.hpp"
#include "json_values.hpp"

namespace mano_python {

namespace api = mano::bindings;
using nlohmann::json;

// Audit mode (docs/audit.md): the draw, its CSV, a labeled file's rows and labels, and the
// prediction with the audited rows' result.
void add_audit(py::module_& m) {
    m.def("audit_sample", [](std::uint64_t n_rows, std::uint64_t budget, std::uint64_t seed) {
        return released([&] { return api::audit_sample(n_rows, budget, seed); });
    });
    m.def("audit_file", [](std::uint64_t n_rows, std::size_t k, std::uint64_t budget, std::uint64_t seed, const std::string& source) {
        std::string text;
        {
            py::gil_scoped_release r;
            text = api::audit_file(n_rows, k, budget, seed, source);
        }
        return py::bytes(text);  // written as they are, byte for byte the file mano audit writes
    });
    m.def("parse_audit", [](const py::bytes& text, const std::string& file, std::uint64_t n_rows, std::size_t k,
                            const std::string& set_name) {
        std::string bytes = text;  // the file's bytes as they are: the core reads UTF-8 and its BOM
        return released([&] { return api::parse_audit(bytes, file, n_rows, k, set_name); });
    });
    m.def("audit_rows", [](const py::object& labeled, const std::string& name, std::uint64_t n_rows, std::size_t k) {
        const json j = from_python(labeled, name);
        return released([&] { return api::audit_rows(j, name, n_rows, k); });
    });
    m.def("predict_audited", [](const py::object& calibration, const py::object& result, const py::object& audited,
                                double level, const py::object& warnings) {
        const json c = from_python(calibration, "calibration"), r = from_python(result, "result");
        const json a = from_python(audited, "audited rows' result"), w = from_python(warnings, "audit warnings");
        return released([&] { return api::predict_audited(c, r, a, level, w); });
    });
    m.attr("audit_array_source") = mano::audit_array_source;
    m.attr("audit_max_rows") = mano::audit_max_rows;
    m.attr("audit_max_bytes") = mano::audit_max_bytes;
    m.attr("audit_max_seed") = mano::audit_max_seed;
    m.attr("audit_min_rows") = mano::audit_min_rows;
}

}  // namespace mano_python

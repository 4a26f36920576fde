#include "monitor_binding.hpp"

#include <pybind11/stl.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <mano/mano.hpp>

#ifdef MANO_WITH_MONITOR
#include "host/monitor.hpp"
#endif

namespace mano_python {

namespace py = pybind11;

#ifdef MANO_WITH_MONITOR
namespace {

// A name that is not UTF-8 (a Latin-1 path) shows its bytes as U+FFFD here; the report has them.
py::str text_of(const std::string& s) {
    PyObject* decoded = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
    if (!decoded) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(decoded);
}

py::list texts_of(const std::vector<std::string>& items) {
    py::list out;
    for (const auto& s : items) out.append(text_of(s));
    return out;
}

}  // namespace
#endif

void add_monitor(py::module_& m) {
#ifdef MANO_WITH_MONITOR
    // {"add", "time", "names", "notes"} as a dict: mano.monitor.add's return, the points' estimates in the history
    m.def("monitor_add", [](const std::string& history, const std::vector<std::string>& files, const std::string& calibration,
                            const std::string& at, const std::string& name, std::size_t chunk_size, unsigned threads,
                            const std::string& input) {
        mano::history::add_request r;
        r.input = mano::parse_input_kind(input);
        r.probabilities_setting = "input='probabilities'";
        r.history = history;
        r.files = files;
        r.calibration = calibration;
        r.at = at;
        r.at_option = "at";
        r.name = name;
        r.name_option = "name";
        r.chunk_size = chunk_size;
        r.threads = threads;
        mano::history::added a;
        {
            py::gil_scoped_release release;
            a = mano::history::add(r);
        }
        py::dict out;
        out["add"] = a.add;
        out["time"] = text_of(a.time);
        out["names"] = texts_of(a.names);
        out["notes"] = texts_of(a.notes);
        return out;
    });
    // what `mano monitor report --json` prints, as the text it streams (its points one at a time, so
    // that a report's memory stays flat: docs/monitor.md), which Python reads as that file
    m.def("monitor_report", [](const std::string& history, std::size_t reference, const std::string& reference_until,
                               const std::string& since) {
        mano::history::report_request r;
        r.history = history;
        r.reference = reference;
        r.reference_until = reference_until;
        r.since = since;
        r.reference_option = "reference=N";
        r.reference_until_option = "reference_until";
        r.since_option = "since";
        py::gil_scoped_release release;
        std::ostringstream out;
        mano::history::timeline(r).write_json(out);
        return out.str();
    });
#else
    (void)m;
#endif
}

}  // namespace mano_python

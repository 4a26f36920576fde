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

void add_monitor(py::module_& m) {
#ifdef MANO_WITH_MONITOR
    // {"add", "time", "names", "notes"}: mano.monitor.add's return, the points' estimates in the history
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
        // a name that is not UTF-8 (a Latin-1 path) shows its bytes as U+FFFD here; the report has them
        return nlohmann::json{{"add", a.add}, {"time", a.time}, {"names", a.names}, {"notes", a.notes}}.dump(
            -1, ' ', false, nlohmann::json::error_handler_t::replace);
    });
    // what `mano monitor report --json` prints
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

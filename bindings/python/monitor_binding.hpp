#pragma once
// mano.monitor's C++ side (module.cpp adds it): the monitoring history's add and report
// (native/host/monitor.hpp) in the Python process, with the GIL released while they run. A build
// without the history (MANO_WITH_MONITOR=OFF) has neither call, and mano.monitor says so.

#include <pybind11/pybind11.h>

namespace mano_python {

void add_monitor(pybind11::module_& m);

}  // namespace mano_python

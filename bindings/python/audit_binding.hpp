#pragma once
// Audit mode's calls of mano._core (module.cpp adds them; docs/audit.md).

#include <pybind11/pybind11.h>

namespace mano_python {

void add_audit(pybind11::module_& m);

}  // namespace mano_python

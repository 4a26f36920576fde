# Every dependency comes from a Debian 12 package; a missing one names the package to install.
macro(mano_require package debian_package)
  find_package(${package} ${ARGN} QUIET)
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR "${package} not found: install the Debian package ${debian_package} "
                        "(apt-get install ${debian_package}), or run .ci/setup as root")
  endif()
endmacro()

if(EMSCRIPTEN)
  include(cmake/mano_emscripten.cmake)
  return()
endif()

# Debian's xsimd target links the xtl target, which its config does not find by itself.
mano_require(xtl libxtl-dev)
mano_require(xsimd libxsimd-dev)
mano_require(nlohmann_json nlohmann-json3-dev)
mano_require(Eigen3 libeigen3-dev)
if(MANO_BUILD_CLI)
  mano_require(CLI11 libcli11-dev)
  # .npz members written by numpy.savez_compressed are deflated.
  mano_require(ZLIB zlib1g-dev)
endif()
if(MANO_BUILD_TESTS)
  mano_require(Catch2 catch2)
  mano_require(xtensor libxtensor-dev)
endif()

# COT's exact solver uses LEMON's network simplex header-only (no liblemon is linked).
find_path(MANO_LEMON_INCLUDE_DIR lemon/network_simplex.h)
if(NOT MANO_LEMON_INCLUDE_DIR)
  message(FATAL_ERROR "LEMON headers (lemon/network_simplex.h) not found: install the Debian package liblemon-dev "
                      "(apt-get install liblemon-dev), or run .ci/setup as root")
endif()

set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()

if(EMSCRIPTEN)
  set(mano_native OFF)
else()
  set(mano_native ON)
endif()

option(MANO_BUILD_TESTS "Build the Catch2 suites and register them with CTest" ${PROJECT_IS_TOP_LEVEL})
option(MANO_BUILD_CLI "Build the mano command-line tool" ${mano_native})
option(MANO_WITH_NPZ "Read .npz archives (needs zlib; OFF for a build without it, e.g. a cross build without the target's zlib)" ON)
option(MANO_WITH_MONITOR "Build the monitoring history (`mano monitor`, Python's mano.monitor: an SQLite file; needs libsqlite3-dev and libssl-dev; OFF for a build without it, e.g. a cross build without the target's SQLite)" ON)
# The kernels a build compiles (src/mano/CMakeLists.txt names them): empty for all of this
# platform's; a list (e.g. "sse2") keeps those and the portable scalar kernel, for a build that
# only needs to run the core, such as the sanitizer tree (.ci/sanitize).
set(MANO_KERNELS "" CACHE STRING "The kernels to compile (e.g. \"avx2;sse2\"; empty: all of this platform's; scalar always)")
option(MANO_BUILD_BENCH "Build the native speed harness in bench/perf (npm run bench)" OFF)
option(MANO_BUILD_FUZZ "Build the libFuzzer targets in tests/fuzz (clang, in a build tree of its own: see tests/fuzz/run.sh)" OFF)
set(MANO_WITH_PYTHON AUTO CACHE STRING "Build the Python package (bindings/python, pybind11): AUTO (when pybind11 is found), ON, OFF")
set_property(CACHE MANO_WITH_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(MANO_WITH_TORCH AUTO CACHE STRING "Build the LibTorch inference front end: AUTO (when Torch is found), ON, OFF")
set_property(CACHE MANO_WITH_TORCH PROPERTY STRINGS AUTO ON OFF)

if(NOT MANO_WITH_TORCH MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "MANO_WITH_TORCH must be AUTO, ON or OFF (got '${MANO_WITH_TORCH}')")
endif()

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
  if(MANO_WITH_NPZ)
    mano_require(ZLIB zlib1g-dev)
  else()
    message(STATUS "mano: .npz support off (MANO_WITH_NPZ=OFF): the CLI reads every other format")
  endif()
endif()
# The monitoring history (`mano monitor`, Python's mano.monitor) is an SQLite file; a calibration's
# identity in it is its SHA-256.
if(NOT EMSCRIPTEN)
  if(MANO_WITH_MONITOR)
    mano_require(SQLite3 libsqlite3-dev)
    mano_require(OpenSSL libssl-dev COMPONENTS Crypto)
  else()
    message(STATUS "mano: the monitoring history off (MANO_WITH_MONITOR=OFF): mano monitor and mano.monitor are left out")
  endif()
endif()
# The LibTorch front end (native/torch, `mano infer`): AUTO builds it when LibTorch and stb are
# found, ON requires them, OFF leaves it out. A CUDA LibTorch (e.g. a PyTorch install's, through
# -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')) runs it on GPUs.
set(MANO_TORCH_ENABLED OFF)
if(MANO_BUILD_CLI AND NOT MANO_WITH_TORCH STREQUAL "OFF")
  find_package(Torch QUIET)
  find_path(MANO_STB_INCLUDE_DIR stb_image.h PATH_SUFFIXES stb)
  if(Torch_FOUND AND MANO_STB_INCLUDE_DIR)
    set(MANO_TORCH_ENABLED ON)
    message(STATUS "mano: LibTorch front end on (Torch ${Torch_VERSION}, stb in ${MANO_STB_INCLUDE_DIR})")
    # A LibTorch built with the old libstdc++ string ABI (older PyTorch wheels) needs every
    # translation unit built the same way, or strings cannot cross between them.
    if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
      add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=0)
    endif()
  elseif(MANO_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "MANO_WITH_TORCH=ON but LibTorch or stb_image.h was not found: install the Debian packages "
                        "libtorch-dev and libstb-dev (apt-get install libtorch-dev libstb-dev), or point "
                        "CMAKE_PREFIX_PATH at a LibTorch; configure with -DMANO_WITH_TORCH=OFF to build without it")
  else()
    message(STATUS "mano: LibTorch front end off (install libtorch-dev and libstb-dev for `mano infer`)")
  endif()
endif()
# The Python package (bindings/python): AUTO builds it when pybind11 and Python's headers are
# found, ON requires them. Debian's interpreter (/usr/bin/python3, with its NumPy) is preferred
# over a python3 earlier on PATH; -DPython_EXECUTABLE=... picks another.
set(MANO_PYTHON_ENABLED OFF)
if(MANO_BUILD_CLI AND NOT MANO_WITH_PYTHON STREQUAL "OFF")
  if(NOT DEFINED Python_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python 3 QUIET COMPONENTS Interpreter Development.Module)
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 CONFIG QUIET)
  if(Python_FOUND AND pybind11_FOUND)
    set(MANO_PYTHON_ENABLED ON)
    message(STATUS "mano: Python package on (Python ${Python_VERSION}, pybind11 ${pybind11_VERSION})")
  elseif(MANO_WITH_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "MANO_WITH_PYTHON=ON but pybind11 or Python's headers were not found: install the Debian "
                        "packages pybind11-dev and python3-dev (apt-get install pybind11-dev python3-dev), or "
                        "configure with -DMANO_WITH_PYTHON=OFF")
  else()
    message(STATUS "mano: Python package off (install pybind11-dev and python3-dev for `import mano`)")
  endif()
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

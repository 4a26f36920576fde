# The WebAssembly build (Emscripten 3.1.6 from Debian). Included by mano_dependencies.cmake.

# The header-only dependencies are Debian's, in /usr/include. That folder must never be on an
# Emscripten include path (glibc's headers would shadow the Emscripten sysroot's), so each
# library's own folder is linked into a folder of the build tree, and that folder is included.
set(MANO_WASM_INCLUDE_DIR ${PROJECT_BINARY_DIR}/wasm_include)
file(MAKE_DIRECTORY ${MANO_WASM_INCLUDE_DIR})
function(mano_wasm_headers target header debian_package)
  if(NOT EXISTS /usr/include/${header})
    message(FATAL_ERROR "/usr/include/${header} not found: install the Debian package ${debian_package} "
                        "(apt-get install ${debian_package}), or run .ci/setup as root")
  endif()
  foreach(entry ${ARGN})
    file(CREATE_LINK /usr/include/${entry} ${MANO_WASM_INCLUDE_DIR}/${entry} SYMBOLIC)
  endforeach()
  if(NOT TARGET ${target})
    add_library(${target} INTERFACE IMPORTED GLOBAL)
    target_include_directories(${target} SYSTEM INTERFACE ${MANO_WASM_INCLUDE_DIR} ${MANO_WASM_INCLUDE_DIR}/eigen3)
  endif()
endfunction()
mano_wasm_headers(xsimd xsimd/xsimd.hpp libxsimd-dev xsimd xtl)
mano_wasm_headers(nlohmann_json::nlohmann_json nlohmann/json.hpp nlohmann-json3-dev nlohmann)
mano_wasm_headers(Eigen3::Eigen eigen3/Eigen libeigen3-dev eigen3)
mano_wasm_headers(mano_lemon lemon/network_simplex.h liblemon-dev lemon)
set(MANO_LEMON_INCLUDE_DIR ${MANO_WASM_INCLUDE_DIR})
if(MANO_BUILD_TESTS)
  mano_wasm_headers(Catch2::Catch2 catch2/catch.hpp catch2 catch2)
  mano_wasm_headers(xtensor xtensor/xtensor.hpp libxtensor-dev xtensor xtensor.hpp)
endif()

# Everything is compiled with C++ exceptions on (mano::error reaches the bindings and the tests)
# and the SIMD128 instruction set (for the compiler's own vectorization). Only the kernel adds
# -msse4.1 (src/mano/CMakeLists.txt), whose intrinsics Emscripten maps onto SIMD128: Eigen's SSE
# path has x86 inline assembly, so Eigen must not see the SSE macros.
add_compile_options(-fexceptions -msimd128)
add_link_options(-fexceptions)

set(MANO_DIST_DIR ${PROJECT_SOURCE_DIR}/dist CACHE PATH "Where the WebAssembly module and the npm package files go")

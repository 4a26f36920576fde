# Cross-compiling for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu (.ci/cross).
# The header-only dependencies (xsimd, Eigen, nlohmann-json, CLI11, Catch2, LEMON) are the
# host's: their headers are the same on every architecture. zlib comes from Debian multiarch
# (zlib1g-dev:arm64). Programs are linked statically, so qemu-aarch64 runs them without a
# sysroot (CMAKE_CROSSCOMPILING_EMULATOR lets CTest do the same).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_EXE_LINKER_FLAGS_INIT -static)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# xsimd's package config sits in the host's multiarch folder (Debian's libxsimd-dev is built per
# architecture, though its headers are the same everywhere).
list(APPEND CMAKE_PREFIX_PATH /usr/lib/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux-gnu/cmake)
set(ZLIB_INCLUDE_DIR /usr/include CACHE PATH "")
set(ZLIB_LIBRARY /usr/lib/aarch64-linux-gnu/libz.a CACHE FILEPATH "")

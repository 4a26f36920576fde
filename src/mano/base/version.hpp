#pragma once

// The one place the version is written: CMake reads these three lines, version_string is made
// from them, and the `version` test checks that package.json and package-lock.json agree.
#define MANO_VERSION_MAJOR 0
#define MANO_VERSION_MINOR 1
#define MANO_VERSION_PATCH 0

#define MANO_VERSION_STRINGIFY_(x) #x
#define MANO_VERSION_STRINGIFY(x) MANO_VERSION_STRINGIFY_(x)

namespace mano {
inline constexpr const char* version_string = MANO_VERSION_STRINGIFY(MANO_VERSION_MAJOR) "."
    MANO_VERSION_STRINGIFY(MANO_VERSION_MINOR) "." MANO_VERSION_STRINGIFY(MANO_VERSION_PATCH);
}

#undef MANO_VERSION_STRINGIFY
#undef MANO_VERSION_STRINGIFY_

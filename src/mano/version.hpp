#pragma once

#define MANO_VERSION_MAJOR 0
#define MANO_VERSION_MINOR 1
#define MANO_VERSION_PATCH 0

namespace mano {
inline constexpr const char* version_string = "0.1.0";
}

#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "mano/error.hpp"

namespace mano {
namespace detail {

// Every serialized state names its format and version; refuse anything else before reading it.
inline void check_state_header(const nlohmann::json& j, const std::string& format, const std::string& what,
                               int version = 1) {
    if (!j.is_object() || j.value("format", "") != format)
        throw error(what + ": not a mano " + what + " (\"format\" is not \"" + format + "\")");
    if (j.at("version").get<int>() != version)
        throw error(what + ": unsupported version " + j.at("version").dump() + " (this build reads " +
                    std::to_string(version) + ")");
}

}  // namespace detail
}  // namespace mano

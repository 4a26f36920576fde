#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
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

// A count in a serialized state: a JSON integer >= 0 (a plain get<size_t>() wraps -5 to 2^64 - 5).
inline std::size_t count_of(const nlohmann::json& object, const char* key, const std::string& what) {
    const nlohmann::json& value = object.at(key);
    if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
        throw error(what + ": \"" + key + "\" must be a whole number >= 0 (got " + value.dump().substr(0, 40) + ")");
    return value.get<std::size_t>();
}

// Every key of `object` is one of `known`: a misspelled or foreign key is refused, not ignored.
inline void check_known_keys(const nlohmann::json& object, std::initializer_list<const char*> known, const std::string& what) {
    for (const auto& item : object.items()) {
        bool found = false;
        for (const char* k : known) found = found || item.key() == k;
        if (!found) throw error(what + ": unknown key \"" + item.key().substr(0, 60) + "\"");
    }
}

}  // namespace detail
}  // namespace mano

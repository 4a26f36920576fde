#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {
namespace detail {

// A JSON number that is a whole number within [low, high]: an integer, or a float of whole value
// such as 10.0 (Python's json writes floats so, and JavaScript cannot tell 10.0 from 10), taken up
// to 2^53 where a double holds every whole number. Not 2.5, which nlohmann's get<int>()
// truncates, nor 1e300, which it converts with undefined behaviour.
inline std::optional<std::int64_t> whole_number(const nlohmann::json& value, std::int64_t low, std::int64_t high) {
    if (value.is_number_unsigned()) {
        const auto u = value.get<std::uint64_t>();
        if (high < 0 || u > static_cast<std::uint64_t>(high) || (low > 0 && u < static_cast<std::uint64_t>(low))) return std::nullopt;
        return static_cast<std::int64_t>(u);
    }
    if (value.is_number_integer()) {
        const auto i = value.get<std::int64_t>();
        if (i < low || i > high) return std::nullopt;
        return i;
    }
    if (value.is_number_float()) {
        const double x = value.get<double>();
        constexpr double exact = 9007199254740992.0;  // 2^53
        if (!(x >= -exact && x <= exact) || x != static_cast<double>(static_cast<std::int64_t>(x))) return std::nullopt;
        const auto i = static_cast<std::int64_t>(x);
        if (i < low || i > high) return std::nullopt;
        return i;
    }
    return std::nullopt;
}

// Every serialized state names its format and version; refuse anything else before reading it.
// `remedy` says how to get a state of this version, e.g. "emit it again with this mano".
inline void check_state_header(const nlohmann::json& j, const std::string& format, const std::string& what,
                               int version = 1, const std::string& remedy = "") {
    if (!j.is_object() || !j.contains("format") || j.at("format") != format)
        throw error(what + ": not a mano " + what + " (\"format\" is not \"" + format + "\")");
    if (whole_number(j.at("version"), version, version) != version)
        throw error(what + ": unsupported version " + printable(j.at("version").dump(), 40) + " (this build reads " +
                    std::to_string(version) + (remedy.empty() ? "" : "; " + remedy) + ")");
}

// A whole number in a serialized state (whole_number), within [low, high].
inline std::int64_t integer_of(const nlohmann::json& value, const std::string& what, const std::string& key,
                               std::int64_t low, std::int64_t high) {
    const auto got = whole_number(value, low, high);
    if (!got)
        throw error(what + ": \"" + printable(key, 60) + "\" must be a whole number from " + std::to_string(low) + " to " +
                    std::to_string(high) + " (got " + printable(value.dump(), 40) + ")");
    return *got;
}

// A count in a serialized state: a whole number >= 0 (a plain get<size_t>() wraps -5 to 2^64 - 5).
inline std::size_t count_of(const nlohmann::json& object, const char* key, const std::string& what) {
    const nlohmann::json& value = object.at(key);
    if (value.is_number_unsigned()) return value.get<std::size_t>();
    const auto got = whole_number(value, 0, std::numeric_limits<std::int64_t>::max());
    if (!got)
        throw error(what + ": \"" + key + "\" must be a whole number >= 0 (got " + printable(value.dump(), 40) + ")");
    return static_cast<std::size_t>(*got);
}

// The number under `key` of `object`, refused naming the key when it is missing or not a number
// (nlohmann's own message says only "type must be number").
inline double number_of(const nlohmann::json& object, const char* key, const std::string& what) {
    if (!object.is_object() || !object.contains(key)) throw error(what + ": missing \"" + key + "\"");
    const nlohmann::json& value = object.at(key);
    if (!value.is_number())
        throw error(what + ": \"" + key + "\" must be a number (got " + printable(value.dump(), 40) + ")");
    return value.get<double>();
}

// The text under `key` of `object`, refused naming the key when it is missing or not a string.
inline std::string text_of(const nlohmann::json& object, const char* key, const std::string& what) {
    if (!object.is_object() || !object.contains(key)) throw error(what + ": missing \"" + key + "\"");
    const nlohmann::json& value = object.at(key);
    if (!value.is_string()) throw error(what + ": \"" + key + "\" must be a string (got " + printable(value.dump(), 40) + ")");
    return value.get<std::string>();
}

// A method's or a normalization's name in a list: text, or refused naming the list.
inline std::string name_in(const nlohmann::json& value, const std::string& what) {
    if (!value.is_string()) throw error(what + " must hold names (got " + printable(value.dump(), 40) + ")");
    return value.get<std::string>();
}

// A JSON list of numbers, refused naming `what` (e.g. `calibration: "residuals"`) when it is not
// one; nlohmann's get<std::vector<double>>() would say only "type must be number".
inline std::vector<double> numbers_in(const nlohmann::json& value, const std::string& what) {
    if (!value.is_array()) throw error(what + " must be a list of numbers (got " + printable(value.dump(), 40) + ")");
    std::vector<double> out;
    out.reserve(value.size());
    for (const auto& x : value) {
        if (!x.is_number()) throw error(what + " must hold numbers only (got " + printable(x.dump(), 40) + ")");
        out.push_back(x.get<double>());
    }
    return out;
}

// The list of numbers under `key` of `object` (numbers_in), refused naming the key when missing.
inline std::vector<double> numbers_of(const nlohmann::json& object, const char* key, const std::string& what) {
    if (!object.is_object() || !object.contains(key)) throw error(what + ": missing \"" + key + "\"");
    return numbers_in(object.at(key), what + ": \"" + key + "\"");
}

// What a JSON library error says, for a user: without nlohmann's "[json.exception.type_error.302]"
// tag, a missing key named as such.
inline std::string json_error_text(const nlohmann::json::exception& e) {
    std::string text = e.what();
    if (text.rfind("[json.exception.", 0) == 0) {
        const auto end = text.find("] ");
        if (end != std::string::npos) text = text.substr(end + 2);
    }
    if (text.rfind("key '", 0) == 0 && text.size() > 15 && text.compare(text.size() - 11, 11, "' not found") == 0)
        return "missing \"" + text.substr(5, text.size() - 16) + "\"";
    return "a value of the wrong kind (" + text + ")";
}

// Every key of `object` is one of `known`: a misspelled or foreign key is refused, not ignored.
inline void check_known_keys(const nlohmann::json& object, std::initializer_list<const char*> known, const std::string& what) {
    for (const auto& item : object.items()) {
        bool found = false;
        for (const char* k : known) found = found || item.key() == k;
        if (!found) throw error(what + ": unknown key \"" + printable(item.key(), 60) + "\"");
    }
}

// A 64-bit hash of a JSON tree that mano built: numbers by type and value (a double by its bits),
// strings by their bytes, objects in key order. It reads values, never memory layout or text, so
// native and WebAssembly builds give the same hash for the same tree.
class json_hasher {
public:
    std::uint64_t of(const nlohmann::json& j) {
        add(j);
        std::uint64_t h = acc_ ^ words_;
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ULL;
        return h ^ (h >> 33);
    }

private:
    // xxHash64's round: each word moves every bit of the accumulator
    void word(std::uint64_t w) {
        acc_ += w * 0xc2b2ae3d27d4eb4fULL;
        acc_ = ((acc_ << 31) | (acc_ >> 33)) * 0x9e3779b185ebca87ULL;
        ++words_;
    }
    void text(const std::string& s) {
        word(s.size());
        for (std::size_t i = 0; i < s.size(); i += 8) {
            std::uint64_t w = 0;
            for (std::size_t b = i; b < s.size() && b < i + 8; ++b)
                w |= std::uint64_t{static_cast<unsigned char>(s[b])} << (8 * (b - i));
            word(w);
        }
    }
    void add(const nlohmann::json& j) {
        using type = nlohmann::json::value_t;
        const type t = j.type();
        // a tag per kind of value, fixed here rather than taken from the library's enum
        word(t == type::null ? 0 : t == type::boolean ? 1 : t == type::number_integer || t == type::number_unsigned ? 2
             : t == type::number_float ? 3 : t == type::string ? 4 : t == type::array ? 5 : t == type::object ? 6 : 7);
        if (t == type::boolean) {
            word(*j.get_ptr<const bool*>() ? 1 : 0);
        } else if (t == type::number_integer || t == type::number_unsigned) {
            word(t == type::number_integer ? static_cast<std::uint64_t>(*j.get_ptr<const std::int64_t*>())
                                           : *j.get_ptr<const std::uint64_t*>());
        } else if (t == type::number_float) {
            std::uint64_t bits;
            std::memcpy(&bits, j.get_ptr<const double*>(), sizeof bits);
            word(bits);
        } else if (t == type::string) {
            text(*j.get_ptr<const std::string*>());
        } else if (t == type::array || t == type::object) {
            word(j.size());
            for (auto item = j.begin(); item != j.end(); ++item) {
                if (t == type::object) text(item.key());
                add(*item);
            }
        }
    }

    std::uint64_t acc_ = 0x27d4eb2f165667c5ULL, words_ = 0;
};

inline std::uint64_t json_hash(const nlohmann::json& j) { return json_hasher().of(j); }

// A shard identity as states write it: 16 lowercase hexadecimal digits.
inline std::string shard_name(std::uint64_t id) {
    static const char digits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i, id >>= 4) out[static_cast<std::size_t>(i)] = digits[id & 15];
    return out;
}

inline std::optional<std::uint64_t> parse_shard_name(const std::string& name) {
    if (name.size() != 16) return std::nullopt;
    std::uint64_t id = 0;
    for (const char c : name) {
        const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0) return std::nullopt;
        id = id << 4 | static_cast<std::uint64_t>(digit);
    }
    return id;
}

}  // namespace detail
}  // namespace mano

#pragma once
// Every JSON file mano reads (accumulator states, calibrations, manifests, label marginals, the
// .safetensors header) goes through these, with limits that do not depend on the input: a size
// per kind of file and a nesting depth, so that a hostile file costs bounded memory and time.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace mano {
namespace io {

// Deeper JSON is refused: no file mano reads nests beyond a few levels.
inline constexpr int json_max_depth = 64;

// Sizes of the files, by kind. States hold COT's rows and the nuclear norms' K x K matrices.
inline constexpr std::uint64_t state_max_bytes = std::uint64_t{4} << 30;
inline constexpr std::uint64_t calibration_max_bytes = std::uint64_t{256} << 20;
inline constexpr std::uint64_t manifest_max_bytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t marginal_max_bytes = std::uint64_t{64} << 20;

// Parses `text`; throws mano::error "PATH: WHAT ..." when it is not JSON or nests deeper than
// json_max_depth.
nlohmann::json parse_json(const std::string& text, const std::string& path, const std::string& what);

// The bytes of the regular file at `path`; throws mano::error naming it when it cannot be opened or
// is larger than `max_bytes` (saying so).
std::string read_text(const std::string& path, const std::string& what, std::uint64_t max_bytes);

// Reads and parses the file at `path`; throws mano::error naming it when it cannot be opened, is
// larger than `max_bytes` (saying so) or is not JSON.
nlohmann::json read_json(const std::string& path, const std::string& what, std::uint64_t max_bytes);

}  // namespace io
}  // namespace mano

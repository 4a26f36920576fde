#pragma once
// The manifest `mano eval`, `calibrate` and `predict --manifest` read: labeled shifted test sets
// and an optional labeled source set, with paths relative to the manifest's folder.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mano {
namespace io {

// Set and group names are labels for tables and plots, at most this many bytes (UTF-8; the JSON
// parser refuses anything else).
inline constexpr std::size_t manifest_max_name_bytes = 256;
// Paths in a manifest, at most this many bytes (PATH_MAX on Linux).
inline constexpr std::size_t manifest_max_path_bytes = 4096;

// Whether a manifest may name files outside its own folder: absolute paths elsewhere, "..", or
// symbolic links whose targets lie elsewhere. Refused by default, so that a manifest from
// someone else cannot make mano read (and quote in its messages) any file the user can read.
enum class outside_paths { refuse, allow };

struct manifest_set {
    std::string name;
    std::string group;   // "" when absent
    std::string logits;  // resolved against the manifest's folder
    std::string labels;  // "" when absent
};

struct manifest_source {
    std::string logits;
    std::string labels;
};

struct manifest {
    std::string path;
    std::optional<manifest_source> source;
    std::vector<manifest_set> sets;
};

// {"source": {"logits": F, "labels": F}?, "sets": [{"name": S, "logits": F, "labels": F?,
// "group": S?}, ...]}. Set names are unique; unknown keys are errors (they are usually typos).
// Every problem is a mano::error starting with the manifest's path, and a file outside the
// manifest's folder is one unless `outside` allows it.
manifest read_manifest(const std::string& path, outside_paths outside = outside_paths::refuse);
manifest parse_manifest(const std::string& text, const std::string& path, outside_paths outside = outside_paths::refuse);
// The same from parsed JSON.
manifest manifest_of(const nlohmann::json& j, const std::string& path, outside_paths outside = outside_paths::refuse);

}  // namespace io
}  // namespace mano

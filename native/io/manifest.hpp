#pragma once
// The manifest `mano eval`, `calibrate` and `predict --manifest` read: labeled shifted test sets
// and an optional labeled source set, with paths relative to the manifest's folder.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mano {
namespace io {

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
// Every problem is a mano::error starting with the manifest's path.
manifest read_manifest(const std::string& path);
manifest parse_manifest(const std::string& text, const std::string& path);
// The same from parsed JSON.
manifest manifest_of(const nlohmann::json& j, const std::string& path);

}  // namespace io
}  // namespace mano

#include "io/manifest.hpp"

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include <mano/error.hpp>

#include "io/json.hpp"

#include "io/detail.hpp"

namespace mano {
namespace io {

namespace {

using json = nlohmann::json;

// detail::fail escapes control characters (a key may hold "\n"), so the message stays one line.
[[noreturn]] void fail(const std::string& path, const std::string& message) { detail::fail(path, message); }

void check_keys(const std::string& path, const json& object, const std::string& where,
                const std::set<std::string>& allowed) {
    for (const auto& item : object.items())
        if (!allowed.count(item.key())) {
            std::string names;
            for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
            fail(path, where + " has an unknown key \"" + item.key() + "\" (expected " + names + ")");
        }
}

std::string text_field(const std::string& path, const json& object, const std::string& where, const char* key,
                       bool required) {
    const auto found = object.find(key);
    if (found == object.end()) {
        if (required) fail(path, where + " has no \"" + key + "\"");
        return "";
    }
    if (!found->is_string() || found->get_ref<const std::string&>().empty())
        fail(path, where + ": \"" + key + "\" must be a non-empty string");
    return found->get<std::string>();
}

std::string resolve(const std::filesystem::path& folder, const std::string& file) {
    const std::filesystem::path p(file);
    return (p.is_absolute() ? p : folder / p).lexically_normal().string();
}

}  // namespace

manifest parse_manifest(const std::string& text, const std::string& path) {
    return manifest_of(parse_json(text, path, "manifest"), path);
}

manifest manifest_of(const nlohmann::json& j, const std::string& path) {
    if (!j.is_object()) fail(path, "a manifest is a JSON object with a \"sets\" array");
    check_keys(path, j, "the manifest", {"source", "sets"});
    const auto folder = std::filesystem::path(path).parent_path();
    manifest m;
    m.path = path;
    if (j.contains("source")) {
        const auto& s = j.at("source");
        if (!s.is_object()) fail(path, "\"source\" must be an object with \"logits\" and \"labels\"");
        check_keys(path, s, "\"source\"", {"logits", "labels"});
        m.source = manifest_source{resolve(folder, text_field(path, s, "\"source\"", "logits", true)),
                                   resolve(folder, text_field(path, s, "\"source\"", "labels", true))};
    }
    const auto sets = j.find("sets");
    if (sets == j.end() || !sets->is_array() || sets->empty())
        fail(path, "the manifest needs a non-empty \"sets\" array");
    std::set<std::string> names;
    for (std::size_t i = 0; i < sets->size(); ++i) {
        const auto& s = (*sets)[i];
        const std::string where = "sets[" + std::to_string(i) + "]";
        if (!s.is_object()) fail(path, where + " must be an object with \"name\", \"logits\" and \"labels\"");
        check_keys(path, s, where, {"name", "logits", "labels", "group"});
        manifest_set set;
        set.name = text_field(path, s, where, "name", true);
        if (!names.insert(set.name).second) fail(path, where + ": the set name \"" + set.name + "\" is used twice");
        set.group = text_field(path, s, where, "group", false);
        set.logits = resolve(folder, text_field(path, s, where, "logits", true));
        const std::string labels = text_field(path, s, where, "labels", false);
        if (!labels.empty()) set.labels = resolve(folder, labels);
        m.sets.push_back(std::move(set));
    }
    return m;
}

manifest read_manifest(const std::string& path) { return manifest_of(read_json(path, "manifest", manifest_max_bytes), path); }

}  // namespace io
}  // namespace mano

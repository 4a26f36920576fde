#include "io/manifest.hpp"

#include <filesystem>
#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include <mano/base/error.hpp>

#include "io/json.hpp"

#include "io/detail.hpp"

namespace mano {
namespace io {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Paths quoted in messages are cut after this many bytes.
constexpr std::size_t shown_path_bytes = 200;

// detail::fail escapes control characters (a key may hold "\n"), so the message stays one line.
[[noreturn]] void fail(const std::string& path, const std::string& message) { detail::fail(path, message); }

void check_keys(const std::string& path, const json& object, const std::string& where,
                const std::set<std::string>& allowed) {
    for (const auto& item : object.items())
        if (!allowed.count(item.key())) {
            std::string names;
            for (const auto& a : allowed) names += (names.empty() ? "" : ", ") + a;
            fail(path, where + " has an unknown key \"" + printable(item.key(), 60) + "\" (expected " + names + ")");
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

// A set's "name" or "group": a short label.
std::string name_field(const std::string& path, const json& object, const std::string& where, const char* key,
                       bool required) {
    std::string name = text_field(path, object, where, key, required);
    if (name.size() > manifest_max_name_bytes)
        fail(path, where + ": \"" + key + "\" '" + printable(name, 40) + "' is " + std::to_string(name.size()) +
                       " bytes long; names are at most " + std::to_string(manifest_max_name_bytes) + " bytes");
    return name;
}

// Whether `file` is `folder` or lies below it, component by component.
bool within(const fs::path& folder, const fs::path& file) {
    auto f = folder.begin();
    auto p = file.begin();
    for (; f != folder.end(); ++f, ++p) {
        if (f->empty() && std::next(f) == folder.end()) break;  // a trailing separator
        if (p == file.end() || *f != *p) return false;
    }
    return true;
}

// Resolves the manifest's paths against its folder and keeps them inside it.
class path_resolver {
public:
    path_resolver(const std::string& manifest_path, outside_paths outside)
        : manifest_(manifest_path), folder_(fs::path(manifest_path).parent_path()), outside_(outside) {
        if (outside_ == outside_paths::allow) return;
        std::error_code ec;
        absolute_folder_ = fs::absolute(folder_.empty() ? fs::path(".") : folder_, ec).lexically_normal();
        if (!ec) real_folder_ = fs::weakly_canonical(absolute_folder_, ec);
        if (ec) fail(manifest_, "cannot resolve the manifest's folder (" + ec.message() + ")");
    }

    // `where` is "sets[3].labels"; the path is returned as the readers will open it (and name it
    // in their messages): relative to the working directory when the manifest's path was.
    std::string resolve(const std::string& where, const std::string& file) const {
        if (file.size() > manifest_max_path_bytes)
            fail(manifest_, where + ": the path is " + std::to_string(file.size()) + " bytes long; paths are at most " +
                                std::to_string(manifest_max_path_bytes) + " bytes");
        const std::string quoted = "'" + printable(file, shown_path_bytes) + "'";
        // the operating system would read the path only up to the NUL, not the file named here
        if (file.find('\0') != std::string::npos) fail(manifest_, where + ": " + quoted + " holds a NUL character");
        const fs::path p(file);
        const fs::path resolved = (p.is_absolute() ? p : folder_ / p).lexically_normal();
        if (outside_ == outside_paths::allow) return resolved.string();
        const auto refuse = [&](const std::string& why) {
            fail(manifest_, where + ": " + quoted + " leaves the manifest's folder" + why +
                                "; pass --allow-outside-paths to read it");
        };
        // the file the readers will open, with every symbolic link followed, against the folder's
        const fs::path absolute = p.is_absolute() ? resolved : (absolute_folder_ / p).lexically_normal();
        std::error_code ec;
        const fs::path real = fs::weakly_canonical(absolute, ec);
        if (ec) fail(manifest_, where + ": " + quoted + " cannot be resolved (" + ec.message() + ")");
        if (!within(real_folder_, real)) {
            const bool link = within(absolute_folder_, absolute);
            refuse(link ? " (through a symbolic link, to '" + printable(real.string(), shown_path_bytes) + "')" : "");
        }
        return resolved.string();
    }

private:
    std::string manifest_;
    fs::path folder_;
    outside_paths outside_;
    fs::path absolute_folder_, real_folder_;
};

}  // namespace

manifest parse_manifest(const std::string& text, const std::string& path, outside_paths outside) {
    return manifest_of(parse_json(text, path, "manifest"), path, outside);
}

manifest manifest_of(const nlohmann::json& j, const std::string& path, outside_paths outside) {
    if (!j.is_object()) fail(path, "a manifest is a JSON object with a \"sets\" array");
    check_keys(path, j, "the manifest", {"source", "sets"});
    const path_resolver files(path, outside);
    // `where` names the object in messages about its keys; `at` names it in "sets[3].labels"
    const auto file_field = [&](const json& object, const std::string& where, const std::string& at, const char* key,
                                bool required) {
        const std::string file = text_field(path, object, where, key, required);
        return file.empty() ? file : files.resolve(at + "." + key, file);
    };
    manifest m;
    m.path = path;
    if (j.contains("source")) {
        const auto& s = j.at("source");
        if (!s.is_object()) fail(path, "\"source\" must be an object with \"logits\" and \"labels\"");
        check_keys(path, s, "\"source\"", {"logits", "labels"});
        manifest_source source;
        source.logits = file_field(s, "\"source\"", "source", "logits", true);
        source.labels = file_field(s, "\"source\"", "source", "labels", true);
        m.source = std::move(source);
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
        set.name = name_field(path, s, where, "name", true);
        if (!names.insert(set.name).second) fail(path, where + ": the set name \"" + set.name + "\" is used twice");
        set.group = name_field(path, s, where, "group", false);
        set.logits = file_field(s, where, where, "logits", true);
        set.labels = file_field(s, where, where, "labels", false);
        m.sets.push_back(std::move(set));
    }
    return m;
}

manifest read_manifest(const std::string& path, outside_paths outside) {
    return manifest_of(read_json(path, "manifest", manifest_max_bytes), path, outside);
}

}  // namespace io
}  // namespace mano

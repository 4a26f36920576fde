// The manifest parser: the whole input is the JSON text, parsed as if it were in a folder and as
// if it were in the working directory, refusing paths that leave the folder and allowing them.
#include <set>

#include "fuzz_support.hpp"
#include "io/manifest.hpp"

namespace {

void parse(const std::string& text, const std::string& path, mano::io::outside_paths outside) {
    try {
        const mano::io::manifest m = mano::io::parse_manifest(text, path, outside);
        if (m.path != path) mano_fuzz::finding("the manifest's path changed");
        if (m.sets.empty()) mano_fuzz::finding("a manifest without sets was accepted");
        std::set<std::string> names;
        for (const auto& s : m.sets) {
            if (s.name.empty() || s.logits.empty()) mano_fuzz::finding("a set without a name or logits was accepted");
            if (!names.insert(s.name).second) mano_fuzz::finding("the set name '" + s.name + "' was accepted twice");
        }
        if (m.source && (m.source->logits.empty() || m.source->labels.empty()))
            mano_fuzz::finding("a source without logits or labels was accepted");
    } catch (const mano::error& e) {
        mano_fuzz::check_error(e, path);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const auto outside : {mano::io::outside_paths::refuse, mano::io::outside_paths::allow}) {
        parse(text, "/data/shifts/manifest.json", outside);
        parse(text, "manifest.json", outside);
    }
    return 0;
}

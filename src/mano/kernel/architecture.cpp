#include "mano/kernel/architecture.hpp"

#include <algorithm>
#include <cstdlib>

#include "mano/kernel/kernel.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

std::vector<std::string> compiled_architectures() {
    std::vector<std::string> names;
    for (const auto& kernel : detail::compiled_kernels()) names.emplace_back(kernel.name);
    return names;
}

std::vector<std::string> available_architectures() {
    std::vector<std::string> names;
    for (const auto& kernel : detail::compiled_kernels())
        if (kernel.supported()) names.emplace_back(kernel.name);
    return names;
}

namespace detail {

const shift_kernels& shift_kernels_of(const std::string& architecture) {
    for (const auto& kernel : compiled_kernels())
        if (architecture == kernel.name) return *kernel.shift;
    throw error("no kernel named '" + printable(architecture, 60) + "'");
}

}  // namespace detail

std::string resolve_architecture(const std::string& requested) {
    std::string name = requested;
    std::string origin = "architecture option";
    if (name.empty()) {
        const char* env = std::getenv("MANO_ARCH");
        if (env != nullptr && *env != '\0') {
            name = env;
            origin = "MANO_ARCH environment variable";
        }
    }
    const auto available = available_architectures();
    if (available.empty()) throw error("no compiled kernel runs on this CPU");
    if (name.empty() || name == "auto") return available.front();
    for (const auto& a : available)
        if (a == name) return a;
    const auto all = compiled_architectures();
    const bool compiled = std::find(all.begin(), all.end(), name) != all.end();
    throw error(origin + " '" + printable(name, 60) + "' " +
                (compiled ? "is not supported by this CPU" : "is not a known architecture") +
                "; available here: " + join(available, ", "));
}

}  // namespace mano

#include "mano/scan/registry.hpp"

#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

method parse_method(const std::string& name) {
    for (const auto& m : method_table)
        if (name == m.name) return m.id;
    std::string known;
    for (const auto& m : method_table) known += (known.empty() ? "" : ", ") + std::string(m.name);
    throw error("unknown method '" + printable(name, 60) + "'; known methods: " + known);
}

std::vector<method> default_methods(std::size_t k, std::size_t n, unsigned inputs) {
    std::vector<method> methods;
    for (const auto& m : method_table) {
        const bool fits_k = m.default_max_k == 0 || k <= m.default_max_k;
        const bool fits_n = m.default_max_logits == 0 ||
                            (n > 0 && static_cast<double>(n) * static_cast<double>(k) <= static_cast<double>(m.default_max_logits));
        if (m.by_default && (m.needs & ~inputs) == 0 && fits_k && fits_n) methods.push_back(m.id);
    }
    return methods;
}

const char* returns_name(method_returns r) noexcept { return r == method_returns::score ? "score" : "accuracy"; }

const char* cost_name(method_cost c) noexcept {
    switch (c) {
        case method_cost::linear: return "linear";
        case method_cost::quadratic: return "quadratic";
        case method_cost::keeps_rows: return "keeps_rows";
    }
    return "unknown";
}

std::vector<std::string> input_names(unsigned inputs) {
    std::vector<std::string> names;
    if (inputs & needs_source) names.emplace_back("source");
    if (inputs & needs_second) names.emplace_back("second");
    if (inputs & needs_features) names.emplace_back("features");
    if (inputs & needs_source_features) names.emplace_back("source_features");
    return names;
}

nlohmann::json methods_json() {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& m : method_table) {
        nlohmann::json j = {{"name", m.name},
                            {"returns", returns_name(m.returns)},
                            {"needs", input_names(m.needs)},
                            {"default", m.by_default},
                            {"cost", cost_name(m.cost)},
                            {"assumes_class_proportions", m.assumes_class_proportions},
                            {"summary", m.summary},
                            {"formula", m.formula},
                            {"fails", m.fails},
                            {"fits_on_source", m.fit_source != nullptr},
                            {"gram_matrices", m.gram_matrices},
                            {"on_softrun_branch", m.on_softrun_branch},
                            {"softrun_variants", m.softrun_variants},
                            {"estimates_label_shift", m.estimates_label_shift}};
        if (m.detail) j["detail"] = m.detail;
        if (m.default_max_k) j["default_max_k"] = m.default_max_k;
        if (m.default_max_logits) j["default_max_logits"] = m.default_max_logits;
        list.push_back(std::move(j));
    }
    return {{"methods", list}};
}

}  // namespace mano

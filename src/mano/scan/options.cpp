#include "mano/scan/options.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

const char* normalization_name(normalization n) noexcept {
    switch (n) {
        case normalization::softrun: return "softrun";
        case normalization::softmax: return "softmax";
        case normalization::taylor: return "taylor";
    }
    return "unknown";
}

bool options::wants(method m) const {
    for (const method x : methods)
        if (x == m) return true;
    return false;
}

normalization softrun_branch(double criterion, double eta, std::size_t k) noexcept {
    return criterion > eta || !taylor_defined(k) ? normalization::softmax : normalization::taylor;
}

normalization options::branch_used(double phi, std::size_t k) const noexcept {
    return norm == normalization::softrun ? softrun_branch(phi, eta, k) : norm;
}

bool options::scores_softmax_branch(std::size_t k) const {
    return norm == normalization::softmax ||
           (norm == normalization::softrun && (!criterion || branch_used(*criterion, k) == normalization::softmax));
}

bool options::scores_taylor_branch(std::size_t k) const {
    return norm == normalization::taylor ||
           (norm == normalization::softrun && taylor_defined(k) && (!criterion || branch_used(*criterion, k) == normalization::taylor));
}

normalization parse_normalization(const std::string& name) {
    if (name == "softrun") return normalization::softrun;
    if (name == "softmax") return normalization::softmax;
    if (name == "taylor") return normalization::taylor;
    throw error("normalization '" + printable(name, 60) + "' is not one of softrun, softmax, taylor");
}

void options::validate() const {
    check_option("p", p, "p");
    check_option("eta", eta, "eta");
    check_option("taylor_order", taylor_order, "taylor_order");
    check_option("batch_size", static_cast<double>(batch_size), "batch_size");
    if (criterion) check_option("criterion", *criterion, "criterion");
    check_option("temperature", temperature, "temperature");
    if (source && source->temperature != temperature)
        throw error("the source model was fitted at temperature " + number_text(source->temperature) +
                    " but the target is scored at " + number_text(temperature) + "; fit both with the same one");
    if (!label_marginal.empty()) {
        double total = 0;
        for (const double m : label_marginal) {
            if (!(std::isfinite(m) && m >= 0)) throw error("label marginal entries must be finite and non-negative");
            total += m;
        }
        if (std::abs(total - 1.0) > 1e-9)
            throw error("label marginal must sum to 1 (it sums to " + number_text(total) + ")");
    }
}

nlohmann::json options::to_json() const {
    nlohmann::json names = nlohmann::json::array();
    for (const method m : methods) names.push_back(method_name(m));
    nlohmann::json j = {{"p", p},
            {"eta", eta},
            {"taylor_order", taylor_order},
            {"normalization", normalization_name(norm)},
            {"batch_size", batch_size},
            {"criterion", criterion ? nlohmann::json(*criterion) : nlohmann::json()},
            {"methods", names},
            {"temperature", temperature},
            {"label_marginal", label_marginal},
            {"source", source ? source->to_json() : nlohmann::json()},
            {"source_features", source_features ? source_features->to_json() : nlohmann::json()}};
    // only when set: options, states and their shard names without it stay as they were
    if (correctness_histogram) j["correctness_histogram"] = true;
    if (input != input_kind::logits) j["input"] = input_kind_name(input);
    return j;
}

options options::from_json(const nlohmann::json& j) {
    options o;
    o.p = detail::number_of(j, "p", "options");
    o.eta = detail::number_of(j, "eta", "options");
    o.taylor_order = static_cast<int>(detail::integer_of(j.at("taylor_order"), "options", "taylor_order", 1, max_taylor_order));
    o.norm = parse_normalization(detail::text_of(j, "normalization", "options"));
    o.batch_size = detail::integer_of(j.at("batch_size"), "options", "batch_size", std::numeric_limits<std::int64_t>::min(),
                                      std::numeric_limits<std::int64_t>::max());
    if (!j.at("criterion").is_null()) o.criterion = detail::number_of(j, "criterion", "options");
    for (const auto& m : j.at("methods")) o.methods.push_back(parse_method(detail::name_in(m, "options: \"methods\"")));
    o.temperature = detail::number_of(j, "temperature", "options");
    o.label_marginal = detail::numbers_of(j, "label_marginal", "options");
    if (!j.at("source").is_null()) o.source = source_model::from_json(j.at("source"));
    if (!j.at("source_features").is_null())
        o.source_features = std::make_shared<const feature_moments>(feature_moments::from_json(j.at("source_features")));
    // absent in options written before audits: off
    if (j.contains("correctness_histogram")) {
        if (!j.at("correctness_histogram").is_boolean()) throw error("options: \"correctness_histogram\" must be true or false");
        o.correctness_histogram = j.at("correctness_histogram").get<bool>();
    }
    if (j.contains("input")) o.input = parse_input_kind(detail::text_of(j, "input", "options"));
    o.validate();
    return o;
}

}  // namespace mano

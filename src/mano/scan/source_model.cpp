// The source model's JSON form and its checks (source_model.hpp).
#include "mano/scan/source_model.hpp"

#include <cmath>
#include <string>

#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/scan/registry.hpp"

namespace mano {

nlohmann::json source_model::to_json() const {
    nlohmann::json j = {
        {"format", "mano-source"},
        {"version", 1},
        {"n", n},
        {"k", k},
        {"temperature", temperature},
        {"accuracy", accuracy},
        {"confscore", confscore},
        {"atc_mc_threshold", atc_mc_threshold},
        {"atc_ne_threshold", atc_ne_threshold},
    };
    if (!fitted.empty()) j["fitted"] = fitted;
    return j;
}

source_model source_model::from_json(const nlohmann::json& j) {
    try {
        detail::check_state_header(j, "mano-source", "source model");
        source_model m;
        m.n = detail::count_of(j, "n", "source model");
        m.k = detail::count_of(j, "k", "source model");
        m.temperature = detail::number_of(j, "temperature", "source model");
        m.accuracy = detail::number_of(j, "accuracy", "source model");
        m.confscore = detail::number_of(j, "confscore", "source model");
        m.atc_mc_threshold = detail::number_of(j, "atc_mc_threshold", "source model");
        m.atc_ne_threshold = detail::number_of(j, "atc_ne_threshold", "source model");
        const bool sane = m.n > 0 && m.k >= 2 && std::isfinite(m.temperature) && m.temperature > 0 &&
                          m.accuracy >= 0 && m.accuracy <= 1 && m.confscore > 0 && m.confscore <= 1 &&
                          m.atc_mc_threshold > 0 && m.atc_mc_threshold <= 1 && m.atc_ne_threshold <= 0 &&
                          std::isfinite(m.atc_ne_threshold);
        if (!sane) throw error("source model: values out of range (need n > 0, k >= 2, T > 0, accuracy, "
                               "confscore and the ATC-MC threshold in [0, 1], a finite ATC-NE threshold <= 0)");
        if (j.contains("fitted")) {
            const auto& fitted = j.at("fitted");
            if (!fitted.is_object()) throw error("source model: \"fitted\" must be an object of method names");
            for (const auto& item : fitted.items()) {
                const method f = parse_method(item.key());
                if (!info_of(f).fit_source)
                    throw error(std::string("source model: \"fitted\" has an entry for ") + method_name(f) +
                                ", which fits nothing on the source set");
            }
            m.fitted = fitted;
        }
        return m;
    } catch (const nlohmann::json::exception& e) {
        throw error("source model: " + detail::json_error_text(e));
    }
}

}  // namespace mano

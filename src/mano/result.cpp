#include "mano/result.hpp"

#include <cmath>
#include <type_traits>

namespace mano {

nlohmann::json result::to_json() const {
    nlohmann::json methods = nlohmann::json::object();
    if (mano) {
        nlohmann::json m = {
            {"score", mano->score},
            {"criterion", mano->criterion},
            {"normalization", normalization_name(mano->used)},
            {"p", mano->p},
            {"eta", mano->eta},
            {"taylor_order", mano->taylor_order},
        };
        if (mano->criterion_fixed) m["criterion_fixed"] = true;
        if (mano->batch_size > 0) {
            m["batch_size"] = mano->batch_size;
            m["batches"] = mano->batches;
        }
        methods["mano"] = m;
    }
    const auto put_score = [&](const char* name, const std::optional<double>& value) {
        if (value) methods[name] = {{"score", *value}};
    };
    put_score("confscore", confscore);
    put_score("entropy", entropy);
    put_score("nuclear", nuclear);
    put_score("mde", mde);
    put_score("confscore_softrun", confscore_softrun);
    put_score("nuclear_softrun", nuclear_softrun);
    put_score("dispersion", dispersion);
    put_score("frechet", frechet);
    if (cot) methods["cot"] = {{"error", cot->error}, {"accuracy", cot->accuracy}};
    if (atc_mc) methods["atc_mc"] = {{"accuracy", atc_mc->accuracy}, {"threshold", atc_mc->threshold}};
    if (atc_ne) methods["atc_ne"] = {{"accuracy", atc_ne->accuracy}, {"threshold", atc_ne->threshold}};
    if (doc) methods["doc"] = {{"accuracy", doc->accuracy}};
    if (agreement) methods["agreement"] = {{"accuracy", agreement->accuracy}};
    for (const auto& v : values())
        if (v.se && std::isfinite(*v.se)) methods[method_name(v.m)]["se"] = *v.se;
    nlohmann::json out = {{"n", n}, {"k", k}, {"methods", methods}};
    if (accuracy) out["accuracy"] = *accuracy;
    return out;
}

std::vector<result::method_value> result::values() const {
    std::vector<method_value> out;
    const auto add = [&](method m, const auto& value) {
        if (!value) return;
        double x;
        if constexpr (std::is_same_v<std::decay_t<decltype(*value)>, accuracy_estimate>)
            x = value->accuracy;
        else if constexpr (std::is_same_v<std::decay_t<decltype(*value)>, mano_result>)
            x = value->score;
        else
            x = *value;
        out.push_back({m, x, se[static_cast<int>(m)]});
    };
    add(method::mano, mano);
    add(method::confscore, confscore);
    add(method::entropy, entropy);
    add(method::nuclear, nuclear);
    add(method::mde, mde);
    add(method::cot, cot);
    add(method::atc_mc, atc_mc);
    add(method::atc_ne, atc_ne);
    add(method::doc, doc);
    add(method::agreement, agreement);
    add(method::dispersion, dispersion);
    add(method::frechet, frechet);
    add(method::confscore_softrun, confscore_softrun);
    add(method::nuclear_softrun, nuclear_softrun);
    return out;
}

}  // namespace mano

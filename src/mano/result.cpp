#include "mano/result.hpp"

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
    return {{"n", n}, {"k", k}, {"methods", methods}};
}

}  // namespace mano

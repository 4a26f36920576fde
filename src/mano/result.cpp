#include "mano/result.hpp"

#include "mano/error.hpp"
#include "mano/text.hpp"

#include <cmath>
#include <string>
#include <type_traits>

namespace mano {

std::string variant_name(normalization n, int taylor_order) {
    return n == normalization::taylor ? "taylor" + std::to_string(taylor_order) : normalization_name(n);
}

std::pair<normalization, int> parse_variant(const std::string& name) {
    if (name == "softmax") return {normalization::softmax, 0};
    if (name.size() > 6 && name.compare(0, 6, "taylor") == 0 && name.size() <= 9 &&
        name.find_first_not_of("0123456789", 6) == std::string::npos && name[6] != '0') {
        const int order = std::stoi(name.substr(6));
        if (order <= 170) return {normalization::taylor, order};
    }
    throw error("unknown normalization variant '" + printable(name, 60) + "'; variants are softmax and taylorN (N = the Taylor order, e.g. taylor2)");
}

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
        if (!mano->variants.empty()) m["variants"] = mano->variants;
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
    if (!predicted.empty()) out["predicted"] = predicted;
    if (confidence) out["confidence"] = *confidence;
    return out;
}

result result::from_json(const nlohmann::json& j) {
    const auto number = [](const nlohmann::json& object, const char* key, const std::string& where) {
        if (!object.is_object() || !object.contains(key) || !object.at(key).is_number())
            throw error("result: " + where + " needs a number \"" + printable(key, 60) + "\"");
        return object.at(key).get<double>();
    };
    const auto count = [&](const char* key) {
        const double x = number(j, key, "the result");
        if (!(x >= 0) || x != std::floor(x) || x > 9007199254740992.0)
            throw error(std::string("result: \"") + key + "\" must be a whole number >= 0");
        return static_cast<std::size_t>(x);
    };
    result r;
    r.n = count("n");
    r.k = count("k");
    if (j.contains("accuracy")) r.accuracy = number(j, "accuracy", "the result");
    if (j.contains("confidence")) r.confidence = number(j, "confidence", "the result");
    if (j.contains("predicted")) {
        const auto& counts = j.at("predicted");
        std::uint64_t total = 0;
        bool ok = counts.is_array() && counts.size() == r.k;
        for (std::size_t c = 0; ok && c < counts.size(); ++c) {
            ok = counts[c].is_number_unsigned();
            if (ok) r.predicted.push_back(counts[c].get<std::uint64_t>()), total += r.predicted.back();
        }
        if (!ok || total != r.n)
            throw error("result: \"predicted\" must hold k whole class counts that sum to n");
    }
    if (!j.contains("methods") || !j.at("methods").is_object()) throw error("result: needs an object \"methods\"");
    for (const auto& item : j.at("methods").items()) {
        const std::string& name = item.key();
        const nlohmann::json& m = item.value();
        const method which = parse_method(name);
        const std::string where = "method \"" + name + "\"";
        const auto accuracy_of = [&](bool threshold, bool cost) {
            accuracy_estimate e;
            e.accuracy = number(m, "accuracy", where);
            if (threshold) e.threshold = number(m, "threshold", where);
            if (cost) e.error = number(m, "error", where);
            return e;
        };
        switch (which) {
            case method::mano: {
                mano_result x;
                x.score = number(m, "score", where);
                x.criterion = number(m, "criterion", where);
                if (!m.contains("normalization") || !m.at("normalization").is_string())
                    throw error("result: " + where + " needs a string \"normalization\"");
                x.used = parse_normalization(m.at("normalization").get<std::string>());
                x.p = number(m, "p", where);
                x.eta = number(m, "eta", where);
                x.taylor_order = static_cast<int>(number(m, "taylor_order", where));
                x.criterion_fixed = m.value("criterion_fixed", false);
                if (m.contains("variants")) {
                    if (!m.at("variants").is_object()) throw error("result: " + where + " \"variants\" must be an object");
                    for (const auto& v : m.at("variants").items()) {
                        parse_variant(v.key());
                        x.variants[v.key()] = number(m.at("variants"), v.key().c_str(), where + " variants");
                    }
                }
                if (m.contains("batch_size")) {
                    x.batch_size = static_cast<std::int64_t>(number(m, "batch_size", where));
                    x.batches = static_cast<std::size_t>(number(m, "batches", where));
                }
                r.mano = x;
                break;
            }
            case method::confscore: r.confscore = number(m, "score", where); break;
            case method::entropy: r.entropy = number(m, "score", where); break;
            case method::nuclear: r.nuclear = number(m, "score", where); break;
            case method::mde: r.mde = number(m, "score", where); break;
            case method::confscore_softrun: r.confscore_softrun = number(m, "score", where); break;
            case method::nuclear_softrun: r.nuclear_softrun = number(m, "score", where); break;
            case method::dispersion: r.dispersion = number(m, "score", where); break;
            case method::frechet: r.frechet = number(m, "score", where); break;
            case method::cot: r.cot = accuracy_of(false, true); break;
            case method::atc_mc: r.atc_mc = accuracy_of(true, false); break;
            case method::atc_ne: r.atc_ne = accuracy_of(true, false); break;
            case method::doc: r.doc = accuracy_of(false, false); break;
            case method::agreement: r.agreement = accuracy_of(false, false); break;
        }
        if (m.contains("se")) r.se[static_cast<int>(which)] = number(m, "se", where);
    }
    return r;
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

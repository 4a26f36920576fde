#include "mano/scan/result.hpp"

#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

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
        if (order <= max_taylor_order) return {normalization::taylor, order};
    }
    throw error("unknown normalization variant '" + printable(name, 60) + "'; variants are softmax and taylorN (N = the Taylor order, e.g. taylor2)");
}

nlohmann::json result::to_json() const {
    nlohmann::json methods = nlohmann::json::object();
    for (const auto& info : method_table) {
        const auto& e = (*this)[info.id];
        if (!e) continue;
        nlohmann::json m = {{returns_name(info.returns), e->value}};
        if (info.detail && e->detail) m[info.detail] = *e->detail;
        if (e->se && std::isfinite(*e->se)) m["se"] = *e->se;
        if (info.id == method::mano && mano) {
            m["criterion"] = mano->criterion;
            m["normalization"] = normalization_name(mano->used);
            m["p"] = mano->p;
            m["eta"] = mano->eta;
            m["taylor_order"] = mano->taylor_order;
            if (mano->criterion_fixed) m["criterion_fixed"] = true;
            if (!mano->variants.empty()) m["variants"] = mano->variants;
            if (mano->batch_size > 0) {
                m["batch_size"] = mano->batch_size;
                m["batches"] = mano->batches;
            }
        }
        if (info.id == method::mlls && mlls) {
            m["priors"] = mlls->priors;
            m["converged"] = mlls->converged;
            m["confidence"] = mlls->confidence;
            m["confidence_se"] = mlls->confidence_se;
            m["expected_confidence"] = mlls->expected_confidence;
            if (const auto& d = mlls->dominant)
                m["dominant"] = {{"class", d->label}, {"rows", d->rows}, {"mean", d->mean}, {"sd", d->sd}};
        }
        methods[info.name] = m;
    }
    nlohmann::json out = {{"n", n}, {"k", k}, {"methods", methods}};
    if (accuracy) out["accuracy"] = *accuracy;
    if (!predicted.empty()) out["predicted"] = predicted;
    if (confidence) out["confidence"] = *confidence;
    if (correctness) out["correctness"] = correctness->to_json();
    if (input != input_kind::logits) out["input"] = input_kind_name(input);
    if (looks_like_probabilities) out["looks_like_probabilities"] = true;
    return out;
}

namespace {

double number(const nlohmann::json& object, const char* key, const std::string& where) {
    if (!object.is_object() || !object.contains(key) || !object.at(key).is_number())
        throw error("result: " + where + " needs a number \"" + printable(key, 60) + "\"");
    return object.at(key).get<double>();
}

// MaNo's section of a result: its criterion, the normalization used, and the variants a softrun kept.
mano_result mano_from_json(const nlohmann::json& m, const std::string& where) {
    mano_result x;
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
    return x;
}

// MLLS's section of a result: the priors it found over k classes, its confidence and a dominant class.
label_shift_result mlls_from_json(const nlohmann::json& m, const std::string& where, std::size_t k) {
    label_shift_result x;
    if (!m.contains("priors") || !m.at("priors").is_array() || m.at("priors").size() != k)
        throw error("result: " + where + " needs an array \"priors\" of k numbers");
    for (const auto& v : m.at("priors")) {
        if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1))
            throw error("result: " + where + " \"priors\" must hold numbers in [0, 1]");
        x.priors.push_back(v.get<double>());
    }
    if (!m.contains("converged") || !m.at("converged").is_boolean())
        throw error("result: " + where + " needs a boolean \"converged\"");
    x.converged = m.at("converged").get<bool>();
    x.confidence = number(m, "confidence", where);
    x.confidence_se = number(m, "confidence_se", where);
    x.expected_confidence = number(m, "expected_confidence", where);
    if (m.contains("dominant")) {
        const auto& d = m.at("dominant");
        const std::string at = where + " \"dominant\"";
        const double label = number(d, "class", at), rows = number(d, "rows", at);
        const double mean = number(d, "mean", at), sd = number(d, "sd", at);
        if (!(label >= 0 && label < static_cast<double>(k) && label == std::floor(label) && rows >= 0 &&
              rows == std::floor(rows) && mean >= 0 && mean <= 1 && sd >= 0 && sd <= 1))
            throw error("result: " + at + " needs a class in [0, k), a whole number of rows and a mean and sd in [0, 1]");
        x.dominant = label_shift_result::dominant_class{static_cast<std::size_t>(label), static_cast<std::size_t>(rows),
                                                        mean, sd};
    }
    return x;
}

}  // namespace

result result::from_json(const nlohmann::json& j) {
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
    if (j.contains("correctness")) r.correctness = correctness_histogram::from_json(j.at("correctness"), r.k, r.n, "result: \"correctness\"");
    if (j.contains("input")) {
        if (!j.at("input").is_string()) throw error("result: \"input\" must be a text (logits, probabilities, ...)");
        r.input = parse_input_kind(j.at("input").get<std::string>());
    }
    if (j.contains("looks_like_probabilities")) {
        if (!j.at("looks_like_probabilities").is_boolean()) throw error("result: \"looks_like_probabilities\" must be true or false");
        r.looks_like_probabilities = j.at("looks_like_probabilities").get<bool>();
    }
    if (!j.contains("methods") || !j.at("methods").is_object()) throw error("result: needs an object \"methods\"");
    for (const auto& item : j.at("methods").items()) {
        const std::string& name = item.key();
        const nlohmann::json& m = item.value();
        const method which = parse_method(name);
        const std::string where = "method \"" + name + "\"";
        const method_info& info = info_of(which);
        estimate e;
        e.value = number(m, returns_name(info.returns), where);
        if (info.detail) e.detail = number(m, info.detail, where);
        if (m.contains("se")) e.se = number(m, "se", where);
        if (which == method::mano) r.mano = mano_from_json(m, where);
        if (which == method::mlls) r.mlls = mlls_from_json(m, where, r.k);
        r[which] = e;
    }
    return r;
}

std::vector<result::method_value> result::values() const {
    std::vector<method_value> out;
    for (int i = 0; i < method_count; ++i)
        if (estimates[i]) out.push_back({static_cast<method>(i), estimates[i]->value, estimates[i]->se});
    return out;
}

}  // namespace mano

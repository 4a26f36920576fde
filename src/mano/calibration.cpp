#include "mano/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "mano/detail/state.hpp"
#include "mano/error.hpp"
#include "mano/student_t.hpp"

namespace mano {

namespace {

constexpr std::size_t min_sets = 3;

void check_labeled(const std::vector<labeled_set>& sets, const std::string& what) {
    if (sets.size() < min_sets)
        throw error(what + " needs at least " + std::to_string(min_sets) + " labeled test sets (got " +
                    std::to_string(sets.size()) + ")");
    for (const auto& s : sets)
        if (!s.scores.accuracy) throw error(what + ": set '" + s.name + "' has no true accuracy (give its labels)");
}

// Methods present in every set, in method order, with one value per set.
std::map<method, std::vector<double>> common_values(const std::vector<labeled_set>& sets) {
    std::map<method, std::vector<double>> values;
    for (const auto& v : sets.front().scores.values()) values[v.m] = {};
    for (const auto& s : sets) {
        std::map<method, double> here;
        for (const auto& v : s.scores.values()) here[v.m] = v.value;
        for (auto it = values.begin(); it != values.end();) {
            const auto found = here.find(it->first);
            if (found == here.end()) {
                it = values.erase(it);
            } else {
                it->second.push_back(found->second);
                ++it;
            }
        }
    }
    return values;
}

std::vector<double> accuracies(const std::vector<labeled_set>& sets) {
    std::vector<double> out;
    for (const auto& s : sets) out.push_back(*s.scores.accuracy);
    return out;
}

nlohmann::json summary_json(const evaluation_summary& s) {
    return {{"r2", s.r2}, {"pearson", s.pearson}, {"spearman", s.spearman},
            {"kendall", s.kendall}, {"mae", s.mae}, {"n", s.n}};
}

// Per method summary over `sets`; methods whose statistics are undefined get a note instead.
nlohmann::json summaries(const std::vector<labeled_set>& sets, const std::string& scope, nlohmann::json& notes) {
    nlohmann::json out = nlohmann::json::object();
    const auto acc = accuracies(sets);
    for (const auto& [m, values] : common_values(sets)) {
        try {
            out[method_name(m)] = summary_json(summarize(values, acc));
        } catch (const error& e) {
            notes.push_back(std::string(method_name(m)) + scope + ": no summary: " + e.what());
        }
    }
    return out;
}

double clip01(double x) { return std::min(1.0, std::max(0.0, x)); }

}  // namespace

nlohmann::json evaluate(const std::vector<labeled_set>& sets) {
    check_labeled(sets, "evaluation");
    nlohmann::json out;
    out["sets"] = nlohmann::json::array();
    std::map<std::string, std::vector<labeled_set>> groups;
    for (const auto& s : sets) {
        nlohmann::json j = s.scores.to_json();
        nlohmann::json row = {{"name", s.name}};
        if (!s.group.empty()) row["group"] = s.group;
        row["n"] = j["n"];
        row["k"] = j["k"];
        row["accuracy"] = *s.scores.accuracy;
        row["methods"] = j["methods"];
        out["sets"].push_back(row);
        if (!s.group.empty()) groups[s.group].push_back(s);
    }
    nlohmann::json notes = nlohmann::json::array();
    out["summary"] = summaries(sets, "", notes);
    nlohmann::json by_group = nlohmann::json::object();
    for (const auto& [name, members] : groups)
        if (members.size() >= min_sets) by_group[name] = summaries(members, " (group " + name + ")", notes);
    if (!by_group.empty()) out["groups"] = by_group;
    out["notes"] = notes;
    return out;
}

calibration calibrate(const std::vector<labeled_set>& sets, const options& opts, std::vector<std::string>* notes) {
    check_labeled(sets, "calibration");
    calibration c;
    c.opts = opts;
    c.k = sets.front().scores.k;
    for (const auto& s : sets) {
        if (s.scores.k != c.k)
            throw error("calibration: set '" + s.name + "' has " + std::to_string(s.scores.k) + " classes but set '" +
                        sets.front().name + "' has " + std::to_string(c.k) + "; calibrate one classifier at a time");
        c.sets.push_back(s.name);
    }
    const auto acc = accuracies(sets);
    for (const auto& [m, values] : common_values(sets)) {
        method_calibration mc;
        mc.m = m;
        try {
            mc.fit = fit_line(values, acc);
        } catch (const error& e) {
            if (notes) notes->push_back(std::string(method_name(m)) + ": not calibrated: " + e.what());
            continue;
        }
        const double n = static_cast<double>(values.size());
        double sum = 0;
        for (const double v : values) sum += v;
        mc.score_mean = sum / n;
        for (const double v : values) mc.score_sxx += (v - mc.score_mean) * (v - mc.score_mean);
        c.methods.push_back(mc);
    }
    if (c.methods.empty()) throw error("calibration: no method could be fitted on these sets");
    c.opts.methods.clear();
    for (const auto& mc : c.methods) c.opts.methods.push_back(mc.m);
    return c;
}

prediction predict(const method_calibration& c, double score, std::optional<double> score_se, double level) {
    if (!(level > 0 && level < 1)) throw error("the interval level must lie strictly between 0 and 1 (e.g. 0.9)");
    if (!std::isfinite(score)) throw error(std::string(method_name(c.m)) + ": the score is not a finite number");
    const auto& f = c.fit;
    if (f.n < min_sets) throw error(std::string(method_name(c.m)) + ": the calibration has fewer than 3 sets");
    prediction p;
    p.score = score;
    p.score_se = score_se && std::isfinite(*score_se) ? score_se : std::nullopt;
    const double fitted = f.slope * score + f.intercept;
    const double n = static_cast<double>(f.n);
    const double dx = score - c.score_mean;
    // prediction variance of a new set at `score`, plus the score's own sampling variance
    double variance = f.residual_se * f.residual_se * (1.0 + 1.0 / n + (c.score_sxx > 0 ? dx * dx / c.score_sxx : 0.0));
    if (p.score_se) variance += f.slope * f.slope * *p.score_se * *p.score_se;
    const double half = student_t_quantile(0.5 + level / 2, n - 2) * std::sqrt(variance);
    p.accuracy = clip01(fitted);
    p.lower = clip01(fitted - half);
    p.upper = clip01(fitted + half);
    p.extrapolated = score < f.x_min || score > f.x_max;
    return p;
}

nlohmann::json predict(const calibration& c, const result& r, double level) {
    if (r.k != c.k)
        throw error("the logits have " + std::to_string(r.k) + " classes but the calibration was fitted on logits with " +
                    std::to_string(c.k));
    nlohmann::json methods = nlohmann::json::object();
    for (const auto& v : r.values()) {
        const auto found = std::find_if(c.methods.begin(), c.methods.end(),
                                        [&](const method_calibration& mc) { return mc.m == v.m; });
        if (found == c.methods.end()) continue;
        const prediction p = predict(*found, v.value, v.se, level);
        nlohmann::json j = {{"score", p.score}};
        if (p.score_se) j["se"] = *p.score_se;
        j["accuracy"] = p.accuracy;
        j["interval"] = {p.lower, p.upper};
        j["extrapolated"] = p.extrapolated;
        methods[method_name(v.m)] = j;
    }
    nlohmann::json out = {{"n", r.n}, {"k", r.k}, {"level", level}, {"methods", methods}};
    if (r.accuracy) out["accuracy"] = *r.accuracy;
    return out;
}

nlohmann::json calibration::to_json() const {
    nlohmann::json fits = nlohmann::json::object();
    for (const auto& mc : methods)
        fits[method_name(mc.m)] = {{"slope", mc.fit.slope},
                                   {"intercept", mc.fit.intercept},
                                   {"residual_se", mc.fit.residual_se},
                                   {"n", mc.fit.n},
                                   {"score_min", mc.fit.x_min},
                                   {"score_max", mc.fit.x_max},
                                   {"score_mean", mc.score_mean},
                                   {"score_sxx", mc.score_sxx}};
    return {{"format", "mano-calibration"}, {"version", 1}, {"k", k}, {"options", opts.to_json()}, {"methods", fits}, {"sets", sets}};
}

calibration calibration::from_json(const nlohmann::json& j) {
    try {
        detail::check_state_header(j, "mano-calibration", "calibration");
        calibration c;
        c.opts = options::from_json(j.at("options"));
        c.k = j.at("k").get<std::size_t>();
        if (c.k < 2) throw error("calibration: \"k\" must be at least 2");
        c.sets = j.at("sets").get<std::vector<std::string>>();
        for (const auto& [name, f] : j.at("methods").items()) {
            method_calibration mc;
            mc.m = parse_method(name);
            mc.fit.slope = f.at("slope").get<double>();
            mc.fit.intercept = f.at("intercept").get<double>();
            mc.fit.residual_se = f.at("residual_se").get<double>();
            mc.fit.n = f.at("n").get<std::size_t>();
            mc.fit.x_min = f.at("score_min").get<double>();
            mc.fit.x_max = f.at("score_max").get<double>();
            mc.score_mean = f.at("score_mean").get<double>();
            mc.score_sxx = f.at("score_sxx").get<double>();
            const bool sane = std::isfinite(mc.fit.slope) && std::isfinite(mc.fit.intercept) &&
                              std::isfinite(mc.fit.residual_se) && mc.fit.residual_se >= 0 && mc.fit.n >= min_sets &&
                              mc.fit.x_min <= mc.fit.x_max && mc.score_sxx >= 0 && std::isfinite(mc.score_sxx);
            if (!sane) throw error("calibration: the fit of method '" + name + "' is inconsistent");
            c.methods.push_back(mc);
        }
        if (c.methods.empty()) throw error("calibration: no calibrated methods");
        return c;
    } catch (const nlohmann::json::exception& e) {
        throw error(std::string("calibration: ") + e.what());
    }
}

}  // namespace mano

// The calibration file (calibration.hpp, calibration::to_json and from_json; docs/cli.md): every
// value checked on load, so that no tampered or inconsistent calibration predicts.
#include "mano/calibration/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "mano/base/detail/json_fields.hpp"
#include "mano/calibration/detail/labeled_sets.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

namespace {
// Version 2: leave-one-group-out folds, the recommended method, the family's normalization and
// the class-shift reference.
constexpr int calibration_version = 2;
}  // namespace

nlohmann::json calibration::to_json() const {
    nlohmann::json fits = nlohmann::json::object();
    for (const auto& mc : methods) {
        nlohmann::json f = {{"slope", mc.fit.slope},
                            {"intercept", mc.fit.intercept},
                            {"residual_se", mc.fit.residual_se},
                            {"n", mc.fit.n},
                            {"score_min", mc.fit.x_min},
                            {"score_max", mc.fit.x_max},
                            {"score_mean", mc.score_mean},
                            {"score_sxx", mc.score_sxx}};
        if (mc.link != link::identity) f["link"] = link_name(mc.link);
        if (!mc.folds.empty()) {
            f["logo_mae"] = mc.logo_mae;
            f["folds"] = nlohmann::json::array();
            for (const auto& fold : mc.folds) {
                nlohmann::json g = {{"group", fold.group}, {"slope", fold.slope}, {"intercept", fold.intercept},
                                    {"residuals", fold.residuals}};
                if (!fold.weights.empty()) g["weights"] = fold.weights;
                if (!fold.copy.empty()) g["copy"] = fold.copy;
                f["folds"].push_back(std::move(g));
            }
        }
        fits[method_name(mc.m)] = f;
    }
    nlohmann::json j = {{"format", "mano-calibration"}, {"version", calibration_version}, {"k", k},
                        {"options", opts.to_json()}, {"methods", fits}, {"sets", sets}};
    if (normalization) j["normalization"] = normalization->to_json();
    if (copies) {
        j["label_shift_copies"] = copies->to_json();
        j["label_shift_copies"]["sets"] = copy_sets;
    }
    if (recommended) j["recommended"] = method_name(*recommended);
    const auto ranked = detail::by_held_out_error(methods);
    if (!ranked.empty()) {
        j["ranking"] = nlohmann::json::array();
        for (const auto* mc : ranked) j["ranking"].push_back({{"method", method_name(mc->m)}, {"logo_mae", mc->logo_mae}});
    }
    if (shift) {
        j["shift"] = {{"proportions", shift->proportions}, {"sets", nlohmann::json::array()}};
        for (const auto& [conf, d] : shift->sets) j["shift"]["sets"].push_back({{"confidence", conf}, {"distance", d}});
    }
    if (correctness) j["correctness"] = correctness->to_json();
    return j;
}

namespace {

// One fold of a method's fit; `sane` turns false where its numbers cannot be a fold's.
group_fold fold_from_json(const nlohmann::json& fold, const std::string& where, bool& sane) {
    group_fold g;
    g.group = detail::text_of(fold, "group", where);
    g.slope = detail::number_of(fold, "slope", where);
    g.intercept = detail::number_of(fold, "intercept", where);
    g.residuals = detail::numbers_of(fold, "residuals", where);
    for (const double r : g.residuals) sane = sane && std::isfinite(r) && std::abs(r) <= 1;
    if (fold.contains("weights")) {
        g.weights = detail::numbers_of(fold, "weights", where);
        sane = sane && g.weights.size() == g.residuals.size();
        for (const double w : g.weights) sane = sane && w > 0 && w <= 1e6;
    }
    if (fold.contains("copy")) {
        const auto& flags = fold.at("copy");
        sane = sane && flags.is_array() && flags.size() == g.residuals.size() &&
               std::all_of(flags.begin(), flags.end(), [](const nlohmann::json& x) { return x.is_boolean(); });
        if (sane) g.copy = flags.get<std::vector<bool>>();
    }
    sane = sane && std::isfinite(g.slope) && std::isfinite(g.intercept) && !g.residuals.empty();
    return g;
}

// One method's line and folds; refused unless every number is one a calibration of c's sets gives.
method_calibration method_from_json(const std::string& name, const nlohmann::json& f, const calibration& c) {
    method_calibration mc;
    mc.m = parse_method(name);  // an unknown name is refused here, quoted escaped
    const std::string where = std::string("calibration: method '") + method_name(mc.m) + "'";
    detail::check_known_keys(f, {"slope", "intercept", "residual_se", "n", "score_min", "score_max", "score_mean",
                                 "score_sxx", "logo_mae", "folds", "link"},
                             where);
    if (f.contains("link")) {
        const std::string l = detail::text_of(f, "link", where);
        if (l != "identity" && l != "probit")
            throw error(where + ": \"link\" must be \"identity\" or \"probit\"");
        mc.link = l == "probit" ? link::probit : link::identity;
    }
    mc.fit.slope = detail::number_of(f, "slope", where);
    mc.fit.intercept = detail::number_of(f, "intercept", where);
    mc.fit.residual_se = detail::number_of(f, "residual_se", where);
    mc.fit.n = detail::count_of(f, "n", where);
    mc.fit.x_min = detail::number_of(f, "score_min", where);
    mc.fit.x_max = detail::number_of(f, "score_max", where);
    mc.score_mean = detail::number_of(f, "score_mean", where);
    mc.score_sxx = detail::number_of(f, "score_sxx", where);
    bool sane = std::isfinite(mc.fit.slope) && std::isfinite(mc.fit.intercept) &&
                std::isfinite(mc.fit.residual_se) && mc.fit.residual_se >= 0 && mc.fit.n >= detail::min_sets &&
                mc.fit.x_min <= mc.fit.x_max && mc.score_sxx >= 0 && std::isfinite(mc.score_sxx) &&
                (mc.fit.x_min == mc.fit.x_max || mc.score_sxx > 0) && mc.score_mean >= mc.fit.x_min &&
                mc.score_mean <= mc.fit.x_max;
    if (f.contains("folds")) {
        std::size_t residuals = 0;
        std::size_t copies = 0;
        for (const auto& fold : f.at("folds")) {
            mc.folds.push_back(fold_from_json(fold, where + " fold", sane));
            residuals += mc.folds.back().residuals.size();
            copies += static_cast<std::size_t>(std::count(mc.folds.back().copy.begin(), mc.folds.back().copy.end(), true));
        }
        sane = sane && copies == c.copy_sets;
        mc.logo_mae = detail::number_of(f, "logo_mae", where);
        sane = sane && mc.folds.size() >= 2 && residuals == c.sets.size() + c.copy_sets && std::abs(mc.logo_mae - detail::mean_abs_residual(mc.folds)) <= 1e-9;
    }
    sane = sane && mc.fit.n == c.sets.size();  // the line is the sets' own; copies only have residuals
    if (!sane) throw error("calibration: the fit of method '" + printable(name, 60) + "' is inconsistent");
    return mc;
}

// Every calibrated method is one the options score, with the inputs it needs recorded.
void check_methods_scored(const calibration& c) {
    for (const auto& mc : c.methods) {
        if (!c.opts.wants(mc.m))
            throw error(std::string("calibration: method '") + method_name(mc.m) + "' is calibrated but \"options\" do not score it");
    }
    for (const method m : c.opts.methods) {
        if ((info_of(m).needs & needs_source) && !c.opts.source)
            throw error(std::string("calibration: method '") + method_name(m) +
                        "' needs the source model, but \"options\" have none (\"source\" is null)");
        if ((info_of(m).needs & needs_source_features) && !c.opts.source_features)
            throw error(std::string("calibration: method '") + method_name(m) +
                        "' needs the source features, but \"options\" have none (\"source_features\" is null)");
    }
}

// The class-shift reference: the class proportions and one (confidence, distance) per calibration set.
shift_reference shift_from_json(const nlohmann::json& s, const calibration& c) {
    shift_reference ref;
    ref.proportions = detail::numbers_of(s, "proportions", "calibration: \"shift\"");
    for (const auto& set : s.at("sets"))
        ref.sets.emplace_back(detail::number_of(set, "confidence", "calibration: \"shift\" set"),
                              detail::number_of(set, "distance", "calibration: \"shift\" set"));
    double total = 0;
    // one entry per calibration set
    bool sane = ref.proportions.size() == c.k && ref.sets.size() == c.sets.size();
    for (const double x : ref.proportions) sane = sane && x >= 0 && x <= 1, total += x;
    for (const auto& [conf, d] : ref.sets) sane = sane && conf >= 0 && conf <= 1 && d >= 0 && d <= 1;
    if (!sane || std::abs(total - 1) > 1e-6) throw error("calibration: the class-shift reference is inconsistent");
    return ref;
}

}  // namespace

calibration calibration::from_json(const nlohmann::json& j) {
    try {
        if (j.is_object() && j.contains("format") && j.at("format") == "mano-calibration" && j.contains("version") && j.at("version") == 1)
            throw error("calibration: written by an older mano (version 1, without leave-one-group-out folds); run mano "
                        "calibrate again");
        detail::check_state_header(j, "mano-calibration", "calibration", calibration_version);
        // "inference": what calibrate --synthesize records of the model run
        detail::check_known_keys(j, {"format", "version", "k", "options", "methods", "sets", "normalization", "recommended",
                                     "fallback", "ranking", "shift", "inference", "correctness", "label_shift_copies"},
                                 "calibration");
        calibration c;
        c.opts = options::from_json(j.at("options"));
        c.k = detail::count_of(j, "k", "calibration");
        if (c.k < 2) throw error("calibration: \"k\" must be at least 2");
        if (c.opts.source && c.opts.source->k != c.k)
            throw error("calibration: the source model in \"options\" has " + std::to_string(c.opts.source->k) +
                        " classes but the calibration " + std::to_string(c.k));
        c.sets = j.at("sets").get<std::vector<std::string>>();
        if (j.contains("label_shift_copies")) {
            const auto& given = j.at("label_shift_copies");
            nlohmann::json o = given;
            if (o.is_object()) o.erase("sets");
            c.copies = label_shift_copies::from_json(o, "calibration: \"label_shift_copies\"");
            c.copy_sets = detail::count_of(given, "sets", "calibration: \"label_shift_copies\"");
        }
        for (const auto& [name, f] : j.at("methods").items()) c.methods.push_back(method_from_json(name, f, c));
        if (c.methods.empty()) throw error("calibration: no calibrated methods");
        check_methods_scored(c);
        const auto calibrated = [&](const char* key) -> std::optional<method> {
            if (!j.contains(key)) return std::nullopt;
            const method m = parse_method(detail::text_of(j, key, "calibration"));
            const method_calibration* found = calibration_of(c, m);
            if (!found || found->folds.empty())
                throw error(std::string("calibration: the ") + key + " method '" + method_name(m) + "' has no leave-one-group-out fit");
            return m;
        };
        c.recommended = calibrated("recommended");
        // "fallback": calibrations before the label-shift regime named a stand-in; it is no longer used
        if (j.contains("normalization")) {
            c.normalization = normalization_choice::from_json(j.at("normalization"));
            if (c.opts.norm != c.normalization->norm || c.opts.taylor_order != c.normalization->taylor_order)
                throw error("calibration: the chosen normalization is not the one in \"options\"");
        }
        if (j.contains("shift")) c.shift = shift_from_json(j.at("shift"), c);
        if (j.contains("correctness")) {
            c.correctness = correctness_model::from_json(j.at("correctness"), c.k);
            if (c.correctness->set_residual_variances.size() != c.sets.size())
                throw error("calibration: \"correctness\" needs one residual variance per calibration set");
        }
        return c;
    } catch (const nlohmann::json::exception& e) {
        throw error("calibration: " + detail::json_error_text(e));
    }
}
}  // namespace mano

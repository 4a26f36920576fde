#include "mano/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "mano/detail/state.hpp"
#include "mano/error.hpp"
#include "mano/student_t.hpp"
#include "mano/text.hpp"

namespace mano {

namespace {

constexpr std::size_t min_sets = 3;

void check_labeled(const std::vector<labeled_set>& sets, const std::string& what) {
    if (sets.size() < min_sets)
        throw error(what + " needs at least " + std::to_string(min_sets) + " labeled test sets (got " +
                    std::to_string(sets.size()) + ")");
    for (const auto& s : sets)
        if (!s.scores.accuracy) throw error(what + ": set '" + printable(s.name, 256) + "' has no true accuracy (give its labels)");
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


// Per method summary over `sets`; methods whose statistics are undefined get a note instead.
std::map<method, evaluation_summary> summaries(const std::vector<labeled_set>& sets, const std::string& scope,
                                               std::vector<std::string>& notes) {
    std::map<method, evaluation_summary> out;
    const auto acc = accuracies(sets);
    for (const auto& [m, values] : common_values(sets)) {
        try {
            out[m] = summarize(values, acc);
        } catch (const error& e) {
            notes.push_back(std::string(method_name(m)) + scope + ": no summary: " + e.what());
        }
    }
    return out;
}

nlohmann::json summaries_json(const std::map<method, evaluation_summary>& summaries) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [m, s] : summaries) out[method_name(m)] = summary_json(s);
    return out;
}


double clip01(double x) { return std::min(1.0, std::max(0.0, x)); }

// The estimate and its interval [lower, upper] (unclipped) within [0, 1], where the truth lies.
// An interval that overlaps [0, 1] is clipped; one wholly outside it (the line far beyond the
// scores it was fitted on: a score of 1e308, uniform logits) would clip to a single point, a
// 90% interval of width 0, so it keeps its width at the nearer end instead.
void bound(prediction& p, double fitted, double lower, double upper) {
    p.accuracy = clip01(fitted);
    p.out_of_range = fitted < 0 ? -1 : fitted > 1 ? 1 : 0;
    const double width = std::min(1.0, upper - lower);
    if (upper < 0) {
        p.lower = 0, p.upper = width;
    } else if (lower > 1) {
        p.lower = 1 - width, p.upper = 1;
    } else {
        p.lower = clip01(lower), p.upper = clip01(upper);
    }
}

// Each set's group for leave-one-group-out: its group, or its own name when it has none; with
// fewer than two groups every set is its own group (leave-one-out).
std::vector<std::string> fold_keys(const std::vector<labeled_set>& sets) {
    std::vector<std::string> keys;
    for (const auto& s : sets) keys.push_back(s.group.empty() ? s.name : s.group);
    if (std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return k == keys.front(); }))
        for (std::size_t i = 0; i < sets.size(); ++i) keys[i] = sets[i].name + "#" + std::to_string(i);
    return keys;
}

// The folds of one method's line, in order of first appearance; empty when a fold cannot be fitted.
std::vector<group_fold> fit_folds(const std::vector<double>& x, const std::vector<double>& y,
                                  const std::vector<std::string>& keys) {
    std::vector<std::string> order;
    for (const auto& k : keys)
        if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
    std::vector<group_fold> folds;
    for (const auto& g : order) {
        std::vector<double> xs, ys;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (keys[i] != g) xs.push_back(x[i]), ys.push_back(y[i]);
        group_fold f;
        f.group = g;
        try {
            const auto line = fit_line(xs, ys);
            f.slope = line.slope;
            f.intercept = line.intercept;
        } catch (const error&) {
            return {};
        }
        for (std::size_t i = 0; i < x.size(); ++i)
            if (keys[i] == g) f.residuals.push_back(y[i] - clip01(f.slope * x[i] + f.intercept));
        folds.push_back(std::move(f));
    }
    return folds;
}

// Held-out errors compared at 1e-9: methods that differ by a constant (DoC is ConfScore moved by
// one) tie in the last bits, differently on each target; ties go to the registry's order.
long long error_key(double logo_mae) { return std::llround(logo_mae * 1e9); }

// The methods that have folds, best first: by held-out error, then in registry order.
std::vector<const method_calibration*> by_held_out_error(const std::vector<method_calibration>& methods) {
    std::vector<const method_calibration*> ranked;
    for (const auto& mc : methods)
        if (!mc.folds.empty()) ranked.push_back(&mc);
    std::sort(ranked.begin(), ranked.end(), [](const method_calibration* a, const method_calibration* b) {
        return std::make_pair(error_key(a->logo_mae), a->m) < std::make_pair(error_key(b->logo_mae), b->m);
    });
    return ranked;
}

double mean_abs_residual(const std::vector<group_fold>& folds) {
    double sum = 0;
    std::size_t n = 0;
    for (const auto& f : folds)
        for (const double r : f.residuals) sum += std::abs(r), ++n;
    return sum / static_cast<double>(n);
}

// The family's MaNo values: each set's chosen variant (its standard error only where it was
// scored on that branch); the softrun variants of the baselines leave when a set used another branch.
std::vector<labeled_set> on_branch(std::vector<labeled_set> sets, const normalization_choice& choice,
                                   std::vector<std::string>* notes) {
    bool all_on_branch = true;
    for (auto& s : sets) {
        auto& m = *s.scores.mano;
        const bool same = m.used == choice.norm && (choice.norm == normalization::softmax || m.taylor_order == choice.taylor_order);
        all_on_branch = all_on_branch && same;
        s.scores[method::mano]->value = m.variants.at(choice.variant());
        if (!same && s.scores[method::mano]) s.scores[method::mano]->se.reset();
        m.used = choice.norm;
        m.taylor_order = choice.taylor_order;
    }
    if (!all_on_branch) {
        if (notes && (sets.front().scores[method::confscore_softrun] || sets.front().scores[method::nuclear_softrun]))
            notes->push_back("confscore_softrun, nuclear_softrun: not calibrated: some sets were scored on the other "
                             "softrun branch; score them with normalization " + std::string(normalization_name(choice.norm)) +
                             (choice.norm == normalization::taylor ? " (taylor_order " + std::to_string(choice.taylor_order) + ")" : "") +
                             " to calibrate these");
        for (auto& s : sets) {
            s.scores[method::confscore_softrun].reset();
            s.scores[method::nuclear_softrun].reset();
        }
    }
    return sets;
}

}  // namespace

nlohmann::json summary_json(const evaluation_summary& s) {
    return {{"r2", s.r2}, {"pearson", s.pearson}, {"spearman", s.spearman},
            {"kendall", s.kendall}, {"mae", s.mae}, {"n", s.n}};
}

nlohmann::json normalization_choice::to_json() const {
    nlohmann::json j = {{"variant", variant()}, {"normalization", normalization_name(norm)}, {"taylor_order", taylor_order},
                        {"by", by}, {"pooled_criterion", pooled_criterion}, {"eta", eta}};
    if (!errors.empty()) j["errors"] = errors;
    return j;
}

normalization_choice normalization_choice::from_json(const nlohmann::json& j) {
    normalization_choice c;
    const std::string variant = detail::text_of(j, "variant", "calibration: \"normalization\"");
    const auto [norm, order] = parse_variant(variant);
    c.norm = norm;
    if (j.contains("normalization") && j.at("normalization") != normalization_name(norm))
        throw error("calibration: \"normalization\" names " + printable(j.at("normalization").dump(), 40) +
                    " where its variant is " + normalization_name(norm));
    c.taylor_order = static_cast<int>(detail::integer_of(j.at("taylor_order"), "calibration", "taylor_order", 1, max_taylor_order));
    if (norm == normalization::taylor && c.taylor_order != order)
        throw error("calibration: the chosen normalization is not the one in \"options\" (its variant " +
                    printable(variant, 20) + " has Taylor order " + std::to_string(order) +
                    ", its \"taylor_order\" is " + std::to_string(c.taylor_order) + ")");
    c.by = detail::text_of(j, "by", "calibration: \"normalization\"");
    if (c.by != "leave-one-group-out" && c.by != "pooled criterion")
        throw error("calibration: the normalization was chosen by \"" + printable(c.by, 60) + "\", which this build does not know");
    c.pooled_criterion = detail::number_of(j, "pooled_criterion", "calibration: \"normalization\"");
    c.eta = detail::number_of(j, "eta", "calibration: \"normalization\"");
    if (j.contains("errors")) {
        if (!j.at("errors").is_object()) throw error("calibration: \"normalization\": \"errors\" must be an object");
        for (const auto& [name, value] : j.at("errors").items())
            c.errors[name] = detail::number_of(j.at("errors"), name.c_str(), "calibration: \"normalization\" errors");
    }
    return c;
}

normalization_choice choose_normalization(const std::vector<labeled_set>& sets, const options& opts) {
    if (sets.empty()) throw error("choosing a normalization needs at least one set");
    std::map<std::string, std::vector<double>> values;  // variant -> one value per set
    double phi_weighted = 0, rows = 0;
    for (std::size_t i = 0; i < sets.size(); ++i) {
        const auto& r = sets[i].scores;
        if (!r.mano || r.mano->variants.empty())
            throw error("set '" + printable(sets[i].name, 256) + "' has no MaNo score on both softrun branches (score it with normalization "
                        "softrun and no fixed criterion)");
        for (const auto& [name, value] : r.mano->variants)
            if (i == 0 || values.count(name)) values[name].push_back(value);
        for (auto it = values.begin(); it != values.end();)
            it = it->second.size() == i + 1 ? std::next(it) : values.erase(it);
        phi_weighted += static_cast<double>(r.n) * r.mano->criterion;
        rows += static_cast<double>(r.n);
    }
    normalization_choice c;
    c.eta = opts.eta;
    c.pooled_criterion = phi_weighted / rows;
    const bool labeled = sets.size() >= min_sets && std::all_of(sets.begin(), sets.end(), [](const labeled_set& s) {
                             return s.scores.accuracy.has_value();
                         });
    if (labeled) {
        const auto acc = accuracies(sets);
        const auto keys = fold_keys(sets);
        for (const auto& [name, x] : values) {
            const auto folds = fit_folds(x, acc, keys);
            if (!folds.empty()) c.errors[name] = mean_abs_residual(folds);
        }
    }
    if (!c.errors.empty()) {
        c.by = "leave-one-group-out";
        // the lowest error (compared as methods are); on a tie softmax, then the lower Taylor order
        const auto rank = [](const std::pair<const std::string, double>& e) {
            const auto v = parse_variant(e.first);
            return std::make_tuple(error_key(e.second), v.first == normalization::softmax ? 0 : 1, v.second);
        };
        const auto best_variant = parse_variant(
            std::min_element(c.errors.begin(), c.errors.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); })
                ->first);
        c.norm = best_variant.first;
        c.taylor_order = best_variant.first == normalization::taylor ? best_variant.second : opts.taylor_order;
        return c;
    }
    c.by = "pooled criterion";
    // the paper's rule, on every row of the family at once: softmax when Phi > eta
    c.norm = c.pooled_criterion > opts.eta ? normalization::softmax : normalization::taylor;
    c.taylor_order = opts.taylor_order;
    if (!values.count(c.variant()))
        throw error("the pooled criterion chooses " + c.variant() + ", but not every set has a MaNo score on it");
    return c;
}

double shift_reference::range_at(double confidence) const {
    std::vector<double> confidences;
    for (const auto& [c, d] : sets) confidences.push_back(c);
    std::sort(confidences.rbegin(), confidences.rend());
    // never fewer than the three most confident sets: one set's distance is too thin a range
    const double floor = std::min(confidence, confidences[std::min<std::size_t>(2, confidences.size() - 1)]);
    double range = 0;
    for (const auto& [c, d] : sets)
        if (c >= floor) range = std::max(range, d);
    return range;
}

double class_shift(const result& r, const std::vector<double>& proportions) {
    if (r.predicted.size() != proportions.size() || r.n == 0)
        throw error("the set's predicted class counts do not match the calibration's " + std::to_string(proportions.size()) +
                    " classes");
    double sum = 0;
    for (std::size_t c = 0; c < proportions.size(); ++c)
        sum += std::abs(static_cast<double>(r.predicted[c]) / static_cast<double>(r.n) - proportions[c]);
    return sum / 2;
}

evaluation_report evaluate(const std::vector<labeled_set>& sets) {
    check_labeled(sets, "evaluation");
    evaluation_report out;
    out.sets = sets;
    std::map<std::string, std::vector<labeled_set>> groups;
    for (const auto& s : sets)
        if (!s.group.empty()) groups[s.group].push_back(s);
    out.summary = summaries(sets, "", out.notes);
    for (const auto& [name, members] : groups)
        if (members.size() >= min_sets) out.groups[name] = summaries(members, " (group " + name + ")", out.notes);
    return out;
}

nlohmann::json evaluation_report::to_json() const {
    nlohmann::json out;
    out["sets"] = nlohmann::json::array();
    for (const auto& s : sets) {
        nlohmann::json j = s.scores.to_json();
        nlohmann::json row = {{"name", s.name}};
        if (!s.group.empty()) row["group"] = s.group;
        row["n"] = j["n"];
        row["k"] = j["k"];
        row["accuracy"] = *s.scores.accuracy;
        row["methods"] = j["methods"];
        out["sets"].push_back(row);
    }
    out["summary"] = summaries_json(summary);
    nlohmann::json by_group = nlohmann::json::object();
    for (const auto& [name, methods] : groups) by_group[name] = summaries_json(methods);
    if (!by_group.empty()) out["groups"] = by_group;
    out["notes"] = notes;
    return out;
}

calibration calibrate(const std::vector<labeled_set>& given, const options& opts, std::vector<std::string>* notes,
                      bool family) {
    check_labeled(given, "calibration");
    calibration c;
    c.opts = opts;
    c.k = given.front().scores.k;
    for (const auto& s : given) {
        if (s.scores.k != c.k)
            throw error("calibration: set '" + printable(s.name, 256) + "' has " + std::to_string(s.scores.k) + " classes but set '" +
                        printable(given.front().name, 256) + "' has " + std::to_string(c.k) + "; calibrate one classifier at a time");
        c.sets.push_back(s.name);
    }
    const bool choose = family && opts.norm == normalization::softrun && !opts.criterion &&
                        std::all_of(given.begin(), given.end(), [](const labeled_set& s) {
                            return s.scores.mano && !s.scores.mano->variants.empty();
                        });
    std::vector<labeled_set> chosen;
    if (choose) {
        c.normalization = choose_normalization(given, opts);
        chosen = on_branch(given, *c.normalization, notes);
        c.opts.norm = c.normalization->norm;
        c.opts.taylor_order = c.normalization->taylor_order;
    }
    const auto& sets = choose ? chosen : given;
    const auto acc = accuracies(sets);
    const auto keys = fold_keys(sets);
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
        mc.folds = fit_folds(values, acc, keys);
        if (!mc.folds.empty()) mc.logo_mae = mean_abs_residual(mc.folds);
        c.methods.push_back(mc);
    }
    if (c.methods.empty()) throw error("calibration: no method could be fitted on these sets");
    c.opts.methods.clear();
    for (const auto& mc : c.methods) c.opts.methods.push_back(mc.m);
    for (const auto* mc : by_held_out_error(c.methods)) {
        if (!c.recommended) c.recommended = mc->m;
        if (!c.fallback && !info_of(mc->m).assumes_class_proportions) c.fallback = mc->m;
    }
    if (std::all_of(sets.begin(), sets.end(), [&](const labeled_set& s) {
            return s.scores.predicted.size() == c.k && s.scores.confidence;
        })) {
        shift_reference ref;
        ref.proportions.assign(c.k, 0.0);
        for (const auto& s : sets)
            for (std::size_t j = 0; j < c.k; ++j)
                ref.proportions[j] += static_cast<double>(s.scores.predicted[j]) / static_cast<double>(s.scores.n) /
                                      static_cast<double>(sets.size());
        for (const auto& s : sets) ref.sets.emplace_back(*s.scores.confidence, class_shift(s.scores, ref.proportions));
        c.shift = ref;
    }
    return c;
}

nlohmann::json prediction::to_json() const {
    nlohmann::json j = {{"score", score}};
    if (score_se) j["se"] = *score_se;
    j["accuracy"] = accuracy;
    j["interval"] = {lower, upper};
    j["extrapolated"] = extrapolated;
    if (out_of_range) j["out_of_range"] = out_of_range < 0 ? "below" : "above";
    return j;
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
    const double t = student_t_quantile(0.5 + level / 2, n - 2);
    p.extrapolated = score < f.x_min || score > f.x_max;
    std::size_t residual_count = 0;
    double residual_sq = 0;
    for (const auto& fold : c.folds)
        for (const double r : fold.residuals) residual_sq += r * r, ++residual_count;
    const double m = static_cast<double>(residual_count);
    // the ceil(level (m + 1))-th smallest upper end and the floor((1 - level)(m + 1))-th lower one
    const auto upper_rank = static_cast<std::size_t>(std::ceil(level * (m + 1) - 1e-9));
    const auto lower_rank = static_cast<std::size_t>(std::floor((1 - level) * (m + 1) + 1e-9));
    if (!c.folds.empty() && (upper_rank > residual_count || lower_rank < 1)) {
        // too few sets for jackknife+ at this level: a t interval whose spread is the root mean
        // square of the held-out-group residuals, with a degree of freedom per group less one
        const double folds = static_cast<double>(c.folds.size());
        double variance = residual_sq / m;
        if (p.score_se) variance += f.slope * f.slope * *p.score_se * *p.score_se;
        const double half = student_t_quantile(0.5 + level / 2, folds - 1) * std::sqrt(variance);
        bound(p, fitted, fitted - half, fitted + half);
        return p;
    }
    if (!c.folds.empty()) {
        // jackknife+: each calibration set's fold line at `score`, moved by that set's |residual|
        std::vector<double> low, high;
        for (const auto& fold : c.folds)
            for (const double r : fold.residuals) {
                const double at = fold.slope * score + fold.intercept;
                low.push_back(at - std::abs(r));
                high.push_back(at + std::abs(r));
            }
        std::sort(low.begin(), low.end());
        std::sort(high.begin(), high.end());
        double lower = low[lower_rank - 1];
        double upper = high[upper_rank - 1];
        lower = std::min(lower, fitted);
        upper = std::max(upper, fitted);
        // the score's own sampling noise, added in quadrature to each side
        if (p.score_se) {
            const double noise = t * std::abs(f.slope) * *p.score_se;
            lower = fitted - std::hypot(fitted - lower, noise);
            upper = fitted + std::hypot(upper - fitted, noise);
        }
        bound(p, fitted, lower, upper);
        return p;
    }
    const double dx = score - c.score_mean;
    // prediction variance of a new set at `score`, plus the score's own sampling variance
    double variance = f.residual_se * f.residual_se * (1.0 + 1.0 / n + (c.score_sxx > 0 ? dx * dx / c.score_sxx : 0.0));
    if (p.score_se) variance += f.slope * f.slope * *p.score_se * *p.score_se;
    const double half = t * std::sqrt(variance);
    bound(p, fitted, fitted - half, fitted + half);
    return p;
}

options scoring_options(const calibration& c, std::size_t n, std::size_t k, std::vector<method>* left_out) {
    if (k != c.k)
        throw error("the logits have " + std::to_string(k) + " classes but the calibration was fitted on logits with " +
                    std::to_string(c.k));
    options o = c.opts;
    o.methods.clear();
    for (const method m : c.opts.methods) {
        const bool bounded = info_of(m).cost != method_cost::keeps_rows ||
                             (n > 0 && k <= keeps_rows_max_k &&
                              static_cast<double>(n) * static_cast<double>(k) <= static_cast<double>(keeps_rows_max_logits));
        if (bounded) o.methods.push_back(m);
        else if (left_out) left_out->push_back(m);
    }
    return o;
}

set_prediction predict(const calibration& c, const result& r, double level) {
    if (r.k != c.k)
        throw error("the logits have " + std::to_string(r.k) + " classes but the calibration was fitted on logits with " +
                    std::to_string(c.k));
    // MaNo (and the softrun baselines) on the calibration's branch: a per-set softrun result
    // serves through its variants when it took the other branch
    std::optional<double> mano_value;
    bool softrun_branch_same = true;
    if (r.mano && c.opts.norm != normalization::softrun) {
        const std::string want = variant_name(c.opts.norm, c.opts.taylor_order);
        const auto& m = *r.mano;
        softrun_branch_same = variant_name(m.used, m.taylor_order) == want && m.p == c.opts.p;
        if (softrun_branch_same) {
            mano_value = r.value(method::mano);
        } else if (m.variants.count(want) && m.p == c.opts.p) {
            mano_value = m.variants.at(want);
        } else {
            throw error("MaNo was scored with normalization " + variant_name(m.used, m.taylor_order) + " (p = " +
                        number_text(m.p) + ") but the calibration uses " + want + " (p = " + number_text(c.opts.p) +
                        "); score the set with the calibration's options");
        }
    }
    set_prediction out;
    out.n = r.n;
    out.k = r.k;
    out.level = level;
    for (auto v : r.values()) {
        const auto found = std::find_if(c.methods.begin(), c.methods.end(),
                                        [&](const method_calibration& mc) { return mc.m == v.m; });
        if (found == c.methods.end()) continue;
        if (v.m == method::mano && mano_value && *mano_value != v.value) {
            v.value = *mano_value;
            v.se.reset();
        }
        if ((v.m == method::confscore_softrun || v.m == method::nuclear_softrun) && !softrun_branch_same) continue;
        out.methods[v.m] = predict(*found, v.value, v.se, level);
    }
    out.accuracy = r.accuracy;
    bool outside = false;
    if (c.shift && r.predicted.size() == c.k && r.confidence) {
        shift_check shift;
        shift.distance = class_shift(r, c.shift->proportions);
        shift.range = c.shift->range_at(*r.confidence);
        // the distance two samples of n rows from the same proportions have on average: beyond
        // the range by less than this is sampling noise, not a shift
        for (const double p : c.shift->proportions)
            shift.allowance += 0.5 * std::sqrt(2 * p * (1 - p) / (std::acos(-1.0) * static_cast<double>(r.n)));
        shift.outside = outside = shift.distance > shift.range + shift.allowance;
        out.shift = shift;
    }
    // the estimate: the calibrated method with the lowest leave-one-group-out error that this
    // result has, passing over those that assume class proportions when the set is outside
    const method_calibration* best = nullptr;
    for (const auto* mc : by_held_out_error(c.methods))
        if (!best && out.methods.count(mc->m) && !(outside && info_of(mc->m).assumes_class_proportions)) best = mc;
    if (best) out.estimate = set_estimate{best->m, out.methods.at(best->m), !c.recommended || best->m != *c.recommended};
    return out;
}

nlohmann::json set_prediction::to_json() const {
    nlohmann::json by_method = nlohmann::json::object();
    for (const auto& [m, p] : methods) by_method[method_name(m)] = p.to_json();
    nlohmann::json out = {{"n", n}, {"k", k}, {"level", level}, {"methods", by_method}};
    if (accuracy) out["accuracy"] = *accuracy;
    if (shift)
        out["shift"] = {{"distance", shift->distance}, {"range", shift->range}, {"allowance", shift->allowance},
                        {"outside", shift->outside}};
    if (estimate) {
        out["estimate"] = {{"method", method_name(estimate->m)},
                           {"accuracy", estimate->value.accuracy},
                           {"interval", {estimate->value.lower, estimate->value.upper}},
                           {"extrapolated", estimate->value.extrapolated},
                           {"fallback", estimate->fallback}};
        if (estimate->value.out_of_range) out["estimate"]["out_of_range"] = estimate->value.out_of_range < 0 ? "below" : "above";
    }
    return out;
}

coverage_report coverage(const std::vector<set_prediction>& predictions) {
    coverage_report out;
    const auto add = [](interval_coverage& cov, const prediction& p, double truth) {
        cov.covered += p.lower <= truth && truth <= p.upper ? 1 : 0;
        cov.sets += 1;
        cov.mae += std::abs(p.accuracy - truth);
        // (sum + upper) - lower, the order mano has always summed in: reported widths stay bit for bit
        cov.width = cov.width + p.upper - p.lower;
    };
    for (const auto& s : predictions) {
        if (!s.accuracy) continue;
        for (const auto& [m, p] : s.methods) add(out.methods[m], p, *s.accuracy);
        if (s.estimate) {
            if (!out.estimate) out.estimate.emplace();
            add(*out.estimate, s.estimate->value, *s.accuracy);
        }
    }
    const auto finish = [](interval_coverage& cov) {
        const double sets = static_cast<double>(cov.sets);
        cov.rate = static_cast<double>(cov.covered) / sets;
        cov.mae /= sets;
        cov.width /= sets;
    };
    for (auto& [m, cov] : out.methods) finish(cov);
    if (out.estimate) finish(*out.estimate);
    return out;
}

nlohmann::json interval_coverage::to_json() const {
    return {{"covered", covered}, {"sets", sets}, {"rate", rate}, {"mae", mae}, {"width", width}};
}

nlohmann::json coverage_report::to_json() const {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [m, cov] : methods) out[method_name(m)] = cov.to_json();
    if (estimate) out["estimate"] = estimate->to_json();
    return out;
}

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
        if (!mc.folds.empty()) {
            f["logo_mae"] = mc.logo_mae;
            f["folds"] = nlohmann::json::array();
            for (const auto& fold : mc.folds)
                f["folds"].push_back({{"group", fold.group}, {"slope", fold.slope}, {"intercept", fold.intercept},
                                      {"residuals", fold.residuals}});
        }
        fits[method_name(mc.m)] = f;
    }
    nlohmann::json j = {{"format", "mano-calibration"}, {"version", calibration_version}, {"k", k},
                        {"options", opts.to_json()}, {"methods", fits}, {"sets", sets}};
    if (normalization) j["normalization"] = normalization->to_json();
    if (recommended) j["recommended"] = method_name(*recommended);
    if (fallback) j["fallback"] = method_name(*fallback);
    const auto ranked = by_held_out_error(methods);
    if (!ranked.empty()) {
        j["ranking"] = nlohmann::json::array();
        for (const auto* mc : ranked) j["ranking"].push_back({{"method", method_name(mc->m)}, {"logo_mae", mc->logo_mae}});
    }
    if (shift) {
        j["shift"] = {{"proportions", shift->proportions}, {"sets", nlohmann::json::array()}};
        for (const auto& [conf, d] : shift->sets) j["shift"]["sets"].push_back({{"confidence", conf}, {"distance", d}});
    }
    return j;
}

calibration calibration::from_json(const nlohmann::json& j) {
    try {
        if (j.is_object() && j.contains("format") && j.at("format") == "mano-calibration" && j.contains("version") && j.at("version") == 1)
            throw error("calibration: written by an older mano (version 1, without leave-one-group-out folds); run mano "
                        "calibrate again");
        detail::check_state_header(j, "mano-calibration", "calibration", calibration_version);
        // "inference": what calibrate --synthesize records of the model run
        detail::check_known_keys(j, {"format", "version", "k", "options", "methods", "sets", "normalization", "recommended",
                                     "fallback", "ranking", "shift", "inference"},
                                 "calibration");
        calibration c;
        c.opts = options::from_json(j.at("options"));
        c.k = detail::count_of(j, "k", "calibration");
        if (c.k < 2) throw error("calibration: \"k\" must be at least 2");
        if (c.opts.source && c.opts.source->k != c.k)
            throw error("calibration: the source model in \"options\" has " + std::to_string(c.opts.source->k) +
                        " classes but the calibration " + std::to_string(c.k));
        c.sets = j.at("sets").get<std::vector<std::string>>();
        for (const auto& [name, f] : j.at("methods").items()) {
            method_calibration mc;
            mc.m = parse_method(name);  // an unknown name is refused here, quoted escaped
            const std::string where = std::string("calibration: method '") + method_name(mc.m) + "'";
            detail::check_known_keys(f, {"slope", "intercept", "residual_se", "n", "score_min", "score_max", "score_mean",
                                         "score_sxx", "logo_mae", "folds"},
                                     where);
            mc.fit.slope = detail::number_of(f, "slope", where);
            mc.fit.intercept = detail::number_of(f, "intercept", where);
            mc.fit.residual_se = detail::number_of(f, "residual_se", where);
            mc.fit.n = detail::count_of(f, "n", where);
            mc.fit.x_min = detail::number_of(f, "score_min", where);
            mc.fit.x_max = detail::number_of(f, "score_max", where);
            mc.score_mean = detail::number_of(f, "score_mean", where);
            mc.score_sxx = detail::number_of(f, "score_sxx", where);
            bool sane = std::isfinite(mc.fit.slope) && std::isfinite(mc.fit.intercept) &&
                        std::isfinite(mc.fit.residual_se) && mc.fit.residual_se >= 0 && mc.fit.n >= min_sets &&
                        mc.fit.x_min <= mc.fit.x_max && mc.score_sxx >= 0 && std::isfinite(mc.score_sxx) &&
                        (mc.fit.x_min == mc.fit.x_max || mc.score_sxx > 0) && mc.score_mean >= mc.fit.x_min &&
                        mc.score_mean <= mc.fit.x_max;
            if (f.contains("folds")) {
                std::size_t residuals = 0;
                for (const auto& fold : f.at("folds")) {
                    group_fold g;
                    g.group = detail::text_of(fold, "group", where + " fold");
                    g.slope = detail::number_of(fold, "slope", where + " fold");
                    g.intercept = detail::number_of(fold, "intercept", where + " fold");
                    g.residuals = detail::numbers_of(fold, "residuals", where + " fold");
                    for (const double r : g.residuals) sane = sane && std::isfinite(r) && std::abs(r) <= 1;
                    sane = sane && std::isfinite(g.slope) && std::isfinite(g.intercept) && !g.residuals.empty();
                    residuals += g.residuals.size();
                    mc.folds.push_back(std::move(g));
                }
                mc.logo_mae = detail::number_of(f, "logo_mae", where);
                sane = sane && mc.folds.size() >= 2 && residuals == mc.fit.n && std::abs(mc.logo_mae - mean_abs_residual(mc.folds)) <= 1e-9;
            }
            if (!sane) throw error("calibration: the fit of method '" + printable(name, 60) + "' is inconsistent");
            c.methods.push_back(mc);
        }
        if (c.methods.empty()) throw error("calibration: no calibrated methods");
        // every calibrated method is one the options score, with the inputs it needs recorded
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
        const auto calibrated = [&](const char* key) -> std::optional<method> {
            if (!j.contains(key)) return std::nullopt;
            const method m = parse_method(detail::text_of(j, key, "calibration"));
            const auto found = std::find_if(c.methods.begin(), c.methods.end(), [&](const method_calibration& mc) { return mc.m == m; });
            if (found == c.methods.end() || found->folds.empty())
                throw error(std::string("calibration: the ") + key + " method '" + method_name(m) + "' has no leave-one-group-out fit");
            return m;
        };
        c.recommended = calibrated("recommended");
        c.fallback = calibrated("fallback");
        if (j.contains("normalization")) {
            c.normalization = normalization_choice::from_json(j.at("normalization"));
            if (c.opts.norm != c.normalization->norm || c.opts.taylor_order != c.normalization->taylor_order)
                throw error("calibration: the chosen normalization is not the one in \"options\"");
        }
        if (j.contains("shift")) {
            shift_reference ref;
            ref.proportions = detail::numbers_of(j.at("shift"), "proportions", "calibration: \"shift\"");
            for (const auto& s : j.at("shift").at("sets"))
                ref.sets.emplace_back(detail::number_of(s, "confidence", "calibration: \"shift\" set"),
                                      detail::number_of(s, "distance", "calibration: \"shift\" set"));
            double total = 0;
            // one entry per calibration set
            bool sane = ref.proportions.size() == c.k && ref.sets.size() == c.sets.size();
            for (const double x : ref.proportions) sane = sane && x >= 0 && x <= 1, total += x;
            for (const auto& [conf, d] : ref.sets) sane = sane && conf >= 0 && conf <= 1 && d >= 0 && d <= 1;
            if (!sane || std::abs(total - 1) > 1e-6) throw error("calibration: the class-shift reference is inconsistent");
            c.shift = ref;
        }
        return c;
    } catch (const nlohmann::json::exception& e) {
        throw error("calibration: " + detail::json_error_text(e));
    }
}

}  // namespace mano

// The normalization one family of sets shares (normalization_choice.hpp): chosen by
// the leave-one-group-out error of MaNo's line over its variants, and the sets moved onto it.
#include "mano/calibration/normalization_choice.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "mano/base/detail/json_fields.hpp"
#include "mano/calibration/calibration.hpp"
#include "mano/calibration/detail/labeled_sets.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

namespace detail {

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
        // the methods that read the softrun rows (the table's on_softrun_branch) leave every set
        std::vector<method> following;
        std::vector<std::string> names;
        for (const auto& m : method_table)
            if (m.on_softrun_branch) following.push_back(m.id), names.push_back(m.name);
        const bool present = std::any_of(following.begin(), following.end(),
                                         [&](method m) { return static_cast<bool>(sets.front().scores[m]); });
        if (notes && present)
            notes->push_back(join(names, ", ") + ": not calibrated: some sets were scored on the other "
                             "softrun branch; score them with normalization " + std::string(normalization_name(choice.norm)) +
                             (choice.norm == normalization::taylor ? " (taylor_order " + std::to_string(choice.taylor_order) + ")" : "") +
                             " to calibrate these");
        for (auto& s : sets)
            for (const method m : following) s.scores[m].reset();
    }
    return sets;
}


}  // namespace detail

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
    std::size_t fewest_classes = sets.front().scores.k;
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
        fewest_classes = std::min(fewest_classes, r.k);
    }
    normalization_choice c;
    c.eta = opts.eta;
    c.pooled_criterion = phi_weighted / rows;
    const bool labeled = sets.size() >= detail::min_sets && std::all_of(sets.begin(), sets.end(), [](const labeled_set& s) {
                             return s.scores.accuracy.has_value();
                         });
    if (labeled) {
        const auto acc = detail::accuracies(sets);
        const auto keys = detail::fold_keys(sets);
        for (const auto& [name, x] : values) {
            if (constant_scores(x, {})) continue;  // a variant that is constant here is not a choice
            const auto folds = detail::fit_folds(x, acc, keys, link::identity, {}, detail::copy_flags(sets));
            if (!folds.empty()) c.errors[name] = detail::mean_abs_residual(folds);
        }
    }
    if (!c.errors.empty()) {
        c.by = "leave-one-group-out";
        // the lowest error (compared as methods are); on a tie softmax, then the lower Taylor order
        const auto rank = [](const std::pair<const std::string, double>& e) {
            const auto v = parse_variant(e.first);
            return std::make_tuple(detail::error_key(e.second), v.first == normalization::softmax ? 0 : 1, v.second);
        };
        const auto best_variant = parse_variant(
            std::min_element(c.errors.begin(), c.errors.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); })
                ->first);
        c.norm = best_variant.first;
        c.taylor_order = best_variant.first == normalization::taylor ? best_variant.second : opts.taylor_order;
        return c;
    }
    c.by = "pooled criterion";
    // the paper's rule, on every row of the family at once: softmax when Phi > eta (and at K = 2)
    c.norm = softrun_branch(c.pooled_criterion, opts.eta, fewest_classes);
    c.taylor_order = opts.taylor_order;
    if (!values.count(c.variant()))
        throw error("the pooled criterion chooses " + c.variant() + ", but not every set has a MaNo score on it");
    return c;
}
}  // namespace mano

// The paper's protocol over labeled shifted sets (mano eval): per method statistics over all the
// sets and per group.
#include "mano/calibration/evaluate.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "mano/calibration/detail/labeled_sets.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

namespace detail {

void check_labeled(const std::vector<labeled_set>& sets, const std::string& what) {
    if (sets.size() < min_sets)
        throw error(what + " needs at least " + std::to_string(min_sets) + " labeled test sets (got " +
                    std::to_string(sets.size()) + ")");
    for (const auto& s : sets)
        if (!s.scores.accuracy) throw error(what + ": set '" + printable(s.name, 256) + "' has no true accuracy (give its labels)");
}

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

std::optional<std::string> constant_over(const std::vector<labeled_set>& sets, method m, const std::vector<double>& values) {
    std::vector<double> own, ses;
    bool every_se = true;
    for (std::size_t i = 0; i < sets.size(); ++i) {
        if (sets[i].copy_of) continue;
        own.push_back(values[i]);
        std::optional<double> se;
        for (const auto& v : sets[i].scores.values())
            if (v.m == m) se = v.se;
        if (se) ses.push_back(*se);
        else every_se = false;
    }
    if (!every_se) ses.clear();
    return constant_scores(own, ses);
}

std::vector<double> accuracies(const std::vector<labeled_set>& sets) {
    std::vector<double> out;
    for (const auto& s : sets) out.push_back(*s.scores.accuracy);
    return out;
}

std::vector<double> weights(const std::vector<labeled_set>& sets) {
    std::vector<double> out;
    for (const auto& s : sets) out.push_back(s.weight);
    if (std::all_of(out.begin(), out.end(), [](double w) { return w == 1; })) out.clear();
    return out;
}

}  // namespace detail

namespace {

using detail::accuracies;
using detail::common_values;

// Per method summary over `sets`; methods whose statistics are undefined get a note instead.
std::map<method, evaluation_summary> summaries(const std::vector<labeled_set>& sets, const std::string& scope,
                                               std::vector<std::string>& notes) {
    std::map<method, evaluation_summary> out;
    const auto acc = accuracies(sets);
    for (const auto& [m, values] : common_values(sets)) {
        if (const auto why = detail::constant_over(sets, m, values)) {
            notes.push_back(std::string(method_name(m)) + scope + ": no summary: " + *why);
            continue;
        }
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

}  // namespace

nlohmann::json summary_json(const evaluation_summary& s) {
    return {{"r2", s.r2}, {"pearson", s.pearson}, {"spearman", s.spearman},
            {"kendall", s.kendall}, {"mae", s.mae}, {"n", s.n}};
}

evaluation_report evaluate(const std::vector<labeled_set>& sets) {
    detail::check_labeled(sets, "evaluation");
    evaluation_report out;
    out.sets = sets;
    std::map<std::string, std::vector<labeled_set>> groups;
    for (const auto& s : sets)
        if (!s.group.empty()) groups[s.group].push_back(s);
    out.summary = summaries(sets, "", out.notes);
    for (const auto& [name, members] : groups)
        if (members.size() >= detail::min_sets) out.groups[name] = summaries(members, " (group " + name + ")", out.notes);
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
}  // namespace mano

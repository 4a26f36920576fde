#include "mano/workflow/family.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "mano/calibration/detail/labeled_sets.hpp"
#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/calibration/statistics.hpp"
#include "mano/base/text.hpp"

namespace mano {
namespace workflow {

family_options family_options::from_json(const nlohmann::json& j) {
    family_options f;
    if (!j.is_object()) throw error("family options must be an object");
    detail::check_known_keys(j, {"family", "taylor_orders", "label_shift_copies"}, "family options");
    if (j.contains("family")) {
        if (!j.at("family").is_boolean()) throw error("\"family\" must be true or false");
        f.family = j.at("family").get<bool>();
    }
    if (j.contains("taylor_orders")) {
        check_option("taylor_orders", j.at("taylor_orders"), "\"taylor_orders\"");
        f.taylor_orders.clear();
        for (const auto& order : j.at("taylor_orders"))
            f.taylor_orders.push_back(static_cast<int>(detail::integer_of(order, "family options", "taylor_orders", 1, max_taylor_order)));
    }
    if (j.contains("label_shift_copies") && !j.at("label_shift_copies").is_null())
        f.copies = label_shift_copies::from_json(j.at("label_shift_copies"), "family options: \"label_shift_copies\"");
    return f;
}

options pass::apply(options o) const {
    if (norm) o.norm = *norm;
    if (taylor_order) o.taylor_order = *taylor_order;
    if (mano_only) o.methods = {method::mano};
    if (kind != role::variant) o.correctness_histogram = true;  // for the correctness model (audits)
    return o;
}

namespace {

const char* role_name(pass::role r) {
    switch (r) {
        case pass::role::variant: return "variant";
        case pass::role::rescore: return "rescore";
        case pass::role::copy: return "copy";
        default: return "first";
    }
}

nlohmann::json sets_json(const std::vector<labeled_set>& sets) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : sets) {
        nlohmann::json j = {{"name", s.name}, {"result", s.scores.to_json()}};
        if (!s.group.empty()) j["group"] = s.group;
        if (s.weight != 1) j["weight"] = s.weight;
        if (s.copy_of) j["copy_of"] = *s.copy_of;
        out.push_back(std::move(j));
    }
    return out;
}

}  // namespace

std::vector<labeled_set> labeled_sets_from_json(const nlohmann::json& sets) {
    if (!sets.is_array()) throw error("sets must be a list of {name, group?, result}");
    std::vector<labeled_set> out;
    for (const auto& s : sets) {
        if (!s.is_object()) throw error("sets must be a list of {name, group?, result}");
        labeled_set set;
        set.name = detail::text_of(s, "name", "a set");
        const std::string what = "set '" + printable(set.name, 256) + "'";
        if (s.contains("group")) set.group = detail::text_of(s, "group", what);
        if (s.contains("weight")) {
            set.weight = detail::number_of(s, "weight", what);
            if (!(set.weight > 0 && set.weight <= 1e6)) throw error(what + ": \"weight\" must be above 0 (and at most 1e6)");
        }
        if (s.contains("copy_of")) {
            set.copy_of = static_cast<std::size_t>(detail::integer_of(s.at("copy_of"), what, "copy_of", 0, static_cast<std::int64_t>(out.size()) - 1));
            if (out[*set.copy_of].copy_of) throw error(what + ": \"copy_of\" must name a set that is not a copy itself");
        }
        if (!s.contains("result")) throw error("set '" + printable(set.name, 256) + "': missing \"result\"");
        try {
            set.scores = result::from_json(s.at("result"));
        } catch (const error& e) {
            throw error("set '" + printable(set.name, 256) + "': " + e.what());
        }
        out.push_back(std::move(set));
    }
    return out;
}

nlohmann::json pass::to_json() const {
    nlohmann::json j = {{"pass", role_name(kind)}};
    if (norm) j["normalization"] = normalization_name(*norm);
    if (taylor_order) j["taylor_order"] = *taylor_order;
    if (mano_only) j["methods"] = {method_name(method::mano)};
    if (kind != role::variant) j["correctness_histogram"] = true;
    if (labels) j["labels"] = true;
    if (kind == role::copy) {
        j["rows"] = rows;
        j["copy"] = copy;
    }
    return j;
}

pass first_pass(const family_options& f) {
    pass p;
    if (f.family) p.norm = normalization::softrun;
    p.labels = f.copies && f.copies->copies > 0;  // the copies are drawn by class from these
    return p;
}

bool chooses_branch(const family_options& f, const options& used) { return f.family && used.wants(method::mano); }

std::vector<pass> variant_passes(const family_options& f, const options& used, std::size_t fewest_classes) {
    std::vector<pass> out;
    if (!chooses_branch(f, used) || !taylor_defined(fewest_classes)) return out;
    for (const int order : f.taylor_orders) {
        if (order == used.taylor_order) continue;  // the softrun pass has it already
        if (std::any_of(out.begin(), out.end(), [&](const pass& p) { return p.taylor_order == order; })) continue;
        pass p;
        p.kind = pass::role::variant;
        p.norm = normalization::taylor;
        p.taylor_order = order;
        p.mano_only = true;
        out.push_back(p);
    }
    return out;
}

void add_variant(result& first, const pass& p, const result& variant) {
    if (!first.mano || !variant.mano || !p.taylor_order)
        throw error("a Taylor variant needs MaNo in both the first result and the variant's");
    first.mano->variants[variant_name(normalization::taylor, *p.taylor_order)] = variant.value(method::mano).value();
}

branch choose_branch(const std::vector<labeled_set>& first, const options& used) {
    branch b;
    b.choice = choose_normalization(first, used);
    b.rescore.kind = pass::role::rescore;
    b.rescore.norm = b.choice.norm;
    b.rescore.taylor_order = b.choice.taylor_order;
    return b;
}

family_scoring::family_scoring(std::vector<std::string> names, std::vector<std::string> groups, family_options f)
    : names_(std::move(names)), groups_(std::move(groups)), family_(std::move(f)) {
    if (names_.size() != groups_.size()) throw error("family_scoring: as many groups as names are needed");
    if (names_.empty()) stage_ = stage::done;
}

std::optional<family_scoring::request> family_scoring::next() const {
    switch (stage_) {
        case stage::first: return request{set_, first_pass(family_)};
        case stage::variants: return request{set_, variants_[variant_]};
        case stage::rescore: return request{set_, rescore_};
        case stage::copies: return request{set_, copy_pass()};
        default: return std::nullopt;
    }
}

pass family_scoring::copy_pass() const {
    pass p = out_.choice ? rescore_ : first_pass(family_);
    p.kind = pass::role::copy;
    p.labels = false;
    p.copy = copy_;
    p.rows = label_shift_copy_rows(labels_[set_], out_.sets[set_].scores.k, *family_.copies, set_, copy_);
    return p;
}

void family_scoring::give(std::optional<scored_set> scored) {
    switch (stage_) {
        case stage::first:
            if (!scored) throw error("set \"" + printable(names_[set_], 256) + "\" has neither rows nor a result to score");
            if (!scored->labels.empty() && scored->labels.size() != scored->scores.n)
                throw error("set \"" + printable(names_[set_], 256) + "\": " + std::to_string(scored->labels.size()) +
                            " labels for " + std::to_string(scored->scores.n) + " rows");
            labels_.push_back(std::move(scored->labels));
            out_.sets.push_back({names_[set_], groups_[set_], std::move(scored->scores), 1, std::nullopt});
            if (set_ == 0) out_.used = std::move(scored->used);
            break;
        case stage::variants:
            if (scored) {
                try {
                    add_variant(out_.sets[set_].scores, variants_[variant_], scored->scores);
                } catch (const error& e) {
                    fail(e.what());
                    return;
                }
            }
            break;
        case stage::rescore:
            if (scored) {
                out_.sets.push_back({names_[set_], groups_[set_], std::move(scored->scores), 1, std::nullopt});
                if (set_ == 0) out_.used = std::move(scored->used);
            } else {
                kept_.push_back(set_);
                out_.sets.push_back(out_.per_set[set_]);
                if (set_ == 0) out_.used = rescore_.apply(out_.used);
            }
            break;
        case stage::copies: {
            if (!scored) throw error("set \"" + printable(names_[set_], 256) + "\": its label-shifted copy has no rows to score");
            const auto& original = out_.sets[set_];
            labeled_set copy{original.name + " (label-shift copy " + std::to_string(copy_ + 1) + ")", original.group,
                             std::move(scored->scores), 1, std::nullopt};
            copy.copy_of = set_;
            out_.sets.push_back(std::move(copy));
            break;
        }
        default: throw error("family_scoring: every pass is done already");
    }
    advance();
}

void family_scoring::fail(const std::string& message) {
    if (stage_ != stage::variants) throw error(message);
    warnings_.emplace_back(set_, "Taylor order " + std::to_string(*variants_[variant_].taylor_order) +
                                     " left out of the choice (" + message + ")");
    advance();
}

void family_scoring::advance() {
    if (stage_ == stage::copies) {
        if (++copy_ < family_.copies->copies) return;
        copy_ = 0;
        while (++set_ < originals_ && labels_[set_].empty()) {
        }
        if (set_ == originals_) stage_ = stage::done;
        return;
    }
    if (++set_ < names_.size()) return;
    set_ = 0;
    if (stage_ == stage::first) {
        if (!chooses_branch(family_, out_.used)) {
            start_copies();
            return;
        }
        // the choice is among softmax, the options' own Taylor order and the other orders asked for
        const auto fewest = std::min_element(out_.sets.begin(), out_.sets.end(),
                                             [](const labeled_set& a, const labeled_set& b) { return a.scores.k < b.scores.k; });
        variants_ = variant_passes(family_, out_.used, fewest->scores.k);
        variant_ = 0;
        stage_ = stage::variants;
        if (variants_.empty()) start_rescore();
    } else if (stage_ == stage::variants) {
        if (++variant_ == variants_.size()) start_rescore();
    } else {
        keep_given_sets();
        start_copies();
    }
}

void family_scoring::start_copies() {
    stage_ = stage::done;
    originals_ = out_.sets.size();
    if (!family_.copies || family_.copies->copies == 0 ||
        std::all_of(labels_.begin(), labels_.end(), [](const auto& l) { return l.empty(); }))
        return;
    // an original weighs as much as its copies together
    for (auto& s : out_.sets) s.weight = static_cast<double>(family_.copies->copies);
    out_.copies = family_.copies;
    set_ = 0;
    while (labels_[set_].empty()) ++set_;
    copy_ = 0;
    stage_ = stage::copies;
}

void family_scoring::start_rescore() {
    const branch b = choose_branch(out_.sets, out_.used);
    out_.choice = b.choice;
    rescore_ = b.rescore;
    out_.per_set = std::move(out_.sets);
    out_.sets.clear();
    stage_ = stage::rescore;
}

void family_scoring::keep_given_sets() {
    if (kept_.empty()) return;
    // a set given as a result keeps its scan: MaNo takes its chosen variant, and the softrun
    // variants of the baselines, computed on each set's own branch, leave every set
    std::vector<labeled_set> kept;
    for (const std::size_t i : kept_) kept.push_back(out_.per_set[i]);
    kept = detail::on_branch(std::move(kept), *out_.choice, &out_.notes);
    for (std::size_t j = 0; j < kept.size(); ++j) out_.sets[kept_[j]] = std::move(kept[j]);
    for (const auto& m : method_table)
        if (m.on_softrun_branch && !out_.sets[kept_.front()].scores[m.id])
            for (auto& s : out_.sets) s.scores[m.id].reset();
}

scored_family family_scoring::finish() {
    if (stage_ != stage::done) throw error("family_scoring: passes are still to be scored");
    return std::move(out_);
}

scored_family score_family(const std::vector<std::string>& names, const std::vector<std::string>& groups,
                           const family_options& f, const set_scorer& score, const set_warning& warn) {
    family_scoring run(names, groups, f);
    std::size_t warned = 0;
    const auto pass_on_warnings = [&] {
        for (; warned < run.warnings().size(); ++warned)
            if (warn) warn(run.warnings()[warned].first, run.warnings()[warned].second);
    };
    while (const auto r = run.next()) {
        std::optional<scored_set> scored;
        try {
            scored = score(r->index, r->p);
        } catch (const error& e) {
            if (r->p.kind != pass::role::variant) throw;
            run.fail(e.what());
            pass_on_warnings();
            continue;
        }
        run.give(std::move(scored));
        pass_on_warnings();
    }
    return run.finish();
}

nlohmann::json scored_family::to_json() const {
    nlohmann::json j = {{"sets", sets_json(sets)}, {"used", used.to_json()}, {"notes", notes}};
    if (copies) j["label_shift_copies"] = copies->to_json();
    if (choice) {
        j["choice"] = choice->to_json();
        j["per_set"] = sets_json(per_set);
    }
    return j;
}

scored_family scored_family::from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw error("a scored family must be an object {sets, used, choice?, per_set?}");
    detail::check_known_keys(j, {"sets", "used", "choice", "per_set", "notes", "label_shift_copies"}, "scored family");
    scored_family f;
    f.sets = labeled_sets_from_json(j.at("sets"));
    f.used = options::from_json(j.at("used"));
    if (j.contains("label_shift_copies"))
        f.copies = label_shift_copies::from_json(j.at("label_shift_copies"), "scored family: \"label_shift_copies\"");
    if (j.contains("notes"))
        for (const auto& note : j.at("notes")) f.notes.push_back(detail::name_in(note, "scored family: \"notes\""));
    if (j.contains("choice")) {
        f.choice = normalization_choice::from_json(j.at("choice"));
        f.per_set = labeled_sets_from_json(j.at("per_set"));
        const auto originals = std::count_if(f.sets.begin(), f.sets.end(), [](const labeled_set& s) { return !s.copy_of; });
        if (f.per_set.size() != static_cast<std::size_t>(originals))
            throw error("scored family: \"per_set\" and the sets (copies aside) differ in length");
    }
    return f;
}

nlohmann::json family_evaluation::to_json() const {
    nlohmann::json j = report.to_json();
    if (choice) {
        j["normalization"] = choice->to_json();
        if (per_set) j["normalization"]["per_set"] = summary_json(*per_set);
    }
    return j;
}

family_evaluation evaluate(const scored_family& scored, std::vector<std::string>* notes) {
    // the paper's protocol is over the sets themselves, each once: copies (calibrate's) aside
    std::vector<labeled_set> sets;
    for (const auto& s : scored.sets)
        if (!s.copy_of) sets.push_back(s), sets.back().weight = 1;
    family_evaluation out{mano::evaluate(sets), scored.choice, std::nullopt};
    if (notes) notes->insert(notes->end(), scored.notes.begin(), scored.notes.end());
    if (!scored.choice) return out;
    // MaNo with each set's own softrun branch, for comparison (the paper's literal rule)
    std::vector<double> values, accuracies;
    for (const auto& s : scored.per_set) {
        values.push_back(s.scores.value(method::mano).value());
        accuracies.push_back(*s.scores.accuracy);
    }
    try {
        out.per_set = summarize(values, accuracies);
    } catch (const error& e) {
        if (notes) notes->push_back(std::string("mano with each set's own softrun branch: no summary: ") + e.what());
    }
    return out;
}

calibration calibrate(const scored_family& scored, std::vector<std::string>* notes) {
    if (notes) notes->insert(notes->end(), scored.notes.begin(), scored.notes.end());
    calibration c = mano::calibrate(scored.sets, scored.used, notes, false);
    c.normalization = scored.choice;
    if (c.copy_sets > 0) c.copies = scored.copies;
    return c;
}

}  // namespace workflow
}  // namespace mano

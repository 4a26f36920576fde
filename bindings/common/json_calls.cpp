#include "json_calls.hpp"

#include <algorithm>
#include <memory>

#include "io/json.hpp"
#include "mano/scan/resolve.hpp"

namespace mano {
namespace bindings {

using nlohmann::json;

json parse_input(const std::string& text, const std::string& kind, std::uint64_t max_bytes) {
    if (text.size() > max_bytes)
        throw error(kind + ": its JSON is " + std::to_string(text.size()) + " bytes, over the " +
                    std::to_string(max_bytes) + "-byte limit of mano's " + kind + " reader");
    return io::parse_json(text, kind, "its JSON");
}

json parse_calibration(const std::string& text) { return parse_input(text, "calibration", io::calibration_max_bytes); }

json parse_state(const std::string& text) { return parse_input(text, "accumulator state", io::state_max_bytes); }

json prepare_options(const json& partial, const source_inputs& source) {
    json full = options().to_json();
    full["correctness_histogram"] = false;  // written only when true
    full["input"] = input_kind_name(input_kind::logits);  // written only when not logits
    json given = partial;
    if (!given.is_object()) throw error("options must be an object");
    // label_marginal "source": the source labels' class frequencies, as the CLI's --label-marginal source
    const bool marginal_of_source = given.contains("label_marginal") && given["label_marginal"] == "source";
    if (marginal_of_source) given.erase("label_marginal");
    for (const auto& [key, value] : given.items()) {
        if (!full.contains(key)) throw error("unknown option '" + key + "'");
        full[key] = value;
    }
    workflow::source_inputs inputs = source;
    inputs.label_marginal_of_source = marginal_of_source;
    if (source.feature_rows_data) {
        if (source.feature_cols == 0) throw error("source features need at least one column");
        auto moments = std::make_shared<feature_moments>(source.feature_cols);
        moments->push(source.feature_rows_data, source.feature_rows);
        inputs.features = moments;
    }
    options o = workflow::learn_from_source(options::from_json(full), inputs);
    o.validate();
    return o.to_json();
}

accumulator make_accumulator(std::size_t columns, const json& options_json) {
    const options o = options::from_json(options_json);
    return accumulator(classes_of(o.input, columns), o);
}

accumulator accumulator_from_state(const json& state) { return accumulator::from_json(state); }

json evaluate(const json& sets) { return mano::evaluate(workflow::labeled_sets_from_json(sets)).to_json(); }

json calibrate(const json& sets, const json& options_json) {
    json given = options_json;
    bool family = true;
    if (given.is_object() && given.contains("family")) {
        if (!given.at("family").is_boolean()) throw error("options: \"family\" must be true or false");
        family = given.at("family").get<bool>();
        given.erase("family");
    }
    std::vector<std::string> notes;
    auto c = mano::calibrate(workflow::labeled_sets_from_json(sets), options::from_json(given), &notes, family);
    return json{{"calibration", c.to_json()}, {"notes", notes}};
}

namespace {

// The sets' names and groups ([{"name", "group"?}]), checked.
void names_of(const json& given, std::vector<std::string>& names, std::vector<std::string>& groups) {
    if (!given.is_array()) throw error("sets must be a list of {name, group?}");
    for (const auto& s : given) {
        if (!s.is_object() || !s.contains("name") || !s.at("name").is_string()) throw error("every set needs a \"name\"");
        names.push_back(s.at("name").get<std::string>());
        groups.push_back(s.contains("group") && s.at("group").is_string() ? s.at("group").get<std::string>() : std::string());
    }
}

workflow::family_scoring family_of(const json& sets, const json& family, std::vector<std::string>& names) {
    std::vector<std::string> groups;
    names_of(sets, names, groups);
    return workflow::family_scoring(names, groups, workflow::family_options::from_json(family));
}

// A scorer's answer as the core takes it.
workflow::scored_set scored_of(const json& result_json, const json& options_json, const json& labels_json) {
    workflow::scored_set s{result::from_json(result_json), options::from_json(options_json), {}};
    if (!labels_json.is_null()) {
        if (!labels_json.is_array()) throw error("a set's labels must be a list of class indices");
        for (const auto& y : labels_json) {
            if (!y.is_number_integer()) throw error("a set's labels must be whole numbers (class indices)");
            s.labels.push_back(y.get<std::int64_t>());
        }
    }
    return s;
}

std::string warning_line(const std::vector<std::string>& names, std::size_t index, const std::string& message) {
    return "set \"" + printable(names[index], 256) + "\": " + message;
}

}  // namespace

family_run::family_run(const json& sets, const json& family) : run_(family_of(sets, family, names_)) {}

json family_run::next() const {
    const auto r = run_.next();
    return r ? json{{"index", r->index}, {"pass", r->p.to_json()}} : json(nullptr);
}

void family_run::give(const json& result_json, const json& options_json, const json& labels_json) {
    run_.give(scored_of(result_json, options_json, labels_json));
}

void family_run::give_none() { run_.give(std::nullopt); }

void family_run::fail(const std::string& message) { run_.fail(message); }

std::vector<std::string> family_run::warnings() const {
    std::vector<std::string> out;
    for (const auto& [i, message] : run_.warnings()) out.push_back(warning_line(names_, i, message));
    return out;
}

json family_run::finish() { return json{{"scored", run_.finish().to_json()}, {"warnings", warnings()}}; }

json score_family(const json& sets, const json& family, const json_scorer& score, std::vector<std::string>* warnings) {
    std::vector<std::string> names, groups;
    names_of(sets, names, groups);
    std::vector<std::string> said;
    const auto scorer = [&](std::size_t index, const workflow::pass& p) -> std::optional<workflow::scored_set> {
        const auto got = score(index, p.to_json());
        if (!got) return std::nullopt;
        return scored_of(got->result, got->options, got->labels);
    };
    const auto warn = [&](std::size_t index, const std::string& message) { said.push_back(warning_line(names, index, message)); };
    const auto scored = workflow::score_family(names, groups, workflow::family_options::from_json(family), scorer, warn);
    if (warnings) *warnings = said;
    return scored.to_json();
}

json evaluate_family(const json& scored) {
    std::vector<std::string> notes;
    const auto evaluation = workflow::evaluate(workflow::scored_family::from_json(scored), &notes);
    return json{{"report", evaluation.to_json()}, {"notes", notes}};
}

json calibrate_family(const json& scored) {
    std::vector<std::string> notes;
    const auto c = workflow::calibrate(workflow::scored_family::from_json(scored), &notes);
    return json{{"calibration", c.to_json()}, {"notes", notes}};
}

json monitor(const json& points_json, std::size_t reference, double threshold, const json& slope) {
    if (!slope.is_null() && !slope.is_number()) throw error("the slope must be a number or null");
    const auto points = monitoring::points_from_json(points_json);
    return monitoring::assess(points, reference, threshold, slope.is_null() ? std::nullopt : std::optional<double>(slope.get<double>()))
        .to_json();
}

json predict(const json& calibration_json, const json& result_json, double level) {
    const auto c = calibration::from_json(calibration_json);
    return mano::predict(c, result::from_json(result_json), level).to_json();
}

json audit_sample(std::uint64_t n_rows, std::uint64_t budget, std::uint64_t seed) {
    return json{{"rows", mano::audit_sample(n_rows, budget, seed)}, {"n_rows", n_rows}, {"seed", seed}};
}

std::string audit_file(std::uint64_t n_rows, std::size_t k, std::uint64_t budget, std::uint64_t seed, const std::string& source) {
    return audit_csv(mano::audit_sample(n_rows, budget, seed), n_rows, k, seed, source);
}

json parse_audit(const std::string& text, const std::string& file, std::uint64_t n_rows, std::size_t k, const std::string& set_name) {
    return mano::parse_audit(text, file, n_rows, k, set_name).to_json();
}

namespace {

// A JSON list of whole numbers (`what` names it): values beyond int64 come back as its largest,
// outside any range the core checks.
std::vector<std::int64_t> whole_numbers(const json& list, const std::string& what) {
    if (!list.is_array()) throw error(what + " must be a list of whole numbers");
    std::vector<std::int64_t> out;
    out.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& v = list[i];
        if (v.is_number_unsigned())
            out.push_back(static_cast<std::int64_t>(std::min<std::uint64_t>(v.get<std::uint64_t>(), std::numeric_limits<std::int64_t>::max())));
        else if (v.is_number_integer())
            out.push_back(v.get<std::int64_t>());
        else
            throw error(what + "[" + std::to_string(i) + "] is " + (v.is_number() ? v.dump() : std::string(v.type_name())) +
                        ", not a whole number");
    }
    return out;
}

// An optional whole number >= 0 of an object (`what` names it).
std::optional<std::uint64_t> optional_whole(const json& j, const char* key, const std::string& what) {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    if (!j[key].is_number_unsigned() && !(j[key].is_number_integer() && j[key].get<std::int64_t>() >= 0))
        throw error(what + ": " + key + " must be a whole number >= 0, as audit() gives it (got " + j[key].dump().substr(0, 40) + ")");
    return j[key].get<std::uint64_t>();
}

}  // namespace

json audit_rows(const json& given, const std::string& name, std::uint64_t n_rows, std::size_t k) {
    if (!given.is_object() || !given.contains("rows") || !given.contains("labels"))
        throw error(name + ": labeled rows are {rows, labels} (with the draw's seed and n_rows when audit() gave them)");
    return mano::audit_rows(whole_numbers(given["rows"], name + ": rows"), whole_numbers(given["labels"], name + ": labels"),
                            n_rows, k, name, optional_whole(given, "seed", name), optional_whole(given, "n_rows", name))
        .to_json();
}

json predict_audited(const json& calibration_json, const json& result_json, const json& audited_json, double level,
                     const json& warnings) {
    const auto c = calibration::from_json(calibration_json);
    auto p = mano::predict_audited(c, result::from_json(result_json), result::from_json(audited_json), level);
    if (!warnings.is_null()) {
        for (const auto& w : warnings.is_array() ? warnings : json::array({nullptr})) {
            if (!w.is_string()) throw error("audit warnings must be a list of texts (parse_audit's \"warnings\")");
            p.audit->warnings.push_back(w.get<std::string>());
        }
    }
    return p.to_json();
}

namespace {

method_calibration method_of(const calibration& c, const std::string& method_name) {
    const method_calibration* found = calibration_of(c, parse_method(method_name));
    if (!found) throw error("the calibration has no method '" + method_name + "'");
    return *found;
}

}  // namespace

json predict_scores(const json& calibration_json, const std::string& method_name, const json& scores, double level) {
    const auto mc = method_of(calibration::from_json(calibration_json), method_name);
    json out = json::array();
    for (const auto& score : scores) out.push_back(mano::predict(mc, score.get<double>(), std::nullopt, level).to_json());
    return out;
}

json fit_of(const json& calibration_json, const std::string& method_name) {
    const auto mc = method_of(calibration::from_json(calibration_json), method_name);
    const auto [low, high] = score_range(mc);
    return json{{"link", link_name(mc.link)}, {"equation", fit_equation(mc)}, {"score_range", {low, high}}};
}

json scoring_options(const json& calibration_json, std::size_t n, std::size_t columns, const std::string& input) {
    std::vector<method> left_out;
    const options o = mano::scoring_options(calibration::from_json(calibration_json), n, columns,
                                            parse_input_kind(input), &left_out);
    json names = json::array();
    for (const method m : left_out) names.push_back(method_name(m));
    return json{{"options", o.to_json()}, {"left_out", names}};
}

unsigned input_bits(const json& names, const std::string& what) {
    unsigned inputs = 0;
    for (const auto& name : names) {
        unsigned bit = 0;
        for (unsigned b = 1; b <= needs_source_features; b <<= 1)
            if (name.is_string() && input_names(b).front() == name.get<std::string>()) bit = b;
        if (!bit) throw error(what + ": '" + printable(name.dump(), 40) + "' is not one of source, second, features, source_features");
        inputs |= bit;
    }
    return inputs;
}

json default_methods(std::size_t columns, std::size_t n, const json& inputs, const std::string& input) {
    const method_request request{columns, n, parse_input_kind(input), input_bits(inputs, "inputs"), {}};
    json names = json::array();
    for (const auto m : resolve_methods(request).methods) names.push_back(method_name(m));
    return names;
}

json methods() { return methods_json(); }

}  // namespace bindings
}  // namespace mano

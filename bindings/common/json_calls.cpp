#include "json_calls.hpp"

#include <algorithm>
#include <memory>

#include "io/json.hpp"

namespace mano {
namespace bindings {

using nlohmann::json;

json parse_input(const std::string& text, const std::string& kind, std::uint64_t max_bytes) {
    if (text.size() > max_bytes)
        throw error(kind + ": its JSON is " + std::to_string(text.size()) + " bytes, over the " +
                    std::to_string(max_bytes) + "-byte limit of mano's " + kind + " reader");
    return io::parse_json(text, kind, "its JSON");
}

namespace {

json parse_calibration(const std::string& text) { return parse_input(text, "calibration", io::calibration_max_bytes); }

}  // namespace

std::string prepare_options(const std::string& partial, const source_inputs& source) {
    json full = options().to_json();
    full["correctness_histogram"] = false;  // written only when true
    full["input"] = input_kind_name(input_kind::logits);  // written only when not logits
    json given = parse_input(partial, "options");
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
    return o.to_json().dump();
}

accumulator make_accumulator(std::size_t columns, const std::string& options_json) {
    const options o = options::from_json(parse_input(options_json, "options"));
    return accumulator(classes_of(o.input, columns), o);
}

accumulator accumulator_from_state(const std::string& state_json) {
    return accumulator::from_json(parse_input(state_json, "accumulator state", io::state_max_bytes));
}

std::string evaluate(const std::string& sets) {
    return mano::evaluate(workflow::labeled_sets_from_json(parse_input(sets, "sets"))).to_json().dump();
}

std::string calibrate(const std::string& sets, const std::string& options_json) {
    json given = parse_input(options_json, "options");
    bool family = true;
    if (given.is_object() && given.contains("family")) {
        if (!given.at("family").is_boolean()) throw error("options: \"family\" must be true or false");
        family = given.at("family").get<bool>();
        given.erase("family");
    }
    std::vector<std::string> notes;
    auto c = mano::calibrate(workflow::labeled_sets_from_json(parse_input(sets, "sets")), options::from_json(given), &notes, family);
    return json{{"calibration", c.to_json()}, {"notes", notes}}.dump();
}

namespace {

workflow::family_scoring family_of(const std::string& sets, const std::string& family_json, std::vector<std::string>& names) {
    const json given = parse_input(sets, "sets");
    if (!given.is_array()) throw error("sets must be a list of {name, group?}");
    std::vector<std::string> groups;
    for (const auto& s : given) {
        if (!s.is_object() || !s.contains("name") || !s.at("name").is_string()) throw error("every set needs a \"name\"");
        names.push_back(s.at("name").get<std::string>());
        groups.push_back(s.contains("group") && s.at("group").is_string() ? s.at("group").get<std::string>() : std::string());
    }
    return workflow::family_scoring(names, groups, workflow::family_options::from_json(parse_input(family_json, "family options")));
}

}  // namespace

family_run::family_run(const std::string& sets, const std::string& family_json) : run_(family_of(sets, family_json, names_)) {}

std::string family_run::next() const {
    const auto r = run_.next();
    return r ? json{{"index", r->index}, {"pass", r->p.to_json()}}.dump() : "null";
}

void family_run::give(const std::string& result_json, const std::string& options_json, const std::string& labels_json) {
    workflow::scored_set s{result::from_json(parse_input(result_json, "result")),
                           options::from_json(parse_input(options_json, "options")), {}};
    if (!labels_json.empty()) {
        const json labels = parse_input(labels_json, "labels");
        if (!labels.is_array()) throw error("a set's labels must be a list of class indices");
        for (const auto& y : labels) {
            if (!y.is_number_integer()) throw error("a set's labels must be whole numbers (class indices)");
            s.labels.push_back(y.get<std::int64_t>());
        }
    }
    run_.give(std::move(s));
}

void family_run::give_none() { run_.give(std::nullopt); }

void family_run::fail(const std::string& message) { run_.fail(message); }

std::vector<std::string> family_run::warnings() const {
    std::vector<std::string> out;
    for (const auto& [i, message] : run_.warnings()) out.push_back("set \"" + printable(names_[i], 256) + "\": " + message);
    return out;
}

std::string family_run::finish() { return json{{"scored", run_.finish().to_json()}, {"warnings", warnings()}}.dump(); }

std::string score_family(const std::string& sets, const std::string& family_json, const json_scorer& score,
                         std::vector<std::string>* warnings) {
    family_run run(sets, family_json);
    for (json r = json::parse(run.next()); !r.is_null(); r = json::parse(run.next())) {
        std::optional<scored_json> got;
        try {
            got = score(r.at("index").get<std::size_t>(), r.at("pass").dump());
        } catch (const error& e) {
            run.fail(e.what());  // throws again unless the pass is a variant
            continue;
        }
        if (got) {
            run.give(got->result, got->options, got->labels);
        } else {
            run.give_none();
        }
    }
    if (warnings) *warnings = run.warnings();
    return json::parse(run.finish()).at("scored").dump();
}

std::string evaluate_family(const std::string& scored) {
    std::vector<std::string> notes;
    const auto evaluation = workflow::evaluate(workflow::scored_family::from_json(parse_input(scored, "scored family")), &notes);
    return json{{"report", evaluation.to_json()}, {"notes", notes}}.dump();
}

std::string calibrate_family(const std::string& scored) {
    std::vector<std::string> notes;
    const auto c = workflow::calibrate(workflow::scored_family::from_json(parse_input(scored, "scored family")), &notes);
    return json{{"calibration", c.to_json()}, {"notes", notes}}.dump();
}

std::string monitor(const std::string& points_json, std::size_t reference, double threshold, const std::string& slope_json) {
    const json slope = parse_input(slope_json, "slope");
    if (!slope.is_null() && !slope.is_number()) throw error("the slope must be a number or null");
    const auto points = monitoring::points_from_json(parse_input(points_json, "points"));
    return monitoring::assess(points, reference, threshold, slope.is_null() ? std::nullopt : std::optional<double>(slope.get<double>()))
        .to_json()
        .dump();
}

std::string predict(const std::string& calibration_json, const std::string& result_json, double level) {
    const auto c = calibration::from_json(parse_calibration(calibration_json));
    return mano::predict(c, result::from_json(parse_input(result_json, "result")), level).to_json().dump();
}

std::string audit_sample(std::uint64_t n_rows, std::uint64_t budget, std::uint64_t seed) {
    return json{{"rows", mano::audit_sample(n_rows, budget, seed)}, {"n_rows", n_rows}, {"seed", seed}}.dump();
}

std::string audit_file(std::uint64_t n_rows, std::size_t k, std::uint64_t budget, std::uint64_t seed, const std::string& source) {
    return audit_csv(mano::audit_sample(n_rows, budget, seed), n_rows, k, seed, source);
}

std::string parse_audit(const std::string& text, const std::string& file, std::uint64_t n_rows, std::size_t k,
                        const std::string& set_name) {
    return mano::parse_audit(text, file, n_rows, k, set_name).to_json().dump();
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

std::string audit_rows(const std::string& labeled_json, const std::string& name, std::uint64_t n_rows, std::size_t k) {
    const json given = parse_input(labeled_json, name);
    if (!given.is_object() || !given.contains("rows") || !given.contains("labels"))
        throw error(name + ": labeled rows are {rows, labels} (with the draw's seed and n_rows when audit() gave them)");
    return mano::audit_rows(whole_numbers(given["rows"], name + ": rows"), whole_numbers(given["labels"], name + ": labels"),
                            n_rows, k, name, optional_whole(given, "seed", name), optional_whole(given, "n_rows", name))
        .to_json()
        .dump();
}

std::string predict_audited(const std::string& calibration_json, const std::string& result_json,
                            const std::string& audited_json, double level, const std::string& warnings_json) {
    const auto c = calibration::from_json(parse_calibration(calibration_json));
    auto p = mano::predict_audited(c, result::from_json(parse_input(result_json, "result")),
                                   result::from_json(parse_input(audited_json, "audited rows' result")), level);
    if (!warnings_json.empty()) {
        const json warnings = parse_input(warnings_json, "audit warnings");
        for (const auto& w : warnings.is_array() ? warnings : json::array({nullptr})) {
            if (!w.is_string()) throw error("audit warnings must be a list of texts (parse_audit's \"warnings\")");
            p.audit->warnings.push_back(w.get<std::string>());
        }
    }
    return p.to_json().dump();
}

std::string predict_scores(const std::string& calibration_json, const std::string& method_name,
                           const std::string& scores, double level) {
    const auto c = calibration::from_json(parse_calibration(calibration_json));
    const method m = parse_method(method_name);
    const auto found = std::find_if(c.methods.begin(), c.methods.end(), [&](const auto& x) { return x.m == m; });
    if (found == c.methods.end()) throw error("the calibration has no method '" + method_name + "'");
    json out = json::array();
    for (const auto& score : parse_input(scores, "scores")) {
        out.push_back(mano::predict(*found, score.get<double>(), std::nullopt, level).to_json());
    }
    return out.dump();
}

std::string scoring_options(const std::string& calibration_json, std::size_t n, std::size_t columns, const std::string& input) {
    std::vector<method> left_out;
    const options o = mano::scoring_options(calibration::from_json(parse_calibration(calibration_json)), n, columns,
                                            parse_input_kind(input), &left_out);
    json names = json::array();
    for (const method m : left_out) names.push_back(method_name(m));
    return json{{"options", o.to_json()}, {"left_out", names}}.dump();
}

std::string default_methods(std::size_t columns, std::size_t n, const std::string& inputs_json, const std::string& input) {
    const std::size_t k = classes_of(parse_input_kind(input), columns);
    unsigned inputs = 0;
    for (const auto& name : parse_input(inputs_json, "inputs")) {
        unsigned bit = 0;
        for (unsigned b = 1; b <= needs_source_features; b <<= 1)
            if (name.is_string() && input_names(b).front() == name.get<std::string>()) bit = b;
        if (!bit) throw error("inputs: '" + printable(name.dump(), 40) + "' is not one of source, second, features, source_features");
        inputs |= bit;
    }
    json names = json::array();
    for (const auto m : mano::default_methods(k, n, inputs)) names.push_back(method_name(m));
    return names.dump();
}

std::string methods() { return methods_json().dump(); }

}  // namespace bindings
}  // namespace mano

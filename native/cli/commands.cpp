#include "cli/commands.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/audit.hpp"
#include "cli/manifest.hpp"
#include "cli/output.hpp"
#include "cli/plot.hpp"
#include "host/calibration_file.hpp"
#include "host/scan.hpp"
#include "io/json.hpp"
#include "io/manifest.hpp"

namespace mano {
namespace cli {

using json = nlohmann::json;

namespace {

// One warning per reason for the default methods that this size left out (the method table's
// default_max_k and default_max_logits), so that a user sees what to ask for by name.
void note_left_out(const std::string& path, const options& opts, std::size_t n, std::size_t k) {
    std::map<std::string, std::vector<std::string>> by_reason;
    for (const auto& m : method_table) {
        if (!m.by_default || m.needs != needs_logits_only || opts.wants(m.id)) continue;
        if (m.default_max_k > 0 && k > m.default_max_k)
            by_reason["above " + std::to_string(m.default_max_k) + " classes (" +
                      (m.cost == method_cost::quadratic ? "a K x K Gram matrix: time grows as N K^2" : "its cost grows with K") +
                      ")"].push_back(m.name);
        else if (m.default_max_logits > 0 && static_cast<double>(n) * static_cast<double>(k) > static_cast<double>(m.default_max_logits))
            by_reason["above " + std::to_string(m.default_max_logits) + " logits (it keeps every row)"].push_back(m.name);
    }
    for (const auto& [reason, names] : by_reason) {
        std::string list;
        for (std::size_t i = 0; i < names.size(); ++i) list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
        warn(path + ": " + list + (names.size() == 1 ? " is" : " are") + " left out by default " + reason +
             "; ask for " + (names.size() == 1 ? "it" : "them") + " with --methods");
    }
}

}  // namespace

options prediction_options(const calibration& cal, const std::string& path, std::size_t n, std::size_t columns,
                           const input_args& input) {
    std::vector<std::string> notes;
    const options o = host::prediction_options(cal, path, n, columns, input.input, notes);
    if (!input.quiet)
        for (const auto& note : notes) warn(note);
    return o;
}

namespace {

// What a score covers: a table row's name, where each result is from (for JSON), the results.
struct scored_files {
    std::vector<std::string> names;
    std::vector<json> where;
    std::vector<result> results;
};

// The refusals of options that do not go together, before any file is read.
void check_score_options(const score_command& c) {
    if (c.files.size() > 1 && (!c.methods.second_logits.empty() || !c.methods.features.empty()))
        throw error("--second-logits and --features describe one logits file; score the files one at a time");
    if (!c.emit_state.empty() && (c.files.size() != 1 || c.chunk_size > 0))
        throw error("--emit-state writes the state of one logits file; give exactly one file and no --chunk-size");
    if (!c.rows.empty() && c.files.size() != 1) throw error("--rows selects rows of one logits file; give exactly one");
    if (!c.emit_state.empty()) {
        auto inputs = c.files;
        inputs.insert(inputs.end(), {c.methods.second_logits, c.methods.features, c.methods.source_features,
                                     c.methods.source_logits, c.methods.source_labels, c.calibration});
        refuse_overwriting_inputs(c.emit_state, inputs, "--emit-state");
    }
}

// The second model's logits and the features of one logits file, checked against its shape.
std::pair<std::unique_ptr<io::matrix_reader>, std::unique_ptr<io::matrix_reader>> open_row_extras(
    const score_command& c, const std::string& path, const io::matrix_reader& reader) {
    std::unique_ptr<io::matrix_reader> second, features;
    if (!c.methods.second_logits.empty()) second = c.input.open(c.methods.second_logits);
    if (!c.methods.features.empty()) features = c.input.open(c.methods.features);
    if (second && (second->rows() != reader.rows() || second->cols() != reader.cols()))
        throw error(c.methods.second_logits + ": the second model's logits are " + std::to_string(second->rows()) +
                    " x " + std::to_string(second->cols()) + " but " + path + " is " + std::to_string(reader.rows()) +
                    " x " + std::to_string(reader.cols()) + "; both must score the same inputs");
    if (features && features->rows() != reader.rows())
        throw error(c.methods.features + ": " + std::to_string(features->rows()) + " feature rows but " + path +
                    " has " + std::to_string(reader.rows()) + " rows of logits");
    return {std::move(second), std::move(features)};
}

// Rows [first, end) of one file, whole or in chunks, added to `out`.
void scan_rows(const score_command& c, const std::string& path, host::scan_inputs in, std::size_t first, std::size_t end,
               const options& opts, unsigned threads, scored_files& out) {
    host::progress bar(path, end - first, c.input.quiet);
    if (c.chunk_size > 0) {
        auto chunks = host::scan_chunks(in, first, end, c.chunk_size, opts, threads, &bar);
        const auto flagged = std::find_if(chunks.begin(), chunks.end(), [](const result& r) { return r.looks_like_probabilities; });
        if (flagged != chunks.end()) c.input.warn_probabilities(path, *flagged);
        for (std::size_t i = 0; i < chunks.size(); ++i) {
            const std::size_t a = first + i * c.chunk_size;
            out.names.push_back(path + "[" + std::to_string(a) + ":" + std::to_string(a + chunks[i].n) + "]");
            out.where.push_back({{"file", path}, {"chunk", i}, {"first_row", a}});
            out.results.push_back(std::move(chunks[i]));
        }
        return;
    }
    auto acc = host::scan(in, first, end, opts, threads, &bar);
    if (!c.emit_state.empty()) write_json(c.emit_state, acc.to_json());
    out.names.push_back(path);
    out.where.push_back({{"file", path}});
    if (!c.rows.empty()) out.where.back()["first_row"] = first;
    out.results.push_back(acc.finalize());
    c.input.warn_probabilities(path, out.results.back());
}

// One logits file scored with the options its shape resolves to (or the calibration's).
void score_file(const score_command& c, const std::string& path, const std::optional<calibration>& cal,
                option_resolver& resolver, unsigned threads, scored_files& out) {
    auto reader = c.input.open(path);
    if (!cal) c.input.classes(path, reader->cols());  // its shape fits --input (a calibration checks its own)
    auto [second, features] = open_row_extras(c, path, *reader);
    const auto [first, end] = parse_rows(c.rows, reader->rows(), path);
    const std::size_t n = c.chunk_size > 0 ? std::min(c.chunk_size, end - first) : end - first;
    options opts = cal ? prediction_options(*cal, path, n, reader->cols(), c.input) : resolver.resolve(n, reader->cols());
    if (c.correctness_histogram) opts.correctness_histogram = true;
    if (!cal && c.methods.methods.empty() && n > 0 && !c.input.quiet)
        note_left_out(path, opts, n, c.input.classes(path, reader->cols()));
    try {
        scan_rows(c, path, host::scan_inputs{reader.get(), second.get(), features.get(), nullptr}, first, end, opts, threads, out);
    } catch (const error& e) {
        throw host::file_error(path, e);
    }
}

// The results, or with a calibration their predictions, as a table or JSON Lines.
void print_scored(const score_command& c, const std::optional<calibration>& cal, const scored_files& s) {
    const auto lines = [&](const auto& items) {
        for (std::size_t i = 0; i < items.size(); ++i) {
            json j = items[i].to_json();
            j.update(s.where[i]);
            std::cout << j.dump() << '\n';
        }
    };
    if (cal) {
        std::vector<set_prediction> predictions;
        for (const auto& r : s.results) predictions.push_back(predict(*cal, r, c.level));
        warn_extrapolation(s.names, predictions);
        if (c.json)
            lines(predictions);
        else
            print_predictions(s.names, predictions, c.level);
        return;
    }
    if (c.json)
        lines(s.results);
    else
        print_results(s.names, s.results);
}

}  // namespace

int run_score(score_command& c) {
    c.input.finish();
    const std::optional<calibration> cal = c.methods.calibration_or_finish(c.calibration);
    check_score_options(c);
    option_resolver resolver(c.methods, c.input);
    const unsigned threads = host::thread_count(c.input.threads);
    scored_files scored;
    for (const auto& path : c.files) score_file(c, path, cal, resolver, threads, scored);
    print_scored(c, cal, scored);
    return 0;
}

int run_methods(const methods_command& c) {
    if (c.json) {
        std::cout << methods_json().dump(2) << '\n';
        return 0;
    }
    print_method_table();
    return 0;
}

int run_merge(merge_command& c) {
    if (!c.emit_state.empty()) refuse_overwriting_inputs(c.emit_state, c.states, "--emit-state");
    std::optional<accumulator> total;
    std::map<std::uint64_t, const std::string*> shard_files;  // which state brought each shard, for the message
    for (const auto& path : c.states) {
        const json state = io::read_json(path, "accumulator state", io::state_max_bytes);
        try {
            auto acc = accumulator::from_json(state);
            for (const auto id : acc.shards()) {
                const auto [at, added] = shard_files.emplace(id, &path);
                if (!added) throw repeated_shard(id, *at->second);
            }
            if (total)
                total->merge(acc);
            else
                total.emplace(std::move(acc));
        } catch (const json::exception& e) {
            throw error(path + ": not an accumulator state written by mano score --emit-state (" + e.what() + ")");
        } catch (const error& e) {
            throw host::file_error(path, e);
        }
    }
    if (!c.emit_state.empty()) write_json(c.emit_state, total->to_json());
    const result r = total->finalize();
    if (r.looks_like_probabilities) warn(probabilities_warning("the merged states", "--input probabilities to mano score"));
    if (c.json) {
        json j = r.to_json();
        j["states"] = c.states;
        std::cout << j.dump() << '\n';
    } else {
        print_results({"merged (" + std::to_string(c.states.size()) + " states)"}, {r});
    }
    return 0;
}

int run_eval(eval_command& c) {
    c.input.finish();
    const auto manifest = io::read_manifest(c.manifest, outside(c.allow_outside_paths));
    const auto scored = score_manifest(manifest, c.groups, c.methods, c.input, std::nullopt);
    std::vector<std::string> notes;
    const auto evaluation = workflow::evaluate(scored, &notes);
    const evaluation_report& report = evaluation.report;
    for (const auto& note : report.notes) warn(note);
    for (const auto& note : notes) warn(note);
    if (!c.plots.empty()) write_plots(c.plots, report);
    if (c.json) {
        std::cout << evaluation.to_json().dump() << '\n';
        return 0;
    }
    print_evaluation(report, evaluation.choice, evaluation.per_set, c.markdown);
    return 0;
}

int run_calibrate(calibrate_command& c) {
    if (!c.run.model.empty() || c.synthesize) {
        c.run.input = c.input_text;
        if (!c.manifest.empty())
            throw error("give a manifest of labeled logits, or --model with --input and --synthesize; not both");
        return run_calibrate_synthesized(c);
    }
    if (c.manifest.empty())
        throw error("calibrate needs a manifest of labeled logit sets (mano calibrate MANIFEST.json), or --model M.pt "
                    "--input VAL_DIR --synthesize to build shifted sets from labeled images");
    if (!c.input_text.empty()) c.input.input_name = c.input_text;
    c.input.finish();
    const auto manifest = io::read_manifest(c.manifest, outside(c.allow_outside_paths));
    if (!c.output.empty()) {
        std::vector<std::string> inputs{c.manifest};
        if (manifest.source) inputs.insert(inputs.end(), {manifest.source->logits, manifest.source->labels});
        for (const auto& s : manifest.sets) inputs.insert(inputs.end(), {s.logits, s.labels});
        refuse_overwriting_inputs(c.output, inputs, "-o");
    }
    mano::label_shift_copies copies;
    copies.copies = c.label_shift_copies;
    copies.seed = c.label_shift_seed;
    const auto scored = score_manifest(manifest, c.groups, c.methods, c.input, copies);
    std::vector<std::string> notes;
    const calibration cal = workflow::calibrate(scored, &notes);
    for (const auto& note : notes) warn(note);
    report_calibration(cal, c.output);
    return 0;
}

namespace {

// --methods: only those methods of the calibration, each of which it must have.
void keep_methods(calibration& cal, const predict_command& c) {
    std::vector<method_calibration> chosen;
    for (const auto& name : c.methods) {
        const method m = parse_method(name);
        const method_calibration* found = calibration_of(cal, m);
        if (!found) {
            std::string have;
            for (const auto& mc : cal.methods) have += (have.empty() ? "" : ", ") + std::string(method_name(mc.m));
            throw error("--methods " + name + ": " + c.calibration + " has no calibration for it (it has " + have + ")");
        }
        chosen.push_back(*found);
    }
    cal.methods = chosen;
    cal.opts.methods.clear();
    for (const auto& mc : chosen) cal.opts.methods.push_back(mc.m);
}

// The sets to predict: a manifest's (its --group selection) or the files given.
std::vector<io::manifest_set> predicted_sets(const predict_command& c) {
    std::vector<io::manifest_set> sets;
    if (!c.manifest.empty()) {
        sets = selected_sets(io::read_manifest(c.manifest, outside(c.allow_outside_paths)), c.groups);
    } else {
        if (!c.groups.empty()) throw error("--group selects sets of a --manifest");
        for (const auto& f : c.files) sets.push_back({f, "", f, ""});
    }
    if (!c.audit.empty() && sets.size() != 1)
        throw error("--audit labels rows of one set; predict that set alone (" + std::to_string(sets.size()) + " sets given)");
    return sets;
}

// One set scored with the calibration's options for its size (K checked first; methods named
// with --methods run at any size) and predicted, with --audit's rows when given.
set_prediction predict_set(const predict_command& c, const calibration& cal, const io::manifest_set& s) {
    const auto shape = io::open_matrix(s.logits, c.input.read);
    std::vector<std::string> unused;  // with --methods every method named runs
    const options opts = c.methods.empty()
                             ? prediction_options(cal, s.logits, shape->rows(), shape->cols(), c.input)
                             : (host::prediction_options(cal, s.logits, shape->rows(), shape->cols(), c.input.input, unused), cal.opts);
    const result r = score_set(s, c.input, [&](std::size_t, std::size_t) { return opts; }).scores;
    // the audited rows, read again with their labels (errors in the audit file name it)
    std::optional<result> audited;
    std::vector<std::string> audit_warnings;
    if (!c.audit.empty()) {
        const audit_labels labels = read_audit(c.audit, r.n, r.k, s.logits);
        audit_warnings = labels.warnings;
        for (const auto& w : audit_warnings) warn(w);
        audited = score_audited_rows(s.logits, c.input, labels, opts);
    }
    try {
        set_prediction p = audited ? predict_audited(cal, r, *audited, c.level) : predict(cal, r, c.level);
        if (audited) p.audit->warnings = audit_warnings;
        return p;
    } catch (const error& e) {
        throw host::file_error(s.logits, e);
    }
}

// --json: one line per file, or one object of the manifest's sets with their coverage.
void print_predictions_json(const predict_command& c, const std::vector<io::manifest_set>& sets,
                            const std::vector<set_prediction>& predictions, const coverage_report& held) {
    // each set's prediction, with its group when it has one
    const auto prediction_json = [&](std::size_t i) {
        json j = predictions[i].to_json();
        if (!sets[i].group.empty()) j["group"] = sets[i].group;
        return j;
    };
    if (c.manifest.empty()) {
        for (std::size_t i = 0; i < predictions.size(); ++i) {
            json j = prediction_json(i);
            j["file"] = sets[i].name;
            std::cout << j.dump() << '\n';
        }
        return;
    }
    json out = {{"sets", json::array()}, {"level", c.level}};
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        json j = {{"name", sets[i].name}};
        j.update(prediction_json(i));
        out["sets"].push_back(j);
    }
    if (!held.empty()) out["coverage"] = held.to_json();
    std::cout << out.dump() << '\n';
}

}  // namespace

int run_predict(predict_command& c) {
    c.input.finish();
    if (c.files.empty() == c.manifest.empty()) throw error("give logit files or --manifest (one of them)");
    calibration cal = host::read_calibration(c.calibration);
    if (!c.methods.empty()) keep_methods(cal, c);
    const std::vector<io::manifest_set> sets = predicted_sets(c);
    std::vector<std::string> names, files;
    std::vector<set_prediction> predictions;
    for (const auto& s : sets) {
        predictions.push_back(predict_set(c, cal, s));
        names.push_back(s.name);
        files.push_back(s.logits);
    }
    warn_extrapolation(names, predictions);
    // with true accuracies: how often the intervals held them
    const coverage_report held = coverage(predictions);
    if (c.json) {
        print_predictions_json(c, sets, predictions, held);
        return 0;
    }
    print_audits(names, predictions, c.audit);
    print_predictions(names, predictions, c.level);
    print_labels_needed(names, files, predictions, c.input, c.calibration);
    if (!held.empty()) {
        std::cout << '\n';
        print_coverage(held);
    }
    return 0;
}

}  // namespace cli
}  // namespace mano

#include "cli/commands.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/plot.hpp"
#include "io/json.hpp"
#include "io/manifest.hpp"

namespace mano {
namespace cli {

using json = nlohmann::json;

std::string fixed(double x, int digits) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, x);
    return text;
}

void warn(const std::string& message) { std::cerr << "mano: warning: " << printable(message) << '\n'; }

void print_table(const std::vector<std::vector<std::string>>& cells) {
    // set names and file names come from manifests and folders: escaped, so a name cannot move the cursor
    std::vector<std::vector<std::string>> rows;
    for (const auto& row : cells) {
        rows.emplace_back();
        for (const auto& cell : row) rows.back().push_back(printable(cell));
    }
    std::vector<std::size_t> width;
    for (const auto& row : rows)
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (width.size() <= c) width.push_back(0);
            width[c] = std::max(width[c], row[c].size());
        }
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            const std::string pad(width[c] - row[c].size(), ' ');
            line += c == 0 ? row[c] + pad : "  " + pad + row[c];
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::cout << line << '\n';
    }
}

namespace {

// Model inputs: a batch's buffer is images x pixels, so both are bounded where the options are read.
constexpr std::uint64_t max_images_per_call = 65536;
constexpr std::uint64_t max_image_side = 16384;

void print_markdown(const std::vector<std::vector<std::string>>& rows) {
    for (std::size_t r = 0; r < rows.size(); ++r) {
        std::string line = "|";
        for (const auto& cell : rows[r]) {
            std::string text;
            for (const char c : printable(cell)) text += c == '|' ? std::string("\\|") : std::string(1, c);
            line += " " + text + " |";
        }
        std::cout << line << '\n';
        if (r == 0) {
            std::string rule = "|";
            for (std::size_t c = 0; c < rows[r].size(); ++c) rule += c == 0 ? "---|" : "---:|";
            std::cout << rule << '\n';
        }
    }
}

// Methods in the order of the first result, for table columns.
std::vector<method> columns(const result& r) {
    std::vector<method> out;
    for (const auto& v : r.values()) out.push_back(v.m);
    return out;
}

// "(scores for mano, confscore, ...; estimated accuracy for cot, ...)", from the method table
std::string value_note() {
    std::string scores, accuracies;
    for (const auto& m : method_table) {
        std::string& list = m.returns == method_returns::score ? scores : accuracies;
        list += (list.empty() ? "" : ", ") + std::string(m.name);
    }
    return "(scores for " + scores + "; estimated accuracy for " + accuracies + ")";
}

}  // namespace

void print_results(const std::vector<std::string>& names, const std::vector<result>& results) {
    const auto methods = columns(results.front());
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header{"file", "n", "k"};
    for (const auto m : methods) header.push_back(method_name(m));
    header.push_back("criterion");
    header.push_back("normalization");
    rows.push_back(header);
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        std::vector<std::string> row{names[i], std::to_string(r.n), std::to_string(r.k)};
        std::map<method, double> values;
        for (const auto& v : r.values()) values[v.m] = v.value;
        for (const auto m : methods) row.push_back(values.count(m) ? fixed(values[m], 6) : "-");
        row.push_back(r.mano ? fixed(r.mano->criterion, 4) : "-");
        row.push_back(r.mano ? normalization_name(r.mano->used) : "-");
        rows.push_back(row);
    }
    print_table(rows);
    std::cout << value_note() << '\n';
}

namespace {

std::pair<std::size_t, std::size_t> parse_rows(const std::string& text, std::size_t total, const std::string& path) {
    if (text.empty()) return {0, total};
    const auto colon = text.find(':');
    std::size_t first = 0, end = total;
    bool ok = colon != std::string::npos && text.find('-') == std::string::npos;
    try {
        std::size_t used = 0;
        if (ok && colon > 0) {
            first = std::stoull(text.substr(0, colon), &used);
            ok = used == colon;
        }
        const std::string rest = ok ? text.substr(colon + 1) : "";
        if (ok && !rest.empty()) {
            end = std::stoull(rest, &used);
            ok = used == rest.size();
        }
    } catch (const std::exception&) {
        ok = false;
    }
    if (!ok) throw error("--rows must be FIRST:END (0-based, END excluded; either may be left out), got '" + text + "'");
    if (first >= end || end > total)
        throw error(path + ": --rows " + text + " is not a non-empty range within the file's " + std::to_string(total) +
                    " rows");
    return {first, end};
}

}  // namespace

calibration read_calibration(const std::string& path) {
    const json j = io::read_json(path, "calibration", io::calibration_max_bytes);
    try {
        return calibration::from_json(j);
    } catch (const json::exception& e) {
        throw error(path + ": not a calibration file written by mano calibrate (" + e.what() + ")");
    } catch (const error& e) {
        throw file_error(path, e);
    }
}

namespace {

void write_json(const std::string& path, const json& j) { write_file(path, j.dump() + '\n'); }

// "0.873 [0.841, 0.902]" with a '*' when the score lies outside the calibration's range.
std::string estimate_cell(const json& m) {
    return fixed(m.at("accuracy").get<double>(), 3) + " [" + fixed(m.at("interval")[0].get<double>(), 3) + ", " +
           fixed(m.at("interval")[1].get<double>(), 3) + "]" + (m.at("extrapolated").get<bool>() ? "*" : "");
}

}  // namespace

void print_predictions(const std::vector<std::string>& names, const std::vector<json>& predictions, double level) {
    std::vector<std::string> methods;
    for (const auto& item : predictions.front().at("methods").items()) methods.push_back(item.key());
    std::sort(methods.begin(), methods.end(), [](const std::string& a, const std::string& b) {
        return static_cast<int>(parse_method(a)) < static_cast<int>(parse_method(b));
    });
    const auto any = [&](const char* key) {
        return std::any_of(predictions.begin(), predictions.end(), [&](const json& p) { return p.contains(key); });
    };
    const bool truth = any("accuracy"), estimate = any("estimate"), shift = any("shift");
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header{"file", "n"};
    if (truth) header.push_back("true accuracy");
    if (estimate) header.push_back("estimate");
    if (shift) header.push_back("class shift");
    for (const auto& m : methods) header.push_back(m);
    rows.push_back(header);
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        const auto& p = predictions[i];
        std::vector<std::string> row{names[i], std::to_string(p.at("n").get<std::size_t>())};
        if (truth) row.push_back(p.contains("accuracy") ? fixed(p.at("accuracy").get<double>(), 3) : "-");
        if (estimate)
            row.push_back(p.contains("estimate") ? estimate_cell(p.at("estimate")) + " " +
                                                       p.at("estimate").at("method").get<std::string>() +
                                                       (p.at("estimate").at("fallback").get<bool>() ? "!" : "")
                                                 : "-");
        if (shift)
            row.push_back(p.contains("shift") ? fixed(p.at("shift").at("distance").get<double>(), 2) +
                                                    (p.at("shift").at("outside").get<bool>() ? " outside" : "")
                                              : "-");
        for (const auto& m : methods) row.push_back(p.at("methods").contains(m) ? estimate_cell(p.at("methods").at(m)) : "-");
        rows.push_back(row);
    }
    print_table(rows);
    std::cout << "(estimated accuracy [" << fixed(100 * level, 0)
              << "% prediction interval]; * = the score lies outside the calibration's range";
    if (estimate)
        std::cout << "; estimate = the calibration's recommended method (! = its fallback, because the set's predicted "
                     "class proportions are outside the calibrated range)";
    if (shift)
        std::cout << "; class shift = total variation between the set's predicted class proportions and the calibration "
                     "sets' mean";
    std::cout << ")\n";
}

// Tells the user which estimates extrapolate: one line per set (or one summary for many).
void warn_extrapolation(const std::vector<std::string>& names, const std::vector<json>& predictions) {
    std::vector<std::pair<std::string, std::string>> outside;  // set, its methods
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        std::string methods;
        for (const auto& [m, p] : predictions[i].at("methods").items())
            if (p.at("extrapolated").get<bool>()) methods += (methods.empty() ? "" : ", ") + m;
        if (!methods.empty()) outside.emplace_back(names[i], methods);
    }
    const std::string tail = " lie outside the score range the calibration was fitted on; those estimates extrapolate";
    if (outside.size() > 3) {
        warn(std::to_string(outside.size()) + " of " + std::to_string(predictions.size()) + " sets have scores that" + tail +
             " (marked *, or \"extrapolated\" in JSON)");
        return;
    }
    for (const auto& [set, methods] : outside) warn(set + ": the scores of " + methods + tail);
}

namespace {

io::outside_paths outside(bool allow) { return allow ? io::outside_paths::allow : io::outside_paths::refuse; }

// Scores one labeled (or unlabeled) set of a manifest.
result score_set(const io::manifest_set& set, option_resolver& resolver, const input_args& input,
                 const options* fixed_options) {
    auto reader = io::open_matrix(set.logits, input.read);
    std::vector<std::int64_t> labels;
    if (!set.labels.empty()) {
        auto label_options = input.labels_options();
        label_options.expected_rows = reader->rows();  // refused before a deflated member is inflated
        try {
            labels = io::read_labels(set.labels, label_options);
        } catch (const error& e) {
            throw error(std::string(e.what()) + " (set \"" + printable(set.name) + "\")");
        }
        if (labels.size() != reader->rows())
            throw error(set.labels + ": " + std::to_string(labels.size()) + " labels for the " +
                        std::to_string(reader->rows()) + " rows of " + set.logits + " (set \"" + set.name + "\")");
    }
    const options& opts = fixed_options ? *fixed_options : resolver.resolve(reader->rows(), reader->cols());
    scan_inputs in;
    in.logits = reader.get();
    if (!labels.empty()) in.labels = &labels;
    progress bar(set.name, reader->rows(), input.quiet);
    try {
        return scan(in, 0, reader->rows(), opts, thread_count(input.threads), &bar).finalize();
    } catch (const error& e) {
        throw file_error(set.logits, e);
    }
}

std::vector<io::manifest_set> selected_sets(const io::manifest& m, const std::vector<std::string>& groups) {
    if (groups.empty()) return m.sets;
    std::vector<io::manifest_set> out;
    for (const auto& s : m.sets)
        if (std::find(groups.begin(), groups.end(), s.group) != groups.end()) out.push_back(s);
    for (const auto& g : groups)
        if (std::none_of(m.sets.begin(), m.sets.end(), [&](const io::manifest_set& s) { return s.group == g; }))
            throw error(m.path + ": no set has the group \"" + g + "\"");
    return out;
}

// The labeled sets of a manifest scored for eval and calibrate.
struct scored_sets {
    std::vector<labeled_set> sets;  // on the family's branch when one was chosen
    options used;                   // the options of the first set (the family's branch included)
    std::optional<normalization_choice> choice;
    std::vector<labeled_set> per_set;  // with --normalization family: MaNo on each set's own criterion
};

// Scores every selected set of a manifest, with labels. With --normalization family, a first
// pass scores each set with softrun (both branches at once) and MaNo alone at the other Taylor
// orders, the branch is chosen over all sets, and a second pass scores every method on it.
scored_sets score_manifest(const io::manifest& m, const std::vector<std::string>& groups, method_args& methods,
                           const input_args& input) {
    if (m.source) {
        if (!methods.source_logits.empty())
            throw error(m.path + ": the manifest has a \"source\" and --source-logits was given too; keep one");
        methods.source_logits = m.source->logits;
        methods.source_labels = m.source->labels;
    }
    methods.finish();
    option_resolver resolver(methods, input);
    const auto selected = selected_sets(m, groups);
    scored_sets out;
    for (const auto& s : selected) {
        if (s.labels.empty()) throw error(m.path + ": set \"" + s.name + "\" has no \"labels\"; every set needs them here");
        out.sets.push_back({s.name, s.group, score_set(s, resolver, input, nullptr)});
        if (out.sets.size() == 1) out.used = resolver.resolve(out.sets.back().scores.n, out.sets.back().scores.k);
    }
    if (!methods.family || !out.used.wants(method::mano)) return out;
    for (const int order : methods.taylor_orders) {
        if (order == out.used.taylor_order) continue;
        for (std::size_t i = 0; i < selected.size(); ++i) {
            options taylor = resolver.resolve(out.sets[i].scores.n, out.sets[i].scores.k);
            taylor.methods = {method::mano};
            taylor.norm = normalization::taylor;
            taylor.taylor_order = order;
            auto& variants = out.sets[i].scores.mano->variants;
            try {
                variants[variant_name(normalization::taylor, order)] = score_set(selected[i], resolver, input, &taylor).mano->score;
            } catch (const error& e) {
                warn(selected[i].logits + ": Taylor order " + std::to_string(order) + " left out of the choice (" + e.what() + ")");
            }
        }
    }
    out.choice = choose_normalization(out.sets, out.used);
    out.per_set = std::move(out.sets);
    out.sets.clear();
    for (std::size_t i = 0; i < selected.size(); ++i) {
        options on_branch = resolver.resolve(out.per_set[i].scores.n, out.per_set[i].scores.k);
        on_branch.norm = out.choice->norm;
        on_branch.taylor_order = out.choice->taylor_order;
        out.sets.push_back({selected[i].name, selected[i].group, score_set(selected[i], resolver, input, &on_branch)});
        if (i == 0) out.used = on_branch;
    }
    return out;
}

// One line on how MaNo's normalization was decided for a family of sets.
std::string describe_choice(const normalization_choice& c) {
    std::string text = "MaNo normalization for all sets: " + c.variant() + ", chosen by " + c.by;
    if (!c.errors.empty()) {
        text += " (error of each:";
        for (const auto& [name, e] : c.errors) text += " " + name + " " + fixed(e, 4);
        text += ")";
    } else {
        text += " (" + fixed(c.pooled_criterion, 4) + (c.norm == normalization::softmax ? " > " : " <= ") + "eta " +
                fixed(c.eta, 2) + ")";
    }
    return text;
}

void write_plots(const std::string& folder, const json& report, const std::vector<labeled_set>& sets) {
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec) throw error(folder + ": cannot create the plot folder (" + ec.message() + ")");
    const auto fits = calibrate(sets, options{}, nullptr);  // the lines and prediction bands
    for (const auto& [name, summary] : report.at("summary").items()) {
        const method m = parse_method(name);
        std::vector<plot_point> points;
        for (const auto& s : sets)
            for (const auto& v : s.scores.values())
                if (v.m == m) points.push_back({s.name, s.group, v.value, *s.scores.accuracy});
        std::optional<plot_line> line;
        std::optional<plot_band> band;
        for (const auto& mc : fits.methods) {
            if (mc.m != m) continue;
            line = plot_line{mc.fit.slope, mc.fit.intercept};
            plot_band b;
            b.level = 0.9;
            const int steps = 60;
            for (int i = 0; i <= steps; ++i) {
                const double x = mc.fit.x_min + (mc.fit.x_max - mc.fit.x_min) * i / steps;
                const auto p = predict(mc, x, std::nullopt, b.level);
                b.xs.push_back(x);
                b.lo.push_back(p.lower);
                b.hi.push_back(p.upper);
            }
            band = b;
        }
        const std::string path = (std::filesystem::path(folder) / (name + ".svg")).string();
        write_file(path, scatter_svg(name, points, line, band, summary.at("r2").get<double>(),
                                     summary.at("spearman").get<double>()));
    }
}

}  // namespace

int run_score(score_command& c) {
    c.input.finish();
    const bool calibrated = !c.calibration.empty();
    std::optional<calibration> cal;
    if (calibrated) {
        if (c.methods.any_given())
            throw error("--calibration fixes how scores are computed (the options it was fitted with); "
                        "leave out the scoring options");
        cal = read_calibration(c.calibration);
    } else {
        c.methods.finish();
    }
    if (c.files.size() > 1 && (!c.methods.second_logits.empty() || !c.methods.features.empty()))
        throw error("--second-logits and --features describe one logits file; score the files one at a time");
    if (!c.emit_state.empty() && (c.files.size() != 1 || c.chunk_size > 0))
        throw error("--emit-state writes the state of one logits file; give exactly one file and no --chunk-size");
    if (!c.rows.empty() && c.files.size() != 1) throw error("--rows selects rows of one logits file; give exactly one");
    if (!(c.level > 0 && c.level < 1)) throw error("--level must lie strictly between 0 and 1, e.g. 0.9");
    if (!c.emit_state.empty()) {
        auto inputs = c.files;
        inputs.insert(inputs.end(), {c.methods.second_logits, c.methods.features, c.methods.source_features,
                                     c.methods.source_logits, c.methods.source_labels, c.calibration});
        refuse_overwriting_inputs(c.emit_state, inputs, "--emit-state");
    }
    option_resolver resolver(c.methods, c.input);
    const unsigned threads = thread_count(c.input.threads);

    std::vector<std::string> names;  // table rows
    std::vector<json> where;         // what each result covers, for JSON
    std::vector<result> results;
    for (const auto& path : c.files) {
        auto reader = io::open_matrix(path, c.input.read);
        std::unique_ptr<io::matrix_reader> second, features;
        if (!c.methods.second_logits.empty()) second = io::open_matrix(c.methods.second_logits, c.input.read);
        if (!c.methods.features.empty()) features = io::open_matrix(c.methods.features, c.input.read);
        if (second && (second->rows() != reader->rows() || second->cols() != reader->cols()))
            throw error(c.methods.second_logits + ": the second model's logits are " + std::to_string(second->rows()) +
                        " x " + std::to_string(second->cols()) + " but " + path + " is " + std::to_string(reader->rows()) +
                        " x " + std::to_string(reader->cols()) + "; both must score the same inputs");
        if (features && features->rows() != reader->rows())
            throw error(c.methods.features + ": " + std::to_string(features->rows()) + " feature rows but " + path +
                        " has " + std::to_string(reader->rows()) + " rows of logits");
        const auto [first, end] = parse_rows(c.rows, reader->rows(), path);
        const std::size_t n = c.chunk_size > 0 ? std::min(c.chunk_size, end - first) : end - first;
        options opts;
        if (cal) {
            opts = cal->opts;
            if (cal->k != reader->cols())
                throw error(path + ": the logits have " + std::to_string(reader->cols()) +
                            " classes but the calibration was fitted on logits with " + std::to_string(cal->k));
        } else {
            opts = resolver.resolve(n, reader->cols());
        }
        const method_info& cot = info_of(method::cot);
        if (!cal && c.methods.methods.empty() && !opts.wants(method::cot) && reader->cols() <= cot.default_max_k &&
            !c.input.quiet)
            warn(path + ": cot is left out by default above " + std::to_string(cot.default_max_logits) +
                 " logits (it keeps every row); ask for it with --methods");
        scan_inputs in{reader.get(), second.get(), features.get(), nullptr};
        progress bar(path, end - first, c.input.quiet);
        try {
            if (c.chunk_size > 0) {
                auto chunks = scan_chunks(in, first, end, c.chunk_size, opts, threads, &bar);
                for (std::size_t i = 0; i < chunks.size(); ++i) {
                    const std::size_t a = first + i * c.chunk_size;
                    names.push_back(path + "[" + std::to_string(a) + ":" + std::to_string(a + chunks[i].n) + "]");
                    where.push_back({{"file", path}, {"chunk", i}, {"first_row", a}});
                    results.push_back(std::move(chunks[i]));
                }
            } else {
                auto acc = scan(in, first, end, opts, threads, &bar);
                if (!c.emit_state.empty()) write_json(c.emit_state, acc.to_json());
                names.push_back(path);
                where.push_back({{"file", path}});
                if (!c.rows.empty()) where.back()["first_row"] = first;
                results.push_back(acc.finalize());
            }
        } catch (const error& e) {
            throw file_error(path, e);
        }
    }

    if (cal) {
        std::vector<json> predictions;
        for (const auto& r : results) predictions.push_back(predict(*cal, r, c.level));
        warn_extrapolation(names, predictions);
        if (c.json) {
            for (std::size_t i = 0; i < results.size(); ++i) {
                json j = predictions[i];
                j.update(where[i]);
                std::cout << j.dump() << '\n';
            }
        } else {
            print_predictions(names, predictions, c.level);
        }
        return 0;
    }
    if (c.json) {
        for (std::size_t i = 0; i < results.size(); ++i) {
            json j = results[i].to_json();
            j.update(where[i]);
            std::cout << j.dump() << '\n';
        }
    } else {
        print_results(names, results);
    }
    return 0;
}

int run_methods(const methods_command& c) {
    if (c.json) {
        std::cout << methods_json().dump(2) << '\n';
        return 0;
    }
    std::vector<std::vector<std::string>> rows{{"method", "returns", "needs", "default", "cost", "what it computes"}};
    for (const auto& m : method_table) {
        std::string needs;
        for (const auto& name : input_names(m.needs)) needs += (needs.empty() ? "" : " + ") + name;
        std::string on = m.by_default ? "yes" : "no";
        if (m.by_default && m.default_max_k) on += ", K <= " + std::to_string(m.default_max_k);
        if (m.by_default && m.default_max_logits) on += ", N*K <= " + std::to_string(m.default_max_logits);
        rows.push_back({m.name, returns_name(m.returns), needs.empty() ? "logits" : "logits + " + needs, on, cost_name(m.cost),
                        m.summary});
    }
    // left-aligned, the summary last and unpadded
    std::vector<std::size_t> width(rows.front().size() - 1, 0);
    for (const auto& row : rows)
        for (std::size_t j = 0; j < width.size(); ++j) width[j] = std::max(width[j], row[j].size());
    for (const auto& row : rows) {
        for (std::size_t j = 0; j < width.size(); ++j) std::cout << row[j] << std::string(width[j] - row[j].size() + 2, ' ');
        std::cout << row.back() << '\n';
    }
    std::cout << "\ndefault: on when its inputs are given (mano score --help names the options that give them), within "
                 "the limits shown; any method runs when asked for by name (--methods).\ncost: linear = one pass, "
                 "O(N*K) time and O(K) memory; quadratic = O(N*K^2) time and O(K^2) memory (a Gram matrix; D features "
                 "for frechet); keeps_rows = O(N*K) memory and an exact solver superlinear in N*K.\n";
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
            throw file_error(path, e);
        }
    }
    if (!c.emit_state.empty()) write_json(c.emit_state, total->to_json());
    const result r = total->finalize();
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
    const auto scored = score_manifest(manifest, c.groups, c.methods, c.input);
    const auto& sets = scored.sets;
    json report = evaluate(sets);
    for (const auto& note : report.at("notes")) warn(note.get<std::string>());
    if (scored.choice) {
        report["normalization"] = scored.choice->to_json();
        // MaNo with each set's own softrun branch, for comparison (the paper's literal rule)
        std::vector<double> per_set, acc;
        for (const auto& s : scored.per_set) per_set.push_back(s.scores.mano->score), acc.push_back(*s.scores.accuracy);
        try {
            report["normalization"]["per_set"] = summary_json(summarize(per_set, acc));
        } catch (const error& e) {
            warn(std::string("mano with each set's own softrun branch: no summary: ") + e.what());
        }
    }
    if (!c.plots.empty()) write_plots(c.plots, report, sets);
    if (c.json) {
        std::cout << report.dump() << '\n';
        return 0;
    }
    const auto methods = columns(sets.front().scores);
    std::vector<std::vector<std::string>> per_set;
    std::vector<std::string> header{"set", "n", "accuracy"};
    for (const auto m : methods) header.push_back(method_name(m));
    per_set.push_back(header);
    for (const auto& s : sets) {
        std::vector<std::string> row{s.name, std::to_string(s.scores.n), fixed(*s.scores.accuracy, 4)};
        std::map<method, double> values;
        for (const auto& v : s.scores.values()) values[v.m] = v.value;
        for (const auto m : methods) row.push_back(values.count(m) ? fixed(values[m], 4) : "-");
        per_set.push_back(row);
    }
    std::vector<std::vector<std::string>> summary{{"method", "R2", "pearson", "spearman", "kendall", "LOO MAE"}};
    const auto summary_row = [&](const std::string& name, const json& s) {
        summary.push_back({name, fixed(s.at("r2").get<double>(), 4), fixed(s.at("pearson").get<double>(), 4),
                           fixed(s.at("spearman").get<double>(), 4), fixed(s.at("kendall").get<double>(), 4),
                           fixed(s.at("mae").get<double>(), 4)});
    };
    for (const auto& [name, s] : report.at("summary").items()) summary_row(name, s);
    if (report.contains("normalization") && report["normalization"].contains("per_set"))
        summary_row("mano (per-set criterion)", report["normalization"]["per_set"]);
    const auto print = c.markdown ? print_markdown : print_table;
    print(per_set);
    std::cout << '\n';
    print(summary);
    if (scored.choice) std::cout << describe_choice(*scored.choice) << '\n';
    if (report.contains("groups"))
        for (const auto& [group, methods_summary] : report.at("groups").items()) {
            std::cout << "\ngroup " << printable(group) << '\n';
            std::vector<std::vector<std::string>> rows{{"method", "R2", "spearman", "kendall", "LOO MAE"}};
            for (const auto& [name, s] : methods_summary.items())
                rows.push_back({name, fixed(s.at("r2").get<double>(), 4), fixed(s.at("spearman").get<double>(), 4),
                                fixed(s.at("kendall").get<double>(), 4), fixed(s.at("mae").get<double>(), 4)});
            print(rows);
        }
    return 0;
}

int run_calibrate(calibrate_command& c) {
    if (!c.run.model.empty() || c.synthesize) {
        if (!c.manifest.empty())
            throw error("give a manifest of labeled logits, or --model with --input and --synthesize; not both");
        return run_calibrate_synthesized(c);
    }
    if (c.manifest.empty())
        throw error("calibrate needs a manifest of labeled logit sets (mano calibrate MANIFEST.json), or --model M.pt "
                    "--input VAL_DIR --synthesize to build shifted sets from labeled images");
    c.input.finish();
    const auto manifest = io::read_manifest(c.manifest, outside(c.allow_outside_paths));
    if (!c.output.empty()) {
        std::vector<std::string> inputs{c.manifest};
        if (manifest.source) inputs.insert(inputs.end(), {manifest.source->logits, manifest.source->labels});
        for (const auto& s : manifest.sets) inputs.insert(inputs.end(), {s.logits, s.labels});
        refuse_overwriting_inputs(c.output, inputs, "-o");
    }
    const auto scored = score_manifest(manifest, c.groups, c.methods, c.input);
    std::vector<std::string> notes;
    calibration cal = calibrate(scored.sets, scored.used, &notes, false);
    cal.normalization = scored.choice;
    for (const auto& note : notes) warn(note);
    report_calibration(cal, c.output);
    return 0;
}

void report_calibration(const calibration& cal, const std::string& output, const json& extra) {
    json file = cal.to_json();
    file.update(extra);
    if (output.empty()) {
        std::cout << file.dump(2) << '\n';
        return;
    }
    write_json(output, file);
    std::vector<std::vector<std::string>> rows{
        {"method", "slope", "intercept", "residual se", "sets", "score range", "held-out-group error"}};
    for (const auto& mc : cal.methods)
        rows.push_back({method_name(mc.m), fixed(mc.fit.slope, 4), fixed(mc.fit.intercept, 4), fixed(mc.fit.residual_se, 4),
                        std::to_string(mc.fit.n), "[" + fixed(mc.fit.x_min, 4) + ", " + fixed(mc.fit.x_max, 4) + "]",
                        mc.folds.empty() ? "-" : fixed(mc.logo_mae, 4)});
    print_table(rows);
    std::cout << "(accuracy ~ slope * score + intercept; held-out-group error: mean |estimate - truth| of each set when "
                 "its group was left out of the fit; written to "
              << output << ")\n";
    if (cal.normalization) std::cout << describe_choice(*cal.normalization) << '\n';
    if (cal.recommended) {
        std::cout << "recommended estimate: " << method_name(*cal.recommended);
        if (cal.fallback && *cal.fallback != *cal.recommended)
            std::cout << "; on sets whose predicted class proportions are outside the calibrated range: "
                      << method_name(*cal.fallback);
        std::cout << '\n';
    }
}

int run_predict(predict_command& c) {
    c.input.finish();
    if (!(c.level > 0 && c.level < 1)) throw error("--level must lie strictly between 0 and 1, e.g. 0.9");
    if (c.files.empty() == c.manifest.empty()) throw error("give logit files or --manifest (one of them)");
    calibration cal = read_calibration(c.calibration);
    if (!c.methods.empty()) {
        std::vector<method_calibration> chosen;
        for (const auto& name : c.methods) {
            const method m = parse_method(name);
            const auto found = std::find_if(cal.methods.begin(), cal.methods.end(),
                                            [&](const method_calibration& mc) { return mc.m == m; });
            if (found == cal.methods.end()) {
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
    std::vector<io::manifest_set> sets;
    if (!c.manifest.empty()) {
        sets = selected_sets(io::read_manifest(c.manifest, outside(c.allow_outside_paths)), c.groups);
    } else {
        if (!c.groups.empty()) throw error("--group selects sets of a --manifest");
        for (const auto& f : c.files) sets.push_back({f, "", f, ""});
    }
    method_args unused;
    option_resolver resolver(unused, c.input);
    std::vector<std::string> names;
    std::vector<json> predictions;
    for (const auto& s : sets) {
        const result r = score_set(s, resolver, c.input, &cal.opts);
        names.push_back(s.name);
        json p;
        try {
            p = predict(cal, r, c.level);
        } catch (const error& e) {
            throw file_error(s.logits, e);
        }
        if (!s.group.empty()) p["group"] = s.group;
        predictions.push_back(p);
    }
    warn_extrapolation(names, predictions);
    // with true accuracies: how often the intervals held them
    json coverage = json::object();
    for (const auto& p : predictions) {
        if (!p.contains("accuracy")) continue;
        const double truth = p.at("accuracy").get<double>();
        json rows = p.at("methods");
        if (p.contains("estimate")) rows["estimate"] = p.at("estimate");
        for (const auto& [m, e] : rows.items()) {
            auto& cov = coverage[m];
            if (cov.is_null()) cov = {{"covered", 0}, {"sets", 0}, {"mae", 0.0}};
            const bool inside = e.at("interval")[0].get<double>() <= truth && truth <= e.at("interval")[1].get<double>();
            cov["covered"] = cov["covered"].get<int>() + (inside ? 1 : 0);
            cov["sets"] = cov["sets"].get<int>() + 1;
            cov["mae"] = cov["mae"].get<double>() + std::abs(e.at("accuracy").get<double>() - truth);
            cov["width"] = cov.value("width", 0.0) + e.at("interval")[1].get<double>() - e.at("interval")[0].get<double>();
        }
    }
    for (auto& [m, cov] : coverage.items()) {
        cov["rate"] = cov["covered"].get<double>() / cov["sets"].get<double>();
        cov["mae"] = cov["mae"].get<double>() / cov["sets"].get<double>();
        cov["width"] = cov["width"].get<double>() / cov["sets"].get<double>();
    }
    if (c.json) {
        if (c.manifest.empty()) {
            for (std::size_t i = 0; i < predictions.size(); ++i) {
                json j = predictions[i];
                j["file"] = names[i];
                std::cout << j.dump() << '\n';
            }
        } else {
            json out = {{"sets", json::array()}, {"level", c.level}};
            for (std::size_t i = 0; i < predictions.size(); ++i) {
                json j = {{"name", names[i]}};
                j.update(predictions[i]);
                out["sets"].push_back(j);
            }
            if (!coverage.empty()) out["coverage"] = coverage;
            std::cout << out.dump() << '\n';
        }
        return 0;
    }
    print_predictions(names, predictions, c.level);
    if (!coverage.empty()) {
        std::cout << '\n';
        std::vector<std::vector<std::string>> rows{{"method", "interval coverage", "mean |estimate - truth|", "mean width"}};
        std::vector<std::string> order;
        for (const auto& item : coverage.items()) order.push_back(item.key());
        const auto rank = [](const std::string& m) { return m == "estimate" ? -1 : static_cast<int>(parse_method(m)); };
        std::sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
        for (const auto& m : order) {
            const auto& cov = coverage.at(m);
            rows.push_back({m,
                            std::to_string(cov.at("covered").get<int>()) + "/" + std::to_string(cov.at("sets").get<int>()) +
                                " (" + fixed(100 * cov.at("rate").get<double>(), 0) + "%)",
                            fixed(cov.at("mae").get<double>(), 4), fixed(cov.at("width").get<double>(), 3)});
        }
        print_table(rows);
    }
    return 0;
}

void model_args::add_to(CLI::App* app, const std::string& batch_flag) {
    app->add_option("--model", model, "a TorchScript model file (torch.jit.script(m).save(path))");
    app->add_option("--input", input, "an image folder (one subfolder per class gives labels) or an N x C x H x W float32 .npy");
    app->add_option("--device", device, "auto | cpu | cuda | cuda:INDEX")->capture_default_str();
    app->add_option("--amp", amp, "off | fp16 | bf16: autocast the model to this type")->capture_default_str();
    app->add_option(batch_flag, batch_size, "images per model call")
        ->capture_default_str()
        ->check(whole_number(true, max_images_per_call));
    app->add_option("--workers", workers, "image decoding threads (default: every core but one, at least one)")
        ->check(whole_number(false, max_threads));
    preprocessing.push_back(app->add_option("--resize", resize, "resize images so that their shorter side is S pixels")
                                ->check(whole_number(true, max_image_side)));
    preprocessing.push_back(
        app->add_option("--crop", crop, "then center-crop C x C pixels")->check(whole_number(true, max_image_side)));
    preprocessing.push_back(app->add_option("--mean", mean, "m,m,m: per-channel mean subtracted from pixels in [0, 1] (default 0,0,0)"));
    preprocessing.push_back(app->add_option("--std", std, "s,s,s: per-channel divisor after the mean (default 1,1,1)"));
}

}  // namespace cli
}  // namespace mano

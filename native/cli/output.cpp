#include "cli/output.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/plot.hpp"

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

void write_json(const std::string& path, const json& j) { write_file(path, j.dump() + '\n'); }

namespace {

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

// "0.873 [0.841, 0.902]" with a '*' when the score lies outside the calibration's range.
std::string estimate_cell(const prediction& p) {
    return fixed(p.accuracy, 3) + " [" + fixed(p.lower, 3) + ", " + fixed(p.upper, 3) + "]" + (p.extrapolated ? "*" : "");
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

// Where the label-shift check could not vouch for one regime (prediction/label_shift_check.hpp),
// the estimate's interval holds both regimes' intervals: why, per set (three at most, else a count).
void print_label_shift_reasons(const std::vector<std::string>& names, const std::vector<set_prediction>& predictions) {
    std::vector<std::size_t> joined;
    for (std::size_t i = 0; i < predictions.size(); ++i)
        if (predictions[i].label_shift && !predictions[i].label_shift->reason.empty()) joined.push_back(i);
    if (joined.size() > 3) {
        std::cout << joined.size() << " of " << predictions.size() << " sets have an estimate whose interval holds both "
                  << "regimes' (label shift and general): the label-shift check could not vouch for either alone "
                  << "(label_shift.reason in --json)\n";
        return;
    }
    for (const std::size_t i : joined)
        std::cout << printable(names[i]) << ": the estimate's interval holds both regimes' (label shift and general): "
                  << predictions[i].label_shift->reason << "\n";
}

}  // namespace

void print_predictions(const std::vector<std::string>& names, const std::vector<set_prediction>& predictions, double level) {
    std::vector<method> methods;
    for (const auto& [m, p] : predictions.front().methods) methods.push_back(m);
    const auto any = [&](auto has) { return std::any_of(predictions.begin(), predictions.end(), has); };
    const bool truth = any([](const set_prediction& p) { return p.accuracy.has_value(); });
    const bool estimate = any([](const set_prediction& p) { return p.estimate.has_value(); });
    const bool shift = any([](const set_prediction& p) { return p.shift.has_value(); });
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header{"file", "n"};
    if (truth) header.push_back("true accuracy");
    if (estimate) header.push_back("estimate");
    if (shift) header.push_back("class shift");
    for (const auto m : methods) header.push_back(method_name(m));
    rows.push_back(header);
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        const auto& p = predictions[i];
        std::vector<std::string> row{names[i], std::to_string(p.n)};
        if (truth) row.push_back(p.accuracy ? fixed(*p.accuracy, 3) : "-");
        if (estimate)
            row.push_back(p.estimate ? estimate_cell(p.estimate->value) + " " + method_name(p.estimate->m) +
                                           (p.estimate->regime == regime::label_shift ? " (label shift)" : "")
                                     : "-");
        if (shift) row.push_back(p.shift ? fixed(p.shift->distance, 2) + (p.shift->outside ? " outside" : "") : "-");
        for (const auto m : methods) row.push_back(p.methods.count(m) ? estimate_cell(p.methods.at(m)) : "-");
        rows.push_back(row);
    }
    print_table(rows);
    std::cout << "(estimated accuracy [" << fixed(100 * level, 0)
              << "% prediction interval]; * = the score lies outside the calibration's range";
    if (estimate)
        std::cout << "; estimate = MLLS where the set passes the label-shift check (label shift), else the calibration's "
                     "recommended method";
    if (shift)
        std::cout << "; class shift = total variation between the set's predicted class proportions and the calibration "
                     "sets' mean";
    std::cout << ")\n";
    print_label_shift_reasons(names, predictions);
}

void warn_extrapolation(const std::vector<std::string>& names, const std::vector<set_prediction>& predictions) {
    std::vector<std::pair<std::string, std::string>> outside;  // set, its methods
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        std::string methods;
        for (const auto& [name, p] : in_name_order(predictions[i].methods))
            if (p->extrapolated) methods += (methods.empty() ? "" : ", ") + name;
        if (!methods.empty()) outside.emplace_back(names[i], methods);
    }
    const std::string tail = " lie outside the score range the calibration was fitted on; those estimates extrapolate";
    if (outside.size() > 3) {
        warn(std::to_string(outside.size()) + " of " + std::to_string(predictions.size()) + " sets have scores that" + tail +
             " (marked *, or \"extrapolated\" in JSON)");
        return;
    }
    for (const auto& [set, methods] : outside) warn(set + ": the scores of " + methods + tail);
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        const auto& e = predictions[i].estimate;
        if (!e || !e->value.out_of_range) continue;
        warn(names[i] + ": " + method_name(e->m) + "'s line gives an accuracy " + (e->value.out_of_range < 0 ? "below 0" : "above 1") +
             " for this set (shown clipped, its interval kept at its width): the set is unlike every calibration set; "
             "label a sample of it before trusting the estimate");
    }
}

void print_coverage(const coverage_report& coverage) {
    std::vector<std::vector<std::string>> rows{{"method", "interval coverage", "mean |estimate - truth|", "mean width"}};
    const auto row = [&](const std::string& name, const interval_coverage& c) {
        rows.push_back({name,
                        std::to_string(c.covered) + "/" + std::to_string(c.sets) + " (" + fixed(100 * c.rate, 0) + "%)",
                        fixed(c.mae, 4), fixed(c.width, 3)});
    };
    if (coverage.estimate) row("estimate", *coverage.estimate);
    for (const auto& [m, c] : coverage.methods) row(method_name(m), c);
    print_table(rows);
}

void print_evaluation(const evaluation_report& report, const std::optional<normalization_choice>& choice,
                      const std::optional<evaluation_summary>& per_set_criterion, bool markdown) {
    const auto methods = columns(report.sets.front().scores);
    std::vector<std::vector<std::string>> per_set;
    std::vector<std::string> header{"set", "n", "accuracy"};
    for (const auto m : methods) header.push_back(method_name(m));
    per_set.push_back(header);
    for (const auto& s : report.sets) {
        std::vector<std::string> row{s.name, std::to_string(s.scores.n), fixed(*s.scores.accuracy, 4)};
        std::map<method, double> values;
        for (const auto& v : s.scores.values()) values[v.m] = v.value;
        for (const auto m : methods) row.push_back(values.count(m) ? fixed(values[m], 4) : "-");
        per_set.push_back(row);
    }
    std::vector<std::vector<std::string>> summary{{"method", "R2", "pearson", "spearman", "kendall", "LOO MAE"}};
    const auto summary_row = [&](const std::string& name, const evaluation_summary& s) {
        summary.push_back({name, fixed(s.r2, 4), fixed(s.pearson, 4), fixed(s.spearman, 4), fixed(s.kendall, 4), fixed(s.mae, 4)});
    };
    for (const auto& [name, s] : in_name_order(report.summary)) summary_row(name, *s);
    if (per_set_criterion) summary_row("mano (per-set criterion)", *per_set_criterion);
    const auto print = markdown ? print_markdown : print_table;
    print(per_set);
    std::cout << '\n';
    print(summary);
    if (choice) std::cout << describe_choice(*choice) << '\n';
    for (const auto& [group, methods_summary] : report.groups) {
        std::cout << "\ngroup " << printable(group) << '\n';
        std::vector<std::vector<std::string>> rows{{"method", "R2", "spearman", "kendall", "LOO MAE"}};
        for (const auto& [name, s] : in_name_order(methods_summary))
            rows.push_back({name, fixed(s->r2, 4), fixed(s->spearman, 4), fixed(s->kendall, 4), fixed(s->mae, 4)});
        print(rows);
    }
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
        {"method", "link", "slope", "intercept", "residual se", "sets", "score range", "held-out-group error"}};
    bool probit = false;
    for (const auto& mc : cal.methods) {
        const auto [low, high] = score_range(mc);
        probit = probit || mc.link == link::probit;
        rows.push_back({method_name(mc.m), link_name(mc.link), fixed(mc.fit.slope, 4), fixed(mc.fit.intercept, 4),
                        fixed(mc.fit.residual_se, 4), std::to_string(mc.fit.n), "[" + fixed(low, 4) + ", " + fixed(high, 4) + "]",
                        mc.folds.empty() ? "-" : fixed(mc.logo_mae, 4)});
    }
    print_table(rows);
    std::cout << "(identity: accuracy ~ slope * score + intercept"
              << (probit ? "; probit: accuracy ~ \u03a6(slope * \u03a6\u207b\u00b9(score) + intercept), its residual se on "
                           "the \u03a6\u207b\u00b9 scale"
                         : "")
              << "; score range: the calibration sets' scores; held-out-group error: mean |estimate - truth| of each set "
                 "when its group was left out of the fit; written to "
              << output << ")\n";
    if (cal.normalization) std::cout << describe_choice(*cal.normalization) << '\n';
    if (cal.recommended) {
        std::cout << "recommended estimate: " << method_name(*cal.recommended);
        if (calibration_of(cal, label_shift_method()))
            std::cout << "; on sets that pass the label-shift check: " << method_name(label_shift_method());
        std::cout << '\n';
    }
}

void print_method_table() {
    std::vector<std::vector<std::string>> rows{{"method", "returns", "needs", "default", "cost", "what it computes"}};
    for (const auto& m : method_table) {
        std::string needs;
        for (const auto& name : input_names(m.needs)) needs += (needs.empty() ? "" : " + ") + name;
        std::string on = m.by_default ? "yes" : "no";
        if (m.by_default && m.default_max_k) on += ", K <= " + std::to_string(m.default_max_k);
        if (m.by_default && m.default_max_logits) on += ", N*K <= " + std::to_string(m.default_max_logits) + " (N known)";
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
}

}  // namespace cli
}  // namespace mano

#include "cli/manifest.hpp"

#include <algorithm>
#include <filesystem>

#include "cli/output.hpp"
#include "cli/plot.hpp"
#include "host/scan.hpp"

namespace mano {
namespace cli {

io::outside_paths outside(bool allow) { return allow ? io::outside_paths::allow : io::outside_paths::refuse; }

workflow::scored_set score_set(const io::manifest_set& set, const input_args& input, const options_for_shape& choose,
                               const workflow::pass* copy, bool keep_labels) {
    auto reader = input.open(set.logits);
    input.classes(set.logits, reader->cols());  // its shape fits --input, before its labels are read
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
    options opts = choose(reader->rows(), reader->cols());
    if (copy) {
        // a label-shifted copy: the drawn rows, in their order, with their labels
        std::vector<std::int64_t> copy_labels;
        for (const auto row : copy->rows) copy_labels.push_back(labels.at(row));
        return {host::scan_rows(*reader, copy->rows, copy_labels, opts), std::move(opts), {}};
    }
    host::scan_inputs in;
    in.logits = reader.get();
    if (!labels.empty()) in.labels = &labels;
    host::progress bar(set.name, reader->rows(), input.quiet);
    try {
        result r = host::scan(in, 0, reader->rows(), opts, host::thread_count(input.threads), &bar).finalize();
        input.warn_probabilities(set.logits, r);
        workflow::scored_set out{std::move(r), std::move(opts), {}};
        if (keep_labels) out.labels = std::move(labels);
        return out;
    } catch (const error& e) {
        throw host::file_error(set.logits, e);
    }
}

std::vector<io::manifest_set> selected_sets(const io::manifest& m, const std::vector<std::string>& groups) {
    std::vector<std::string> set_groups;
    for (const auto& s : m.sets) set_groups.push_back(s.group);
    std::vector<io::manifest_set> out;
    for (const std::size_t i : select_groups(set_groups, groups, m.path)) out.push_back(m.sets[i]);
    return out;
}

workflow::scored_family score_manifest(const io::manifest& m, const std::vector<std::string>& groups, method_args& methods,
                                       const input_args& input, const std::optional<label_shift_copies>& copies) {
    if (m.source) {
        if (!methods.source_logits.empty())
            throw error(m.path + ": the manifest has a \"source\" and --source-logits was given too; keep one");
        methods.source_logits = m.source->logits;
        methods.source_labels = m.source->labels;
    }
    methods.finish();
    option_resolver resolver(methods, input);
    const auto selected = selected_sets(m, groups);
    std::vector<std::string> names, set_groups;
    for (const auto& s : selected) {
        if (s.labels.empty()) throw error(m.path + ": set \"" + s.name + "\" has no \"labels\"; every set needs them here");
        names.push_back(s.name);
        set_groups.push_back(s.group);
    }
    workflow::family_options family;
    family.family = methods.family;
    family.taylor_orders = methods.taylor_orders;
    family.copies = copies;
    const auto score = [&](std::size_t i, const workflow::pass& p) -> std::optional<workflow::scored_set> {
        return score_set(selected[i], input, [&](std::size_t rows, std::size_t cols) { return p.apply(resolver.resolve(rows, cols)); },
                         p.kind == workflow::pass::role::copy ? &p : nullptr, p.labels);
    };
    const auto warn_set = [&](std::size_t i, const std::string& message) { warn(selected[i].logits + ": " + message); };
    return workflow::score_family(names, set_groups, family, score, warn_set);
}

namespace {

// The calibration's fit and 90% band at scores across the points and the fitted range, on the
// score's own scale (a probit fit is a curve there: calibration.hpp, link).
plot_band fit_samples(const method_calibration& mc, const std::vector<plot_point>& points) {
    auto [lo, hi] = score_range(mc);
    for (const auto& p : points)
        if (std::isfinite(p.score)) lo = std::min(lo, p.score), hi = std::max(hi, p.score);
    plot_band b;
    b.level = 0.9;
    b.equation = fit_equation(mc);
    const int steps = 60;
    for (int i = 0; i <= steps; ++i) {
        const double x = lo + (hi - lo) * i / steps;
        const auto p = predict(mc, x, std::nullopt, b.level);
        b.xs.push_back(x);
        b.fit.push_back(p.accuracy);
        b.lo.push_back(p.lower);
        b.hi.push_back(p.upper);
    }
    return b;
}

}  // namespace

void write_plots(const std::string& folder, const evaluation_report& report) {
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec) throw error(folder + ": cannot create the plot folder (" + ec.message() + ")");
    const auto& sets = report.sets;
    const auto fits = calibrate(sets, options{}, nullptr);  // the lines and prediction bands
    for (const auto& [name, summary] : in_name_order(report.summary)) {
        const method m = parse_method(name);
        std::vector<plot_point> points;
        for (const auto& s : sets)
            for (const auto& v : s.scores.values())
                if (v.m == m) points.push_back({s.name, s.group, v.value, *s.scores.accuracy});
        std::optional<plot_band> band;
        for (const auto& mc : fits.methods)
            if (mc.m == m) band = fit_samples(mc, points);
        const std::string path = (std::filesystem::path(folder) / (name + ".svg")).string();
        write_file(path, scatter_svg(name, points, band, summary->r2, summary->spearman));
    }
}

}  // namespace cli
}  // namespace mano

// Calibrates on the labeled sets of a manifest and predicts the accuracy of a file of logits, as
// `mano calibrate MANIFEST -o cal.json` then `mano predict --calibration cal.json LOGITS` do.
// Usage: example MANIFEST LOGITS [PREDICTION.json]   (the last: the prediction as JSON)
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <mano/io/manifest.hpp>
#include <mano/io/reader.hpp>
#include <mano/mano.hpp>

namespace {

// A file's rows, read whole (a larger file is read and pushed a chunk of rows at a time).
struct matrix {
    std::unique_ptr<mano::io::matrix_reader> reader;
    mano::logits_view rows;
    explicit matrix(const std::string& path) : reader(mano::io::open_matrix(path)), rows(reader->read(0, reader->rows())) {}
};

// The labels of a file's rows, one a row.
std::vector<std::int64_t> labels_of(const std::string& path, const matrix& logits) {
    mano::io::read_options o;
    o.expected_rows = logits.rows.rows();  // a file of another length is refused before it is read
    std::vector<std::int64_t> labels = mano::io::read_labels(path, o);
    if (labels.size() != logits.rows.rows())
        throw mano::error(path + ": " + std::to_string(labels.size()) + " labels for the " +
                          std::to_string(logits.rows.rows()) + " rows of " + logits.reader->path());
    return labels;
}

// The rows `picked` of `all` (in that order, repeats allowed) scored with their labels.
mano::result score_rows(const mano::logits_view& all, const std::vector<std::uint64_t>& picked,
                        const std::vector<std::int64_t>& labels, const mano::options& o) {
    const std::size_t n = picked.size(), k = all.cols();
    const bool wide = all.type() == mano::dtype::float64;  // float64 stays double, the rest float
    std::vector<double> doubles(wide ? n * k : 0);
    std::vector<float> floats(wide ? 0 : n * k);
    std::vector<std::int64_t> picked_labels;
    for (std::size_t i = 0; i < n; ++i) {
        if (wide) mano::widen_rows(all, picked[i], 1, &doubles[i * k]);
        else mano::float_rows(all, picked[i], 1, &floats[i * k]);
        picked_labels.push_back(labels.at(picked[i]));
    }
    mano::accumulator acc(k, o);
    mano::row_inputs in;
    in.labels = picked_labels.data();
    acc.push(wide ? mano::logits_view(doubles.data(), n, k) : mano::logits_view(floats.data(), n, k), in);
    return acc.finalize();
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc < 3) {
        std::fprintf(stderr, "usage: example MANIFEST LOGITS [PREDICTION.json]\n");
        return 2;
    }
    const mano::io::manifest m = mano::io::read_manifest(argv[1]);
    std::vector<std::string> names, groups;
    std::vector<matrix> sets;
    std::vector<std::vector<std::int64_t>> labels;
    for (const auto& s : m.sets) {
        if (s.labels.empty()) throw mano::error(m.path + ": set \"" + s.name + "\" has no labels; calibration needs them");
        names.push_back(s.name);
        groups.push_back(s.group);
        sets.emplace_back(s.logits);
        labels.push_back(labels_of(s.labels, sets.back()));
    }
    // The default methods for a set's size; those that read a labeled source set (ATC, DoC) learn from it.
    std::optional<matrix> source;
    std::vector<std::int64_t> source_labels;
    if (m.source) {
        source.emplace(m.source->logits);
        source_labels = labels_of(m.source->labels, *source);
    }
    const auto options_for = [&](std::size_t n, std::size_t k) {
        mano::options o;
        o.methods = mano::default_methods(k, n, source ? mano::needs_source : mano::needs_logits_only);
        mano::workflow::source_inputs given;
        if (source) {
            given.logits = &source->rows;
            given.labels = source_labels.data();
        }
        return mano::workflow::learn_from_source(o, given);
    };
    // The family workflow (mano/workflow/family.hpp) asks for each pass over each set: the first
    // pass, the rescoring on the MaNo branch it chose, the label-shifted copies (6 a set).
    mano::workflow::family_options family;
    family.copies = mano::label_shift_copies{};
    const auto score = [&](std::size_t i, const mano::workflow::pass& p) -> std::optional<mano::workflow::scored_set> {
        const mano::logits_view& rows = sets[i].rows;
        std::vector<std::uint64_t> picked = p.rows;  // a label-shifted copy's rows; every row otherwise
        if (p.kind != mano::workflow::pass::role::copy) {
            picked.resize(rows.rows());
            std::iota(picked.begin(), picked.end(), 0);
        }
        const mano::options o = p.apply(options_for(rows.rows(), rows.cols()));
        return mano::workflow::scored_set{score_rows(rows, picked, labels[i], o), o, p.labels ? labels[i] : std::vector<std::int64_t>{}};
    };
    const auto warn = [&](std::size_t i, const std::string& why) { std::fprintf(stderr, "%s: %s\n", names[i].c_str(), why.c_str()); };
    std::vector<std::string> notes;
    const mano::calibration cal = mano::workflow::calibrate(mano::workflow::score_family(names, groups, family, score, warn), &notes);
    std::printf("calibrated %zu methods on %zu sets, recommended: %s\n", cal.methods.size(), cal.sets.size(),
                cal.recommended ? mano::method_name(*cal.recommended) : "none");

    // The unlabeled file, scored the calibration's way, and its accuracy with a 90% interval.
    const matrix target(argv[2]);
    mano::accumulator acc(target.rows.cols(), mano::scoring_options(cal, target.rows.rows(), target.rows.cols(), mano::input_kind::logits));
    acc.push(target.rows);
    const mano::set_prediction p = mano::predict(cal, acc.finalize(), 0.9);
    if (!p.estimate) throw mano::error(std::string(argv[2]) + ": no calibrated method scored it");
    const mano::prediction& e = p.estimate->value;
    std::printf("%s: accuracy %.3f, 90%% interval [%.3f, %.3f], by %s (%s regime)\n", argv[2], e.accuracy, e.lower, e.upper,
                mano::method_name(p.estimate->m), mano::regime_name(p.estimate->regime));
    if (argc > 3) std::ofstream(argv[3]) << p.to_json().dump() << "\n";
    return 0;
} catch (const std::exception& e) {  // a mano::error names the file, row or option at fault
    std::fprintf(stderr, "example: %s\n", e.what());
    return 1;
}

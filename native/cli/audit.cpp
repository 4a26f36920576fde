#include "cli/audit.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>

#include "cli/output.hpp"
#include "cli/plot.hpp"
#include "host/scan.hpp"
#include "io/reader.hpp"

namespace mano {
namespace cli {

CLI::App* add_audit_command(CLI::App& app, audit_command& c) {
    auto* audit = app.add_subcommand("audit", "Draw rows of a logits file to label by hand (a uniform sample), for mano "
                                              "predict --audit");
    audit->add_option("file", c.file, "the logits file of the set to audit")->required()->check(CLI::ExistingFile);
    audit->add_option("--budget", c.budget, "how many rows to label")->required()->check(whole_number(true, audit_max_rows));
    audit->add_option("--seed", c.seed, "the seed of the draw (default: a random one, recorded in the file)")
        ->check(whole_number(false, audit_max_seed));
    audit->add_option("-o,--output", c.output, "write the rows to label here: CSV row,weight (a first comment line "
                                               "records the draw); add a column label")
        ->required();
    c.input.add_to(audit);
    return audit;
}

int run_audit(audit_command& c) {
    c.input.finish();
    refuse_overwriting_inputs(c.output, {c.file}, "-o");
    const auto reader = c.input.open(c.file);
    std::uint64_t seed = 0;
    if (c.seed) {
        seed = *c.seed;
    } else {
        std::random_device device;
        seed = ((static_cast<std::uint64_t>(device()) << 32) ^ device()) & audit_max_seed;
    }
    std::vector<std::uint64_t> rows;
    try {
        rows = audit_sample(reader->rows(), c.budget, seed);
    } catch (const error& e) {
        throw host::file_error(c.file, e);
    }
    const std::size_t classes = c.input.classes(c.file, reader->cols());
    write_file(c.output, audit_csv(rows, reader->rows(), classes, seed, c.file));
    std::cout << c.output << ": " << rows.size() << " of the " << reader->rows() << " rows of " << c.file
              << " to label (seed " << seed << "); add a column label with each row's true class (0 to "
              << classes - 1 << "), then: mano predict --calibration CAL " << shell_word(c.file) << reading_flags(c.input)
              << " --audit " << shell_word(c.output) << '\n';
    return 0;
}

std::string shell_word(const std::string& text) {
    constexpr const char* plain = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./:=,+@%";
    if (!text.empty() && text.find_first_not_of(plain) == std::string::npos) return printable(text);
    std::string out = "'";
    for (const char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return printable(out + "'");
}

std::string reading_flags(const input_args& input) {
    std::string out;
    const auto flag = [&](const char* name, const std::string& value) {
        if (!value.empty()) out += std::string(" ") + name + " " + shell_word(value);
    };
    if (input.input_name != "logits") flag("--input", input.input_name);
    flag("--key", input.read.key);
    flag("--shape", input.shape);
    flag("--label-column", input.read.label_column);
    flag("--header", input.header);
    return out;
}

audit_labels read_audit(const std::string& path, std::uint64_t n_rows, std::size_t k, const std::string& set_name) {
    std::error_code ec;
    const bool regular = std::filesystem::is_regular_file(path, ec);
    const auto size = regular ? std::filesystem::file_size(path, ec) : 0;
    if (!regular || ec) throw error(path + ": cannot open this audit file (not a readable regular file)");
    if (size > audit_max_bytes)
        throw error(path + ": " + std::to_string(size) + " bytes, over the " + std::to_string(audit_max_bytes >> 20) +
                    " MiB an audit file may have; an audit lists at most " + std::to_string(audit_max_rows) + " rows");
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) throw error(path + ": cannot read this audit file");
    return parse_audit(text, path, n_rows, k, set_name);
}

result score_audited_rows(const std::string& logits, const input_args& input, const audit_labels& audit,
                          const options& opts) {
    auto reader = io::open_matrix(logits, input.read);
    return host::scan_rows(*reader, audit.rows, audit.labels, opts);
}

void print_audits(const std::vector<std::string>& names, const std::vector<set_prediction>& predictions,
                  const std::string& audit_file) {
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        const auto& p = predictions[i];
        if (!p.audit) continue;
        const auto& a = *p.audit;
        std::cout << "audit of " << printable(names[i]) << " (" << printable(audit_file) << ", " << a.n << " labeled rows): accuracy "
                  << fixed(a.accuracy, 3) << " [" << fixed(100 * p.level, 0) << "% interval " << fixed(a.lower, 3) << ", "
                  << fixed(a.upper, 3) << "] ";
        if (a.method == "ppi")
            std::cout << "(PPI with the calibration's correctness model; labels alone, Wilson: [" << fixed(a.wilson_lower, 3)
                      << ", " << fixed(a.wilson_upper, 3) << "])\n";
        else
            std::cout << "(" << a.reason << ")\n";
    }
}

void print_labels_needed(const std::vector<std::string>& names, const std::vector<std::string>& files,
                         const std::vector<set_prediction>& predictions, const input_args& input,
                         const std::string& calibration) {
    std::vector<std::size_t> wide;  // sets whose estimate interval is wider than the target, not audited yet
    std::vector<std::size_t> small;  // sets too small to judge without labels
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        if (predictions[i].audit) continue;
        if (predictions[i].too_small) small.push_back(i);
        else if (predictions[i].labels_for_width && predictions[i].estimate) wide.push_back(i);
    }
    if (small.size() == 1)
        std::cout << printable(names[small.front()]) << ": " << predictions[small.front()].n << " rows are too small to judge without "
                  << "labels (fewer than " << min_judged_rows << "); its interval is mostly their sampling noise: label them for "
                  << "its accuracy\n";
    else if (!small.empty())
        std::cout << small.size() << " of " << predictions.size() << " sets have fewer than " << min_judged_rows
                  << " rows: too small to judge without labels (their intervals are mostly sampling noise); label their rows "
                  << "for their accuracy (too_small in --json)\n";
    if (wide.empty()) return;
    const auto n_of = [&](std::size_t i) { return predictions[i].labels_for_width->n; };
    const std::size_t first = wide.front();
    const auto& p = predictions[first];
    // the commands as they run: the set read as this run read it (--input, --key, ...)
    const std::string file = shell_word(files[first]), flags = reading_flags(input);
    const std::string commands = "mano audit " + file + flags + " --budget " + std::to_string(n_of(first)) +
                                 " -o rows.csv, label them, then mano predict --calibration " + shell_word(calibration) + " " +
                                 file + flags + " --audit rows.csv";
    if (wide.size() == 1) {
        std::cout << printable(names[first]) << ": the estimate's " << fixed(100 * p.level, 0) << "% interval is "
                  << fixed(p.estimate->value.upper - p.estimate->value.lower, 2) << " wide; " << n_of(first)
                  << " labeled rows drawn uniformly would bring it to " << fixed(p.labels_for_width->width, 2) << " ("
                  << commands << ")\n";
        return;
    }
    // said once for all the sets: how many, how many labels each, and the commands for the first
    std::size_t least = n_of(first), most = n_of(first);
    for (const std::size_t i : wide) least = std::min(least, n_of(i)), most = std::max(most, n_of(i));
    std::cout << wide.size() << " of " << predictions.size() << " sets have " << fixed(100 * p.level, 0)
              << "% intervals wider than " << fixed(p.labels_for_width->width, 2) << "; "
              << (least == most ? std::to_string(least) : std::to_string(least) + " to " + std::to_string(most))
              << " labeled rows of each, drawn uniformly, would bring each to " << fixed(p.labels_for_width->width, 2)
              << " (for " << printable(names[first]) << ": " << commands << "; each set's number: labels_for_width in --json)\n";
}

}  // namespace cli
}  // namespace mano

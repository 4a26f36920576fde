#pragma once
// `mano audit` (the rows to label, drawn by the core's sampler, src/mano/audit/audit_sample.hpp) and
// what `mano predict --audit` adds: the labeled audit file read by the core's parser, the audited
// rows read from the set's file and scored with their labels, and the lines the text output shows.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <mano/mano.hpp>

#include "cli/options.hpp"

namespace mano {
namespace cli {

struct audit_command {
    std::string file;
    std::uint64_t budget = 0;
    std::optional<std::uint64_t> seed;  // default: drawn from std::random_device and recorded in the file
    std::string output;
    input_args input;
};

// Registers `audit` on `app`.
CLI::App* add_audit_command(CLI::App& app, audit_command& c);
int run_audit(audit_command& c);

// The labeled audit file `path` of a set of n_rows x k logits read from the file `set_name`, read
// and checked by the core (a draw from a set of another size refused, one from a file of another
// name a warning in its `warnings`).
audit_labels read_audit(const std::string& path, std::uint64_t n_rows, std::size_t k, const std::string& set_name);

// The audited rows of the logits file `logits`, read where they lie (in order when the file has no
// random access), scored with `opts` and their labels.
result score_audited_rows(const std::string& logits, const input_args& input, const audit_labels& audit,
                          const options& opts);

// The text output's audit line of each set that has one (before the table), and the labels
// needed (after it): one line, for one set or all of them (how many sets, how many labels each,
// and the commands, mano audit and mano predict --audit, that run as printed); `files` are the
// sets' logits files, read as `input` says, and `calibration` the calibration file.
void print_audits(const std::vector<std::string>& names, const std::vector<set_prediction>& predictions,
                  const std::string& audit_file);
void print_labels_needed(const std::vector<std::string>& names, const std::vector<std::string>& files,
                         const std::vector<set_prediction>& predictions, const input_args& input,
                         const std::string& calibration);

// The options that make another command read a file as `input` reads it (" --input binary-logit
// --key x ..."; "" for the defaults), and one word of a command a POSIX shell reads back as `text`.
std::string reading_flags(const input_args& input);
std::string shell_word(const std::string& text);

}  // namespace cli
}  // namespace mano

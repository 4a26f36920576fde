#pragma once
// The options the `mano` subcommands share: how inputs are read, how scores are computed
// (resolved once per file shape), how a model runs, and the files those options name.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <mano/mano.hpp>

#include "io/reader.hpp"

namespace mano {
namespace cli {

inline constexpr std::uint64_t whole_number_max = 999999999999999999ULL;
// More threads than this only cost memory (each keeps its own accumulator) and thread creation.
inline constexpr std::uint64_t max_threads = 1024;

// For unsigned options: the text must be a plain whole number (no sign, no exponent), at least 1
// when `positive`, and at most `most` (below 10^18 by default, so it fits in 64 bits); CLI11
// would otherwise wrap "-1" to 2^64 - 1.
CLI::Validator whole_number(bool positive, std::uint64_t most = whole_number_max);
// For floating-point options: a finite number (not nan, inf or out of a double's range) for which
// `allowed` holds; `range` says which ("> 1", "in (0, 1)", "" for any finite number).
CLI::Validator real_number(const std::string& range, std::function<bool(double)> allowed);
// The validator of an option of the core's table (src/mano/scan/options_table.hpp): its type and range.
CLI::Validator table_option(std::string_view name);

// How input files are read and how much of the machine is used.
struct input_args {
    io::read_options read;
    std::string shape;   // "N,K" for raw float32
    std::string header;  // "", "yes" or "no"
    std::string input_name = "logits";  // --input: what the files' values are (input_kind.hpp)
    input_kind input = input_kind::logits;
    unsigned threads = 0;  // 0 = every core
    bool quiet = false;

    // `with_input`: register --input (calibrate registers its own: it also names an image folder).
    void add_to(CLI::App* app, bool with_input = true);
    // Parses the text options into `read` and `input`; throws mano::error.
    void finish();
    // The classes of a file of `columns` values of this input kind (classes_of, naming --input).
    std::size_t classes(const std::string& path, std::size_t columns) const;
    // A result's looks_like_probabilities said as a warning naming --input, unless --quiet.
    void warn_probabilities(const std::string& path, const result& r) const;
    io::read_options labels_options() const;  // the same, but with the labels' default key
    // A logits (or features) file opened with these options; what its reader left out or took as
    // labels (a CSV's index, id and label columns) is said as warnings unless --quiet.
    std::unique_ptr<io::matrix_reader> open(const std::string& path) const;
};

// How scores are computed (score, eval, calibrate).
struct method_args {
    options opts;
    std::string normalization = "softrun";
    std::vector<std::string> methods;
    std::string source_logits, source_labels;
    std::string label_marginal = "uniform";
    std::string temperature = "1";
    // per-row extra inputs, score only
    std::string second_logits, features, source_features;
    std::vector<CLI::Option*> given;  // every option registered, to tell whether any was used
    CLI::Option* criterion = nullptr;
    double criterion_value = 0;
    // eval and calibrate: --normalization family (their default) chooses MaNo's branch once for
    // all the sets, among softmax and the Taylor orders in `taylor_orders`
    bool family = false;
    std::vector<int> taylor_orders;

    // `batch_flag` names MaNo's official-code batch mode (infer keeps --batch-size for the model);
    // `families` offers --normalization family (the default) and --taylor-orders.
    void add_to(CLI::App* app, bool row_extras, const std::string& batch_flag = "--batch-size", bool families = false);
    bool any_given() const;
    // Validates the plain options; throws mano::error.
    void finish();
    // The calibration at `path` (none when empty), which fixes how scores are computed: refused
    // with scoring options given beside it, else finish() validates them (score, infer).
    std::optional<calibration> calibration_or_finish(const std::string& path);
};

// Running a TorchScript model over images or a tensor (infer, calibrate --synthesize).
struct model_args {
    std::string model;
    std::string input;  // an image folder or an N x C x H x W float32 .npy
    std::string device = "auto";
    std::string amp = "off";
    std::size_t batch_size = 64;
    unsigned workers = 0;  // 0 = every core but one, at least one
    std::size_t resize = 0, crop = 0;
    std::string mean, std;  // "m,m,m", "s,s,s"
    std::vector<CLI::Option*> preprocessing;  // --resize, --crop, --mean, --std, to tell whether any was given

    // `batch_flag` names the model's batch size (--batch-size; calibrate's is MaNo's batch mode);
    // `with_input`: register --input (calibrate registers one --input for both meanings).
    void add_to(CLI::App* app, const std::string& batch_flag, bool with_input = true);
};

// The options for N rows of a file of `columns` values (K classes of the --input kind), resolved
// once per (K, whether COT fits) so that a source set is read and fitted once per run.
class option_resolver {
public:
    option_resolver(const method_args& args, const input_args& input) : args_(args), input_(input) {}
    const options& resolve(std::size_t n, std::size_t columns);

private:
    options build(std::size_t columns, const std::vector<method>& methods) const;
    unsigned given_inputs() const;                   // method_input bits of the inputs given
    static std::string input_flags(unsigned inputs);  // the options that give these inputs
    const method_args& args_;
    const input_args& input_;
    std::map<std::pair<std::size_t, std::vector<method>>, options> cache_;
};

// score --rows "FIRST:END" as [first, end) within a file of `total` rows (all of them when
// `text` is empty); throws mano::error naming `path` when the range is not within the file.
std::pair<std::size_t, std::size_t> parse_rows(const std::string& text, std::size_t total, const std::string& path);

}  // namespace cli
}  // namespace mano

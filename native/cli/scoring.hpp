#pragma once
// What every `mano` subcommand shares: reading options, scoring options resolved per file, and
// the threaded scan of a file's rows into accumulators.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <mano/mano.hpp>

#include "io/reader.hpp"

namespace mano {
namespace cli {

inline constexpr std::uint64_t whole_number_max = 999999999999999999ULL;
// More threads than this only cost memory (each keeps its own accumulator) and thread creation.
inline constexpr std::uint64_t max_threads = 1024;
// 1/n! underflows a double beyond n = 170 (options::validate refuses it too).
inline constexpr std::uint64_t max_taylor_order = 170;

// For unsigned options: the text must be a plain whole number (no sign, no exponent), at least 1
// when `positive`, and at most `most` (below 10^18 by default, so it fits in 64 bits); CLI11
// would otherwise wrap "-1" to 2^64 - 1.
CLI::Validator whole_number(bool positive, std::uint64_t most = whole_number_max);
// For floating-point options: a finite number (not nan, inf or out of a double's range) for which
// `allowed` holds; `range` says which ("> 1", "in (0, 1)", "" for any finite number).
CLI::Validator real_number(const std::string& range, bool (*allowed)(double));


// How input files are read and how much of the machine is used.
struct input_args {
    io::read_options read;
    std::string shape;   // "N,K" for raw float32
    std::string header;  // "", "yes" or "no"
    unsigned threads = 0;  // 0 = every core
    bool quiet = false;

    void add_to(CLI::App* app);
    // Parses the text options into `read`; throws mano::error.
    void finish();
    io::read_options labels_options() const;  // the same, but with the labels' default key
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
};

// The options for logits with K classes and N rows, resolved once per (K, whether COT fits) so
// that a source set is read and fitted once per run.
class option_resolver {
public:
    option_resolver(const method_args& args, const input_args& input) : args_(args), input_(input) {}
    const options& resolve(std::size_t n, std::size_t k);

private:
    options build(std::size_t k, const std::vector<method>& methods) const;
    unsigned given_inputs() const;                   // method_input bits of the inputs given
    static std::string input_flags(unsigned inputs);  // the options that give these inputs
    const method_args& args_;
    const input_args& input_;
    std::map<std::pair<std::size_t, std::vector<method>>, options> cache_;
};

// A progress line on stderr (rows, rows/s, ETA) for work that lasts more than ~2 s, only when
// stderr is a terminal and not --quiet. `unit` names what is counted ("rows", "images").
class progress {
public:
    progress(std::string label, std::size_t total_rows, bool quiet, std::string unit = "rows");
    ~progress();
    void add(std::size_t rows) { done_.fetch_add(rows, std::memory_order_relaxed); }

private:
    void run();
    std::string label_;
    std::size_t total_;
    std::string unit_;
    std::atomic<std::size_t> done_{0};
    bool stop_ = false;
    bool shown_ = false;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::thread thread_;
};

// A logits file and the row-aligned inputs that go with it.
struct scan_inputs {
    io::matrix_reader* logits = nullptr;
    io::matrix_reader* second = nullptr;    // AgreeScore
    io::matrix_reader* features = nullptr;  // Dispersion, Frechet
    const std::vector<std::int64_t>* labels = nullptr;  // true accuracy
};

// Rows [first, end) of the inputs into one accumulator: `threads` accumulators over contiguous
// row ranges (range borders on batch boundaries in batch mode), merged in order.
accumulator scan(const scan_inputs& in, std::size_t first, std::size_t end, const options& opts, unsigned threads,
                 progress* bar);

// One result per consecutive chunk of `chunk_rows` rows of [first, end), chunks spread over threads.
std::vector<result> scan_chunks(const scan_inputs& in, std::size_t first, std::size_t end, std::size_t chunk_rows,
                                const options& opts, unsigned threads, progress* bar);

unsigned thread_count(unsigned requested);

// A mano::error whose message already names the file at fault (a row-aligned input such as
// --features), which file_error passes through instead of naming the logits file.
class input_error : public error {
public:
    using error::error;
};

// "PATH: message" unless the message already starts with the path or is an input_error.
error file_error(const std::string& path, const std::exception& e);

}  // namespace cli
}  // namespace mano

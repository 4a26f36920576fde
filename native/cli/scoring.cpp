#include "cli/scoring.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "io/json.hpp"

namespace mano {
namespace cli {

namespace {

// Bytes of logits read per chunk: memory stays bounded whatever the file size.
constexpr std::size_t chunk_bytes = std::size_t{1} << 22;
// A thread gets at least this many rows; fewer are not worth a thread (and its Gram matrices).
constexpr std::size_t min_rows_per_thread = 4096;
// Threads are capped so that the nuclear norms' Gram matrices stay within this many bytes.
constexpr std::size_t gram_memory_budget = std::size_t{64} << 20;

std::size_t rows_per_read(const io::matrix_reader& reader) {
    const std::size_t row_bytes = std::max<std::size_t>(1, reader.cols() * dtype_size(reader.type()));
    return std::max<std::size_t>(1, chunk_bytes / row_bytes);
}

bool random_access(const scan_inputs& in) {
    return in.logits->random_access() && (!in.second || in.second->random_access()) &&
           (!in.features || in.features->random_access());
}

// One worker's readers: its own clones, so threads never share a file position or buffer.
struct worker_inputs {
    std::unique_ptr<io::matrix_reader> logits, second, features;
    const std::vector<std::int64_t>* labels = nullptr;

    worker_inputs(const scan_inputs& in, bool clone) : labels(in.labels) {
        if (!clone) return;
        logits = in.logits->clone();
        if (in.second) second = in.second->clone();
        if (in.features) features = in.features->clone();
    }
};

// Rows of a row-aligned extra input (--second-logits, --features): a read error names that file.
logits_view read_extra(io::matrix_reader& reader, std::size_t first, std::size_t count) {
    try {
        return reader.read(first, count);
    } catch (const error& e) {
        throw input_error(file_error(reader.path(), e).what());
    }
}

void push_range(const scan_inputs& in, worker_inputs& own, std::size_t first, std::size_t end, accumulator& acc,
                progress* bar) {
    io::matrix_reader& logits = own.logits ? *own.logits : *in.logits;
    io::matrix_reader* second = own.logits ? own.second.get() : in.second;
    io::matrix_reader* features = own.logits ? own.features.get() : in.features;
    const std::size_t step = rows_per_read(logits);
    for (std::size_t row = first; row < end; row += step) {
        const std::size_t count = std::min(step, end - row);
        const logits_view rows = logits.read(row, count);
        row_inputs extra;
        std::optional<logits_view> second_rows, feature_rows;
        if (second) {
            second_rows = read_extra(*second, row, count);
            extra.second = &*second_rows;
        }
        if (features) {
            feature_rows = read_extra(*features, row, count);
            extra.features = &*feature_rows;
        }
        if (own.labels) extra.labels = own.labels->data() + row;
        extra.first_row = row;
        try {
            acc.push(rows, extra);
        } catch (const row_input_error& e) {  // a NaN in the second logits or the features: name that file
            const auto& path = e.which == row_input_error::input::second ? second->path() : features->path();
            throw input_error(path + ": " + e.what());
        }
        if (bar) bar->add(count);
    }
}

// Runs job(t) for t in [0, threads) on threads, rethrowing the first failure.
template <class Job>
void run_threads(unsigned threads, const Job& job) {
    if (threads <= 1) {
        job(0u);
        return;
    }
    std::vector<std::exception_ptr> failures(threads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            try {
                job(t);
            } catch (...) {
                failures[t] = std::current_exception();
            }
        });
    for (auto& th : pool) th.join();
    for (const auto& f : failures)
        if (f) std::rethrow_exception(f);
}

}  // namespace

unsigned thread_count(unsigned requested) {
    if (requested > 0) return requested;
    return std::max(1u, std::thread::hardware_concurrency());
}

error file_error(const std::string& path, const std::exception& e) {
    const std::string message = e.what();
    if (dynamic_cast<const input_error*>(&e) || message.compare(0, path.size(), path) == 0) return error(message);
    return error(path + ": " + message);
}

accumulator scan(const scan_inputs& in, std::size_t first, std::size_t end, const options& opts, unsigned threads,
                 progress* bar) {
    const std::size_t rows = end - first;
    if (!random_access(in)) threads = 1;
    threads = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, rows / min_rows_per_thread)));
    // each accumulator keeps its K x K Gram matrices, plus as many during a push: cap their total
    const std::size_t k = in.logits->cols();
    const std::size_t grams = (opts.wants(method::nuclear) ? 1 : 0) + (opts.wants(method::nuclear_softrun) ? 2 : 0);
    const std::size_t gram_bytes = 2 * grams * k * k * sizeof(double);
    if (gram_bytes > 0) threads = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, gram_memory_budget / gram_bytes)));
    // range borders: multiples of the batch size in batch mode, so merging keeps batches whole
    const std::size_t unit = opts.batch_size > 0 ? static_cast<std::size_t>(opts.batch_size) : 1;
    std::vector<std::size_t> borders{first};
    for (unsigned t = 1; t < threads; ++t) {
        const std::size_t at = first + (rows * t / threads) / unit * unit;
        if (at > borders.back() && at < end) borders.push_back(at);
    }
    borders.push_back(end);
    const unsigned parts = static_cast<unsigned>(borders.size() - 1);
    std::vector<std::optional<accumulator>> accs(parts);
    run_threads(parts, [&](unsigned t) {
        worker_inputs own(in, parts > 1);
        accs[t].emplace(in.logits->cols(), opts);
        push_range(in, own, borders[t], borders[t + 1], *accs[t], bar);
    });
    accumulator total = std::move(*accs[0]);
    for (unsigned t = 1; t < parts; ++t) total.merge(*accs[t]);
    return total;
}

std::vector<result> scan_chunks(const scan_inputs& in, std::size_t first, std::size_t end, std::size_t chunk_rows,
                                const options& opts, unsigned threads, progress* bar) {
    const std::size_t chunks = (end - first + chunk_rows - 1) / chunk_rows;
    std::vector<result> results(chunks);
    if (!random_access(in)) threads = 1;
    threads = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, chunks)));
    std::atomic<std::size_t> next{0};
    run_threads(threads, [&](unsigned) {
        worker_inputs own(in, threads > 1);
        for (std::size_t c = next++; c < chunks; c = next++) {
            const std::size_t a = first + c * chunk_rows, b = std::min(end, a + chunk_rows);
            accumulator acc(in.logits->cols(), opts);
            push_range(in, own, a, b, acc, bar);
            results[c] = acc.finalize();
        }
    });
    return results;
}

// ---- options --------------------------------------------------------------------------------

void input_args::add_to(CLI::App* app) {
    app->add_option("--key", read.key, "the array to read from an .npz or .safetensors file with several (default: logits)");
    app->add_option("--shape", shape, "N,K: read files of unknown format as raw little-endian float32 of this shape");
    app->add_option("--label-column", read.label_column, "CSV/TSV: the label column (header name or 0-based index); "
                                                         "it is not a logit");
    app->add_option("--header", header, "CSV/TSV: whether the first line is a header (default: detect)")
        ->check(CLI::IsMember({"yes", "no"}));
    app->add_option("--threads", threads, "threads (default: every core)")->check(whole_number(false, max_threads));
    app->add_flag("--quiet", quiet, "no progress line on stderr");
}

void input_args::finish() {
    if (!shape.empty()) {
        std::size_t n = 0, k = 0, used = 0;
        const auto comma = shape.find(',');
        bool ok = comma != std::string::npos;
        try {
            if (ok) {
                n = std::stoull(shape.substr(0, comma), &used);
                ok = used == comma;
                const std::string rest = shape.substr(comma + 1);
                k = std::stoull(rest, &used);
                ok = ok && used == rest.size() && shape[0] != '-' && rest[0] != '-';
            }
        } catch (const std::exception&) {
            ok = false;
        }
        if (!ok || n == 0 || k == 0)
            throw error("--shape must be N,K with two positive integers (rows, classes), e.g. --shape 10000,1000; got '" +
                        shape + "'");
        read.shape = std::make_pair(n, k);
    }
    if (!header.empty()) read.header = header == "yes";
}

io::read_options input_args::labels_options() const {
    io::read_options o = read;
    o.key.clear();  // a --key names the logits; labels in a container are the member "labels"
    o.shape.reset();
    return o;
}

CLI::Validator whole_number(bool positive, std::uint64_t most) {
    const std::uint64_t least = positive ? 1 : 0;
    return CLI::Validator(
        [least, most](std::string& text) -> std::string {
            const bool digits = !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string::npos;
            if (digits) {
                const std::uint64_t value = std::stoull(text);
                if (value >= least && value <= most) return "";
            }
            const std::string range = most == whole_number_max
                                          ? ">= " + std::to_string(least) + " below 10^18"
                                          : ">= " + std::to_string(least) + " and <= " + std::to_string(most);
            return "must be a whole number " + range + " (got '" + text + "')";
        },
        most == whole_number_max ? "INT>=" + std::to_string(least)
                                 : "INT in [" + std::to_string(least) + ", " + std::to_string(most) + "]");
}

CLI::Validator real_number(const std::string& range, bool (*allowed)(double)) {
    return CLI::Validator(
        [range, allowed](std::string& text) -> std::string {
            errno = 0;
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            const bool parsed = !text.empty() && end == text.c_str() + text.size() && errno != ERANGE;
            if (parsed && std::isfinite(value) && allowed(value)) return "";
            return "must be a finite number" + (range.empty() ? "" : " " + range) + " (got '" + text + "')";
        },
        range.empty() ? "FLOAT" : "FLOAT " + range);
}

void method_args::add_to(CLI::App* app, bool row_extras, const std::string& batch_flag, bool families) {
    const auto keep = [&](CLI::Option* o) {
        given.push_back(o);
        return o;
    };
    keep(app->add_option("--p", opts.p, "the L_p norm, p > 1")
             ->capture_default_str()
             ->check(real_number("> 1", [](double x) { return x > 1; })));
    keep(app->add_option("--eta", opts.eta, "softrun threshold: softmax when the criterion > eta")
             ->capture_default_str()
             ->check(real_number("", [](double) { return true; })));
    keep(app->add_option("--taylor-order", opts.taylor_order, "order n >= 1 of the Taylor normalization")
             ->capture_default_str()
             ->check(whole_number(true, max_taylor_order)));
    if (families) {
        normalization = "family";
        taylor_orders = {2};
        keep(app->add_option("--normalization", normalization,
                             "family (one branch for all sets: softmax or Taylor, chosen by leave-one-group-out error) | "
                             "softrun (each set's own criterion, the paper's literal rule) | softmax | taylor")
                 ->capture_default_str()
                 ->check(CLI::IsMember({"family", "softrun", "softmax", "taylor"})));
        keep(app->add_option("--taylor-orders", taylor_orders,
                             "with --normalization family: the Taylor orders to choose among (comma-separated)")
                 ->delimiter(',')
                 ->capture_default_str()
                 ->check(whole_number(true, max_taylor_order)));
    } else {
        keep(app->add_option("--normalization", normalization, "softrun | softmax | taylor")
                 ->capture_default_str()
                 ->check(CLI::IsMember({"softrun", "softmax", "taylor"})));
    }
    keep(app->add_option(batch_flag, opts.batch_size,
                         "official-code mode: average the scores of batches of B rows (0 = whole set)")
             ->capture_default_str()
             ->check(whole_number(false)));
    criterion = keep(app->add_option("--criterion", criterion_value,
                                     "official-code mode: use this criterion instead of computing it")
                         ->check(real_number("", [](double) { return true; })));
    keep(app->add_option("--methods", methods,
                         "comma-separated methods (default: every method whose inputs were given, within its size limits; "
                         "`mano methods` lists them)")
             ->delimiter(','));
    keep(app->add_option("--source-logits", source_logits, "labeled source validation logits: ATC, DoC, temperature"));
    keep(app->add_option("--source-labels", source_labels, "integer labels of the source logits"));
    keep(app->add_option("--label-marginal", label_marginal,
                         "COT's label marginal: uniform, source (class frequencies of the source labels) or a JSON "
                         "file with K numbers")
             ->capture_default_str());
    keep(app->add_option("--temperature", temperature,
                         "temperature for the softmax-based baselines: a number, or fit (on the source set)")
             ->capture_default_str());
    keep(app->add_option("--arch", opts.architecture, "force a SIMD kernel (" + [] {
        std::string s;
        for (const auto& a : available_architectures()) s += (s.empty() ? "" : ", ") + a;
        return s;
    }() + "); default: MANO_ARCH or the best available"));
    if (!row_extras) return;
    keep(app->add_option("--second-logits", second_logits, "a second model's logits on the same inputs: AgreeScore"));
    keep(app->add_option("--features", features, "penultimate features of the same inputs (N x D): Dispersion, Frechet"));
    keep(app->add_option("--source-features", source_features, "penultimate features of the source set: Frechet"));
}

bool method_args::any_given() const {
    return std::any_of(given.begin(), given.end(), [](const CLI::Option* o) { return o->count() > 0; });
}

void method_args::finish() {
    family = normalization == "family";
    opts.norm = parse_normalization(family ? "softrun" : normalization);
    if (family && criterion && criterion->count() > 0)
        throw error("--criterion fixes the softrun branch; give it with --normalization softrun, not family");
    if (criterion && criterion->count() > 0) opts.criterion = criterion_value;
    opts.validate();
    if (source_logits.empty() != source_labels.empty()) throw error("--source-logits and --source-labels go together");
    if (temperature != "fit") {
        std::size_t used = 0;
        try {
            opts.temperature = std::stod(temperature, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != temperature.size() || !std::isfinite(opts.temperature) || !(opts.temperature > 0))
            throw error("--temperature: must be 'fit' or a finite number > 0 (got '" + temperature + "')");
    } else if (source_logits.empty()) {
        throw error("--temperature fit needs --source-logits and --source-labels");
    }
    for (const auto& name : methods) parse_method(name);
}

namespace {

std::vector<double> read_marginal(const std::string& spec, std::size_t k, const std::vector<std::int64_t>& source_labels) {
    if (spec == "uniform") return {};
    if (spec == "source") {
        if (source_labels.empty()) throw error("--label-marginal source needs --source-logits and --source-labels");
        std::vector<double> counts(k, 0.0);
        for (const auto label : source_labels) {
            if (label < 0 || static_cast<std::size_t>(label) >= k)
                throw error("--source-labels: label " + std::to_string(label) + " is outside [0, " + std::to_string(k) + ")");
            counts[static_cast<std::size_t>(label)] += 1;
        }
        for (auto& c : counts) c /= static_cast<double>(source_labels.size());
        return counts;
    }
    std::error_code ec;
    if (!std::filesystem::exists(spec, ec))
        throw error("--label-marginal: '" + spec + "' is not uniform, source, or a readable JSON file");
    const nlohmann::json j = io::read_json(spec, "label marginal", io::marginal_max_bytes);
    std::vector<double> marginal;
    try {
        marginal = j.get<std::vector<double>>();
    } catch (const nlohmann::json::exception&) {
        throw error(spec + ": the label marginal must be a JSON array of K numbers summing to 1");
    }
    if (marginal.size() != k)
        throw error(spec + ": the label marginal has " + std::to_string(marginal.size()) + " entries but the logits have " +
                    std::to_string(k) + " classes");
    return marginal;
}

// A whole (small) matrix in doubles, e.g. the source logits.
std::vector<double> read_all(io::matrix_reader& reader) {
    std::vector<double> out(reader.rows() * reader.cols());
    if (reader.rows() == 0) return out;
    const auto rows = reader.read(0, reader.rows());
    widen_rows(rows, 0, rows.rows(), out.data());
    return out;
}

}  // namespace

const options& option_resolver::resolve(std::size_t n, std::size_t k) {
    // The methods asked for by name, or the table's defaults for this set's size and inputs.
    std::vector<method> methods;
    if (args_.methods.empty()) {
        methods = default_methods(k, n, given_inputs());
    } else {
        for (const auto& name : args_.methods) {
            const auto m = parse_method(name);
            if (const unsigned missing = info_of(m).needs & ~given_inputs())
                throw error("--methods " + name + " needs " + input_flags(missing));
            methods.push_back(m);
        }
    }
    const auto key = std::make_pair(k, methods);
    auto found = cache_.find(key);
    if (found == cache_.end()) found = cache_.emplace(key, build(k, methods)).first;
    return found->second;
}

unsigned option_resolver::given_inputs() const {
    return (args_.source_logits.empty() ? 0u : needs_source) | (args_.second_logits.empty() ? 0u : needs_second) |
           (args_.features.empty() ? 0u : needs_features) | (args_.source_features.empty() ? 0u : needs_source_features);
}

std::string option_resolver::input_flags(unsigned inputs) {
    std::vector<std::string> flags;
    if (inputs & needs_source) flags.emplace_back("--source-logits and --source-labels");
    if (inputs & needs_second) flags.emplace_back("--second-logits");
    if (inputs & needs_features) flags.emplace_back("--features");
    if (inputs & needs_source_features) flags.emplace_back("--source-features");
    std::string text;
    for (std::size_t i = 0; i < flags.size(); ++i) text += (i == 0 ? "" : i + 1 == flags.size() ? " and " : ", ") + flags[i];
    return text;
}

options option_resolver::build(std::size_t k, const std::vector<method>& methods) const {
    options o = args_.opts;
    const bool has_source = !args_.source_logits.empty();
    std::vector<std::int64_t> labels;
    std::vector<double> source;
    std::size_t source_rows = 0;
    if (has_source) {
        auto reader = io::open_matrix(args_.source_logits, input_.read);
        if (reader->cols() != k)
            throw error(args_.source_logits + ": the source logits have " + std::to_string(reader->cols()) +
                        " classes but the target logits have " + std::to_string(k));
        source_rows = reader->rows();
        source = read_all(*reader);
        auto label_options = input_.labels_options();
        label_options.expected_rows = source_rows;  // refused before a deflated member is inflated
        labels = io::read_labels(args_.source_labels, label_options);
        if (labels.size() != source_rows)
            throw error(args_.source_labels + ": " + std::to_string(labels.size()) + " labels for " +
                        std::to_string(source_rows) + " source rows in " + args_.source_logits);
    }
    const logits_view source_view(source.data(), source_rows, k);
    try {
        if (args_.temperature == "fit") o.temperature = fit_temperature(source_view, labels.data());
        if (has_source) o.source = fit_source(source_view, labels.data(), o.temperature);
    } catch (const error& e) {
        throw file_error(args_.source_logits, e);
    }
    o.label_marginal = read_marginal(args_.label_marginal, k, labels);
    if (!args_.source_features.empty()) {
        auto reader = io::open_matrix(args_.source_features, input_.read);
        auto moments = std::make_shared<feature_moments>(reader->cols());
        try {
            // in chunks of about 4 MiB of doubles: the moments are sums, a file of any size streams
            const std::size_t cols = reader->cols(), chunk = std::max<std::size_t>(1, (std::size_t{1} << 19) / cols);
            std::vector<double> rows;
            for (std::size_t at = 0; at < reader->rows(); at += chunk) {
                const std::size_t count = std::min(chunk, reader->rows() - at);
                const auto view = reader->read(at, count);
                rows.resize(count * cols);
                widen_rows(view, 0, count, rows.data());
                moments->push(rows.data(), count);
            }
        } catch (const error& e) {
            throw file_error(args_.source_features, e);
        }
        o.source_features = moments;
    }

    o.methods = methods;
    return o;
}

// ---- progress -------------------------------------------------------------------------------

progress::progress(std::string label, std::size_t total_rows, bool quiet, std::string unit)
    : label_(printable(label)), total_(total_rows), unit_(std::move(unit)) {
    if (!quiet && isatty(STDERR_FILENO)) thread_ = std::thread([this] { run(); });
}

progress::~progress() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void progress::run() {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    // nothing for the first two seconds: short work stays quiet
    if (wake_.wait_for(lock, std::chrono::seconds(2), [this] { return stop_; })) return;
    do {
        const double seconds = std::chrono::duration<double>(clock::now() - start).count();
        const std::size_t done = done_.load(std::memory_order_relaxed);
        const double rate = done / std::max(seconds, 1e-9);
        const double eta = rate > 0 && total_ > done ? (total_ - done) / rate : 0;
        std::fprintf(stderr, "\r\033[Kmano: %s  %zu / %zu %s (%.0f%%)  %.3g %s/s  ETA %.0f s", label_.c_str(), done,
                     total_, unit_.c_str(), total_ ? 100.0 * done / total_ : 100.0, rate, unit_.c_str(), eta);
        std::fflush(stderr);
        shown_ = true;
    } while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; }));
    if (shown_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace cli
}  // namespace mano

#include "host/scan.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include <unistd.h>

namespace mano {
namespace host {

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

result scan_rows(io::matrix_reader& reader, const std::vector<std::uint64_t>& rows, const std::vector<std::int64_t>& labels,
                 const options& opts) {
    const std::size_t k = reader.cols(), n = rows.size();
    // each distinct row read once, in file order; then laid out in the order asked
    std::vector<std::uint64_t> distinct = rows;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const bool wide = reader.type() == dtype::float64;
    const std::size_t bytes = wide ? sizeof(double) : sizeof(float);
    std::vector<unsigned char> read(distinct.size() * k * bytes), laid(n * k * bytes);
    try {
        io::read_rows(reader, distinct, read.data());
        for (std::size_t i = 0; i < n; ++i) {
            const auto at = static_cast<std::size_t>(std::lower_bound(distinct.begin(), distinct.end(), rows[i]) - distinct.begin());
            std::copy_n(read.data() + at * k * bytes, k * bytes, laid.data() + i * k * bytes);
        }
        accumulator acc(classes_of(opts.input, k), opts);
        row_inputs in;
        if (!labels.empty()) in.labels = labels.data();
        acc.push(wide ? logits_view(reinterpret_cast<const double*>(laid.data()), n, k)
                      : logits_view(reinterpret_cast<const float*>(laid.data()), n, k),
                 in);
        return acc.finalize();
    } catch (const error& e) {
        throw file_error(reader.path(), e);
    }
}

// A parallel_for over `threads` threads: each takes the next task until none is left.
parallel_for thread_runner(unsigned threads) {
    if (threads <= 1) return run_in_order;
    return [threads](std::size_t count, const std::function<void(std::size_t)>& task) {
        std::atomic<std::size_t> next{0};
        run_threads(static_cast<unsigned>(std::min<std::size_t>(threads, count)), [&](unsigned) {
            for (std::size_t t = next++; t < count; t = next++) task(t);
        });
    };
}

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
    const std::size_t k = classes_of(opts.input, in.logits->cols());
    std::size_t grams = 0;
    for (const auto& m : method_table)
        if (m.gram_matrices && opts.wants(m.id)) grams += m.gram_matrices;
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
        accs[t].emplace(k, opts);
        push_range(in, own, borders[t], borders[t + 1], *accs[t], bar);
    });
    accumulator total = std::move(*accs[0]);
    for (unsigned t = 1; t < parts; ++t) total.merge(*accs[t]);
    // finalize's passes over kept rows (MLLS's EM) run on as many threads as the scan did
    total.set_parallel(thread_runner(parts));
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
            accumulator acc(classes_of(opts.input, in.logits->cols()), opts);
            push_range(in, own, a, b, acc, bar);
            results[c] = acc.finalize();
        }
    });
    return results;
}

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

}  // namespace host
}  // namespace mano

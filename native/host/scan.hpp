#pragma once
// The threaded scan of a file's rows into accumulators, the progress line it shows, and the
// errors that name the file at fault.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <mano/mano.hpp>

#include "io/reader.hpp"

namespace mano {
namespace host {

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

// A parallel_for over `threads` threads (1: in order): each takes the next task until none is left.
parallel_for thread_runner(unsigned threads);

// A logits file and the row-aligned inputs that go with it.
struct scan_inputs {
    io::matrix_reader* logits = nullptr;
    io::matrix_reader* second = nullptr;    // AgreeScore
    io::matrix_reader* features = nullptr;  // Dispersion, Frechet
    const std::vector<std::int64_t>* labels = nullptr;  // true accuracy
};

// Rows [first, end) of the inputs into one accumulator: `threads` accumulators over contiguous
// row ranges (range borders on batch boundaries in batch mode), merged in order. The logits file's
// columns are values of opts.input's kind (K = classes_of(opts.input, columns)).
accumulator scan(const scan_inputs& in, std::size_t first, std::size_t end, const options& opts, unsigned threads,
                 progress* bar);

// One result per consecutive chunk of `chunk_rows` rows of [first, end), chunks spread over threads.
std::vector<result> scan_chunks(const scan_inputs& in, std::size_t first, std::size_t end, std::size_t chunk_rows,
                                const options& opts, unsigned threads, progress* bar);

unsigned thread_count(unsigned requested);

// Rows of `reader` in any order, repeats allowed (an audit's rows, a label-shifted copy's), with
// their labels (one per row, or none), pushed in that order through one accumulator with `opts`
// and read as a scan reads them (float64 files as double, every other type as float: the same
// confidences); errors name the file.
result scan_rows(io::matrix_reader& reader, const std::vector<std::uint64_t>& rows, const std::vector<std::int64_t>& labels,
                 const options& opts);

// A mano::error whose message already names the file at fault (a row-aligned input such as
// --features), which file_error passes through instead of naming the logits file.
class input_error : public error {
public:
    using error::error;
};

// "PATH: message" unless the message already starts with the path or is an input_error.
error file_error(const std::string& path, const std::exception& e);

}  // namespace host
}  // namespace mano

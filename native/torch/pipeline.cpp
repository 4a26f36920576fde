#include "pipeline.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace mano {
namespace inference {

std::size_t sample_source::sample_size() const {
    std::size_t size = 1;
    for (const auto extent : shape) size *= extent;
    return size;
}

namespace {

// Batches b = 0, 1, ... are filled by workers into slot b % slots; a worker may start batch b
// only once the model is done with batch b - slots.
class batch_queue {
public:
    batch_queue(std::size_t batches, std::size_t slots) : batches_(batches), slots_(slots), ready_(slots, npos) {}

    // The next batch to fill and its slot, or false when there is none (or the run stopped).
    bool claim(std::size_t& batch) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (failed_ || next_ >= batches_) return false;
        batch = next_++;
        changed_.wait(lock, [&] { return failed_ || batch < released_ + slots_; });
        return !failed_;
    }
    void filled(std::size_t batch) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ready_[batch % slots_] = batch;
        }
        changed_.notify_all();
    }
    void fail(std::exception_ptr e) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!failed_) error_ = e;
            failed_ = true;
        }
        changed_.notify_all();
    }
    // Waits for `batch` (the consumer's next); rethrows a worker's failure.
    void wait(std::size_t batch) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return failed_ || ready_[batch % slots_] == batch; });
        if (failed_) std::rethrow_exception(error_);
    }
    void release(std::size_t batch) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            released_ = batch + 1;
        }
        changed_.notify_all();
    }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    std::size_t batches_, slots_;
    std::size_t next_ = 0, released_ = 0;
    std::vector<std::size_t> ready_;
    bool failed_ = false;
    std::exception_ptr error_;
    std::mutex mutex_;
    std::condition_variable changed_;
};

}  // namespace

void run_batches(model& net, const sample_source& source, std::size_t batch_size, unsigned workers,
                 const logits_sink& sink) {
    const std::size_t sample = source.sample_size();
    const std::size_t batches = (source.count + batch_size - 1) / batch_size;
    workers = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(workers, batches)));
    const std::size_t slots = workers + 1;  // one for the model, one being filled per worker
    const auto buffers = net.host_buffers(slots, batch_size * sample);
    batch_queue queue(batches, slots);
    const auto rows_of = [&](std::size_t b) { return std::min(batch_size, source.count - b * batch_size); };

    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w)
        pool.emplace_back([&] {
            try {
                for (std::size_t b = 0; queue.claim(b);) {
                    float* out = buffers[b % slots];
                    for (std::size_t i = 0; i < rows_of(b); ++i) source.fill(b * batch_size + i, out + i * sample);
                    queue.filled(b);
                }
            } catch (...) {
                queue.fail(std::current_exception());
            }
        });
    try {
        for (std::size_t b = 0; b < batches; ++b) {
            queue.wait(b);
            std::size_t k = 0;
            const float* logits = net.forward(buffers[b % slots], rows_of(b), source.shape, source.name, k);
            sink(logits, b * batch_size, rows_of(b), k);
            queue.release(b);
        }
    } catch (...) {
        queue.fail(std::current_exception());
        for (auto& t : pool) t.join();
        throw;
    }
    for (auto& t : pool) t.join();
}

}  // namespace inference
}  // namespace mano

#pragma once
// Samples prepared on worker threads ahead of the model, in batches, handed to the model in
// order; the logits of each batch go to a sink as soon as they exist, so nothing keeps them.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "model.hpp"

namespace mano {
namespace inference {

// What goes through the model: `count` samples of `shape` each (e.g. 3 x 224 x 224).
struct sample_source {
    std::string name;  // the input, for messages
    std::size_t count = 0;
    std::vector<std::size_t> shape;
    // Writes sample `index` (the product of `shape` floats) at `out`; called on worker threads,
    // so it must be safe to call concurrently for different indices.
    std::function<void(std::size_t index, float* out)> fill;

    std::size_t sample_size() const;
};

// `rows` logits rows of `k` classes, for samples [first, first + rows).
using logits_sink = std::function<void(const float* logits, std::size_t first, std::size_t rows, std::size_t k)>;

// Runs every sample of `source` through `net` in batches of `batch_size`, prepared by `workers`
// threads while the model runs; calls `sink` for each batch in order, on the calling thread.
// A worker's error (an undecodable image) stops the run and is rethrown here.
void run_batches(model& net, const sample_source& source, std::size_t batch_size, unsigned workers,
                 const logits_sink& sink);

}  // namespace inference
}  // namespace mano

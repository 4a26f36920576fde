#pragma once
// How the core runs independent tasks at once without starting threads of its own: whoever owns
// the threads (native/host/scan.cpp) hands it a parallel_for; without one, tasks run in order.

#include <cstddef>
#include <functional>

namespace mano {

// Runs task(t) for every t in [0, count), possibly several at once, and returns when all have
// run; the first exception a task throws is rethrown. Tasks write only to their own outputs, so
// every result is the same whichever threads ran them.
using parallel_for = std::function<void(std::size_t count, const std::function<void(std::size_t)>& task)>;

inline void run_in_order(std::size_t count, const std::function<void(std::size_t)>& task) {
    for (std::size_t t = 0; t < count; ++t) task(t);
}

}  // namespace mano

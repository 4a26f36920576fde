#pragma once
// COT's transport problem solved by successive shortest paths over the classes
// (src/mano/shift/transport.cpp uses it for K <= keeps_rows_max_k, src/mano/scan/registry.hpp).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mano {
namespace detail {

struct class_flow {
    std::size_t row, cls;
    std::int64_t mass;
};

// The optimal transport from k classes (integer supplies, summing to n * demand) to n rows
// (`demand` units each) at cost[i * k + c] per unit from class c to row i: its arcs of positive
// mass. Exact (to the rounding of the costs' sums), in time O(A (k^2 + L k log n)) for A
// augmenting paths of L classes: A is n when every supply is a whole number of rows, and the
// data cannot make it slow, unlike the network simplex, which stalls for minutes on rows
// with much structure and few classes. Memory: about 32 bytes per row-class pair.
std::vector<class_flow> class_paths_plan(const std::vector<double>& cost, std::size_t n, std::size_t k,
                                         std::vector<std::int64_t> supply, std::int64_t demand);

}  // namespace detail
}  // namespace mano

#pragma once

#include <cstddef>
#include <vector>

#include "mano/base/parallel.hpp"
#include "mano/shift/row_blocks.hpp"

namespace mano {

namespace detail {
struct shift_kernels;  // private to the core (kernel/kernel.hpp): an installed header names it only
}  // namespace detail

// COT's estimated error (Lu et al., "Characterizing Out-of-Distribution Error via Optimal
// Transport"): the exact optimal transport cost between the label marginal (mass marginal[c] on
// the one-hot vector e_c) and the N rows of `probs` (mass 1/N each) under the cost
// ||e_c - p_i||_1 / 2 = 1 - p_ic. `probs` is N x K, row-major, softmax rows; `marginal` has K
// non-negative masses summing to 1. Equals POT's ot.emd2(marginal, 1/N, 1 - P^T) to 1e-9.
// Exact network simplex on the dense K x N graph: memory is about 90 bytes per row-class pair.
double transport_cost(const double* probs, std::size_t n, std::size_t k, const std::vector<double>& marginal);

// One arc of an optimal plan: `mass` (of the total 1) moves from class `cls` to row `row`, at the
// cost 1 - probs[row][cls] per unit.
struct transport_flow {
    std::size_t row;
    std::size_t cls;
    double mass;
    double cost;
};

// An optimal plan of transport_cost's problem (its arcs of positive mass, at most N + K - 1 of
// them): what COTT thresholds. Where N * marginal[c] is a whole number for every class (the
// label frequencies of N rows, or a uniform marginal with K dividing N) the masses are exact and
// every row goes to one class whole.
std::vector<transport_flow> transport_plan(const double* probs, std::size_t n, std::size_t k,
                                           const std::vector<double>& marginal);

// The same problems on the rows an estimator keeps (float, in blocks; estimators/estimator.hpp):
// up to keeps_rows_max_k classes of positive mass by successive shortest paths, beyond by an
// epsilon-scaling auction on the K class prices (detail/auction.hpp), whose plan the dual
// certifies within transport_gap of the optimal cost (else it throws): O(N + K) memory besides
// the rows, one kernel pass over a row per bid.
// Rows on which the auction runs out of bids (detail/auction.hpp) go to the network simplex
// instead, up to this many row-class pairs (about 90 bytes each), and are refused beyond.
inline constexpr double transport_gap = 1e-9;
inline constexpr std::size_t auction_fallback_max_pairs = 8'000'000;
std::vector<transport_flow> transport_plan(const row_blocks& rows, std::size_t k, const std::vector<double>& marginal,
                                           const detail::shift_kernels& kernels, const parallel_for& parallel = run_in_order);
double transport_cost(const row_blocks& rows, std::size_t k, const std::vector<double>& marginal,
                      const detail::shift_kernels& kernels, const parallel_for& parallel = run_in_order);

}  // namespace mano

#pragma once

#include <cstddef>
#include <vector>

namespace mano {

// COT's estimated error (Lu et al., "Characterizing Out-of-Distribution Error via Optimal
// Transport"): the exact optimal transport cost between the label marginal (mass marginal[c] on
// the one-hot vector e_c) and the N rows of `probs` (mass 1/N each) under the cost
// ||e_c - p_i||_1 / 2 = 1 - p_ic. `probs` is N x K, row-major, softmax rows; `marginal` has K
// non-negative masses summing to 1. Equals POT's ot.emd2(marginal, 1/N, 1 - P^T) to 1e-9.
// Exact network simplex on the dense K x N graph: memory is about 90 bytes per row-class pair.
double transport_cost(const double* probs, std::size_t n, std::size_t k, const std::vector<double>& marginal);

}  // namespace mano

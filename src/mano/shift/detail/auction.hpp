#pragma once
// COT's transport problem by an epsilon-scaling auction over the K class prices
// (src/mano/shift/transport.cpp uses it beyond keeps_rows_max_k classes, src/mano/scan/registry.hpp).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mano/base/parallel.hpp"
#include "mano/kernel/kernel.hpp"

namespace mano {
namespace detail {

struct auction_flow {
    std::size_t row, cls;
    std::int64_t units;
};

struct auction_plan {
    std::vector<auction_flow> flows;  // the arcs of positive mass
    double cost = 0;                  // (1 / total units) sum of units x (1 - p_ic)
    double gap = 0;                   // cost - the dual value of the final prices: the plan is
                                      // within `gap` of the optimum (weak duality)
    bool finished = true;             // false: the auction ran out of bids (no plan)
};

// The optimal transport from k classes (integer supplies `supply`, summing to n * demand; a class
// of supply 0 takes nothing) to n rows (`demand` units each) at cost 1 - rows[i][c] per unit from
// class c to row i, to within `tolerance` of the optimal cost per unit, certified by the dual.
// Rows may come from several blocks: rows[i] points at row i's k floats. Memory O(n + k) besides
// the rows (24 candidate classes a row); time a look at a row's candidates per bid, or where they
// no longer hold its best class, a kernel pass over the row that chooses them anew; those of many
// waiting rows at once (`parallel`), with the same plan whatever the threads. At most about 400 bids a row: beyond,
// it returns an unfinished plan (rows with many exact ties can make it trade small parts of rows
// for ever).
auction_plan auction_transport(const std::vector<const float*>& rows, std::size_t k, const std::vector<std::int64_t>& supply,
                               std::int64_t demand, const shift_kernels& kernels, double tolerance,
                               const parallel_for& parallel = run_in_order);

}  // namespace detail
}  // namespace mano

#pragma once
// Rows kept as float in blocks, as the estimators that keep every row hold them
// (estimators/estimator.hpp, row_store): what MLLS's EM (prior_em.hpp) and COT's transport
// (transport.hpp) read.

#include <cstddef>
#include <vector>

namespace mano {

struct row_block {
    const float* rows;  // count x K, row-major
    std::size_t count;
};
using row_blocks = std::vector<row_block>;

inline std::size_t rows_in(const row_blocks& blocks) {
    std::size_t n = 0;
    for (const auto& b : blocks) n += b.count;
    return n;
}

}  // namespace mano

#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/kernel/kernel.hpp"

namespace mano {
namespace detail {

// What a nuclear norm ||P||_* of N x K probability rows needs, streamed: while the set has at
// most K rows, the rows themselves; beyond, the Gram matrix P^T P (K x K, lower triangle). The
// nuclear norm is the sum of the square roots of the eigenvalues of P P^T (N x N) or of P^T P
// (they share their nonzero ones), so a set of N < K rows costs O(N^2 K + N^3), not O(K^3), and
// holds N x K numbers, not K x K.
class gram_sum {
public:
    gram_sum() = default;
    gram_sum(std::size_t k, gram_kernel kernel) : k_(k), kernel_(kernel) {}

    std::size_t rows() const noexcept { return rows_; }
    // Keep the Gram matrix from now on (for a part that will be added to more than K rows:
    // keeping its rows first would only hold both for a while).
    // `buffer`: storage to reuse (its values do not matter).
    void use_gram(std::vector<double> buffer = {}) { to_gram(std::move(buffer)); }
    // Gives the Gram matrix's storage away (this sum is unusable after).
    std::vector<double> take_gram() { return std::move(gram_); }
    void add(const double* rows, std::size_t count);
    void add(const gram_sum& other);
    // ||P||_* / sqrt(n min(n, K)) for the n rows added
    double nuclear(std::size_t n) const;

    nlohmann::json to_json() const;  // {"rows": N x K values} or {"gram": K x K values}
    // Checks the sizes against k and n, the values' ranges and that the rows were probability
    // rows (each sums to 1; with `zero_rows`, a row of zeros too: a softrun branch's rows where it
    // was not computed); throws mano::error starting with `what` (a prefix naming where j is).
    static gram_sum from_json(const nlohmann::json& j, std::size_t k, std::size_t n, const std::string& what,
                              gram_kernel kernel, bool zero_rows = false);

private:
    void to_gram(std::vector<double> buffer = {});

    std::size_t k_ = 0;
    gram_kernel kernel_ = nullptr;  // the architecture's Gram update (kernel/kernel.hpp)
    std::size_t rows_ = 0;      // rows added
    std::vector<double> kept_;  // the rows, rows_ x k_, while rows_ <= k_ (and no Gram yet)
    std::vector<double> gram_;  // k_ x k_, lower triangle; empty while the rows are kept
};

}  // namespace detail
}  // namespace mano

#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/logits_view.hpp"
#include "mano/options.hpp"
#include "mano/result.hpp"

namespace mano {

namespace detail {
struct kernel_params;
struct row_stats;
using row_kernel = void (*)(const double* rows, std::size_t count, std::size_t k,
                            const kernel_params& params, float* scratch, row_stats* out);
}  // namespace detail

// Streaming MaNo: push row chunks in order, merge partial states (threads, shards, workers),
// serialize the state to JSON, and finalize into a result. Memory is O(K); nothing holds the
// N x K matrix. push() is all-or-nothing: on an error the state is left as it was.
class accumulator {
public:
    accumulator(std::size_t k, const options& opts = {});
    ~accumulator();
    accumulator(const accumulator&);
    accumulator& operator=(const accumulator&);
    accumulator(accumulator&&) noexcept;
    accumulator& operator=(accumulator&&) noexcept;

    void push(const logits_view& rows);
    // Appends `other`'s rows after this one's (same K and options required).
    void merge(const accumulator& other);
    result finalize() const;

    nlohmann::json to_json() const;
    static accumulator from_json(const nlohmann::json& state);

    std::size_t rows() const noexcept { return state_.n; }
    std::size_t cols() const noexcept { return k_; }
    const options& opts() const noexcept { return opts_; }
    const std::string& architecture() const noexcept { return arch_; }

private:
    // Sums over rows for both normalization branches, so the branch can be chosen at finalize.
    struct branch_sums {
        double softmax = 0;  // sum_i sum_k p_ik^p
        double taylor = 0;   // sum_i sum_k sigma_ik^p
    };
    struct state {
        std::size_t n = 0;
        double phi_sum = 0;  // sum_i (LSE_i - mean_k q_ik)
        branch_sums sums;
        // first row whose Taylor values overflow double (-1: none); an error only if Taylor is used
        std::int64_t taylor_overflow_row = -1;
        // batch mode: scores of completed batches and the sums of the batch being filled
        branch_sums batch_scores;
        std::size_t batches = 0;
        std::size_t batch_rows = 0;
        branch_sums batch_sums;
    };

    double batch_score(double sum, std::size_t rows) const;

    std::size_t k_;
    options opts_;
    std::string arch_;
    std::unique_ptr<detail::kernel_params> params_;
    detail::row_kernel kernel_;
    state state_;
    std::vector<double> widened_;
    std::vector<float> scratch_;
};

// The common case: score all rows of `logits` at once.
result score(const logits_view& logits, const options& opts = {});

}  // namespace mano

#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/error.hpp"
#include "mano/gram.hpp"
#include "mano/logits_view.hpp"
#include "mano/options.hpp"
#include "mano/result.hpp"

namespace mano {

namespace detail {
struct kernel_params;
struct row_stats;
struct row_outputs;
using row_kernel = void (*)(const float* rows_f, const double* rows_d, std::size_t count, std::size_t k,
                            const kernel_params& params, float* scratch, row_stats* out,
                            const row_outputs& rows_out);
}  // namespace detail

// Inputs that come row by row with the target logits, for the methods that need them.
struct row_inputs {
    const logits_view* second = nullptr;    // a second model's logits on the same inputs (AgreeScore)
    const logits_view* features = nullptr;  // penultimate features, N x D (Dispersion, Frechet)
    // true class labels of these rows, in [0, K): the result then carries the true accuracy
    const std::int64_t* labels = nullptr;
    // the index of the first of these rows in the whole input, for error messages (default: the
    // number of rows pushed so far), e.g. when threads push row ranges of one file
    std::optional<std::size_t> first_row;
};

// Streaming estimators over target logits: push row chunks in order, merge partial states
// (threads, shards, workers), serialize the state to JSON, and finalize into a result. Memory is
// O(K) per method, O(K^2) for the nuclear norms, and O(NK) only for COT, which needs every row.
// push() is all-or-nothing: on an error the state is left as it was.
class accumulator {
public:
    accumulator(std::size_t k, const options& opts = {});
    ~accumulator();
    accumulator(const accumulator&);
    accumulator& operator=(const accumulator&);
    accumulator(accumulator&&) noexcept;
    accumulator& operator=(accumulator&&) noexcept;

    void push(const logits_view& rows, const row_inputs& extra = {});
    // Appends `other`'s rows after this one's (same K and options required). A shard this one
    // holds already is refused (see shards()). Rows pushed into `other` and in no shard yet join
    // this one's own: parts of one shard, such as threads scoring row ranges of one file.
    void merge(const accumulator& other);
    // merge(), but `other`'s own rows come in as the shard other.to_json() names, as if merged
    // from its state: merging `other` twice is refused.
    void merge_as_shard(const accumulator& other);
    result finalize() const;

    nlohmann::json to_json() const;
    static accumulator from_json(const nlohmann::json& state);
    // The shards of this state, sorted, as to_json() lists them: those merged in from states, and
    // this accumulator's own rows (pushed, in no shard yet), named by a hash of the state's content.
    std::vector<std::uint64_t> shards() const;

    std::size_t rows() const noexcept { return state_.n; }
    std::size_t cols() const noexcept { return k_; }
    const options& opts() const noexcept { return opts_; }
    const std::string& architecture() const noexcept { return arch_; }

private:
    // Sums over rows for both normalization branches, so the branch can be chosen at finalize.
    struct branch_sums {
        double softmax = 0;
        double taylor = 0;
    };
    // A per-row quantity's sum and sum of squares: its mean and the mean's standard error.
    struct moments {
        double sum = 0;
        double sum_sq = 0;
        void add(double x) {
            sum += x;
            sum_sq += x * x;
        }
        void add(const moments& o) {
            sum += o.sum;
            sum_sq += o.sum_sq;
        }
    };
    struct branch_moments {
        moments softmax, taylor;
    };
    struct state {
        std::size_t n = 0;
        double phi_sum = 0;  // sum_i (LSE_i - mean_k q_ik)
        branch_moments sums;  // of sum_k sigma_ik^p over rows
        // first row whose Taylor values overflow double (-1: none); an error only if Taylor is used
        std::int64_t taylor_overflow_row = -1;
        // batch mode: scores of completed batches and the sums of the batch being filled
        branch_moments batch_scores;
        std::size_t batches = 0;
        std::size_t batch_rows = 0;
        branch_sums batch_sums;
        // baselines on q / T
        moments max_prob;  // ConfScore
        moments entropy;   // Entropy
        // MDE: E_i = -LSE_i; the running max with sum_i exp(E_i - max) (0 until the first row), and
        // sum_i (E_i - shift) with shift = the first row's E, so that mean E - max never cancels
        double energy_max = 0, energy_exp_sum = 0, energy_shift = 0, energy_deviation_sum = 0;
        std::optional<detail::gram_sum> gram;  // Nuclear: the rows, or P^T P beyond K rows
        std::vector<double> cot_rows;  // COT: the softmax rows, N x K
        // softrun variants on q
        branch_moments max_sigma;
        std::optional<detail::gram_sum> gram_softrun_softmax, gram_softrun_taylor;
        std::size_t agree = 0, agreement_rows = 0;  // AgreeScore
        std::size_t atc_mc_count = 0, atc_ne_count = 0;  // rows scoring at or above the ATC thresholds
        std::shared_ptr<feature_moments> features;    // Frechet (target side)
        std::shared_ptr<class_dispersion> dispersion;  // Dispersion
        std::size_t feature_rows = 0;
        std::size_t correct = 0, labeled_rows = 0;  // true accuracy, when labels are given
        std::vector<std::uint64_t> predicted;  // rows won by each class (K <= class_counts_max_k)
        std::vector<std::uint64_t> shards;  // the shards merged in from states, sorted
        std::size_t own_rows = 0;  // rows pushed here (or merged from parts) that no shard names yet
    };

    void merge_state(const accumulator& other, bool as_shard);
    nlohmann::json state_json() const;  // to_json() without a name for the own rows
    std::vector<std::uint64_t> shards_with_own(const nlohmann::json& content) const;
    double batch_score(double sum, std::size_t rows) const;
    static nlohmann::json moments_json(const moments& m);
    static moments moments_from(const nlohmann::json& j);
    bool baseline_rows_differ() const;

    std::size_t k_;
    options opts_;
    std::string arch_;
    std::unique_ptr<detail::kernel_params> params_, baseline_params_;
    detail::row_kernel kernel_;
    state state_;
};

// A state names at most this many shards (an input-independent limit on its size).
inline constexpr std::size_t max_shards = 1000000;

// A shard identity as states write it (16 hexadecimal digits), and the error for a shard merged
// twice, naming where it is already: "this accumulator", or a file.
std::string shard_name(std::uint64_t id);
error repeated_shard(std::uint64_t id, const std::string& holder);

// The common case: score all rows of `logits` at once.
result score(const logits_view& logits, const options& opts = {});

}  // namespace mano

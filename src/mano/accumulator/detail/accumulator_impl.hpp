#pragma once
// The accumulator's insides, shared by accumulator.cpp (push, finalize) and
// accumulator_state.cpp (merge, its JSON state), which are compiled apart: the second for size in
// WebAssembly.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/accumulator/accumulator.hpp"
#include "mano/estimators/estimator.hpp"
#include "mano/kernel/kernel.hpp"

namespace mano {

struct accumulator::impl {
    std::size_t k;
    std::size_t columns;  // of a pushed row: k, or 1 for a binary input (options::input)
    options opts;
    std::string arch;
    detail::kernel_params params, baseline_params;
    detail::row_kernel kernel;
    detail::block_needs needs;  // or-ed over the components
    // The estimators, in table order (opts.methods).
    std::vector<std::unique_ptr<detail::estimator>> components;

    // What every state keeps, whatever its methods.
    struct sums {
        std::size_t n = 0;
        double phi_sum = 0;  // sum_i (LSE_i - mean_k q_ik): the softrun criterion
        // first row whose Taylor values overflow double (-1: none); an error only if Taylor is used
        std::int64_t taylor_overflow_row = -1;
        detail::moments max_prob;  // of softmax(q / T): the confidence, ConfScore, DoC
        std::vector<std::uint64_t> predicted;  // rows won by each class (K <= class_counts_max_k)
        std::optional<correctness_histogram> correctness;  // when options::correctness_histogram
        std::size_t correct = 0, labeled_rows = 0;  // true accuracy, when labels are given
        std::size_t second_rows = 0, feature_rows = 0;  // rows pushed with a second model's logits, features
        std::vector<std::uint64_t> shards;  // the shards merged in from states, sorted
        std::size_t own_rows = 0;  // rows pushed here (or merged from parts) that no shard names yet
        // input logits: the leading rows that lie in [0, 1] and sum to 1 (counted while every row
        // so far did, so that a scan of logits checks a row or two), summed over merged shards
        std::size_t probability_rows = 0;
    } core;
    std::string shard_label;  // set_shard_label(): part of the own rows' shard name, not of the state
    parallel_for parallel = run_in_order;  // set_parallel()

    impl(std::size_t k_, const options& o) : k(k_), columns(columns_of(o.input, k_)), opts(o) {}
    impl(const impl& other)
        : k(other.k), columns(other.columns), opts(other.opts), arch(other.arch), params(other.params),
          baseline_params(other.baseline_params), kernel(other.kernel), needs(other.needs), core(other.core),
          shard_label(other.shard_label), parallel(other.parallel) {
        for (const auto& c : other.components) components.push_back(c->clone());
    }
    bool scaled() const { return opts.temperature != 1.0; }
    // push's parts (accumulator.cpp): the rows and their companions checked against each other
    // and against what earlier pushes gave; a block's row statistics added to the sums (each row
    // checked: finite logits, labels in [0, K), a finite second model's row; then finite features).
    void check_push(const logits_view& rows, const row_inputs& extra) const;
    void add_row_sums(const detail::block& b, const logits_view& rows, std::size_t first, const row_inputs& extra);
    nlohmann::json state_json() const;
    // The shard name of the own rows: a hash of the state that holds them and the shard label.
    std::uint64_t own_rows_id() const;
};

namespace detail {

// Adds `id` to a sorted list of shards, unless it is there.
inline void add_shard(std::vector<std::uint64_t>& ids, std::uint64_t id) {
    if (std::binary_search(ids.begin(), ids.end(), id)) return;
    ids.push_back(id);
    std::size_t i = ids.size() - 1;
    for (; i > 0 && ids[i - 1] > id; --i) ids[i] = ids[i - 1];
    ids[i] = id;
}

}  // namespace detail
}  // namespace mano

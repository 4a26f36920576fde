#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/base/error.hpp"
#include "mano/base/parallel.hpp"
#include "mano/scan/logits_view.hpp"
#include "mano/scan/options.hpp"
#include "mano/scan/result.hpp"

namespace mano {

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

// Streaming estimators over target logits (or rows of options::input's kind, turned into logits a
// block at a time as push reads them): push row chunks in order, merge partial states
// (threads, shards, workers), serialize the state to JSON, and finalize into a result. Memory is
// O(K) per method, O(K^2) for the nuclear norms, and O(NK) only for the methods that keep every
// row (COT, COTT, MLLS: 4 bytes a logit).
// push() and merge() are all-or-nothing: on an error the state is left as it was. Each method is
// a component of its own (estimators/estimator.hpp, made from the method table); this class runs
// the kernel once per block of rows and drives them.
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
    // this accumulator's own rows (pushed, in no shard yet), named by a hash of the state's content
    // (and the shard label). A merge of shards names the own rows first, so that no later push or
    // merge renames them: a state of them merged back in is then refused.
    std::vector<std::uint64_t> shards() const;
    // Tells apart shards of identical content, such as two partitions of equal rows: the own
    // rows' name hashes the label with the state, so equal partitions labeled by their place are
    // two shards, while one partition scored twice under its label is still one. At most
    // max_shard_label bytes; empty (the default) names by content alone.
    void set_shard_label(const std::string& label);
    // How finalize may run a solver's independent passes at once (MLLS's EM): the host hands its
    // threads here (native/host/scan.cpp); without it they run in order. The result is the same
    // either way. Not part of the state; copies keep it.
    void set_parallel(parallel_for run);

    std::size_t rows() const noexcept;
    std::size_t cols() const noexcept;  // K, the classes
    // The values of a pushed row: K, or 1 for a binary input (options::input, input_kind.hpp).
    std::size_t columns() const noexcept;
    const options& opts() const noexcept;
    const std::string& architecture() const noexcept;

private:
    struct impl;  // the driver's sums and the estimator components (accumulator.cpp)
    void merge_state(const accumulator& other, bool as_shard);
    std::unique_ptr<impl> impl_;
};

// A state names at most this many shards (an input-independent limit on its size).
inline constexpr std::size_t max_shards = 1000000;
inline constexpr std::size_t max_shard_label = 4096;

// A shard identity as states write it (16 hexadecimal digits), and the error for a shard merged
// twice, naming where it is already: "this accumulator", or a file.
std::string shard_name(std::uint64_t id);
error repeated_shard(std::uint64_t id, const std::string& holder);

// The common case: score all rows of `logits` at once.
result score(const logits_view& logits, const options& opts = {});

}  // namespace mano

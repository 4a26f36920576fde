#pragma once
// The estimator components behind the accumulator: each estimator of the method table
// (registry.hpp) is one class in src/mano/estimators/<name>.cpp holding its own state (ATC-MC
// and ATC-NE, one rule on two scores, are one template in atc.cpp). The
// accumulator runs the kernel over a block of rows once, hands the block to every component,
// merges, serializes and finalizes them; it knows no estimator by name.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/base/parallel.hpp"
#include "mano/kernel/kernel.hpp"
#include "mano/estimators/gram.hpp"
#include "mano/scan/options.hpp"
#include "mano/scan/result.hpp"
#include "mano/shift/row_blocks.hpp"

namespace mano {
namespace detail {

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
    // The standard error of the mean over n rows (sample variance / n; 0 where the spread is
    // within the sums' rounding); NaN for n < 2.
    double mean_se(double n) const;
    nlohmann::json to_json() const { return {sum, sum_sq}; }
    // Throws mano::error naming `what` unless j is a [sum, sum of squares] pair of numbers with
    // the values of n rows in [0, top] (a little slack for rounding).
    static moments from_json(const nlohmann::json& j, double n, double top, const std::string& what);
};

// The standard error of a proportion a over n rows.
double proportion_se(double a, double n);

// What a component needs from the driver for every block (or-ed over the components).
struct block_needs {
    bool softmax_power = false;  // sum_k p_ik^p on q (MaNo's softmax branch)
    bool taylor = false;         // the Taylor rows' sums on q (MaNo's Taylor branch, softrun variants)
    bool extras = false;         // per row: the entropy and the Taylor rows' maximum
    bool probs = false;          // the rows of softmax(q / T)
    bool softrun_rows = false;   // the rows of softmax(q) and of the Taylor normalization of q
    bool gram = false;           // updates a Gram matrix per block: blocks of at least 256 rows
};

// One block of rows, as the driver computed it. Pointers to what no component asked for are null.
struct block {
    std::size_t count = 0;
    std::size_t k = 0;
    std::size_t first_row = 0;        // the block's first row in the whole input (for messages)
    const row_stats* stats = nullptr;  // the kernel on q (MaNo's normalizations)
    const row_stats* base = nullptr;   // the kernel on q / T (the softmax baselines); stats when T = 1
    const double* probs = nullptr;     // softmax(q / T), count x k
    const float* logits_f = nullptr;   // q itself, count x k: float rows (float32 and 16-bit logits)
    const double* logits_d = nullptr;  // or double rows (float64 logits); the other pointer is null
    const double* softmax_rows = nullptr;  // softmax(q), count x k
    const double* taylor_rows = nullptr;   // the Taylor normalization of q, count x k
    const double* second = nullptr;        // the second model's logits, count x k, finite
    const double* features = nullptr;      // count x dim
    std::size_t dim = 0;
};

// What finalize needs besides a component's own state.
struct final_context {
    std::size_t n = 0;
    std::size_t k = 0;
    const options& opts;
    double criterion = 0;    // Phi, or the fixed criterion
    normalization used = normalization::softmax;  // the branch MaNo and the softrun variants use
    bool taylor_overflowed = false;  // some row's Taylor values overflow double (no Taylor branch)
    bool second_given = false;       // every row came with a second model's logits
    bool features_given = false;     // every row came with features
    const moments& max_prob;  // max softmax(q / T) over the rows: ConfScore, DoC
    const parallel_for& parallel;  // runs a solver's independent passes at once (MLLS's EM)
};

struct estimator_setup {
    std::size_t k;
    const options& opts;  // validated, methods resolved
    gram_kernel gram;     // the accumulator's architecture's Gram update
    const shift_kernels& shift;  // and its loops of the label-shift and transport solvers
};

class estimator {
public:
    virtual ~estimator() = default;
    virtual std::unique_ptr<estimator> clone() const = 0;
    virtual block_needs needs() const = 0;

    // A push is a transaction: begin(rows) before its first block (`rows`: how many the push
    // brings), then commit() after its last, or rollback() on an error, which leaves the state as
    // begin() found it.
    virtual void begin(std::size_t rows) = 0;
    virtual void add(const block& b) = 0;
    virtual void commit() = 0;
    virtual void rollback() = 0;

    // Appends `other`'s rows (a component of the same method and options, holding other_rows > 0
    // rows) after the `rows` of this one. The accumulator has checked everything that could
    // refuse the merge: it cannot fail.
    virtual void merge(const estimator& other, std::size_t rows, std::size_t other_rows) = 0;

    // Its section of a state (null when it keeps nothing of its own), and back: from_json checks
    // every invariant against the state's n rows and throws mano::error naming what broke.
    virtual nlohmann::json to_json() const = 0;
    virtual void from_json(const nlohmann::json& section, std::size_t n) = 0;

    // Sets its entry of r (and r.mano for MaNo).
    virtual void finalize(const final_context& c, result& r) const = 0;
};

// The common shape: a state struct copied at begin() and restored by rollback(); merge() gets
// the other component as its own type.
template <class Self, class State>
class component : public estimator {
public:
    std::unique_ptr<estimator> clone() const override { return std::make_unique<Self>(static_cast<const Self&>(*this)); }
    void begin(std::size_t) override { saved_ = s; }
    void commit() override {}
    void rollback() override { s = saved_; }
    void merge(const estimator& other, std::size_t rows, std::size_t other_rows) override {
        merge_from(static_cast<const Self&>(other).s, rows, other_rows);
    }

protected:
    virtual void merge_from(const State& other, std::size_t rows, std::size_t other_rows) = 0;
    State s;

private:
    State saved_;
};

// A component that keeps nothing of its own (it finalizes from the driver's sums).
template <class Self>
class stateless : public estimator {
public:
    std::unique_ptr<estimator> clone() const override { return std::make_unique<Self>(static_cast<const Self&>(*this)); }
    block_needs needs() const override { return {}; }
    void begin(std::size_t) override {}
    void add(const block&) override {}
    void commit() override {}
    void rollback() override {}
    void merge(const estimator&, std::size_t, std::size_t) override {}
    nlohmann::json to_json() const override { return nullptr; }
    void from_json(const nlohmann::json& section, std::size_t) override;
};

// Throws mano::error(what) unless ok (the accumulator names the state and the method).
void check_state(bool ok, const std::string& what);

// A Gram sum that a push changes only when it succeeds: its rows go to a part of their own,
// added to the whole at commit (nothing of the whole is copied). The part's K x K buffer is kept
// from push to push (a fresh one would fault its pages in each time), but not copied.
class pending_gram {
public:
    pending_gram(std::size_t k, gram_kernel kernel) : whole(k, kernel), k_(k), kernel_(kernel) {}
    pending_gram(const pending_gram& o) : whole(o.whole), k_(o.k_), kernel_(o.kernel_) {}
    pending_gram& operator=(const pending_gram& o) {
        whole = o.whole, part = gram_sum(), spare_.clear(), k_ = o.k_, kernel_ = o.kernel_;
        return *this;
    }
    void begin(std::size_t rows) {
        part = gram_sum(k_, kernel_);
        if (whole.rows() + rows > k_) part.use_gram(std::move(spare_));  // the set will need its Gram matrix
    }
    void add(const double* rows, std::size_t count) { part.add(rows, count); }
    void commit() {
        whole.add(part);
        end();
    }
    void rollback() { end(); }
    // whole = a state's section (gram_sum::from_json; zero_rows: rows of a softrun branch)
    void load(const nlohmann::json& j, std::size_t n, const std::string& what, bool zero_rows = false) {
        whole = gram_sum::from_json(j, k_, n, what, kernel_, zero_rows);
    }
    gram_sum whole;
    gram_sum part;

private:
    void end() {
        spare_ = part.take_gram();
        part = gram_sum();
    }
    std::vector<double> spare_;  // the last part's Gram buffer
    std::size_t k_;
    gram_kernel kernel_;
};

template <class Self>
void stateless<Self>::from_json(const nlohmann::json& section, std::size_t) {
    check_state(section.is_null(), "this method keeps no state of its own, but its section is not null");
}

// Every row a method keeps, N x K values of type T (float for COT: softmax(q / T), and MLLS: its
// calibrated rows; double for COTT, whose threshold compares the costs the source fit saw), in
// blocks of at most ~16 MB. A push's rows are cut back off on rollback; merge shares the other
// store's blocks without copying them, and a block two stores share is never written again.
template <class T>
class row_store_of {
public:
    explicit row_store_of(std::size_t k) : k_(k) {}
    void begin() {
        saved_blocks_ = blocks_.size();
        saved_rows_ = blocks_.empty() ? 0 : blocks_.back().rows;
    }
    // Room for `count` more rows at the end, for the caller to fill.
    T* extend(std::size_t count);
    void rollback();
    void append(const row_store_of& other) { blocks_.insert(blocks_.end(), other.blocks_.begin(), other.blocks_.end()); }
    std::size_t rows() const;
    // Each block's rows and their count.
    std::vector<std::pair<const T*, std::size_t>> blocks() const;
    nlohmann::json to_json() const;
    // Throws mano::error unless j holds n x K values in [0, 1], each row summing to 1.
    void from_json(const nlohmann::json& j, std::size_t n);

private:
    struct block {
        // room for `capacity` rows x K, allocated when made and not zeroed (the caller writes
        // the rows extend() hands out; zeroing first would be one more pass over memory as large
        // as the logits, 200 MB at 50000 x 1000), in 2 MB pages where offered (base/page_memory.hpp)
        std::shared_ptr<T[]> data;
        std::size_t capacity;
        std::size_t rows;
    };
    std::vector<block> blocks_;
    std::size_t k_;
    std::size_t saved_blocks_ = 0, saved_rows_ = 0;
};

using row_store = row_store_of<float>;

// The rows of a float store as the solvers of src/mano/shift read them.
inline row_blocks blocks_of(const row_store& rows) {
    row_blocks out;
    for (const auto& [data, count] : rows.blocks()) out.push_back({data, count});
    return out;
}

// The shape of the estimators that keep every row of softmax(q / T) (COT, COTT, as T = float or
// double): Self computes finalize from the rows.
template <class Self, class T = float>
class row_keeping_component : public estimator {
public:
    explicit row_keeping_component(const estimator_setup& e) : rows_(e.k), k_(e.k), kernels_(&e.shift) {}
    std::unique_ptr<estimator> clone() const override { return std::make_unique<Self>(static_cast<const Self&>(*this)); }
    block_needs needs() const override {
        block_needs n;
        n.probs = true;
        return n;
    }
    void begin(std::size_t) override { rows_.begin(); }
    void add(const block& b) override {
        T* out = rows_.extend(b.count);
        for (std::size_t i = 0; i < b.count * k_; ++i) out[i] = static_cast<T>(b.probs[i]);
    }
    void commit() override {}
    void rollback() override { rows_.rollback(); }
    void merge(const estimator& other, std::size_t, std::size_t) override {
        rows_.append(static_cast<const Self&>(other).rows_);
    }
    nlohmann::json to_json() const override { return rows_.to_json(); }
    void from_json(const nlohmann::json& j, std::size_t n) override { rows_.from_json(j, n); }

protected:
    row_store_of<T> rows_;
    std::size_t k_;
    const shift_kernels* kernels_;
};

// The transport estimators (COT, COTT): the rows and the label marginal (uniform unless
// options::label_marginal).
template <class Self, class T = float>
class transport_component : public row_keeping_component<Self, T> {
public:
    explicit transport_component(const estimator_setup& e)
        : row_keeping_component<Self, T>(e), marginal_(e.opts.label_marginal) {
        if (marginal_.empty()) marginal_.assign(e.k, 1.0 / static_cast<double>(e.k));
    }

protected:
    std::vector<double> marginal_;
};

}  // namespace detail
}  // namespace mano

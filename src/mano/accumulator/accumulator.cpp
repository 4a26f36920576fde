#include "mano/accumulator/accumulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mano/kernel/architecture.hpp"
#include "mano/kernel/kernel.hpp"
#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/base/half.hpp"
#include "mano/base/text.hpp"
#include "mano/accumulator/detail/accumulator_impl.hpp"
#include "mano/estimators/estimator.hpp"
#include "mano/scan/features.hpp"

namespace mano {

namespace {

// Rows are widened to double and handed to the kernel in blocks of about this many logits:
// large enough to amortize the call, small enough to stay in L2.
constexpr std::size_t block_logits = 1 << 15;

const detail::kernel_entry& kernel_named(const std::string& name) {
    for (const auto& kernel : detail::compiled_kernels())
        if (name == kernel.name) return kernel;
    throw error("no kernel named '" + printable(name, 60) + "'");
}

detail::kernel_params make_params(const options& o, std::size_t k) {
    detail::kernel_params kp;
    kp.p = o.p;
    kp.p_int = (o.p == std::floor(o.p) && o.p >= 2 && o.p <= 64) ? static_cast<int>(o.p) : 0;
    kp.power_limit = std::pow(1e36, 1.0 / o.p);
    kp.power_floor = std::pow(static_cast<double>(k), 1.0 - o.p);
    kp.taylor_order = o.taylor_order;
    double factorial = 1;
    for (int j = 0; j <= o.taylor_order; ++j) {
        if (j > 0) factorial *= j;
        kp.taylor_coeffs.push_back(1.0 / factorial);
    }
    // With a fixed criterion the softrun branch is known now: the other one is skipped.
    kp.want_softmax = o.scores_softmax_branch(k);
    kp.want_taylor = o.scores_taylor_branch(k);
    return kp;
}

// Normalization taylor at K = 2 (options.hpp, taylor_defined), for the methods that read the
// branch: one line naming them and what to use.
void check_taylor_defined(const options& o, std::size_t k, const std::vector<std::string>& readers) {
    if (o.norm != normalization::taylor || taylor_defined(k) || readers.empty()) return;
    std::string names;
    for (const auto& name : readers) names += (names.empty() ? "" : ", ") + name;
    throw error("normalization taylor is not defined for " + std::to_string(k) +
                " classes: the min-shifted Taylor rows of a binary model are one-hot ([0, 1] or [1, 0]) whatever the "
                "logits, so " + names + " would read a constant; use normalization softmax (softrun takes it at K = 2)");
}

std::string describe(double x) {
    if (std::isnan(x)) return "NaN";
    return x > 0 ? "+Inf" : "-Inf";
}

}  // namespace

accumulator::accumulator(std::size_t k, const options& opts) : impl_(std::make_unique<impl>(k, opts)) {
    options& o = impl_->opts;
    o.validate();
    if (k < 2) classes_of(input_kind::logits, k);  // refused, naming the binary inputs for one column
    if (impl_->columns == 1 && k != 2)
        throw error(std::string("input ") + input_kind_name(o.input) + " is a binary classifier's: 2 classes, not " +
                    std::to_string(k));
    if (k > max_classes)
        throw error(std::to_string(k) + " classes are more than the " + std::to_string(max_classes) +
                    " an accumulator takes (each method keeps numbers per class)");
    if (!o.label_marginal.empty() && o.label_marginal.size() != k)
        throw error("the label marginal has " + std::to_string(o.label_marginal.size()) +
                    " entries but the logits have " + std::to_string(k) + " classes");
    if (o.methods.empty()) o.methods = default_methods(k);
    // one order for every state (merging compares the lists), each method once
    std::sort(o.methods.begin(), o.methods.end());
    o.methods.erase(std::unique(o.methods.begin(), o.methods.end()), o.methods.end());
    for (const method m : o.methods) {
        const double gib = static_cast<double>(k) * static_cast<double>(k) * 8.0 / (1 << 30);
        if (info_of(m).cost == method_cost::quadratic && !(info_of(m).needs & needs_features) && gib > 4.0)
            throw error(std::string(method_name(m)) + " keeps a K x K matrix: " + number_text(gib) +
                        " GiB for K = " + std::to_string(k) + "; leave it out of the methods for this many classes");
    }
    impl_->arch = resolve_architecture(o.architecture);
    const detail::kernel_entry& kernel = kernel_named(impl_->arch);
    impl_->kernel = kernel.run;
    const detail::estimator_setup setup{k, o, kernel.gram, *kernel.shift};
    std::vector<std::string> taylor_readers;
    for (const method m : o.methods) {
        impl_->components.push_back(info_of(m).make(setup));
        const detail::block_needs n = impl_->components.back()->needs();
        if (n.taylor) taylor_readers.push_back(method_name(m));
        auto& all = impl_->needs;
        all.softmax_power |= n.softmax_power;
        all.taylor |= n.taylor;
        all.extras |= n.extras;
        all.probs |= n.probs;
        all.softrun_rows |= n.softrun_rows;
        all.gram |= n.gram;
    }
    check_taylor_defined(o, k, taylor_readers);
    impl_->params = make_params(o, k);
    impl_->params.want_softmax = impl_->params.want_softmax && impl_->needs.softmax_power;
    impl_->params.want_taylor = impl_->params.want_taylor && impl_->needs.taylor;
    impl_->params.want_extras = impl_->needs.extras;
    impl_->baseline_params = impl_->params;
    impl_->baseline_params.want_softmax = impl_->baseline_params.want_taylor = false;
    if (k <= class_counts_max_k) impl_->core.predicted.assign(k, 0);
    if (o.correctness_histogram) impl_->core.correctness.emplace(k);
}

accumulator::~accumulator() = default;
accumulator::accumulator(accumulator&&) noexcept = default;
accumulator& accumulator::operator=(accumulator&&) noexcept = default;
accumulator::accumulator(const accumulator& other) : impl_(std::make_unique<impl>(*other.impl_)) {}

accumulator& accumulator::operator=(const accumulator& other) {
    if (this != &other) *this = accumulator(other);
    return *this;
}

void accumulator::set_parallel(parallel_for run) { impl_->parallel = run ? std::move(run) : parallel_for(run_in_order); }

std::size_t accumulator::rows() const noexcept { return impl_->core.n; }
std::size_t accumulator::cols() const noexcept { return impl_->k; }
std::size_t accumulator::columns() const noexcept { return impl_->columns; }
const options& accumulator::opts() const noexcept { return impl_->opts; }
const std::string& accumulator::architecture() const noexcept { return impl_->arch; }

namespace {

// Throws E(args..., message) at the first logit of the row that is NaN or infinite.
template <class E = error, class... Args>
void check_finite_row(const double* row, std::size_t k, std::size_t index, Args... args) {
    for (std::size_t c = 0; c < k; ++c)
        if (!std::isfinite(row[c]))
            throw E(args..., "row " + std::to_string(index) + ", column " + std::to_string(c) + ": logit is " +
                                 describe(row[c]) + " (rows and columns count from 0); logits must be finite");
}

// How push hands one call's rows to the kernel: the rows per kernel call (the block plan) and the
// buffers a block is read into and scored in, sized once for the call. Rows of another input kind
// than logits (probabilities, a binary column) are turned into K logits here, in the block.
class block_reader {
public:
    block_reader(const logits_view& rows, const row_inputs& extra, const detail::block_needs& needs, bool scaled,
                 input_kind kind, std::size_t k)
        : rows_(rows), extra_(extra), needs_(needs), scaled_(scaled), kind_(kind), columns_(rows.cols()), k_(k),
          // The kernel takes float rows (float32 in place when contiguous, float16/bfloat16
          // widened exactly) or, for float64 logits and converted rows, double rows.
          as_double_(rows.type() == dtype::float64 || kind != input_kind::logits),
          in_place_(kind == input_kind::logits && rows.row_stride() == k_ &&
                    (rows.type() == dtype::float32 || rows.type() == dtype::float64)) {
        plan();
        allocate();
    }
    std::size_t block_rows() const { return block_rows_; }
    const detail::row_stats* stats() const { return stats_.data(); }
    const double* second_rows() const { return second_rows_.data(); }
    // Of the last block read, as logits: how many leading rows lie in [0, 1] and sum to 1.
    std::size_t probability_rows(std::size_t count) const {
        return detail::leading_probability_rows(block_f_, block_d_, count, k_);
    }

    // Rows [first, first + count) through the kernel (on q, and on q / T when scaled): the block
    // every component adds. `first_row` numbers the block's first row for messages.
    detail::block read(std::size_t first, std::size_t count, std::size_t first_row, detail::row_kernel kernel,
                       const detail::kernel_params& params, const detail::kernel_params& baseline_params,
                       double temperature) {
        const float* block_f = nullptr;
        const double* block_d = nullptr;
        if (as_double_ && in_place_) {
            block_d = static_cast<const double*>(rows_.data()) + first * k_;
        } else if (as_double_) {
            widen_rows(rows_, first, count, double_block_.data());
            detail::to_logits(kind_, double_block_.data(), count, columns_, first_row);
            block_d = double_block_.data();
        } else if (in_place_) {
            block_f = static_cast<const float*>(rows_.data()) + first * k_;
        } else {
            float_rows(rows_, first, count, float_block_.data());
            block_f = float_block_.data();
        }
        block_f_ = block_f;
        block_d_ = block_d;
        kernel(block_f, block_d, count, k_, params, scratch_.data(), stats_.data(), outputs_);
        detail::block b;
        b.count = count;
        b.k = k_;
        b.logits_f = block_f;
        b.logits_d = block_d;
        b.first_row = first_row;
        b.stats = b.base = stats_.data();
        b.probs = needs_.probs ? softmax_probs_.data() : nullptr;
        if (needs_.softrun_rows) {
            b.softmax_rows = softmax_probs_.data();
            b.taylor_rows = taylor_probs_.data();
        }
        if (scaled_) {
            const double inv_t = 1.0 / temperature;
            // q / T in double: rounding it to float would move exp(q/T - max) by ulp(q/T)
            if (as_double_)
                for (std::size_t i = 0; i < count * k_; ++i) scaled_rows_[i] = block_d[i] * inv_t;
            else
                for (std::size_t i = 0; i < count * k_; ++i) scaled_rows_[i] = static_cast<double>(block_f[i]) * inv_t;
            kernel(nullptr, scaled_rows_.data(), count, k_, baseline_params, scratch_.data(), base_stats_.data(), base_outputs_);
            b.base = base_stats_.data();
            b.probs = needs_.probs ? base_probs_.data() : nullptr;
        }
        if (extra_.second) {
            widen_rows(*extra_.second, first, count, second_rows_.data());
            detail::to_logits(kind_, second_rows_.data(), count, columns_, first_row);
            b.second = second_rows_.data();
        }
        if (extra_.features) {
            widen_rows(*extra_.features, first, count, feature_rows_.data());
            b.features = feature_rows_.data();
            b.dim = extra_.features->cols();
        }
        return b;
    }

private:
    // Rows per kernel call: ~32K logits, so that the blocks stay in cache. Large blocks, ~1M
    // logits (up to 4096 rows), where a call has more to amortize: a Gram matrix update (each call
    // adds into all of its K x K doubles; at least 256 rows), and rows read in place with nothing
    // kept per row but their statistics (the kernel looks ahead and prefetches within a call only).
    void plan() {
        const std::size_t large_block = std::min<std::size_t>(4096, std::max<std::size_t>(1, (1 << 20) / k_));
        block_rows_ = std::max<std::size_t>(1, block_logits / k_);
        if (needs_.gram) block_rows_ = std::max<std::size_t>({block_rows_, 256, large_block});
        if (in_place_ && !scaled_ && !extra_.second && !needs_.softrun_rows && !needs_.probs && !extra_.features)
            block_rows_ = std::max(block_rows_, large_block);
        block_rows_ = std::min(block_rows_, rows_.rows());
    }

    void allocate() {
        const std::size_t n = block_rows_ * k_;
        if (!in_place_) as_double_ ? double_block_.resize(n) : float_block_.resize(n);
        if (scaled_) scaled_rows_.resize(n);
        scratch_.resize(detail::kernel_scratch_floats(k_));
        stats_.resize(block_rows_);
        if (needs_.softrun_rows || (needs_.probs && !scaled_)) {
            softmax_probs_.resize(n);
            outputs_.softmax = softmax_probs_.data();
        }
        if (needs_.softrun_rows) {
            taylor_probs_.resize(n);
            outputs_.taylor = taylor_probs_.data();
        }
        if (scaled_) {
            base_stats_.resize(block_rows_);
            if (needs_.probs) {
                base_probs_.resize(n);
                base_outputs_.softmax = base_probs_.data();
            }
        }
        if (extra_.second) second_rows_.resize(n);
        if (extra_.features) feature_rows_.resize(block_rows_ * extra_.features->cols());
    }

    const logits_view& rows_;
    const row_inputs& extra_;
    const detail::block_needs& needs_;
    const bool scaled_;
    const input_kind kind_;
    const std::size_t columns_, k_;
    const bool as_double_, in_place_;
    std::size_t block_rows_ = 0;
    const float* block_f_ = nullptr;
    const double* block_d_ = nullptr;
    std::vector<float> float_block_, scratch_;
    std::vector<double> double_block_, scaled_rows_, second_rows_, feature_rows_;
    std::vector<detail::row_stats> stats_, base_stats_;
    std::vector<double> softmax_probs_, taylor_probs_, base_probs_;
    detail::row_outputs outputs_, base_outputs_;
};

}  // namespace

void accumulator::impl::check_push(const logits_view& rows, const row_inputs& extra) const {
    if (rows.cols() != columns && opts.input == input_kind::logits)
        throw error("logits have " + std::to_string(rows.cols()) + " columns but this accumulator was created for " +
                    std::to_string(k));
    if (rows.cols() != columns)
        throw error("the rows have " + std::to_string(rows.cols()) + " columns but this accumulator takes " +
                    std::to_string(columns) + " (input " + input_kind_name(opts.input) + ", " + std::to_string(k) + " classes)");
    const logits_view* second = extra.second;
    if (second && (second->rows() != rows.rows() || second->cols() != rows.cols()))
        throw error("the second model's logits have " + std::to_string(second->rows()) + " x " +
                    std::to_string(second->cols()) + " values but the logits have " + std::to_string(rows.rows()) +
                    " x " + std::to_string(rows.cols()) + "; both must score the same inputs");
    if (extra.features && extra.features->rows() != rows.rows())
        throw error("the features have " + std::to_string(extra.features->rows()) + " rows but the logits have " +
                    std::to_string(rows.rows()) + "; both must describe the same inputs");
    if (rows.rows() == 0) return;
    if (core.own_rows == 0 && core.shards.size() >= max_shards)
        throw error("accumulator state: this accumulator holds " + std::to_string(max_shards) +
                    " shards, the most a state may name, and rows pushed into it would be one more; score fewer, "
                    "larger shards");
    if (extra.features ? core.feature_rows != core.n : core.feature_rows != 0)
        throw error(extra.features ? "features were given for some pushes but not for others; give them with every push"
                                   : "features were given for earlier rows but not for these; give them with every push");
    if (core.n > 0 && (extra.labels != nullptr) != (core.labeled_rows == core.n))
        throw error("labels were given for some pushes but not for others; give them with every push or never");
    if (core.n > 0 && (second != nullptr) != (core.second_rows == core.n))
        throw error("a second model's logits were given for some pushes but not for others; give them with every push or never");
}

void accumulator::impl::add_row_sums(const detail::block& b, const logits_view& rows, std::size_t first,
                                     const row_inputs& extra) {
    for (std::size_t r = 0; r < b.count; ++r) {
        const auto& st = b.stats[r];
        const std::size_t row = b.first_row + r;  // for messages
        if (st.bad_col >= 0) {  // (rows of another input kind were checked as they were turned into logits)
            std::vector<double> bad(rows.cols());
            widen_rows(rows, first + r, 1, bad.data());
            check_finite_row(bad.data(), rows.cols(), row);
        }
        if (st.bad_col == -2)
            throw error("row " + std::to_string(row) + ": logits are too large to subtract from the row maximum (the difference overflows "
                        "double precision); scale them down");
        if (st.taylor_overflow && core.taylor_overflow_row < 0)
            core.taylor_overflow_row = static_cast<std::int64_t>(core.n + r);
        core.phi_sum += st.phi;
        core.max_prob.add(b.base[r].max_prob);
        if (!core.predicted.empty()) core.predicted[static_cast<std::size_t>(st.argmax)] += 1;
        bool correct = false;
        if (extra.labels) {
            const std::int64_t label = extra.labels[first + r];
            if (label < 0 || static_cast<std::size_t>(label) >= k)
                throw error("row " + std::to_string(row) + ": label " + std::to_string(label) +
                            " is outside [0, " + std::to_string(k) + "), the classes of these logits");
            correct = label == st.argmax;
            core.correct += correct ? 1 : 0;
            core.labeled_rows += 1;
        }
        if (core.correctness) core.correctness->add(b.base[r].max_prob, static_cast<std::size_t>(st.argmax), correct);
        if (b.second) check_finite_row<row_input_error>(b.second + r * k, k, row, row_input_error::input::second);
    }
    if (b.features) {
        check_features(b.features, b.count, b.dim, b.first_row);
        core.feature_rows += b.count;
    }
    if (b.second) core.second_rows += b.count;
}

// A push is one transaction: the rows in blocks through the kernel (block_reader), each block's
// row statistics into the driver's sums (add_row_sums) and every component; on any error the
// sums and the components roll back.
void accumulator::push(const logits_view& rows, const row_inputs& extra) {
    impl& a = *impl_;
    a.check_push(rows, extra);
    if (rows.rows() == 0) return;
    block_reader reader(rows, extra, a.needs, a.scaled(), a.opts.input, a.k);
    const impl::sums saved = a.core;  // the driver's sums are small: copied
    for (auto& c : a.components) c->begin(rows.rows());
    try {
        for (std::size_t first = 0; first < rows.rows(); first += reader.block_rows()) {
            const std::size_t count = std::min(reader.block_rows(), rows.rows() - first);
            const detail::block b = reader.read(first, count, extra.first_row.value_or(saved.n) + first, a.kernel, a.params,
                                                a.baseline_params, a.opts.temperature);
            a.add_row_sums(b, rows, first, extra);
            if (a.opts.input == input_kind::logits && a.core.probability_rows == a.core.n)
                a.core.probability_rows += reader.probability_rows(count);
            for (auto& c : a.components) c->add(b);
            a.core.n += count;
        }
    } catch (...) {
        a.core = saved;
        for (auto& c : a.components) c->rollback();
        throw;
    }
    for (auto& c : a.components) c->commit();
    a.core.own_rows += rows.rows();
}

result accumulator::finalize() const {
    const impl& a = *impl_;
    const auto& core = a.core;
    if (core.n == 0) throw error("no rows to score: the logits have 0 rows");
    const auto& o = a.opts;
    const double n = static_cast<double>(core.n);
    result r;
    r.n = core.n;
    r.k = a.k;
    // Phi = (1/N) sum_i (LSE_i - mean_k q_ik) = -(1/NK) sum_ik log p_ik
    const double criterion = o.criterion ? *o.criterion : core.phi_sum / n;
    const normalization used = o.branch_used(criterion, a.k);
    if (a.needs.taylor && used != normalization::softmax && core.taylor_overflow_row >= 0)
        throw error("row " + std::to_string(core.taylor_overflow_row) + ": the order-" +
                    std::to_string(o.taylor_order) +
                    " Taylor polynomial of these logits overflows double precision; use "
                    "normalization softmax or a lower taylor_order");
    const detail::final_context context{core.n, a.k, o, criterion, used, core.taylor_overflow_row >= 0,
                                        core.second_rows == core.n, core.feature_rows == core.n, core.max_prob,
                                        a.parallel};
    for (const auto& c : a.components) c->finalize(context, r);
    if (core.labeled_rows == core.n) r.accuracy = static_cast<double>(core.correct) / n;
    r.input = o.input;
    r.looks_like_probabilities = o.input == input_kind::logits && core.probability_rows == core.n;
    r.predicted = core.predicted;
    r.confidence = core.max_prob.sum / n;
    if (core.correctness) {
        r.correctness = core.correctness;
        r.correctness->labeled = core.labeled_rows == core.n;
    }
    return r;
}

result score(const logits_view& logits, const options& opts) {
    // The row count is known here: the defaults for this set's size (COT up to its limit).
    options o = opts;
    const std::size_t k = classes_of(o.input, logits.cols());
    if (o.methods.empty()) o.methods = default_methods(k, logits.rows());
    accumulator acc(k, o);
    acc.push(logits);
    return acc.finalize();
}

}  // namespace mano

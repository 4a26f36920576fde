#include "mano/accumulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mano/architecture.hpp"
#include "mano/kernel/kernel.hpp"
#include "mano/detail/state.hpp"
#include "mano/error.hpp"
#include "mano/half.hpp"
#include "mano/text.hpp"
#include "mano/detail/accumulator_impl.hpp"
#include "mano/estimators/estimator.hpp"
#include "mano/features.hpp"

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
    kp.want_softmax = o.scores_softmax_branch();
    kp.want_taylor = o.scores_taylor_branch();
    return kp;
}

std::string describe(double x) {
    if (std::isnan(x)) return "NaN";
    return x > 0 ? "+Inf" : "-Inf";
}

}  // namespace

accumulator::accumulator(std::size_t k, const options& opts) : impl_(std::make_unique<impl>(k, opts)) {
    options& o = impl_->opts;
    o.validate();
    if (k < 2)
        throw error("logits need at least 2 columns (classes); got " + std::to_string(k));
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
    const detail::estimator_setup setup{k, o, kernel.gram};
    for (const method m : o.methods) {
        impl_->components.push_back(info_of(m).make(setup));
        const detail::block_needs n = impl_->components.back()->needs();
        auto& all = impl_->needs;
        all.softmax_power |= n.softmax_power;
        all.taylor |= n.taylor;
        all.extras |= n.extras;
        all.probs |= n.probs;
        all.softrun_rows |= n.softrun_rows;
        all.gram |= n.gram;
    }
    impl_->params = make_params(o, k);
    impl_->params.want_softmax = impl_->params.want_softmax && impl_->needs.softmax_power;
    impl_->params.want_taylor = impl_->params.want_taylor && impl_->needs.taylor;
    impl_->params.want_extras = impl_->needs.extras;
    impl_->baseline_params = impl_->params;
    impl_->baseline_params.want_softmax = impl_->baseline_params.want_taylor = false;
    if (k <= class_counts_max_k) impl_->core.predicted.assign(k, 0);
}

accumulator::~accumulator() = default;
accumulator::accumulator(accumulator&&) noexcept = default;
accumulator& accumulator::operator=(accumulator&&) noexcept = default;
accumulator::accumulator(const accumulator& other) : impl_(std::make_unique<impl>(*other.impl_)) {}

accumulator& accumulator::operator=(const accumulator& other) {
    if (this != &other) *this = accumulator(other);
    return *this;
}

std::size_t accumulator::rows() const noexcept { return impl_->core.n; }
std::size_t accumulator::cols() const noexcept { return impl_->k; }
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

}  // namespace

void accumulator::push(const logits_view& rows, const row_inputs& extra) {
    impl& a = *impl_;
    const std::size_t k = a.k;
    auto& core = a.core;
    if (rows.cols() != k)
        throw error("logits have " + std::to_string(rows.cols()) + " columns but this accumulator was created for " +
                    std::to_string(k));
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
    const detail::block_needs& needs = a.needs;
    const bool scaled = a.scaled();
    // The kernel takes float rows (float32 in place when contiguous, float16/bfloat16 widened
    // exactly) or, for float64 logits, double rows.
    const bool as_double = rows.type() == dtype::float64;
    const bool in_place = rows.row_stride() == k && (rows.type() == dtype::float32 || as_double);

    // Rows per kernel call: ~32K logits, so that the blocks below stay in cache. Large blocks,
    // ~1M logits (up to 4096 rows), where a call has more to amortize: a Gram matrix update (each
    // call adds into all of its K x K doubles; at least 256 rows), and rows read in place with
    // nothing kept per row but their statistics (the kernel looks ahead and prefetches within a
    // call only).
    const std::size_t large_block = std::min<std::size_t>(4096, std::max<std::size_t>(1, (1 << 20) / k));
    std::size_t block_rows = std::max<std::size_t>(1, block_logits / k);
    if (needs.gram) block_rows = std::max<std::size_t>({block_rows, 256, large_block});
    if (in_place && !scaled && !second && !needs.softrun_rows && !needs.probs && !extra.features)
        block_rows = std::max(block_rows, large_block);
    block_rows = std::min(block_rows, rows.rows());
    std::vector<float> float_block;
    std::vector<double> double_block, scaled_rows, second_rows, feature_rows;
    if (!in_place) as_double ? double_block.resize(block_rows * k) : float_block.resize(block_rows * k);
    if (scaled) scaled_rows.resize(block_rows * k);
    std::vector<float> scratch(detail::kernel_scratch_floats(k));
    std::vector<detail::row_stats> stats(block_rows), base_stats;
    std::vector<double> softmax_probs, taylor_probs, base_probs;
    detail::row_outputs outputs, base_outputs;
    if (needs.softrun_rows || (needs.probs && !scaled)) {
        softmax_probs.resize(block_rows * k);
        outputs.softmax = softmax_probs.data();
    }
    if (needs.softrun_rows) {
        taylor_probs.resize(block_rows * k);
        outputs.taylor = taylor_probs.data();
    }
    if (scaled) {
        base_stats.resize(block_rows);
        if (needs.probs) {
            base_probs.resize(block_rows * k);
            base_outputs.softmax = base_probs.data();
        }
    }
    if (second) second_rows.resize(block_rows * k);
    const std::size_t dim = extra.features ? extra.features->cols() : 0;
    if (extra.features) feature_rows.resize(block_rows * dim);

    // One transaction: the driver's sums are copied (they are small), each component keeps what
    // it needs to roll back.
    const impl::sums saved = core;
    for (auto& c : a.components) c->begin(rows.rows());
    try {
        for (std::size_t first = 0; first < rows.rows(); first += block_rows) {
            const std::size_t count = std::min(block_rows, rows.rows() - first);
            const float* block_f = nullptr;
            const double* block_d = nullptr;
            if (as_double && in_place) {
                block_d = static_cast<const double*>(rows.data()) + first * k;
            } else if (as_double) {
                widen_rows(rows, first, count, double_block.data());
                block_d = double_block.data();
            } else if (in_place) {
                block_f = static_cast<const float*>(rows.data()) + first * k;
            } else {
                float_rows(rows, first, count, float_block.data());
                block_f = float_block.data();
            }
            a.kernel(block_f, block_d, count, k, a.params, scratch.data(), stats.data(), outputs);
            detail::block b;
            b.count = count;
            b.k = k;
            b.first_row = extra.first_row.value_or(saved.n) + first;
            b.stats = b.base = stats.data();
            b.probs = needs.probs ? softmax_probs.data() : nullptr;
            if (needs.softrun_rows) {
                b.softmax_rows = softmax_probs.data();
                b.taylor_rows = taylor_probs.data();
            }
            if (scaled) {
                const double inv_t = 1.0 / a.opts.temperature;
                // q / T in double: rounding it to float would move exp(q/T - max) by ulp(q/T)
                if (as_double)
                    for (std::size_t i = 0; i < count * k; ++i) scaled_rows[i] = block_d[i] * inv_t;
                else
                    for (std::size_t i = 0; i < count * k; ++i) scaled_rows[i] = static_cast<double>(block_f[i]) * inv_t;
                a.kernel(nullptr, scaled_rows.data(), count, k, a.baseline_params, scratch.data(), base_stats.data(),
                         base_outputs);
                b.base = base_stats.data();
                b.probs = needs.probs ? base_probs.data() : nullptr;
            }
            if (second) {
                widen_rows(*second, first, count, second_rows.data());
                b.second = second_rows.data();
            }
            for (std::size_t r = 0; r < count; ++r) {
                const auto& st = stats[r];
                const std::size_t row = b.first_row + r;  // for messages
                if (st.bad_col >= 0) {
                    std::vector<double> bad(k);
                    widen_rows(rows, first + r, 1, bad.data());
                    check_finite_row(bad.data(), k, row);
                }
                if (st.bad_col == -2)
                    throw error("row " + std::to_string(row) + ": logits are too large to subtract from the row maximum (the difference overflows "
                                "double precision); scale them down");
                if (st.taylor_overflow && core.taylor_overflow_row < 0)
                    core.taylor_overflow_row = static_cast<std::int64_t>(core.n + r);
                core.phi_sum += st.phi;
                core.max_prob.add(b.base[r].max_prob);
                if (!core.predicted.empty()) core.predicted[static_cast<std::size_t>(st.argmax)] += 1;
                if (extra.labels) {
                    const std::int64_t label = extra.labels[first + r];
                    if (label < 0 || static_cast<std::size_t>(label) >= k)
                        throw error("row " + std::to_string(row) + ": label " + std::to_string(label) +
                                    " is outside [0, " + std::to_string(k) + "), the classes of these logits");
                    core.correct += label == st.argmax ? 1 : 0;
                    core.labeled_rows += 1;
                }
                if (second) check_finite_row<row_input_error>(second_rows.data() + r * k, k, row, row_input_error::input::second);
            }
            if (extra.features) {
                widen_rows(*extra.features, first, count, feature_rows.data());
                check_features(feature_rows.data(), count, dim, b.first_row);
                b.features = feature_rows.data();
                b.dim = dim;
                core.feature_rows += count;
            }
            if (second) core.second_rows += count;
            for (auto& c : a.components) c->add(b);
            core.n += count;
        }
    } catch (...) {
        core = saved;
        for (auto& c : a.components) c->rollback();
        throw;
    }
    for (auto& c : a.components) c->commit();
    core.own_rows += rows.rows();
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
    // softrun: a strict '>' picks softmax (paper, Algorithm 1)
    const normalization used = o.norm != normalization::softrun ? o.norm
                               : criterion > o.eta              ? normalization::softmax
                                                                : normalization::taylor;
    if (a.needs.taylor && used != normalization::softmax && core.taylor_overflow_row >= 0)
        throw error("row " + std::to_string(core.taylor_overflow_row) + ": the order-" +
                    std::to_string(o.taylor_order) +
                    " Taylor polynomial of these logits overflows double precision; use "
                    "normalization softmax or a lower taylor_order");
    const detail::final_context context{core.n, a.k, o, criterion, used, core.taylor_overflow_row >= 0,
                                        core.second_rows == core.n, core.feature_rows == core.n, core.max_prob};
    for (const auto& c : a.components) c->finalize(context, r);
    if (core.labeled_rows == core.n) r.accuracy = static_cast<double>(core.correct) / n;
    r.predicted = core.predicted;
    r.confidence = core.max_prob.sum / n;
    return r;
}

result score(const logits_view& logits, const options& opts) {
    // The row count is known here: the defaults for this set's size (COT up to its limit).
    options o = opts;
    if (o.methods.empty()) o.methods = default_methods(logits.cols(), logits.rows());
    accumulator acc(logits.cols(), o);
    acc.push(logits);
    return acc.finalize();
}

}  // namespace mano

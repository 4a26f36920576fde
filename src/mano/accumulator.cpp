#include "mano/accumulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mano/architecture.hpp"
#include "mano/detail/kernel.hpp"
#include "mano/detail/state.hpp"
#include "mano/error.hpp"
#include "mano/half.hpp"
#include "mano/text.hpp"
#include "mano/transport.hpp"

namespace mano {

namespace {

// Rows are widened to double and handed to the kernel in blocks of about this many logits:
// large enough to amortize the call, small enough to stay in L2.
constexpr std::size_t block_logits = 1 << 15;

detail::row_kernel kernel_named(const std::string& name) {
    for (const auto& kernel : detail::compiled_kernels())
        if (name == kernel.name) return kernel.run;
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
    // With a fixed criterion the softrun branch is known now: skip the other one.
    const bool fixed_softmax = o.criterion && o.norm == normalization::softrun && *o.criterion > o.eta;
    const bool fixed_taylor = o.criterion && o.norm == normalization::softrun && *o.criterion <= o.eta;
    kp.want_softmax = o.norm != normalization::taylor && !fixed_taylor;
    kp.want_taylor = o.norm != normalization::softmax && !fixed_softmax;
    return kp;
}

std::string describe(double x) {
    if (std::isnan(x)) return "NaN";
    return x > 0 ? "+Inf" : "-Inf";
}

}  // namespace

accumulator::accumulator(std::size_t k, const options& opts)
    : k_(k), opts_(opts) {
    opts_.validate();
    if (k < 2)
        throw error("logits need at least 2 columns (classes); got " + std::to_string(k));
    if (!opts_.label_marginal.empty() && opts_.label_marginal.size() != k)
        throw error("the label marginal has " + std::to_string(opts_.label_marginal.size()) +
                    " entries but the logits have " + std::to_string(k) + " classes");
    if (opts_.methods.empty()) opts_.methods = default_methods(k);
    // one order for every state (merging compares the lists), each method once
    std::sort(opts_.methods.begin(), opts_.methods.end());
    opts_.methods.erase(std::unique(opts_.methods.begin(), opts_.methods.end()), opts_.methods.end());
    for (const method m : {method::nuclear, method::nuclear_softrun}) {
        const double gib = static_cast<double>(k) * static_cast<double>(k) * 8.0 / (1 << 30);
        if (opts_.wants(m) && gib > 4.0)
            throw error(std::string(method_name(m)) + " keeps a K x K matrix: " + std::to_string(gib) +
                        " GiB for K = " + std::to_string(k) + "; leave it out of the methods for this many classes");
    }
    arch_ = resolve_architecture(opts_.architecture);
    kernel_ = kernel_named(arch_);
    params_ = std::make_unique<detail::kernel_params>(make_params(opts_, k_));
    // sum_k p^p is MaNo's alone; the Taylor rows also serve the softrun variants
    params_->want_softmax = params_->want_softmax && opts_.wants(method::mano);
    params_->want_taylor = params_->want_taylor && (opts_.wants(method::mano) || opts_.wants(method::confscore_softrun) ||
                                                    opts_.wants(method::nuclear_softrun));
    params_->want_extras = opts_.wants(method::entropy) || opts_.wants(method::atc_ne) ||
                           opts_.wants(method::confscore_softrun);
    baseline_params_ = std::make_unique<detail::kernel_params>(*params_);
    baseline_params_->want_softmax = baseline_params_->want_taylor = false;
    if (k <= class_counts_max_k) state_.predicted.assign(k, 0);
    if (opts_.wants(method::nuclear)) state_.gram.emplace(k);
    if (opts_.wants(method::nuclear_softrun)) {
        if (baseline_rows_differ() || !opts_.wants(method::nuclear)) state_.gram_softrun_softmax.emplace(k);
        state_.gram_softrun_taylor.emplace(k);
    }
}

accumulator::~accumulator() = default;
accumulator::accumulator(accumulator&&) noexcept = default;
accumulator& accumulator::operator=(accumulator&&) noexcept = default;

accumulator::accumulator(const accumulator& other)
    : k_(other.k_), opts_(other.opts_), arch_(other.arch_),
      params_(std::make_unique<detail::kernel_params>(*other.params_)),
      baseline_params_(std::make_unique<detail::kernel_params>(*other.baseline_params_)), kernel_(other.kernel_),
      state_(other.state_) {}

accumulator& accumulator::operator=(const accumulator& other) {
    if (this != &other) *this = accumulator(other);
    return *this;
}

bool accumulator::baseline_rows_differ() const { return opts_.temperature != 1.0; }


namespace {

// MDE's running log-sum-exp of the energies (the maximum and the sum of exp(E - max)), and
// their sum as deviations from the first one.
void add_energy(double& max, double& exp_sum, double& shift, double& deviation_sum, double e) {
    if (exp_sum == 0) {
        max = shift = e;
        exp_sum = 1;
        return;
    }
    if (e > max) {
        exp_sum = exp_sum * std::exp(max - e) + 1.0;
        max = e;
    } else {
        exp_sum += std::exp(e - max);
    }
    deviation_sum += e - shift;
}

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
    if (rows.cols() != k_)
        throw error("logits have " + std::to_string(rows.cols()) + " columns but this accumulator was created for " +
                    std::to_string(k_));
    const logits_view* second = extra.second;
    if (second && (second->rows() != rows.rows() || second->cols() != rows.cols()))
        throw error("the second model's logits have " + std::to_string(second->rows()) + " x " +
                    std::to_string(second->cols()) + " values but the logits have " + std::to_string(rows.rows()) +
                    " x " + std::to_string(rows.cols()) + "; both must score the same inputs");
    if (extra.features && extra.features->rows() != rows.rows())
        throw error("the features have " + std::to_string(extra.features->rows()) + " rows but the logits have " +
                    std::to_string(rows.rows()) + "; both must describe the same inputs");
    if (rows.rows() == 0) return;
    if (state_.own_rows == 0 && state_.shards.size() >= max_shards)
        throw error("accumulator state: this accumulator holds " + std::to_string(max_shards) +
                    " shards, the most a state may name, and rows pushed into it would be one more; score fewer, "
                    "larger shards");
    const bool nuclear = opts_.wants(method::nuclear), nuclear_softrun = opts_.wants(method::nuclear_softrun);
    const bool cot = opts_.wants(method::cot), scaled = baseline_rows_differ(), mde = opts_.wants(method::mde);
    const bool need_base_probs = nuclear || cot;
    // The kernel takes float rows (float32 in place when contiguous, float16/bfloat16 widened
    // exactly) or, for float64 logits, double rows.
    const bool as_double = rows.type() == dtype::float64;
    const bool in_place = rows.row_stride() == k_ && (rows.type() == dtype::float32 || as_double);

    // Rows per kernel call: ~32K logits, so that the blocks below stay in cache; at least 256
    // rows when a Gram matrix is updated. Rows read in place with nothing kept per row but their
    // statistics go in blocks of ~1M logits (up to 4096 rows): the kernel looks ahead and
    // prefetches within a call only.
    std::size_t block_rows = std::max<std::size_t>(1, block_logits / k_);
    if (nuclear || nuclear_softrun) block_rows = std::max<std::size_t>(block_rows, 256);
    if (in_place && !scaled && !second && !nuclear_softrun && !need_base_probs && !extra.features)
        block_rows = std::max(block_rows, std::min<std::size_t>(4096, std::max<std::size_t>(1, (1 << 20) / k_)));
    block_rows = std::min(block_rows, rows.rows());
    std::vector<float> float_block;
    std::vector<double> double_block, scaled_rows, second_rows;
    if (!in_place) as_double ? double_block.resize(block_rows * k_) : float_block.resize(block_rows * k_);
    if (scaled) scaled_rows.resize(block_rows * k_);
    std::vector<float> scratch(detail::kernel_scratch_floats(k_));
    std::vector<detail::row_stats> stats(block_rows), base_stats;
    std::vector<double> softmax_probs, taylor_probs, base_probs;
    detail::row_outputs outputs, base_outputs;
    if (nuclear_softrun || (need_base_probs && !scaled)) {
        softmax_probs.resize(block_rows * k_);
        outputs.softmax = softmax_probs.data();
    }
    if (nuclear_softrun) {
        taylor_probs.resize(block_rows * k_);
        outputs.taylor = taylor_probs.data();
    }
    if (scaled) {
        base_stats.resize(block_rows);
        if (need_base_probs) {
            base_probs.resize(block_rows * k_);
            base_outputs.softmax = base_probs.data();
        }
    }
    if (second) second_rows.resize(block_rows * k_);
    // The nuclear norms' rows of this push stay apart until it has fully succeeded (all-or-nothing).
    const bool beyond_k = state_.n + rows.rows() > k_;  // the set will need its Gram matrices
    const auto part = [&](bool wanted) {
        std::optional<detail::gram_sum> g;
        if (wanted) {
            g.emplace(k_);
            if (beyond_k) g->use_gram();
        }
        return g;
    };
    auto gram = part(nuclear), gram_softmax = part(state_.gram_softrun_softmax.has_value()),
         gram_taylor = part(nuclear_softrun);

    // The scalar part of the state, to restore if this push fails; the large parts are not
    // copied: the nuclear norms' rows or Gram matrices change only on success and COT rows are cut back.
    state saved;
    {
        auto gram_keep = std::move(state_.gram), softmax_keep = std::move(state_.gram_softrun_softmax),
             taylor_keep = std::move(state_.gram_softrun_taylor);
        auto cot_keep = std::move(state_.cot_rows);
        auto shards_keep = std::move(state_.shards);
        saved = state_;
        state_.gram = std::move(gram_keep);
        state_.gram_softrun_softmax = std::move(softmax_keep);
        state_.gram_softrun_taylor = std::move(taylor_keep);
        state_.cot_rows = std::move(cot_keep);
        state_.shards = std::move(shards_keep);
    }
    const std::size_t cot_size = state_.cot_rows.size();
    // Feature statistics are updated on copies that replace the originals only on success.
    std::shared_ptr<feature_moments> features;
    std::shared_ptr<class_dispersion> dispersion;
    std::vector<double> feature_rows;
    std::vector<std::int64_t> predicted;
    const std::size_t dim = extra.features ? extra.features->cols() : 0;
    if (extra.features) {
        if (state_.feature_rows != state_.n)
            throw error("features were given for some pushes but not for others; give them with every push");
        features = state_.features ? std::make_shared<feature_moments>(*state_.features)
                                   : std::make_shared<feature_moments>(dim);
        dispersion = state_.dispersion ? std::make_shared<class_dispersion>(*state_.dispersion)
                                       : std::make_shared<class_dispersion>(dim);
        feature_rows.resize(block_rows * dim);
        predicted.resize(block_rows);
    } else if (state_.feature_rows != 0) {
        throw error("features were given for earlier rows but not for these; give them with every push");
    }
    if (state_.n > 0 && (extra.labels != nullptr) != (state_.labeled_rows == state_.n))
        throw error("labels were given for some pushes but not for others; give them with every push or never");
    const std::optional<source_model>& source = opts_.source;
    try {
        for (std::size_t first = 0; first < rows.rows(); first += block_rows) {
            const std::size_t count = std::min(block_rows, rows.rows() - first);
            const float* block_f = nullptr;
            const double* block_d = nullptr;
            if (as_double && in_place) {
                block_d = static_cast<const double*>(rows.data()) + first * k_;
            } else if (as_double) {
                widen_rows(rows, first, count, double_block.data());
                block_d = double_block.data();
            } else if (in_place) {
                block_f = static_cast<const float*>(rows.data()) + first * k_;
            } else {
                float_rows(rows, first, count, float_block.data());
                block_f = float_block.data();
            }
            kernel_(block_f, block_d, count, k_, *params_, scratch.data(), stats.data(), outputs);
            const detail::row_stats* base = stats.data();
            const double* probs = softmax_probs.data();
            if (scaled) {
                const double inv_t = 1.0 / opts_.temperature;
                // q / T in double: rounding it to float would move exp(q/T - max) by ulp(q/T)
                if (as_double)
                    for (std::size_t i = 0; i < count * k_; ++i) scaled_rows[i] = block_d[i] * inv_t;
                else
                    for (std::size_t i = 0; i < count * k_; ++i) scaled_rows[i] = static_cast<double>(block_f[i]) * inv_t;
                kernel_(nullptr, scaled_rows.data(), count, k_, *baseline_params_, scratch.data(), base_stats.data(),
                        base_outputs);
                base = base_stats.data();
                probs = base_probs.data();
            }
            if (second) widen_rows(*second, first, count, second_rows.data());
            for (std::size_t r = 0; r < count; ++r) {
                const auto& st = stats[r];
                const std::size_t row = extra.first_row.value_or(saved.n) + first + r;  // for messages
                if (st.bad_col >= 0) {
                    std::vector<double> bad(k_);
                    widen_rows(rows, first + r, 1, bad.data());
                    check_finite_row(bad.data(), k_, row);
                }
                if (st.bad_col == -2)
                    throw error("row " + std::to_string(row) + ": logits are too large to subtract from the row maximum (the difference overflows "
                                "double precision); scale them down");
                if (st.taylor_overflow && state_.taylor_overflow_row < 0)
                    state_.taylor_overflow_row = static_cast<std::int64_t>(state_.n);
                state_.n += 1;
                state_.phi_sum += st.phi;
                state_.sums.softmax.add(st.softmax);
                state_.sums.taylor.add(st.taylor);
                if (opts_.batch_size > 0) {
                    state_.batch_sums.softmax += st.softmax;
                    state_.batch_sums.taylor += st.taylor;
                    if (++state_.batch_rows == static_cast<std::size_t>(opts_.batch_size)) {
                        state_.batch_scores.softmax.add(batch_score(state_.batch_sums.softmax, state_.batch_rows));
                        state_.batch_scores.taylor.add(batch_score(state_.batch_sums.taylor, state_.batch_rows));
                        state_.batches += 1;
                        state_.batch_rows = 0;
                        state_.batch_sums = {};
                    }
                }
                state_.max_prob.add(base[r].max_prob);
                state_.entropy.add(base[r].entropy);
                if (mde) {  // an exp per row: only when asked for
                    add_energy(state_.energy_max, state_.energy_exp_sum, state_.energy_shift, state_.energy_deviation_sum,
                               -base[r].lse);
                }
                state_.max_sigma.softmax.add(st.max_prob);
                state_.max_sigma.taylor.add(st.taylor_max);
                if (source) {
                    state_.atc_mc_count += base[r].max_prob >= source->atc_mc_threshold ? 1 : 0;
                    state_.atc_ne_count += -base[r].entropy >= source->atc_ne_threshold ? 1 : 0;
                }
                if (extra.features) predicted[r] = st.argmax;
                if (!state_.predicted.empty()) state_.predicted[static_cast<std::size_t>(st.argmax)] += 1;
                if (extra.labels) {
                    const std::int64_t label = extra.labels[first + r];
                    if (label < 0 || static_cast<std::size_t>(label) >= k_)
                        throw error("row " + std::to_string(row) + ": label " + std::to_string(label) +
                                    " is outside [0, " + std::to_string(k_) + "), the classes of these logits");
                    state_.correct += label == st.argmax ? 1 : 0;
                    state_.labeled_rows += 1;
                }
                if (second) {
                    const double* other = second_rows.data() + r * k_;
                    check_finite_row<row_input_error>(other, k_, row, row_input_error::input::second);
                    const auto other_argmax = std::max_element(other, other + k_) - other;
                    state_.agree += (other_argmax == st.argmax) ? 1 : 0;
                    state_.agreement_rows += 1;
                }
            }
            if (extra.features) {
                widen_rows(*extra.features, first, count, feature_rows.data());
                features->push(feature_rows.data(), count, extra.first_row.value_or(saved.n) + first);
                dispersion->push(feature_rows.data(), predicted.data(), count);
                state_.feature_rows += count;
            }
            if (gram) gram->add(probs, count);
            if (gram_softmax) gram_softmax->add(softmax_probs.data(), count);
            if (gram_taylor) gram_taylor->add(taylor_probs.data(), count);
            if (cot) state_.cot_rows.insert(state_.cot_rows.end(), probs, probs + count * k_);
        }
    } catch (...) {
        saved.gram = std::move(state_.gram);
        saved.gram_softrun_softmax = std::move(state_.gram_softrun_softmax);
        saved.gram_softrun_taylor = std::move(state_.gram_softrun_taylor);
        saved.cot_rows = std::move(state_.cot_rows);
        saved.cot_rows.resize(cot_size);
        saved.shards = std::move(state_.shards);
        state_ = std::move(saved);
        throw;
    }
    state_.own_rows += rows.rows();
    if (extra.features) {
        state_.features = std::move(features);
        state_.dispersion = std::move(dispersion);
    }
    if (gram) state_.gram->add(*gram);
    if (gram_softmax) state_.gram_softrun_softmax->add(*gram_softmax);
    if (gram_taylor) state_.gram_softrun_taylor->add(*gram_taylor);
}

namespace {

// The standard error of the mean of a per-row quantity (sample variance / n); NaN for n < 2.
double mean_se(double sum, double sum_sq, double n) {
    if (n < 2) return std::numeric_limits<double>::quiet_NaN();
    const double variance = std::max(0.0, (sum_sq - sum * sum / n) / (n - 1));
    return std::sqrt(variance / n);
}

// The standard error of a proportion a over n rows.
double proportion_se(double a, double n) { return std::sqrt(std::max(0.0, a * (1 - a)) / n); }

}  // namespace

// Below this mean of sigma^p the sum has lost its terms to underflow (each < DBL_MIN): at up to
// 10^12 entries they weigh at most 2e-6 of it.
constexpr double min_power_mean = 1e-290;

double accumulator::batch_score(double sum, std::size_t rows) const {
    return std::pow(sum / (static_cast<double>(rows) * static_cast<double>(k_)), 1.0 / opts_.p);
}

namespace {

// Adds `id` to a sorted list of shards, unless it is there.
void add_shard(std::vector<std::uint64_t>& ids, std::uint64_t id) {
    if (std::binary_search(ids.begin(), ids.end(), id)) return;
    ids.push_back(id);
    std::size_t i = ids.size() - 1;
    for (; i > 0 && ids[i - 1] > id; --i) ids[i] = ids[i - 1];
    ids[i] = id;
}

void require_same(bool same, const char* what) {
    if (!same)
        throw error(std::string("cannot merge accumulators with different ") + what +
                    "; score every shard with the same options");
}

}  // namespace

void accumulator::merge(const accumulator& other) { merge_state(other, false); }

void accumulator::merge_as_shard(const accumulator& other) { merge_state(other, true); }

void accumulator::merge_state(const accumulator& other, bool as_shard) {
    if (&other == this)
        throw error("cannot merge an accumulator into itself: that would count its rows twice");
    require_same(k_ == other.k_, "numbers of columns (K)");
    require_same(opts_.p == other.opts_.p, "p");
    require_same(opts_.eta == other.opts_.eta, "eta");
    require_same(opts_.taylor_order == other.opts_.taylor_order, "taylor_order");
    require_same(opts_.norm == other.opts_.norm, "normalization");
    require_same(opts_.batch_size == other.opts_.batch_size, "batch_size");
    require_same(opts_.criterion == other.opts_.criterion, "fixed criterion");
    require_same(opts_.methods == other.opts_.methods, "methods");
    require_same(opts_.temperature == other.opts_.temperature, "temperature");
    require_same(opts_.label_marginal == other.opts_.label_marginal, "label marginal");
    const auto same_json = [](const auto& a, const auto& b) { return (!a && !b) || (a && b && a->to_json() == b->to_json()); };
    require_same(same_json(opts_.source, other.opts_.source), "source models");
    require_same(same_json(opts_.source_features, other.opts_.source_features), "source features");
    if (opts_.batch_size > 0 && state_.batch_rows != 0 && other.state_.n != 0)
        throw error("in batch mode only a shard whose row count is a multiple of batch_size (" +
                    std::to_string(opts_.batch_size) + ") can be followed by another; this one has " +
                    std::to_string(state_.n) + " rows");
    if (state_.n != 0 && other.state_.n != 0 &&
        ((state_.agreement_rows == state_.n) != (other.state_.agreement_rows == other.state_.n) ||
         (state_.feature_rows == state_.n) != (other.state_.feature_rows == other.state_.n) ||
         (state_.labeled_rows == state_.n) != (other.state_.labeled_rows == other.state_.n)))
        throw error("cannot merge shards scored with and without the same extra inputs (second logits, features, labels)");
    // Shards: the union of both sorted lists, refusing one that both hold.
    std::vector<std::uint64_t> theirs = other.state_.shards;
    std::size_t own_rows = state_.own_rows + other.state_.own_rows;
    if (as_shard && other.state_.own_rows > 0) {
        const std::uint64_t id = detail::json_hash(other.state_json());
        // this one's own rows would get the same name: the same state
        if (state_.own_rows > 0 && detail::json_hash(state_json()) == id) throw repeated_shard(id, "this accumulator");
        add_shard(theirs, id);
        own_rows = state_.own_rows;
    }
    std::vector<std::uint64_t> shards;
    shards.reserve(state_.shards.size() + theirs.size());
    for (std::size_t a = 0, b = 0; a < state_.shards.size() || b < theirs.size();) {
        if (b == theirs.size() || (a < state_.shards.size() && state_.shards[a] < theirs[b])) {
            shards.push_back(state_.shards[a++]);
        } else if (a == state_.shards.size() || theirs[b] < state_.shards[a]) {
            shards.push_back(theirs[b++]);
        } else {
            throw repeated_shard(theirs[b], "this accumulator");
        }
    }
    if (shards.size() + (own_rows > 0 ? 1 : 0) > max_shards)
        throw error("accumulator state: the merged state would hold " + std::to_string(shards.size() + (own_rows > 0 ? 1 : 0)) +
                    " shards, over the " + std::to_string(max_shards) + " a state may name; score fewer, larger shards");
    const state& o = other.state_;
    if (state_.taylor_overflow_row < 0 && o.taylor_overflow_row >= 0)
        state_.taylor_overflow_row = o.taylor_overflow_row + static_cast<std::int64_t>(state_.n);
    state_.n += o.n;
    state_.phi_sum += o.phi_sum;
    state_.sums.softmax.add(o.sums.softmax);
    state_.sums.taylor.add(o.sums.taylor);
    state_.batch_scores.softmax.add(o.batch_scores.softmax);
    state_.batch_scores.taylor.add(o.batch_scores.taylor);
    state_.batches += o.batches;
    if (o.n != 0) {
        state_.batch_rows = o.batch_rows;
        state_.batch_sums = o.batch_sums;
    }
    state_.max_prob.add(o.max_prob);
    state_.entropy.add(o.entropy);
    if (state_.energy_exp_sum == 0) {
        state_.energy_max = o.energy_max;
        state_.energy_exp_sum = o.energy_exp_sum;
        state_.energy_shift = o.energy_shift;
        state_.energy_deviation_sum = o.energy_deviation_sum;
    } else if (o.energy_exp_sum > 0) {
        const double top = std::max(state_.energy_max, o.energy_max);
        state_.energy_exp_sum = state_.energy_exp_sum * std::exp(state_.energy_max - top) +
                                o.energy_exp_sum * std::exp(o.energy_max - top);
        state_.energy_max = top;
        state_.energy_deviation_sum +=
            o.energy_deviation_sum + static_cast<double>(o.n) * (o.energy_shift - state_.energy_shift);
    }
    if (state_.gram) state_.gram->add(*o.gram);
    if (state_.gram_softrun_softmax) state_.gram_softrun_softmax->add(*o.gram_softrun_softmax);
    if (state_.gram_softrun_taylor) state_.gram_softrun_taylor->add(*o.gram_softrun_taylor);
    state_.cot_rows.insert(state_.cot_rows.end(), o.cot_rows.begin(), o.cot_rows.end());
    state_.max_sigma.softmax.add(o.max_sigma.softmax);
    state_.max_sigma.taylor.add(o.max_sigma.taylor);
    state_.correct += o.correct;
    state_.labeled_rows += o.labeled_rows;
    state_.agree += o.agree;
    state_.agreement_rows += o.agreement_rows;
    state_.atc_mc_count += o.atc_mc_count;
    state_.atc_ne_count += o.atc_ne_count;
    for (std::size_t c = 0; c < state_.predicted.size(); ++c) state_.predicted[c] += o.predicted[c];
    if (o.features) {
        auto features = state_.features ? std::make_shared<feature_moments>(*state_.features) : nullptr;
        auto dispersion = state_.dispersion ? std::make_shared<class_dispersion>(*state_.dispersion) : nullptr;
        if (features) {
            features->merge(*o.features);
            dispersion->merge(*o.dispersion);
        }
        state_.features = features ? features : o.features;
        state_.dispersion = dispersion ? dispersion : o.dispersion;
    }
    state_.feature_rows += o.feature_rows;
    state_.shards = std::move(shards);
    state_.own_rows = own_rows;
}

result accumulator::finalize() const {
    if (state_.n == 0) throw error("no rows to score: the logits have 0 rows");
    const auto& o = opts_;
    const double n = static_cast<double>(state_.n);
    result r;
    r.n = state_.n;
    r.k = k_;
    // Phi = (1/N) sum_i (LSE_i - mean_k q_ik) = -(1/NK) sum_ik log p_ik
    const double criterion = o.criterion ? *o.criterion : state_.phi_sum / n;
    // softrun: a strict '>' picks softmax (paper, Algorithm 1)
    const normalization used = o.norm != normalization::softrun ? o.norm
                               : criterion > o.eta              ? normalization::softmax
                                                                : normalization::taylor;
    const bool softmax = used == normalization::softmax;
    const bool softrun_methods = o.wants(method::mano) || o.wants(method::confscore_softrun) ||
                                 o.wants(method::nuclear_softrun);
    if (softrun_methods && !softmax && state_.taylor_overflow_row >= 0)
        throw error("row " + std::to_string(state_.taylor_overflow_row) + ": the order-" +
                    std::to_string(o.taylor_order) +
                    " Taylor polynomial of these logits overflows double precision; use "
                    "normalization softmax or a lower taylor_order");
    if (o.wants(method::mano)) {
        mano_result m;
        m.p = o.p;
        m.eta = o.eta;
        m.taylor_order = o.taylor_order;
        m.batch_size = o.batch_size;
        m.criterion_fixed = o.criterion.has_value();
        m.criterion = criterion;
        m.used = used;
        // the score on one branch: the mean of batch scores in batch mode, else the whole set's
        const auto branch_score = [&](bool on_softmax) {
            if (o.batch_size > 0) {
                moments scores = on_softmax ? state_.batch_scores.softmax : state_.batch_scores.taylor;
                std::size_t batches = state_.batches;
                if (state_.batch_rows > 0) {  // the last, partial batch counts as one (like a DataLoader)
                    scores.add(batch_score(on_softmax ? state_.batch_sums.softmax : state_.batch_sums.taylor, state_.batch_rows));
                    batches += 1;
                }
                if (on_softmax == softmax) {
                    m.batches = batches;
                    r.se[static_cast<int>(method::mano)] = mean_se(scores.sum, scores.sum_sq, static_cast<double>(batches));
                }
                return scores.sum / static_cast<double>(batches);
            }
            const moments& sums = on_softmax ? state_.sums.softmax : state_.sums.taylor;
            const double score = batch_score(sums.sum, state_.n);
            // delta method: S = mean^(1/p) with mean = sums / (NK), so dS = S / (p mean) d(mean)
            const double mean = sums.sum / (n * static_cast<double>(k_));
            // sigma^p of every entry below double's range: the score would read 0, below its floor
            if (!(mean >= min_power_mean)) return std::numeric_limits<double>::quiet_NaN();
            if (on_softmax == softmax && mean > 0)
                r.se[static_cast<int>(method::mano)] =
                    score / (o.p * mean) * mean_se(sums.sum, sums.sum_sq, n) / static_cast<double>(k_);
            return score;
        };
        m.score = branch_score(softmax);
        if (std::isnan(m.score))
            throw error("p = " + number_text(o.p) + " is too large for these logits: every sigma^p underflows double "
                        "precision, so the " + normalization_name(used) + " score would read 0; use a smaller p");
        if (o.norm == normalization::softrun && !o.criterion) {
            const auto put = [&](normalization branch, double value) {
                if (!std::isnan(value)) m.variants[variant_name(branch, o.taylor_order)] = value;
            };
            put(normalization::softmax, softmax ? m.score : branch_score(true));
            if (state_.taylor_overflow_row < 0) put(normalization::taylor, softmax ? branch_score(false) : m.score);
        }
        r.mano = m;
    }
    const auto se_of = [&](method m, const moments& x) { r.se[static_cast<int>(m)] = mean_se(x.sum, x.sum_sq, n); };
    if (o.wants(method::confscore)) {
        r.confscore = state_.max_prob.sum / n;
        se_of(method::confscore, state_.max_prob);
    }
    if (o.wants(method::entropy)) {
        r.entropy = state_.entropy.sum / n;
        se_of(method::entropy, state_.entropy);
    }
    // MDE = LSE_j(E_j) - mean_i E_i with E_i = -LSE(q_i)
    // MDE = LSE_j(E_j) - mean_i E_i = (max - mean) + log sum_j exp(E_j - max), both terms >= 0
    if (o.wants(method::mde))
        r.mde = std::max(0.0, (state_.energy_max - state_.energy_shift) - state_.energy_deviation_sum / n) +
                std::log(state_.energy_exp_sum);
    if (o.wants(method::nuclear)) r.nuclear = state_.gram->nuclear(state_.n);
    if (o.wants(method::confscore_softrun)) {
        const moments& max_sigma = softmax ? state_.max_sigma.softmax : state_.max_sigma.taylor;
        r.confscore_softrun = max_sigma.sum / n;
        se_of(method::confscore_softrun, max_sigma);
    }
    if (o.wants(method::nuclear_softrun)) {
        const auto& softmax_gram = state_.gram_softrun_softmax ? *state_.gram_softrun_softmax : *state_.gram;
        r.nuclear_softrun = (softmax ? softmax_gram : *state_.gram_softrun_taylor).nuclear(state_.n);
    }
    if (o.wants(method::cot)) {
        const std::vector<double> uniform(k_, 1.0 / static_cast<double>(k_));
        accuracy_estimate e;
        e.error = transport_cost(state_.cot_rows.data(), state_.n, k_,
                                 o.label_marginal.empty() ? uniform : o.label_marginal);
        e.accuracy = 1.0 - e.error;
        r.cot = e;
    }
    if (o.source) {
        if (o.wants(method::atc_mc)) {
            r.atc_mc = accuracy_estimate{static_cast<double>(state_.atc_mc_count) / n, o.source->atc_mc_threshold, 0};
            r.se[static_cast<int>(method::atc_mc)] = proportion_se(r.atc_mc->accuracy, n);
        }
        if (o.wants(method::atc_ne)) {
            r.atc_ne = accuracy_estimate{static_cast<double>(state_.atc_ne_count) / n, o.source->atc_ne_threshold, 0};
            r.se[static_cast<int>(method::atc_ne)] = proportion_se(r.atc_ne->accuracy, n);
        }
        // DoC: source accuracy minus the drop in average confidence
        if (o.wants(method::doc)) {
            // An accuracy: the difference of confidences can carry it past 0 or 1 (a source set far
            // more confident than accurate, a target far less confident than the source).
            const double doc = o.source->accuracy - (o.source->confscore - state_.max_prob.sum / n);
            r.doc = accuracy_estimate{std::clamp(doc, 0.0, 1.0), 0, 0};
            se_of(method::doc, state_.max_prob);
        }
    }
    if (state_.features && state_.feature_rows == state_.n) {
        if (o.wants(method::dispersion)) r.dispersion = state_.dispersion->score();
        if (o.wants(method::frechet) && o.source_features)
            r.frechet = frechet_distance(*o.source_features, *state_.features);
    }
    if (o.wants(method::agreement) && state_.agreement_rows == state_.n) {
        accuracy_estimate e;
        e.accuracy = static_cast<double>(state_.agree) / n;
        r.agreement = e;
        r.se[static_cast<int>(method::agreement)] = proportion_se(e.accuracy, n);
    }
    if (state_.labeled_rows == state_.n) r.accuracy = static_cast<double>(state_.correct) / n;
    r.predicted = state_.predicted;
    r.confidence = state_.max_prob.sum / n;
    return r;
}

namespace {

// Version 2 added the sums of squares behind the standard errors, and the label counts; 4 the
// predicted class counts; 5 MDE's energies as deviations from the first one; 6 the shards.
constexpr int state_version = 6;

nlohmann::json shard_names(const std::vector<std::uint64_t>& ids) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto id : ids) names.push_back(detail::shard_name(id));
    return names;
}

}  // namespace

std::string shard_name(std::uint64_t id) { return detail::shard_name(id); }

error repeated_shard(std::uint64_t id, const std::string& holder) {
    return error("accumulator state: shard " + detail::shard_name(id) + " is already in " + holder +
                 " (merging one shard twice would count its rows twice; a shard is named by a hash of its state, "
                 "so states of identical sums are one shard)");
}

nlohmann::json accumulator::moments_json(const moments& m) { return {m.sum, m.sum_sq}; }

accumulator::moments accumulator::moments_from(const nlohmann::json& j) {
    const auto pair = j.get<std::vector<double>>();
    if (pair.size() != 2) throw error("accumulator state: a [sum, sum of squares] pair has " + std::to_string(pair.size()) + " values");
    return {pair[0], pair[1]};
}

nlohmann::json accumulator::to_json() const {
    nlohmann::json j = state_json();
    if (state_.own_rows > 0) j["shards"] = shard_names(shards_with_own(j));
    return j;
}

std::vector<std::uint64_t> accumulator::shards() const {
    return state_.own_rows > 0 ? shards_with_own(state_json()) : state_.shards;
}

// The own rows become a shard named by the content of the state that holds them (state_json()).
std::vector<std::uint64_t> accumulator::shards_with_own(const nlohmann::json& content) const {
    std::vector<std::uint64_t> ids = state_.shards;
    add_shard(ids, detail::json_hash(content));
    return ids;
}

nlohmann::json accumulator::state_json() const {
    const auto& s = state_;
    return {
        {"format", "mano-accumulator"},
        {"version", state_version},
        {"k", k_},
        {"options", opts_.to_json()},
        {"n", s.n},
        {"phi_sum", s.phi_sum},
        {"sum_softmax", moments_json(s.sums.softmax)},
        {"sum_taylor", moments_json(s.sums.taylor)},
        {"taylor_overflow_row", s.taylor_overflow_row},
        {"batch",
         {{"batches", s.batches},
          {"scores_softmax", moments_json(s.batch_scores.softmax)},
          {"scores_taylor", moments_json(s.batch_scores.taylor)},
          {"rows", s.batch_rows},
          {"sum_softmax", s.batch_sums.softmax},
          {"sum_taylor", s.batch_sums.taylor}}},
        {"max_prob", moments_json(s.max_prob)},
        {"entropy", moments_json(s.entropy)},
        {"energy", {{"max", s.energy_max}, {"exp_sum", s.energy_exp_sum}, {"shift", s.energy_shift},
                    {"deviation_sum", s.energy_deviation_sum}}},
        {"gram", s.gram ? s.gram->to_json() : nlohmann::json()},
        {"gram_softrun_softmax", s.gram_softrun_softmax ? s.gram_softrun_softmax->to_json() : nlohmann::json()},
        {"gram_softrun_taylor", s.gram_softrun_taylor ? s.gram_softrun_taylor->to_json() : nlohmann::json()},
        {"cot_rows", s.cot_rows},
        {"max_sigma", {{"softmax", moments_json(s.max_sigma.softmax)}, {"taylor", moments_json(s.max_sigma.taylor)}}},
        {"labels", {{"correct", s.correct}, {"rows", s.labeled_rows}}},
        {"agreement", {{"agree", s.agree}, {"rows", s.agreement_rows}}},
        {"atc", {{"mc", s.atc_mc_count}, {"ne", s.atc_ne_count}}},
        {"features", s.features ? s.features->to_json() : nlohmann::json()},
        {"dispersion", s.dispersion ? s.dispersion->to_json() : nlohmann::json()},
        {"feature_rows", s.feature_rows},
        {"predicted", s.predicted},
        {"shards", shard_names(s.shards)},
    };
}

accumulator accumulator::from_json(const nlohmann::json& j) {
    try {
        detail::check_state_header(j, "mano-accumulator", "accumulator state", state_version,
                                   "emit it again with this mano");
        detail::check_known_keys(j, {"format", "version", "k", "options", "n", "phi_sum", "sum_softmax", "sum_taylor",
                                     "taylor_overflow_row", "batch", "max_prob", "entropy", "energy", "gram",
                                     "gram_softrun_softmax", "gram_softrun_taylor", "cot_rows", "max_sigma", "labels",
                                     "agreement", "atc", "features", "dispersion", "feature_rows", "predicted", "shards"},
                                 "accumulator state");
        const options o = options::from_json(j.at("options"));
        const std::size_t k = detail::count_of(j, "k", "accumulator state");
        accumulator acc(k, o);
        auto& s = acc.state_;
        s.n = detail::count_of(j, "n", "accumulator state");
        s.phi_sum = j.at("phi_sum").get<double>();
        s.sums.softmax = moments_from(j.at("sum_softmax"));
        s.sums.taylor = moments_from(j.at("sum_taylor"));
        s.taylor_overflow_row = detail::integer_of(j.at("taylor_overflow_row"), "accumulator state", "taylor_overflow_row", -1,
                                                   std::numeric_limits<std::int64_t>::max());
        const auto& b = j.at("batch");
        s.batches = detail::count_of(b, "batches", "accumulator state");
        s.batch_scores.softmax = moments_from(b.at("scores_softmax"));
        s.batch_scores.taylor = moments_from(b.at("scores_taylor"));
        s.batch_rows = detail::count_of(b, "rows", "accumulator state");
        s.batch_sums.softmax = b.at("sum_softmax").get<double>();
        s.batch_sums.taylor = b.at("sum_taylor").get<double>();
        s.max_prob = moments_from(j.at("max_prob"));
        s.entropy = moments_from(j.at("entropy"));
        s.energy_max = j.at("energy").at("max").get<double>();
        s.energy_exp_sum = j.at("energy").at("exp_sum").get<double>();
        s.energy_shift = j.at("energy").at("shift").get<double>();
        s.energy_deviation_sum = j.at("energy").at("deviation_sum").get<double>();
        const auto read_gram = [&](const char* key, std::optional<detail::gram_sum>& into) {
            const auto& value = j.at(key);
            if (value.is_null() != !into)
                throw error(std::string("accumulator state: \"") + key + "\" is " + (into ? "missing" : "present") +
                            " but these options " + (into ? "need" : "do not use") + " it");
            if (into) into = detail::gram_sum::from_json(value, k, s.n, key);
        };
        read_gram("gram", s.gram);
        read_gram("gram_softrun_softmax", s.gram_softrun_softmax);
        read_gram("gram_softrun_taylor", s.gram_softrun_taylor);
        s.cot_rows = j.at("cot_rows").get<std::vector<double>>();
        s.max_sigma.softmax = moments_from(j.at("max_sigma").at("softmax"));
        s.max_sigma.taylor = moments_from(j.at("max_sigma").at("taylor"));
        s.correct = detail::count_of(j.at("labels"), "correct", "accumulator state");
        s.labeled_rows = detail::count_of(j.at("labels"), "rows", "accumulator state");
        s.agree = detail::count_of(j.at("agreement"), "agree", "accumulator state");
        s.agreement_rows = detail::count_of(j.at("agreement"), "rows", "accumulator state");
        s.atc_mc_count = detail::count_of(j.at("atc"), "mc", "accumulator state");
        s.atc_ne_count = detail::count_of(j.at("atc"), "ne", "accumulator state");
        if (!j.at("features").is_null()) {
            s.features = std::make_shared<feature_moments>(feature_moments::from_json(j.at("features")));
            s.dispersion = std::make_shared<class_dispersion>(class_dispersion::from_json(j.at("dispersion")));
        }
        s.feature_rows = detail::count_of(j, "feature_rows", "accumulator state");
        const auto& predicted_json = j.at("predicted");
        if (!predicted_json.is_array() || predicted_json.size() != s.predicted.size())
            throw error("accumulator state: \"predicted\" must hold " + std::to_string(s.predicted.size()) +
                        " class counts that sum to n");
        std::vector<std::uint64_t> predicted;
        for (const auto& count : predicted_json)
            predicted.push_back(static_cast<std::uint64_t>(
                detail::integer_of(count, "accumulator state", "predicted", 0, std::numeric_limits<std::int64_t>::max())));
        std::uint64_t predicted_rows = 0;
        for (const auto count : predicted) predicted_rows += std::min<std::uint64_t>(count, s.n + 1);
        if (predicted.size() != s.predicted.size() || (!predicted.empty() && predicted_rows != s.n))
            throw error("accumulator state: \"predicted\" must hold " + std::to_string(s.predicted.size()) +
                        " class counts that sum to n");
        s.predicted = predicted;
        const auto& shards = j.at("shards");
        if (!shards.is_array()) throw error("accumulator state: \"shards\" must be a list of shard ids");
        if (shards.size() > max_shards)
            throw error("accumulator state: \"shards\" names " + std::to_string(shards.size()) + " shards, over the " +
                        std::to_string(max_shards) + " a state may name");
        for (const auto& name : shards) {
            const auto id = name.is_string() ? detail::parse_shard_name(name.get<std::string>()) : std::nullopt;
            if (!id || (!s.shards.empty() && *id <= s.shards.back()))
                throw error("accumulator state: \"shards\" must hold distinct ids of 16 hexadecimal digits in ascending "
                            "order (got " + name.dump().substr(0, 40) + ")");
            s.shards.push_back(*id);
        }
        // every shard has rows: none for an empty state, at most one per row otherwise
        if ((s.n == 0) != s.shards.empty() || s.shards.size() > s.n)
            throw error("accumulator state: \"shards\" names " + std::to_string(s.shards.size()) + " shards for " +
                        std::to_string(s.n) + " rows; a state of n rows names 1 to n shards (none when n = 0)");
        const bool energies = std::isfinite(s.energy_max) && std::isfinite(s.energy_shift) &&
                              std::isfinite(s.energy_deviation_sum) && std::isfinite(s.energy_exp_sum) &&
                              (o.wants(method::mde) && s.n > 0 ? s.energy_exp_sum >= 1 && s.energy_shift <= s.energy_max
                                                               : s.energy_exp_sum >= 0);
        // per-row quantities in known ranges: max p and sum_k sigma^p in [0, 1], entropy in
        // [0, log K], Phi_i >= log K > 0 (a little slack for rounding in the sums)
        const double rows = static_cast<double>(s.n) * (1 + 1e-9) + 1e-9;
        const auto within = [&](const moments& m, double top) {
            return m.sum >= 0 && m.sum <= top * rows && m.sum_sq >= 0 && m.sum_sq <= top * top * rows;
        };
        const bool ranges = within(s.max_prob, 1) && within(s.entropy, std::log(static_cast<double>(k))) &&
                            within(s.sums.softmax, 1) && within(s.sums.taylor, 1) && within(s.max_sigma.softmax, 1) &&
                            within(s.max_sigma.taylor, 1) && s.phi_sum >= 0;
        const bool sane = energies && ranges && std::isfinite(s.phi_sum) && s.sums.softmax.sum >= 0 && s.sums.taylor.sum >= 0 &&
                          s.correct <= s.labeled_rows && s.labeled_rows <= s.n &&
                          (o.batch_size == 0 ? s.batches == 0 && s.batch_rows == 0
                                             : s.batch_rows < static_cast<std::size_t>(o.batch_size) &&
                                                   s.batches * o.batch_size + s.batch_rows == s.n) &&
                          s.cot_rows.size() == (o.wants(method::cot) ? s.n * k : 0) && s.agree <= s.agreement_rows &&
                          s.agreement_rows <= s.n && s.atc_mc_count <= s.n && s.atc_ne_count <= s.n &&
                          (s.features ? s.feature_rows == s.n && s.features->n() == s.n : s.feature_rows == 0);
        if (!sane) throw error("accumulator state: inconsistent sums or row counts");
        return acc;
    } catch (const nlohmann::json::exception& e) {
        throw error(std::string("accumulator state: ") + e.what());
    }
}

result score(const logits_view& logits, const options& opts) {
    accumulator acc(logits.cols(), opts);
    acc.push(logits);
    return acc.finalize();
}

}  // namespace mano

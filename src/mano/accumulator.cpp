#include "mano/accumulator.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "mano/architecture.hpp"
#include "mano/detail/kernel.hpp"
#include "mano/error.hpp"
#include "mano/half.hpp"

namespace mano {

namespace {

// Rows are widened to double and handed to the kernel in blocks of about this many logits:
// large enough to amortize the call, small enough to stay in L2.
constexpr std::size_t block_logits = 1 << 15;

detail::row_kernel kernel_named(const std::string& name) {
    for (const auto& kernel : detail::compiled_kernels())
        if (name == kernel.name) return kernel.run;
    throw error("no kernel named '" + name + "'");
}

detail::kernel_params make_params(const options& o) {
    detail::kernel_params kp;
    kp.p = o.p;
    kp.p_int = (o.p == std::floor(o.p) && o.p >= 2 && o.p <= 64) ? static_cast<int>(o.p) : 0;
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

// Widens rows [first, first + count) of any supported dtype into contiguous doubles.
void widen(const logits_view& v, std::size_t first, std::size_t count, double* out) {
    const std::size_t k = v.cols(), stride = v.row_stride();
    for (std::size_t r = 0; r < count; ++r) {
        const std::size_t offset = (first + r) * stride;
        double* dst = out + r * k;
        switch (v.type()) {
            case dtype::float32: {
                const float* src = static_cast<const float*>(v.data()) + offset;
                for (std::size_t c = 0; c < k; ++c) dst[c] = src[c];
                break;
            }
            case dtype::float64: {
                const double* src = static_cast<const double*>(v.data()) + offset;
                std::copy(src, src + k, dst);
                break;
            }
            case dtype::float16: {
                const auto* src = static_cast<const std::uint16_t*>(v.data()) + offset;
                for (std::size_t c = 0; c < k; ++c) dst[c] = half_to_float(src[c]);
                break;
            }
            case dtype::bfloat16: {
                const auto* src = static_cast<const std::uint16_t*>(v.data()) + offset;
                for (std::size_t c = 0; c < k; ++c) dst[c] = bfloat16_to_float(src[c]);
                break;
            }
        }
    }
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
    arch_ = resolve_architecture(opts_.architecture);
    kernel_ = kernel_named(arch_);
    params_ = std::make_unique<detail::kernel_params>(make_params(opts_));
}

accumulator::~accumulator() = default;
accumulator::accumulator(accumulator&&) noexcept = default;
accumulator& accumulator::operator=(accumulator&&) noexcept = default;

accumulator::accumulator(const accumulator& other)
    : k_(other.k_), opts_(other.opts_), arch_(other.arch_),
      params_(std::make_unique<detail::kernel_params>(*other.params_)), kernel_(other.kernel_),
      state_(other.state_) {}

accumulator& accumulator::operator=(const accumulator& other) {
    if (this != &other) *this = accumulator(other);
    return *this;
}

void accumulator::push(const logits_view& rows) {
    if (rows.cols() != k_)
        throw error("logits have " + std::to_string(rows.cols()) + " columns but this accumulator was created for " +
                    std::to_string(k_));
    if (rows.rows() == 0) return;
    const std::size_t block_rows = std::max<std::size_t>(1, block_logits / k_);
    const bool direct = rows.type() == dtype::float64 && rows.row_stride() == k_;
    if (!direct) widened_.resize(std::min(block_rows, rows.rows()) * k_);
    scratch_.resize(k_);
    std::vector<detail::row_stats> stats(std::min(block_rows, rows.rows()));

    const state saved = state_;
    try {
        for (std::size_t first = 0; first < rows.rows(); first += block_rows) {
            const std::size_t count = std::min(block_rows, rows.rows() - first);
            const double* block;
            if (direct) {
                block = static_cast<const double*>(rows.data()) + first * k_;
            } else {
                widen(rows, first, count, widened_.data());
                block = widened_.data();
            }
            kernel_(block, count, k_, *params_, scratch_.data(), stats.data());
            for (std::size_t r = 0; r < count; ++r) {
                const auto& st = stats[r];
                const std::size_t row = state_.n;  // 0-based index over all rows pushed so far
                if (st.bad_col >= 0)
                    throw error("row " + std::to_string(row) + ", column " + std::to_string(st.bad_col) +
                                ": logit is " + describe(block[r * k_ + st.bad_col]) +
                                " (rows and columns count from 0); logits must be finite");
                if (st.bad_col == -2)
                    throw error("row " + std::to_string(row) +
                                ": logits are too large to sum in double precision");
                if (st.taylor_overflow && state_.taylor_overflow_row < 0)
                    state_.taylor_overflow_row = static_cast<std::int64_t>(row);
                state_.n += 1;
                state_.phi_sum += st.phi;
                state_.sums.softmax += st.softmax;
                state_.sums.taylor += st.taylor;
                if (opts_.batch_size > 0) {
                    state_.batch_sums.softmax += st.softmax;
                    state_.batch_sums.taylor += st.taylor;
                    if (++state_.batch_rows == static_cast<std::size_t>(opts_.batch_size)) {
                        state_.batch_scores.softmax += batch_score(state_.batch_sums.softmax, state_.batch_rows);
                        state_.batch_scores.taylor += batch_score(state_.batch_sums.taylor, state_.batch_rows);
                        state_.batches += 1;
                        state_.batch_rows = 0;
                        state_.batch_sums = {};
                    }
                }
            }
        }
    } catch (...) {
        state_ = saved;
        throw;
    }
}

double accumulator::batch_score(double sum, std::size_t rows) const {
    return std::pow(sum / (static_cast<double>(rows) * static_cast<double>(k_)), 1.0 / opts_.p);
}

namespace {

void require_same(bool same, const char* what) {
    if (!same)
        throw error(std::string("cannot merge accumulators with different ") + what +
                    "; score every shard with the same options");
}

}  // namespace

void accumulator::merge(const accumulator& other) {
    require_same(k_ == other.k_, "numbers of columns (K)");
    require_same(opts_.p == other.opts_.p, "p");
    require_same(opts_.eta == other.opts_.eta, "eta");
    require_same(opts_.taylor_order == other.opts_.taylor_order, "taylor_order");
    require_same(opts_.norm == other.opts_.norm, "normalization");
    require_same(opts_.batch_size == other.opts_.batch_size, "batch_size");
    require_same(opts_.criterion == other.opts_.criterion, "fixed criterion");
    if (opts_.batch_size > 0 && state_.batch_rows != 0 && other.state_.n != 0)
        throw error("in batch mode only a shard whose row count is a multiple of batch_size (" +
                    std::to_string(opts_.batch_size) + ") can be followed by another; this one has " +
                    std::to_string(state_.n) + " rows");
    const state& o = other.state_;
    if (state_.taylor_overflow_row < 0 && o.taylor_overflow_row >= 0)
        state_.taylor_overflow_row = o.taylor_overflow_row + static_cast<std::int64_t>(state_.n);
    state_.n += o.n;
    state_.phi_sum += o.phi_sum;
    state_.sums.softmax += o.sums.softmax;
    state_.sums.taylor += o.sums.taylor;
    state_.batch_scores.softmax += o.batch_scores.softmax;
    state_.batch_scores.taylor += o.batch_scores.taylor;
    state_.batches += o.batches;
    if (o.n != 0) {
        state_.batch_rows = o.batch_rows;
        state_.batch_sums = o.batch_sums;
    }
}

result accumulator::finalize() const {
    if (state_.n == 0) throw error("no rows to score: the logits have 0 rows");
    const auto& o = opts_;
    result r;
    r.n = state_.n;
    r.k = k_;
    auto& m = r.mano;
    m.p = o.p;
    m.eta = o.eta;
    m.taylor_order = o.taylor_order;
    m.batch_size = o.batch_size;
    m.criterion_fixed = o.criterion.has_value();
    // Phi = (1/N) sum_i (LSE_i - mean_k q_ik) = -(1/NK) sum_ik log p_ik
    m.criterion = o.criterion ? *o.criterion : state_.phi_sum / static_cast<double>(state_.n);
    // softrun: a strict '>' picks softmax (paper, Algorithm 1)
    m.used = o.norm != normalization::softrun ? o.norm
             : m.criterion > o.eta           ? normalization::softmax
                                             : normalization::taylor;
    const bool softmax = m.used == normalization::softmax;
    if (!softmax && state_.taylor_overflow_row >= 0)
        throw error("row " + std::to_string(state_.taylor_overflow_row) + ": the order-" +
                    std::to_string(o.taylor_order) +
                    " Taylor polynomial of these logits overflows double precision; use "
                    "normalization softmax or a lower taylor_order");
    if (o.batch_size > 0) {
        double total = softmax ? state_.batch_scores.softmax : state_.batch_scores.taylor;
        std::size_t batches = state_.batches;
        if (state_.batch_rows > 0) {  // the last, partial batch counts as one (like a DataLoader)
            total += batch_score(softmax ? state_.batch_sums.softmax : state_.batch_sums.taylor,
                                 state_.batch_rows);
            batches += 1;
        }
        m.batches = batches;
        m.score = total / static_cast<double>(batches);
    } else {
        m.score = batch_score(softmax ? state_.sums.softmax : state_.sums.taylor, state_.n);
    }
    return r;
}

nlohmann::json accumulator::to_json() const {
    const auto& s = state_;
    return {
        {"format", "mano-accumulator"},
        {"version", 1},
        {"k", k_},
        {"options",
         {{"p", opts_.p},
          {"eta", opts_.eta},
          {"taylor_order", opts_.taylor_order},
          {"normalization", normalization_name(opts_.norm)},
          {"batch_size", opts_.batch_size},
          {"criterion", opts_.criterion ? nlohmann::json(*opts_.criterion) : nlohmann::json()}}},
        {"n", s.n},
        {"phi_sum", s.phi_sum},
        {"sum_softmax", s.sums.softmax},
        {"sum_taylor", s.sums.taylor},
        {"taylor_overflow_row", s.taylor_overflow_row},
        {"batch",
         {{"batches", s.batches},
          {"scores_softmax", s.batch_scores.softmax},
          {"scores_taylor", s.batch_scores.taylor},
          {"rows", s.batch_rows},
          {"sum_softmax", s.batch_sums.softmax},
          {"sum_taylor", s.batch_sums.taylor}}},
    };
}

accumulator accumulator::from_json(const nlohmann::json& j) {
    try {
        if (!j.is_object() || j.value("format", "") != "mano-accumulator")
            throw error("accumulator state: not a mano accumulator state (\"format\" is not \"mano-accumulator\")");
        if (j.at("version").get<int>() != 1)
            throw error("accumulator state: unsupported version " + j.at("version").dump() + " (this build reads 1)");
        const auto& jo = j.at("options");
        options o;
        o.p = jo.at("p").get<double>();
        o.eta = jo.at("eta").get<double>();
        o.taylor_order = jo.at("taylor_order").get<int>();
        o.norm = parse_normalization(jo.at("normalization").get<std::string>());
        o.batch_size = jo.at("batch_size").get<std::int64_t>();
        if (!jo.at("criterion").is_null()) o.criterion = jo.at("criterion").get<double>();
        accumulator acc(j.at("k").get<std::size_t>(), o);
        auto& s = acc.state_;
        s.n = j.at("n").get<std::size_t>();
        s.phi_sum = j.at("phi_sum").get<double>();
        s.sums.softmax = j.at("sum_softmax").get<double>();
        s.sums.taylor = j.at("sum_taylor").get<double>();
        s.taylor_overflow_row = j.at("taylor_overflow_row").get<std::int64_t>();
        const auto& b = j.at("batch");
        s.batches = b.at("batches").get<std::size_t>();
        s.batch_scores.softmax = b.at("scores_softmax").get<double>();
        s.batch_scores.taylor = b.at("scores_taylor").get<double>();
        s.batch_rows = b.at("rows").get<std::size_t>();
        s.batch_sums.softmax = b.at("sum_softmax").get<double>();
        s.batch_sums.taylor = b.at("sum_taylor").get<double>();
        const bool sane = std::isfinite(s.phi_sum) && s.sums.softmax >= 0 && s.sums.taylor >= 0 &&
                          (o.batch_size == 0 ? s.batches == 0 && s.batch_rows == 0
                                             : s.batch_rows < static_cast<std::size_t>(o.batch_size) &&
                                                   s.batches * o.batch_size + s.batch_rows == s.n);
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

// The accumulator's merge, its JSON state (format "mano-accumulator") and shard names, and the
// parts of the components' sections they share (estimators/estimator.hpp): code that runs once per
// state, not once per row.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mano/accumulator/accumulator.hpp"
#include "mano/accumulator/detail/accumulator_impl.hpp"
#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/base/page_memory.hpp"

namespace mano {

// ---- shared pieces of the components (estimators/estimator.hpp) ----

namespace detail {

double moments::mean_se(double n) const {
    if (n < 2) return std::numeric_limits<double>::quiet_NaN();
    // A spread within the rounding of its two terms (n terms' errors, about eps sum_sq each,
    // adding up as a random walk) is no spread: values that are all equal (MaNo's batch scores on
    // one-hot rows) read 0 whichever way their sums were split among merged states.
    const double spread = sum_sq - sum * sum / n;
    const double noise = 8 * std::sqrt(n) * std::numeric_limits<double>::epsilon() * sum_sq;
    const double variance = spread > noise ? spread / (n - 1) : 0.0;
    return std::sqrt(variance / n);
}

moments moments::from_json(const nlohmann::json& j, double n, double top, const std::string& what) {
    const auto pair = detail::numbers_in(j, what + ": a [sum, sum of squares] pair");
    if (pair.size() != 2) throw error(what + ": a [sum, sum of squares] pair has " + std::to_string(pair.size()) + " values");
    const double rows = n * (1 + 1e-9) + 1e-9;
    const moments m{pair[0], pair[1]};
    check_state(m.sum >= 0 && m.sum <= top * rows && m.sum_sq >= 0 && m.sum_sq <= top * top * rows,
                what + ": inconsistent sums, outside the range of " + std::to_string(static_cast<std::size_t>(n)) + " rows");
    return m;
}

double proportion_se(double a, double n) { return std::sqrt(std::max(0.0, a * (1 - a)) / n); }

void check_state(bool ok, const std::string& what) {
    if (!ok) throw error(what);
}

// A new block holds this push's rows and room for as many rows again as the store has (geometric
// growth), at most about 16 MB beyond the push: a store of a few rows reserves a few rows. (A
// fixed 16 MB per block made each 20-row chunk of a chunked scan reserve 16 MB per row-keeping
// method; merged into one state, 100 chunks ran WebAssembly's 2 GiB heap out, web/test/dashboard.test.js.)
template <class T>
T* row_store_of<T>::extend(std::size_t count) {
    const bool writable = !blocks_.empty() && blocks_.back().data.use_count() == 1 &&
                          blocks_.back().rows + count <= blocks_.back().capacity;
    if (!writable) {
        const std::size_t block_rows_max = (std::size_t{1} << 24) / sizeof(T) / k_ + 1;
        const std::size_t capacity = count + std::min(rows(), block_rows_max);
        blocks_.push_back({std::shared_ptr<T[]>(allocate_pages<T>(capacity * k_).release(), page_memory_release{}), capacity, 0});
    }
    block& last = blocks_.back();
    T* out = last.data.get() + last.rows * k_;
    last.rows += count;
    return out;
}

template <class T>
void row_store_of<T>::rollback() {
    blocks_.resize(saved_blocks_);
    // the last block kept was written in this push only when no other store shares it
    if (!blocks_.empty() && blocks_.back().data.use_count() == 1) blocks_.back().rows = saved_rows_;
}

template <class T>
std::size_t row_store_of<T>::rows() const {
    std::size_t n = 0;
    for (const auto& b : blocks_) n += b.rows;
    return n;
}

template <class T>
std::vector<std::pair<const T*, std::size_t>> row_store_of<T>::blocks() const {
    std::vector<std::pair<const T*, std::size_t>> out;
    for (const auto& b : blocks_)
        if (b.rows > 0) out.push_back({b.data.get(), b.rows});
    return out;
}

template <class T>
nlohmann::json row_store_of<T>::to_json() const {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& b : blocks_)
        for (std::size_t i = 0; i < b.rows * k_; ++i) j.push_back(static_cast<double>(b.data[i]));
    return j;
}

template <class T>
void row_store_of<T>::from_json(const nlohmann::json& j, std::size_t n) {
    const auto rows = detail::numbers_in(j, "COT \"rows\"");
    bool ok = rows.size() == n * k_;
    for (std::size_t i = 0; ok && i < rows.size(); ++i) ok = rows[i] >= 0 && rows[i] <= 1;
    // each a softmax row: its K values sum to 1 (to the float lanes' rounding)
    for (std::size_t r = 0; ok && r < n; ++r) {
        double sum = 0;
        for (std::size_t c = 0; c < k_; ++c) sum += rows[r * k_ + c];
        ok = std::abs(sum - 1) <= 1e-5;
    }
    check_state(ok, "the rows must be n x K softmax rows: values in [0, 1] that sum to 1 per row");
    blocks_.clear();
    if (n == 0) return;
    T* out = extend(n);
    for (std::size_t i = 0; i < rows.size(); ++i) out[i] = static_cast<T>(rows[i]);
}

template class row_store_of<float>;
template class row_store_of<double>;

}  // namespace detail

namespace {

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
    impl& a = *impl_;
    const impl& b = *other.impl_;
    const options &mine = a.opts, &theirs_opts = b.opts;
    require_same(a.k == b.k, "numbers of columns (K)");
    require_same(mine.p == theirs_opts.p, "p");
    require_same(mine.eta == theirs_opts.eta, "eta");
    require_same(mine.taylor_order == theirs_opts.taylor_order, "taylor_order");
    require_same(mine.norm == theirs_opts.norm, "normalization");
    require_same(mine.batch_size == theirs_opts.batch_size, "batch_size");
    require_same(mine.criterion == theirs_opts.criterion, "fixed criterion");
    require_same(mine.methods == theirs_opts.methods, "methods");
    require_same(mine.temperature == theirs_opts.temperature, "temperature");
    require_same(mine.label_marginal == theirs_opts.label_marginal, "label marginal");
    require_same(mine.correctness_histogram == theirs_opts.correctness_histogram, "correctness_histogram");
    require_same(mine.input == theirs_opts.input, "input kinds");
    const auto same_json = [](const auto& x, const auto& y) { return (!x && !y) || (x && y && x->to_json() == y->to_json()); };
    require_same(same_json(mine.source, theirs_opts.source), "source models");
    require_same(same_json(mine.source_features, theirs_opts.source_features), "source features");
    auto& core = a.core;
    const auto& o = b.core;
    if (mine.batch_size > 0 && core.n % static_cast<std::size_t>(mine.batch_size) != 0 && o.n != 0)
        throw error("in batch mode only a shard whose row count is a multiple of batch_size (" +
                    std::to_string(mine.batch_size) + ") can be followed by another; this one has " +
                    std::to_string(core.n) + " rows");
    if (core.n != 0 && o.n != 0 &&
        ((core.second_rows == core.n) != (o.second_rows == o.n) || (core.feature_rows == core.n) != (o.feature_rows == o.n) ||
         (core.labeled_rows == core.n) != (o.labeled_rows == o.n)))
        throw error("cannot merge shards scored with and without the same extra inputs (second logits, features, labels)");
    // Shards: the union of both sorted lists, refusing one that both hold. `other`'s own rows
    // come in as a shard (as_shard) or join this one's own (parts of one shard). Shards coming in
    // name this one's own rows first: mixed into the sums, they could no longer be told apart,
    // and a state of them merged back in later (a.merge(b); b.merge(a)) would count them twice.
    std::vector<std::uint64_t> theirs = o.shards;
    if (as_shard && o.own_rows > 0) detail::add_shard(theirs, b.own_rows_id());
    std::vector<std::uint64_t> held = core.shards;
    const bool name_own = core.own_rows > 0 && !theirs.empty();
    if (name_own) detail::add_shard(held, a.own_rows_id());
    const std::size_t own_rows = (name_own ? 0 : core.own_rows) + (as_shard ? 0 : o.own_rows);
    std::vector<std::uint64_t> shards;
    shards.reserve(held.size() + theirs.size());
    for (std::size_t i = 0, j = 0; i < held.size() || j < theirs.size();) {
        if (j == theirs.size() || (i < held.size() && held[i] < theirs[j])) {
            shards.push_back(held[i++]);
        } else if (i == held.size() || theirs[j] < held[i]) {
            shards.push_back(theirs[j++]);
        } else {
            throw repeated_shard(theirs[j], "this accumulator");
        }
    }
    if (shards.size() + (own_rows > 0 ? 1 : 0) > max_shards)
        throw error("accumulator state: the merged state would hold " + std::to_string(shards.size() + (own_rows > 0 ? 1 : 0)) +
                    " shards, over the " + std::to_string(max_shards) + " a state may name; score fewer, larger shards");
    // Nothing below can refuse the merge.
    if (o.n != 0)
        for (std::size_t i = 0; i < a.components.size(); ++i) a.components[i]->merge(*b.components[i], core.n, o.n);
    if (core.taylor_overflow_row < 0 && o.taylor_overflow_row >= 0)
        core.taylor_overflow_row = o.taylor_overflow_row + static_cast<std::int64_t>(core.n);
    core.n += o.n;
    core.phi_sum += o.phi_sum;
    core.max_prob.add(o.max_prob);
    for (std::size_t c = 0; c < core.predicted.size(); ++c) core.predicted[c] += o.predicted[c];
    if (core.correctness) core.correctness->merge(*o.correctness);
    core.correct += o.correct;
    core.labeled_rows += o.labeled_rows;
    core.second_rows += o.second_rows;
    core.feature_rows += o.feature_rows;
    core.probability_rows += o.probability_rows;
    core.shards = std::move(shards);
    core.own_rows = own_rows;
}

namespace {

// Version 2 added the sums of squares behind the standard errors, and the label counts; 4 the
// predicted class counts; 5 MDE's energies as deviations from the first one; 6 the shards; 7 one
// section per method (its component's own state) beside the sums every state keeps.
constexpr int state_version = 7;

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

nlohmann::json accumulator::to_json() const {
    nlohmann::json j = impl_->state_json();
    if (impl_->core.own_rows > 0) j["shards"] = shard_names(shards());
    return j;
}

std::uint64_t accumulator::impl::own_rows_id() const {
    nlohmann::json j = state_json();
    if (!shard_label.empty()) j["shard_label"] = shard_label;
    return detail::json_hash(j);
}

std::vector<std::uint64_t> accumulator::shards() const {
    std::vector<std::uint64_t> ids = impl_->core.shards;
    if (impl_->core.own_rows > 0) detail::add_shard(ids, impl_->own_rows_id());
    return ids;
}

void accumulator::set_shard_label(const std::string& label) {
    if (label.size() > max_shard_label)
        throw error("shard label: " + std::to_string(label.size()) + " bytes, over the " +
                    std::to_string(max_shard_label) + " a label may have");
    impl_->shard_label = label;
}

nlohmann::json accumulator::impl::state_json() const {
    nlohmann::json sections = nlohmann::json::object();
    for (std::size_t i = 0; i < components.size(); ++i) sections[method_name(opts.methods[i])] = components[i]->to_json();
    nlohmann::json j = {
        {"format", "mano-accumulator"},
        {"version", state_version},
        {"k", k},
        {"options", opts.to_json()},
        {"n", core.n},
        {"phi_sum", core.phi_sum},
        {"taylor_overflow_row", core.taylor_overflow_row},
        {"max_prob", core.max_prob.to_json()},
        {"predicted", core.predicted},
        {"labels", {{"correct", core.correct}, {"rows", core.labeled_rows}}},
        {"second_rows", core.second_rows},
        {"feature_rows", core.feature_rows},
        {"methods", sections},
        {"shards", shard_names(core.shards)},
    };
    // present only when some, so that states of logits read and hash as before
    if (core.probability_rows > 0) j["probability_rows"] = core.probability_rows;
    // present only when the options ask for it, so that states without it read as before
    if (core.correctness) {
        auto h = *core.correctness;
        h.labeled = core.n > 0 && core.labeled_rows == core.n;
        j["correctness"] = h.to_json();
    }
    return j;
}

namespace {

// A state's class counts: `classes` whole numbers that sum to n (none where K is too large to count).
std::vector<std::uint64_t> predicted_counts(const nlohmann::json& given, std::size_t classes, std::size_t n) {
    if (!given.is_array() || given.size() != classes)
        throw error("accumulator state: \"predicted\" must hold " + std::to_string(classes) + " class counts that sum to n");
    std::vector<std::uint64_t> predicted;
    for (const auto& count : given)
        predicted.push_back(static_cast<std::uint64_t>(
            detail::integer_of(count, "accumulator state", "predicted", 0, std::numeric_limits<std::int64_t>::max())));
    std::uint64_t predicted_rows = 0;
    for (const auto count : predicted) predicted_rows += std::min<std::uint64_t>(count, n + 1);
    if (!predicted.empty() && predicted_rows != n)
        throw error("accumulator state: \"predicted\" must hold " + std::to_string(classes) + " class counts that sum to n");
    return predicted;
}

// A state's shard ids: distinct, ascending, at most max_shards, and every shard has rows (none for
// an empty state, at most one per row otherwise).
std::vector<std::uint64_t> shard_ids(const nlohmann::json& shards, std::size_t n) {
    if (!shards.is_array()) throw error("accumulator state: \"shards\" must be a list of shard ids");
    if (shards.size() > max_shards)
        throw error("accumulator state: \"shards\" names " + std::to_string(shards.size()) + " shards, over the " +
                    std::to_string(max_shards) + " a state may name");
    std::vector<std::uint64_t> ids;
    for (const auto& name : shards) {
        const auto id = name.is_string() ? detail::parse_shard_name(name.get<std::string>()) : std::nullopt;
        if (!id || (!ids.empty() && *id <= ids.back()))
            throw error("accumulator state: \"shards\" must hold distinct ids of 16 hexadecimal digits in ascending "
                        "order (got " + name.dump().substr(0, 40) + ")");
        ids.push_back(*id);
    }
    if ((n == 0) != ids.empty() || ids.size() > n)
        throw error("accumulator state: \"shards\" names " + std::to_string(ids.size()) + " shards for " +
                    std::to_string(n) + " rows; a state of n rows names 1 to n shards (none when n = 0)");
    return ids;
}

// A state's correctness histogram, whose labels must be the state's own "labels" counts; kept
// unlabeled, as pushes keep it (state_json marks it labeled when every row was).
correctness_histogram correctness_of(const nlohmann::json& given, std::size_t k, std::size_t n, std::size_t labeled_rows,
                                     std::size_t correct) {
    auto h = correctness_histogram::from_json(given, k, n, "accumulator state: \"correctness\"");
    const bool labeled = n > 0 && labeled_rows == n;
    if (h.labeled != labeled || (labeled && h.correct() != correct))
        throw error("accumulator state: the \"correctness\" histogram's labels do not match its \"labels\" counts");
    h.labeled = false;
    return h;
}

}  // namespace

accumulator accumulator::from_json(const nlohmann::json& j) {
    const std::string what = "accumulator state";
    try {
        detail::check_state_header(j, "mano-accumulator", what, state_version, "emit it again with this mano");
        detail::check_known_keys(j, {"format", "version", "k", "options", "n", "phi_sum", "taylor_overflow_row", "max_prob",
                                     "predicted", "labels", "second_rows", "feature_rows", "methods", "shards", "correctness",
                                     "probability_rows"},
                                 what);
        const options o = options::from_json(j.at("options"));
        const std::size_t k = detail::count_of(j, "k", what);
        accumulator acc(k, o);
        impl& a = *acc.impl_;
        auto& s = a.core;
        s.n = detail::count_of(j, "n", what);
        const double n = static_cast<double>(s.n);
        s.phi_sum = detail::number_of(j, "phi_sum", what);
        s.taylor_overflow_row = detail::integer_of(j.at("taylor_overflow_row"), what, "taylor_overflow_row", -1,
                                                   std::numeric_limits<std::int64_t>::max());
        s.max_prob = detail::moments::from_json(j.at("max_prob"), n, 1, "accumulator state: \"max_prob\"");
        s.correct = detail::count_of(j.at("labels"), "correct", what);
        s.labeled_rows = detail::count_of(j.at("labels"), "rows", what);
        s.second_rows = detail::count_of(j, "second_rows", what);
        s.feature_rows = detail::count_of(j, "feature_rows", what);
        // absent in states written before it (and when no row looked like probabilities): 0
        if (j.contains("probability_rows")) s.probability_rows = detail::count_of(j, "probability_rows", what);
        s.predicted = predicted_counts(j.at("predicted"), s.predicted.size(), s.n);
        s.shards = shard_ids(j.at("shards"), s.n);
        // Phi_i >= log K (a uniform row; 1e-6 for the float lanes' rounding), so that a state
        // cannot move the softrun criterion below what n rows give; the extra inputs came with
        // no rows or with all of them
        const double least_phi = n * std::log(static_cast<double>(k)) * (1 - 1e-6);
        const bool sane = std::isfinite(s.phi_sum) && s.phi_sum >= least_phi && s.correct <= s.labeled_rows &&
                          s.labeled_rows <= s.n && (s.second_rows == 0 || s.second_rows == s.n) &&
                          (s.feature_rows == 0 || s.feature_rows == s.n) && s.probability_rows <= s.n &&
                          s.taylor_overflow_row < static_cast<std::int64_t>(s.n);
        if (!sane) throw error("accumulator state: inconsistent sums or row counts");
        if (o.correctness_histogram != j.contains("correctness"))
            throw error(std::string("accumulator state: ") + (o.correctness_histogram ? "its options ask for a" : "no options ask for its") +
                        " \"correctness\" histogram" + (o.correctness_histogram ? ", which it lacks" : ""));
        if (s.correctness) s.correctness = correctness_of(j.at("correctness"), k, s.n, s.labeled_rows, s.correct);
        // One section per method, each read by its component.
        const auto& sections = j.at("methods");
        if (!sections.is_object()) throw error("accumulator state: \"methods\" must be an object of one section per method");
        for (std::size_t i = 0; i < a.components.size(); ++i) {
            const char* name = method_name(a.opts.methods[i]);
            if (!sections.contains(name))
                throw error(std::string("accumulator state: \"methods\" has no section \"") + name + "\"");
            try {
                a.components[i]->from_json(sections.at(name), s.n);
            } catch (const error& e) {
                throw error(std::string("accumulator state: method ") + name + ": " + e.what());
            }
        }
        if (sections.size() != a.components.size())
            throw error("accumulator state: \"methods\" holds sections for methods its options do not list");
        return acc;
    } catch (const nlohmann::json::exception& e) {
        throw error("accumulator state: " + detail::json_error_text(e));
    }
}

}  // namespace mano

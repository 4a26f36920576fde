// MaNo (Xie et al., NeurIPS 2024): S = (sum_ik sigma_ik^p / (N K))^(1/p) on the softrun
// normalization, with both branches summed so that the branch is chosen at finalize; in batch
// mode (the authors' code) the unweighted mean of per-batch scores.
// mano: per-row code in the default pass, built for speed in every build (src/mano/CMakeLists.txt)
#include <cmath>
#include <limits>

#include "mano/estimators/estimator.hpp"
#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {
namespace detail {
namespace {

// Below this mean of sigma^p the sum has lost its terms to underflow (each < DBL_MIN): at up to
// 10^12 entries they weigh at most 2e-6 of it.
constexpr double min_power_mean = 1e-290;

struct branches {
    moments softmax, taylor;
};

struct mano_state {
    branches sums;  // of sum_k sigma_ik^p over rows
    // batch mode: the scores of completed batches and the sums of the batch being filled
    branches batch_scores;
    std::size_t batches = 0;
    std::size_t batch_rows = 0;
    double batch_softmax = 0, batch_taylor = 0;
};

class mano_estimator : public component<mano_estimator, mano_state> {
public:
    mano_estimator(std::size_t k, const options& o)
        : k_(k), p_(o.p), batch_size_(static_cast<std::size_t>(o.batch_size)), softmax_branch_(o.scores_softmax_branch(k)),
          taylor_branch_(o.scores_taylor_branch(k)) {}

    block_needs needs() const override {
        block_needs n;
        n.softmax_power = n.taylor = true;
        return n;
    }

    void add(const block& b) override {
        for (std::size_t r = 0; r < b.count; ++r) {
            const row_stats& st = b.stats[r];
            s.sums.softmax.add(st.softmax);
            s.sums.taylor.add(st.taylor);
            if (batch_size_ == 0) continue;
            s.batch_softmax += st.softmax;
            s.batch_taylor += st.taylor;
            if (++s.batch_rows == batch_size_) {
                s.batch_scores.softmax.add(batch_score(s.batch_softmax, s.batch_rows));
                s.batch_scores.taylor.add(batch_score(s.batch_taylor, s.batch_rows));
                s.batches += 1;
                s.batch_rows = 0;
                s.batch_softmax = s.batch_taylor = 0;
            }
        }
    }

    nlohmann::json to_json() const override {
        return {{"sum_softmax", s.sums.softmax.to_json()},
                {"sum_taylor", s.sums.taylor.to_json()},
                {"batch",
                 {{"batches", s.batches},
                  {"scores_softmax", s.batch_scores.softmax.to_json()},
                  {"scores_taylor", s.batch_scores.taylor.to_json()},
                  {"rows", s.batch_rows},
                  {"sum_softmax", s.batch_softmax},
                  {"sum_taylor", s.batch_taylor}}}};
    }

    void from_json(const nlohmann::json& j, std::size_t n) override {
        const double rows = static_cast<double>(n);
        // per row, sum_k sigma^p lies in [K^(1-p), 1]; a batch score in [0, 1]
        s.sums.softmax = moments::from_json(j.at("sum_softmax"), rows, 1, "\"sum_softmax\"");
        // every softmax row's sum_k p^p is at least K^(1-p) (a uniform row), and the kernel
        // keeps it so: fewer would be rows that are not softmax rows
        const double floor = rows * std::pow(static_cast<double>(k_), 1 - p_) * (1 - 1e-9);
        check_state(softmax_branch_ ? s.sums.softmax.sum >= floor : s.sums.softmax.sum == 0,
                    "\"sum_softmax\": below n K^(1-p), the least n softmax rows give");
        s.sums.taylor = moments::from_json(j.at("sum_taylor"), rows, 1, "\"sum_taylor\"");
        const auto& b = j.at("batch");
        s.batches = count_of(b, "batches", "accumulator state");
        s.batch_rows = count_of(b, "rows", "accumulator state");
        s.batch_scores.softmax = moments::from_json(b.at("scores_softmax"), static_cast<double>(s.batches), 1, "\"scores_softmax\"");
        s.batch_scores.taylor = moments::from_json(b.at("scores_taylor"), static_cast<double>(s.batches), 1, "\"scores_taylor\"");
        s.batch_softmax = number_of(b, "sum_softmax", "\"batch\"");
        s.batch_taylor = number_of(b, "sum_taylor", "\"batch\"");
        const double open = static_cast<double>(s.batch_rows) * (1 + 1e-9) + 1e-9;
        check_state(batch_size_ == 0 ? s.batches == 0 && s.batch_rows == 0 && s.batch_softmax == 0 && s.batch_taylor == 0
                                     : s.batch_rows < batch_size_ && s.batches * batch_size_ + s.batch_rows == n &&
                                           s.batch_softmax >= 0 && s.batch_softmax <= open && s.batch_taylor >= 0 &&
                                           s.batch_taylor <= open,
                    "the batch counts and sums do not match n and batch_size");
    }

    void finalize(const final_context& c, result& r) const override {
        const options& o = c.opts;
        const double n = static_cast<double>(c.n);
        const bool softmax = c.used == normalization::softmax;
        mano_result m;
        m.p = o.p;
        m.eta = o.eta;
        m.taylor_order = o.taylor_order;
        m.batch_size = o.batch_size;
        m.criterion_fixed = o.criterion.has_value();
        m.criterion = c.criterion;
        m.used = c.used;
        std::optional<double> se;
        // the score on one branch: the mean of batch scores in batch mode, else the whole set's
        const auto branch_score = [&](bool on_softmax) {
            if (batch_size_ > 0) {
                moments scores = on_softmax ? s.batch_scores.softmax : s.batch_scores.taylor;
                std::size_t batches = s.batches;
                if (s.batch_rows > 0) {  // the last, partial batch counts as one (like a DataLoader)
                    scores.add(batch_score(on_softmax ? s.batch_softmax : s.batch_taylor, s.batch_rows));
                    batches += 1;
                }
                if (on_softmax == softmax) {
                    m.batches = batches;
                    se = scores.mean_se(static_cast<double>(batches));
                }
                return scores.sum / static_cast<double>(batches);
            }
            const moments& sums = on_softmax ? s.sums.softmax : s.sums.taylor;
            const double score = batch_score(sums.sum, c.n);
            // delta method: S = mean^(1/p) with mean = sums / (NK), so dS = S / (p mean) d(mean)
            const double mean = sums.sum / (n * static_cast<double>(k_));
            // sigma^p of every entry below double's range: the score would read 0, below its floor
            if (!(mean >= min_power_mean)) return std::numeric_limits<double>::quiet_NaN();
            if (on_softmax == softmax && mean > 0)
                se = score / (o.p * mean) * sums.mean_se(n) / static_cast<double>(k_);
            return score;
        };
        const double score = branch_score(softmax);
        if (std::isnan(score))
            throw error("p = " + number_text(o.p) + " is too large for these logits: every sigma^p underflows double "
                        "precision, so the " + normalization_name(c.used) + " score would read 0; use a smaller p");
        if (o.norm == normalization::softrun && !o.criterion) {
            const auto put = [&](normalization branch, double value) {
                if (!std::isnan(value)) m.variants[variant_name(branch, o.taylor_order)] = value;
            };
            put(normalization::softmax, softmax ? score : branch_score(true));
            if (taylor_branch_ && !c.taylor_overflowed) put(normalization::taylor, softmax ? branch_score(false) : score);
        }
        r[method::mano] = estimate{score, se, std::nullopt};
        r.mano = m;
    }

private:
    void merge_from(const mano_state& o, std::size_t, std::size_t) override {
        s.sums.softmax.add(o.sums.softmax);
        s.sums.taylor.add(o.sums.taylor);
        s.batch_scores.softmax.add(o.batch_scores.softmax);
        s.batch_scores.taylor.add(o.batch_scores.taylor);
        s.batches += o.batches;
        // the accumulator refuses to append rows after a partial batch
        s.batch_rows = o.batch_rows;
        s.batch_softmax = o.batch_softmax;
        s.batch_taylor = o.batch_taylor;
    }

    double batch_score(double sum, std::size_t rows) const {
        return std::pow(sum / (static_cast<double>(rows) * static_cast<double>(k_)), 1.0 / p_);
    }

    std::size_t k_;
    double p_;
    std::size_t batch_size_;
    bool softmax_branch_;  // the softmax branch is accumulated (options::scores_softmax_branch)
    bool taylor_branch_;   // and the Taylor branch (options::scores_taylor_branch; not at K = 2)
};

}  // namespace

std::unique_ptr<estimator> make_mano(const estimator_setup& e) { return std::make_unique<mano_estimator>(e.k, e.opts); }

}  // namespace detail
}  // namespace mano

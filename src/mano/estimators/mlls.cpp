// MLLS (Saerens et al., 2002; with bias-corrected temperature scaling, Alexandari et al., ICML
// 2020): the class priors of a set by EM on posteriors calibrated on the labeled source set, and
// the accuracy as the mean prior-adjusted probability of each row's predicted class
// (src/mano/shift/label_shift.hpp, src/mano/shift/prior_em.hpp). It keeps every calibrated row
// as float (4 bytes a logit) and each row's predicted class; the EM passes over them in finalize,
// on the host's threads where it gives them.
// mano: per-row code in the default pass, built for speed in every build (src/mano/CMakeLists.txt)
#include <algorithm>
#include <cmath>

#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/estimators/estimator.hpp"
#include "mano/shift/label_shift.hpp"
#include "mano/kernel/kernel.hpp"
#include "mano/shift/prior_em.hpp"
#include "mano/shift/source_rows.hpp"
#include "mano/shift/source_rows.hpp"

namespace mano {
namespace detail {
namespace {

class mlls_estimator : public estimator {
public:
    explicit mlls_estimator(const estimator_setup& e)
        : rows_(e.k), k_(e.k), temperature_(e.opts.temperature), kernels_(&e.shift) {
        const options& o = e.opts;
        if (!o.source) return;
        if (!o.source->fitted.contains("mlls"))
            throw error("mlls needs what it fits on the labeled source set; fit the source with mlls among the methods");
        model_ = label_shift_model::from_json(o.source->fitted.at("mlls"), e.k);
    }
    std::unique_ptr<estimator> clone() const override { return std::make_unique<mlls_estimator>(*this); }
    block_needs needs() const override { return {}; }
    void begin(std::size_t) override {
        rows_.begin();
        saved_predicted_ = predicted_.size();
    }
    void add(const block& b) override {
        if (!model_) return;
        calibrate_rows(b.logits_f, b.logits_d, b.count, b.k, temperature_, model_->calibration, *kernels_,
                       rows_.extend(b.count), nullptr);
        for (std::size_t r = 0; r < b.count; ++r) predicted_.push_back(static_cast<std::int32_t>(b.stats[r].argmax));
    }
    void commit() override {}
    void rollback() override {
        rows_.rollback();
        predicted_.resize(saved_predicted_);
    }
    void merge(const estimator& other, std::size_t, std::size_t) override {
        const auto& o = static_cast<const mlls_estimator&>(other);
        rows_.append(o.rows_);
        predicted_.insert(predicted_.end(), o.predicted_.begin(), o.predicted_.end());
    }
    nlohmann::json to_json() const override {
        if (!model_) return nullptr;
        return {{"rows", rows_.to_json()}, {"predicted", predicted_}};
    }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        if (!model_) return check_state(j.is_null(), "mlls has no source model here, but its section is not null");
        check_state(j.is_object() && j.contains("rows") && j.contains("predicted"),
                    "mlls: the section needs \"rows\" (the calibrated rows) and \"predicted\" (each row's class)");
        rows_.from_json(j.at("rows"), n);
        const auto classes = numbers_in(j.at("predicted"), "mlls \"predicted\"");
        check_state(classes.size() == n, "mlls: \"predicted\" needs one class per row");
        predicted_.clear();
        for (const double c : classes) {
            check_state(c >= 0 && c < static_cast<double>(k_) && c == std::floor(c),
                        "mlls: \"predicted\" holds a value that is not a class index");
            predicted_.push_back(static_cast<std::int32_t>(c));
        }
    }

    void finalize(const final_context& c, result& r) const override {
        if (!model_) return;
        const row_blocks blocks = blocks_of(rows_);
        const auto e = estimate_priors(blocks, predicted_.data(), k_, model_->priors, *kernels_, c.parallel);
        // the label-shift check: the mean calibrated confidence against what the priors expect
        moments confidence;
        for (const auto& b : blocks)
            for (std::size_t i = 0; i < b.count; ++i)
                confidence.add(static_cast<double>(*std::max_element(b.rows + i * k_, b.rows + (i + 1) * k_)));
        const double n = static_cast<double>(c.n);
        label_shift_result x;
        x.priors = e.priors;
        x.converged = e.converged;
        x.confidence = confidence.sum / n;
        x.confidence_se = confidence.mean_se(n);
        if (!std::isfinite(x.confidence_se)) x.confidence_se = 0;
        for (std::size_t y = 0; y < k_; ++y) x.expected_confidence += e.priors[y] * model_->confidence_by_class[y];
        x.dominant = dominant_of(blocks, e.priors);
        r[method::mlls] = estimate{e.accuracy, e.accuracy_se, static_cast<double>(e.iterations)};
        r.mlls = x;
    }

private:
    // The class of the largest prior and its calibrated probability over the rows predicted it.
    label_shift_result::dominant_class dominant_of(const row_blocks& blocks, const std::vector<double>& priors) const {
        label_shift_result::dominant_class d;
        d.label = static_cast<std::size_t>(std::max_element(priors.begin(), priors.end()) - priors.begin());
        moments probability;
        std::size_t at = 0;
        for (const auto& b : blocks)
            for (std::size_t i = 0; i < b.count; ++i, ++at)
                if (static_cast<std::size_t>(predicted_[at]) == d.label) {
                    probability.add(static_cast<double>(b.rows[i * k_ + d.label]));
                    ++d.rows;
                }
        if (d.rows == 0) return d;
        const double rows = static_cast<double>(d.rows);
        d.mean = std::clamp(probability.sum / rows, 0.0, 1.0);
        const double se = probability.mean_se(rows);
        d.sd = std::isfinite(se) ? std::clamp(se * std::sqrt(rows), 0.0, 1.0) : 0.0;
        return d;
    }

    row_store rows_;
    std::vector<std::int32_t> predicted_;
    std::size_t saved_predicted_ = 0;
    std::size_t k_;
    double temperature_;
    const shift_kernels* kernels_;
    std::optional<label_shift_model> model_;
};

}  // namespace

std::unique_ptr<estimator> make_mlls(const estimator_setup& e) { return std::make_unique<mlls_estimator>(e); }

nlohmann::json fit_mlls(const source_rows& s) { return fit_label_shift(s).to_json(); }

}  // namespace detail
}  // namespace mano

// MLLS (Saerens et al., 2002; with bias-corrected temperature scaling, Alexandari et al., ICML
// 2020): the class priors of a set by EM on posteriors calibrated on the labeled source set, and
// the accuracy as the mean prior-adjusted probability of each row's predicted class
// (src/mano/shift/label_shift.hpp). It keeps every row of softmax(q / T) as COT does: O(N K) memory.
#include <algorithm>
#include <cmath>

#include "mano/estimators/estimator.hpp"
#include "mano/base/error.hpp"
#include "mano/shift/label_shift.hpp"
#include "mano/shift/source_fit.hpp"

namespace mano {
namespace detail {
namespace {

class mlls_estimator : public row_keeping_component<mlls_estimator> {
public:
    mlls_estimator(std::size_t k, const options& o) : row_keeping_component(k) {
        if (!o.source) return;
        if (!o.source->fitted.contains("mlls"))
            throw error("mlls needs what it fits on the labeled source set; fit the source with mlls among the methods");
        model_ = label_shift_model::from_json(o.source->fitted.at("mlls"), k);
    }

    void finalize(const final_context& c, result& r) const override {
        if (!model_) return;
        const std::size_t n = c.n;
        std::vector<double> calibrated(n * k_);
        model_->calibration.apply(rows_.rows.data(), n, k_, calibrated.data());
        std::vector<std::int64_t> predicted(n);
        moments confidence;
        for (std::size_t i = 0; i < n; ++i) {
            const double* row = &rows_.rows[i * k_];
            predicted[i] = static_cast<std::int64_t>(std::max_element(row, row + k_) - row);
            confidence.add(*std::max_element(&calibrated[i * k_], &calibrated[i * k_] + k_));
        }
        const auto e = estimate_priors(calibrated.data(), predicted.data(), n, k_, model_->priors);
        label_shift_result x;
        x.priors = e.priors;
        x.converged = e.converged;
        x.confidence = confidence.sum / static_cast<double>(n);
        x.confidence_se = confidence.mean_se(static_cast<double>(n));
        if (!std::isfinite(x.confidence_se)) x.confidence_se = 0;
        for (std::size_t y = 0; y < k_; ++y) x.expected_confidence += e.priors[y] * model_->confidence_by_class[y];
        r[method::mlls] = estimate{e.accuracy, e.accuracy_se, static_cast<double>(e.iterations)};
        r.mlls = x;
    }

private:
    std::optional<label_shift_model> model_;
};

}  // namespace

std::unique_ptr<estimator> make_mlls(const estimator_setup& e) { return std::make_unique<mlls_estimator>(e.k, e.opts); }

nlohmann::json fit_mlls(const source_sample& s) { return fit_label_shift(s.probs, s.n, s.k, s.labels).to_json(); }

}  // namespace detail
}  // namespace mano

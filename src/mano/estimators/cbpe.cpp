// CBPE (confidence-based performance estimation, as in NannyML): the mean calibrated confidence
// (1/N) sum_i max_k P_ik, P = softmax(a log p), p = softmax(q / T) and a fitted on the labeled
// source set (temperature scaling on top of the options' T; src/mano/shift/label_shift.hpp). An accuracy
// estimate only where the source calibration holds: under label shift, not under corruptions
// (overconfidence). It keeps two sums: it streams and merges.
#include <cmath>

#include "mano/estimators/estimator.hpp"
#include "mano/base/error.hpp"
#include "mano/shift/label_shift.hpp"
#include "mano/shift/source_fit.hpp"

namespace mano {
namespace detail {
namespace {

class cbpe_estimator : public component<cbpe_estimator, moments> {
public:
    explicit cbpe_estimator(const options& o) {
        if (!o.source) return;
        const auto& fitted = o.source->fitted;
        if (!fitted.contains("cbpe") || !fitted.at("cbpe").is_object() || !fitted.at("cbpe").contains("scale") ||
            !fitted.at("cbpe").at("scale").is_number())
            throw error("cbpe needs its temperature scale fitted on the labeled source set; fit the source with cbpe among the methods");
        scale_ = fitted.at("cbpe").at("scale").get<double>();
        if (!std::isfinite(*scale_)) throw error("source model: the cbpe scale must be a finite number");
    }
    block_needs needs() const override {
        block_needs n;
        n.probs = true;
        return n;
    }
    void add(const block& b) override {
        if (!scale_) return;
        for (std::size_t r = 0; r < b.count; ++r) s.add(calibrated_confidence(b.probs + r * b.k, b.k, *scale_));
    }
    nlohmann::json to_json() const override { return s.to_json(); }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        s = moments::from_json(j, static_cast<double>(n), 1, "cbpe");
    }
    void finalize(const final_context& c, result& r) const override {
        if (!scale_) return;
        const double n = static_cast<double>(c.n);
        r[method::cbpe] = estimate{s.sum / n, s.mean_se(n), std::nullopt};
    }

private:
    void merge_from(const moments& o, std::size_t, std::size_t) override { s.add(o); }
    std::optional<double> scale_;
};

}  // namespace

std::unique_ptr<estimator> make_cbpe(const estimator_setup& e) { return std::make_unique<cbpe_estimator>(e.opts); }

nlohmann::json fit_cbpe(const source_sample& s) {
    return {{"scale", fit_posterior_calibration(s.probs, s.n, s.k, s.labels, false).scale}};
}

}  // namespace detail
}  // namespace mano

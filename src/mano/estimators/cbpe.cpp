// CBPE (confidence-based performance estimation, as in NannyML): the mean calibrated confidence
// (1/N) sum_i max_k P_ik, P = softmax(a log p) = softmax(a q / T), p = softmax(q / T) and a the
// temperature scaling fitted on the labeled source set (source_rows::scale, shared with MLLS
// beyond 100 classes). An accuracy estimate only where the source calibration holds: under label
// shift, not under corruptions (overconfidence). One kernel pass over the logits per block
// (scaled_softmax at a / T); it keeps two sums: it streams and merges.
// mano: per-row code in the default pass, built for speed in every build (src/mano/CMakeLists.txt)
#include <cmath>

#include "mano/estimators/estimator.hpp"
#include "mano/base/error.hpp"
#include "mano/shift/source_rows.hpp"

namespace mano {
namespace detail {
namespace {

class cbpe_estimator : public component<cbpe_estimator, moments> {
public:
    explicit cbpe_estimator(const estimator_setup& e) : kernels_(&e.shift), scratch_(kernel_scratch_floats(e.k)) {
        const options& o = e.opts;
        if (!o.source) return;
        const auto& fitted = o.source->fitted;
        if (!fitted.contains("cbpe") || !fitted.at("cbpe").is_object() || !fitted.at("cbpe").contains("scale") ||
            !fitted.at("cbpe").at("scale").is_number())
            throw error("cbpe needs its temperature scale fitted on the labeled source set; fit the source with cbpe among the methods");
        const double scale = fitted.at("cbpe").at("scale").get<double>();
        if (!std::isfinite(scale)) throw error("source model: the cbpe scale must be a finite number");
        scale_ = scale / o.temperature;
    }
    block_needs needs() const override { return {}; }
    void add(const block& b) override {
        if (!scale_) return;
        max_prob_.resize(b.count);
        kernels_->scaled_softmax(b.logits_f, b.logits_d, b.count, b.k, *scale_, nullptr, max_prob_.data(), scratch_.data());
        for (std::size_t r = 0; r < b.count; ++r) s.add(max_prob_[r]);
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
    std::optional<double> scale_;  // a / T: the scale on the logits
    const shift_kernels* kernels_;
    std::vector<float> scratch_;
    std::vector<double> max_prob_;
};

}  // namespace

std::unique_ptr<estimator> make_cbpe(const estimator_setup& e) { return std::make_unique<cbpe_estimator>(e); }

nlohmann::json fit_cbpe(const source_rows& s) { return {{"scale", s.scale()}}; }

}  // namespace detail
}  // namespace mano

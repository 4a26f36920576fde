// Frechet (Deng and Zheng, 2021): the Frechet distance between Gaussians fitted to the source
// set's features (options::source_features) and this set's.
#include "mano/estimators/estimator.hpp"
#include "mano/scan/features.hpp"

namespace mano {
namespace detail {
namespace {

class frechet_estimator : public component<frechet_estimator, std::optional<feature_moments>> {
public:
    explicit frechet_estimator(const options& o) : source_(o.source_features) {}
    block_needs needs() const override { return {}; }
    void add(const block& b) override {
        if (!b.features) return;
        if (!s) s.emplace(b.dim);
        s->push(b.features, b.count, b.first_row);
    }
    nlohmann::json to_json() const override { return s ? s->to_json() : nlohmann::json(); }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        if (j.is_null()) return;
        s.emplace(feature_moments::from_json(j));
        check_state(s->n() == n, "the feature moments' rows are not the state's n");
    }
    void finalize(const final_context& c, result& r) const override {
        if (c.features_given && s && source_) r[method::frechet] = estimate{frechet_distance(*source_, *s), std::nullopt, std::nullopt};
    }

private:
    void merge_from(const std::optional<feature_moments>& o, std::size_t, std::size_t) override {
        if (!o) return;
        if (s) s->merge(*o);
        else s = o;
    }
    std::shared_ptr<const feature_moments> source_;
};

}  // namespace

std::unique_ptr<estimator> make_frechet(const estimator_setup& e) { return std::make_unique<frechet_estimator>(e.opts); }

}  // namespace detail
}  // namespace mano

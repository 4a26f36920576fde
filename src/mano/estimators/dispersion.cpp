// Dispersion (Xie et al., 2023): the log spread of the features' class means, classes by
// predicted label (class_dispersion).
#include <vector>

#include "mano/estimators/estimator.hpp"
#include "mano/scan/features.hpp"

namespace mano {
namespace detail {
namespace {

class dispersion_estimator : public component<dispersion_estimator, std::optional<class_dispersion>> {
public:
    block_needs needs() const override { return {}; }
    void add(const block& b) override {
        if (!b.features) return;
        if (!s) s.emplace(b.dim);
        std::vector<std::int64_t> predicted(b.count);
        for (std::size_t r = 0; r < b.count; ++r) predicted[r] = b.stats[r].argmax;
        s->push(b.features, predicted.data(), b.count);
    }
    nlohmann::json to_json() const override { return s ? s->to_json() : nlohmann::json(); }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        if (j.is_null()) return;
        s.emplace(class_dispersion::from_json(j));
        check_state(s->n() == n, "the dispersion's feature rows are not the state's n");
    }
    void finalize(const final_context& c, result& r) const override {
        if (c.features_given && s) r[method::dispersion] = estimate{s->score(), std::nullopt, std::nullopt};
    }

private:
    void merge_from(const std::optional<class_dispersion>& o, std::size_t, std::size_t) override {
        if (!o) return;
        if (s) s->merge(*o);
        else s = o;
    }
};

}  // namespace

std::unique_ptr<estimator> make_dispersion(const estimator_setup&) { return std::make_unique<dispersion_estimator>(); }

}  // namespace detail
}  // namespace mano

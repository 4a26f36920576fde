// Entropy: the mean softmax entropy -sum_k p_ik log p_ik at temperature T, in nats.
// mano: per-row code in the default pass, built for speed in every build (src/mano/CMakeLists.txt)
#include <cmath>

#include "mano/estimators/estimator.hpp"

namespace mano {
namespace detail {
namespace {

class entropy_estimator : public component<entropy_estimator, moments> {
public:
    explicit entropy_estimator(std::size_t k) : k_(k) {}
    block_needs needs() const override {
        block_needs n;
        n.extras = true;
        return n;
    }
    void add(const block& b) override {
        for (std::size_t r = 0; r < b.count; ++r) s.add(b.base[r].entropy);
    }
    nlohmann::json to_json() const override { return s.to_json(); }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        s = moments::from_json(j, static_cast<double>(n), std::log(static_cast<double>(k_)), "the entropy sums");
    }
    void finalize(const final_context& c, result& r) const override {
        const double n = static_cast<double>(c.n);
        r[method::entropy] = estimate{s.sum / n, s.mean_se(n), std::nullopt};
    }

private:
    void merge_from(const moments& o, std::size_t, std::size_t) override { s.add(o); }
    std::size_t k_;
};

}  // namespace

std::unique_ptr<estimator> make_entropy(const estimator_setup& e) { return std::make_unique<entropy_estimator>(e.k); }

}  // namespace detail
}  // namespace mano

// ConfScore (Hendrycks and Gimpel, 2017): the mean maximum softmax probability at temperature T,
// from the sums every accumulator keeps (the set's confidence).
#include "mano/estimators/estimator.hpp"

namespace mano {
namespace detail {
namespace {

class confscore_estimator : public stateless<confscore_estimator> {
public:
    void finalize(const final_context& c, result& r) const override {
        const double n = static_cast<double>(c.n);
        r[method::confscore] = estimate{c.max_prob.sum / n, c.max_prob.mean_se(n), std::nullopt};
    }
};

}  // namespace

std::unique_ptr<estimator> make_confscore(const estimator_setup&) { return std::make_unique<confscore_estimator>(); }

}  // namespace detail
}  // namespace mano

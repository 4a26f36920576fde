// COT (Lu et al., NeurIPS 2023): 1 - the exact optimal transport cost from the label marginal
// (uniform unless options::label_marginal) to the softmax rows at temperature T, under the cost
// ||e_c - p_i||_1 / 2 = 1 - p_ic (src/mano/shift/transport.hpp). It keeps every row as float:
// 4 bytes a logit.
// mano: per-row code in the default pass, built for speed in every build (src/mano/CMakeLists.txt)
#include "mano/estimators/estimator.hpp"
#include "mano/shift/transport.hpp"
#include "mano/kernel/kernel.hpp"

namespace mano {
namespace detail {
namespace {

class cot_estimator : public transport_component<cot_estimator> {
public:
    using transport_component::transport_component;
    void finalize(const final_context& c, result& r) const override {
        const double cost = transport_cost(blocks_of(rows_), k_, marginal_, *kernels_, c.parallel);
        r[method::cot] = estimate{1.0 - cost, std::nullopt, cost};
    }
};

}  // namespace

std::unique_ptr<estimator> make_cot(const estimator_setup& e) { return std::make_unique<cot_estimator>(e); }

}  // namespace detail
}  // namespace mano

// COT (Lu et al., NeurIPS 2023): 1 - the exact optimal transport cost from the label marginal
// (uniform unless options::label_marginal) to the softmax rows at temperature T, under the cost
// ||e_c - p_i||_1 / 2 = 1 - p_ic. It keeps every row: O(N K) memory.
#include "mano/detail/estimator.hpp"
#include "mano/transport.hpp"

namespace mano {
namespace detail {
namespace {

class cot_estimator : public estimator {
public:
    cot_estimator(std::size_t k, const options& o) : rows_(k), k_(k), marginal_(o.label_marginal) {
        if (marginal_.empty()) marginal_.assign(k, 1.0 / static_cast<double>(k));
    }
    std::unique_ptr<estimator> clone() const override { return std::make_unique<cot_estimator>(*this); }
    block_needs needs() const override {
        block_needs n;
        n.probs = true;
        return n;
    }
    void begin(std::size_t) override { rows_.begin(); }
    void add(const block& b) override { rows_.add(b); }
    void commit() override {}
    void rollback() override { rows_.rollback(); }
    void merge(const estimator& other, std::size_t, std::size_t) override {
        rows_.append(static_cast<const cot_estimator&>(other).rows_);
    }
    nlohmann::json to_json() const override { return rows_.to_json(); }
    void from_json(const nlohmann::json& j, std::size_t n) override { rows_.from_json(j, n); }
    void finalize(const final_context& c, result& r) const override {
        const double cost = transport_cost(rows_.rows.data(), c.n, k_, marginal_);
        r[method::cot] = estimate{1.0 - cost, std::nullopt, cost};
    }

private:
    row_store rows_;
    std::size_t k_;
    std::vector<double> marginal_;
};

}  // namespace

std::unique_ptr<estimator> make_cot(const estimator_setup& e) { return std::make_unique<cot_estimator>(e.k, e.opts); }

}  // namespace detail
}  // namespace mano

// Nuclear (Deng et al., 2023): ||P||_* / sqrt(N min(N, K)) for the softmax rows P at
// temperature T, from their Gram matrix (or the rows, while N <= K).
#include "mano/estimators/estimator.hpp"

namespace mano {
namespace detail {
namespace {

class nuclear_estimator : public estimator {
public:
    explicit nuclear_estimator(const estimator_setup& e) : gram_(e.k, e.gram) {}
    std::unique_ptr<estimator> clone() const override { return std::make_unique<nuclear_estimator>(*this); }
    block_needs needs() const override {
        block_needs n;
        n.probs = n.gram = true;
        return n;
    }
    void begin(std::size_t rows) override { gram_.begin(rows); }
    void add(const block& b) override { gram_.add(b.probs, b.count); }
    void commit() override { gram_.commit(); }
    void rollback() override { gram_.rollback(); }
    void merge(const estimator& other, std::size_t, std::size_t) override {
        gram_.whole.add(static_cast<const nuclear_estimator&>(other).gram_.whole);
    }
    nlohmann::json to_json() const override { return gram_.whole.to_json(); }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        gram_.load(j, n, "");
    }
    void finalize(const final_context& c, result& r) const override {
        r[method::nuclear] = estimate{gram_.whole.nuclear(c.n), std::nullopt, std::nullopt};
    }

private:
    pending_gram gram_;
};

}  // namespace

std::unique_ptr<estimator> make_nuclear(const estimator_setup& e) { return std::make_unique<nuclear_estimator>(e); }

}  // namespace detail
}  // namespace mano

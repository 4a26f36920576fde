// AgreeScore: the share of rows where a second model's argmax is this model's.
#include <algorithm>

#include "mano/estimators/estimator.hpp"
#include "mano/base/detail/json_fields.hpp"

namespace mano {
namespace detail {
namespace {

class agreement_estimator : public component<agreement_estimator, std::size_t> {
public:
    agreement_estimator() { s = 0; }
    block_needs needs() const override { return {}; }
    void add(const block& b) override {
        if (!b.second) return;
        for (std::size_t r = 0; r < b.count; ++r) {
            const double* other = b.second + r * b.k;
            s += std::max_element(other, other + b.k) - other == b.stats[r].argmax ? 1 : 0;
        }
    }
    nlohmann::json to_json() const override { return s; }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        s = static_cast<std::size_t>(integer_of(j, "accumulator state", "agreement", 0, static_cast<std::int64_t>(n)));
    }
    void finalize(const final_context& c, result& r) const override {
        if (!c.second_given) return;
        const double n = static_cast<double>(c.n), share = static_cast<double>(s) / n;
        r[method::agreement] = estimate{share, proportion_se(share, n), std::nullopt};
    }

private:
    void merge_from(const std::size_t& o, std::size_t, std::size_t) override { s += o; }
};

}  // namespace

std::unique_ptr<estimator> make_agreement(const estimator_setup&) { return std::make_unique<agreement_estimator>(); }

}  // namespace detail
}  // namespace mano

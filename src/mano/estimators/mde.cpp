// MDE (Peng et al., 2024): LSE_j(E_j) - mean_i E_i over the energies E_i = -LSE_k(q_ik / T).
#include <algorithm>
#include <cmath>

#include "mano/detail/estimator.hpp"

namespace mano {
namespace detail {
namespace {

// The running maximum of the energies with sum_i exp(E_i - max) (0 until the first row), and
// sum_i (E_i - shift) with shift = the first row's E, so that mean E - max never cancels.
struct energies {
    double max = 0, exp_sum = 0, shift = 0, deviation_sum = 0;
};

class mde_estimator : public component<mde_estimator, energies> {
public:
    block_needs needs() const override { return {}; }
    void add(const block& b) override {
        for (std::size_t r = 0; r < b.count; ++r) {
            const double e = -b.base[r].lse;
            if (s.exp_sum == 0) {
                s.max = s.shift = e;
                s.exp_sum = 1;
                continue;
            }
            if (e > s.max) {
                s.exp_sum = s.exp_sum * std::exp(s.max - e) + 1.0;
                s.max = e;
            } else {
                s.exp_sum += std::exp(e - s.max);
            }
            s.deviation_sum += e - s.shift;
        }
    }
    nlohmann::json to_json() const override {
        return {{"max", s.max}, {"exp_sum", s.exp_sum}, {"shift", s.shift}, {"deviation_sum", s.deviation_sum}};
    }
    void from_json(const nlohmann::json& j, std::size_t n) override {
        s.max = j.at("max").get<double>();
        s.exp_sum = j.at("exp_sum").get<double>();
        s.shift = j.at("shift").get<double>();
        s.deviation_sum = j.at("deviation_sum").get<double>();
        const bool finite = std::isfinite(s.max) && std::isfinite(s.shift) && std::isfinite(s.deviation_sum) &&
                            std::isfinite(s.exp_sum);
        // every energy is at most the maximum, and exp(E - max) of the maximum's row is 1
        check_state(finite && (n > 0 ? s.exp_sum >= 1 && s.exp_sum <= static_cast<double>(n) * (1 + 1e-9) &&
                                           s.shift <= s.max
                                     : s.exp_sum == 0),
                    "the energies' sums are inconsistent");
    }
    void finalize(const final_context& c, result& r) const override {
        // MDE = (max - mean E) + log sum_j exp(E_j - max), both terms >= 0
        const double mde = std::max(0.0, (s.max - s.shift) - s.deviation_sum / static_cast<double>(c.n)) + std::log(s.exp_sum);
        r[method::mde] = estimate{mde, std::nullopt, std::nullopt};
    }

private:
    void merge_from(const energies& o, std::size_t, std::size_t other_rows) override {
        if (s.exp_sum == 0) {
            s = o;
            return;
        }
        const double top = std::max(s.max, o.max);
        s.exp_sum = s.exp_sum * std::exp(s.max - top) + o.exp_sum * std::exp(o.max - top);
        s.max = top;
        // o's deviations are from its own first energy
        s.deviation_sum += o.deviation_sum + static_cast<double>(other_rows) * (o.shift - s.shift);
    }
};

}  // namespace

std::unique_ptr<estimator> make_mde(const estimator_setup&) { return std::make_unique<mde_estimator>(); }

}  // namespace detail
}  // namespace mano

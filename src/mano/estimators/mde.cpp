// MDE (Peng et al., 2024): LSE_j(E_j) - mean_i E_i over the energies E_i = -LSE_k(q_ik / T).
// mano: per-row code in the default pass, built for speed in every build (src/mano/CMakeLists.txt)
#include <algorithm>
#include <cmath>

#include "mano/estimators/estimator.hpp"
#include "mano/base/detail/json_fields.hpp"

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
        s.max = number_of(j, "max", "MDE");
        s.exp_sum = number_of(j, "exp_sum", "MDE");
        s.shift = number_of(j, "shift", "MDE");
        s.deviation_sum = number_of(j, "deviation_sum", "MDE");
        const double rows = static_cast<double>(n);
        const double spread = s.max - s.shift;  // the largest energy above the first
        const bool finite = std::isfinite(s.max) && std::isfinite(s.shift) && std::isfinite(s.deviation_sum) &&
                            std::isfinite(s.exp_sum) && std::isfinite(spread);
        // every energy is at most the maximum (so each deviation from the first is at most the
        // spread), and exp(E - max) of the maximum's row is 1
        check_state(finite && (n > 0 ? s.exp_sum >= 1 && s.exp_sum <= rows * (1 + 1e-9) && spread >= 0 &&
                                           s.deviation_sum <= rows * spread * (1 + 1e-9) + 1e-9 * rows
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

// COTT (Lu et al., NeurIPS 2023): COT's optimal plan from the label marginal to the softmax rows,
// thresholded. On the labeled source set the plan from the true labels' frequencies to the source
// rows gives each row its transport cost 1 - p_ic; the threshold t is the cost above which the
// plan's mass equals the source error. The estimated accuracy of a set is 1 - the mass its own
// plan moves at a cost above t. (The authors' code thresholds at the cost of the source's
// n_incorrect-th costliest row, so that the source's own estimate is one row short of its error;
// here it is the error itself, as ATC does.) It keeps every row in double, as the source fit
// saw its costs: O(N K) memory, and two exact transport problems (source and target).
#include <algorithm>
#include <cmath>
#include <limits>

#include "mano/estimators/estimator.hpp"
#include "mano/base/error.hpp"
#include "mano/shift/source_fit.hpp"
#include "mano/shift/source_rows.hpp"
#include "mano/shift/transport.hpp"
#include "mano/kernel/kernel.hpp"

namespace mano {
namespace detail {
namespace {

// The plan's mass above a cost.
double mass_above(const std::vector<transport_flow>& plan, double t) {
    double mass = 0;
    for (const auto& f : plan) mass += f.cost > t ? f.mass : 0;
    return mass;
}

class cott_estimator : public transport_component<cott_estimator, double> {
public:
    explicit cott_estimator(const estimator_setup& e) : transport_component(e) {
        const options& o = e.opts;
        if (!o.source) return;
        const auto& fitted = o.source->fitted;
        if (!fitted.contains("cott") || !fitted.at("cott").is_object() || !fitted.at("cott").contains("threshold") ||
            !fitted.at("cott").at("threshold").is_number())
            throw error("cott needs its threshold fitted on the labeled source set; fit the source with cott among the methods");
        threshold_ = fitted.at("cott").at("threshold").get<double>();
        if (!(*threshold_ >= 0 && *threshold_ <= 1))
            throw error("source model: the cott threshold must be a transport cost in [0, 1]");
    }
    void finalize(const final_context& c, result& r) const override {
        if (!threshold_) return;
        std::vector<double> rows;
        for (const auto& [data, count] : rows_.blocks()) rows.insert(rows.end(), data, data + count * k_);
        const auto plan = transport_plan(rows.data(), c.n, k_, marginal_);
        r[method::cott] = estimate{1.0 - std::min(1.0, mass_above(plan, *threshold_)), std::nullopt, *threshold_};
    }

private:
    std::optional<double> threshold_;
};

}  // namespace

std::unique_ptr<estimator> make_cott(const estimator_setup& e) { return std::make_unique<cott_estimator>(e); }

// The threshold: of the distinct costs of the source plan, the largest t whose mass above it is
// nearest the source error.
nlohmann::json fit_cott(const source_rows& s) {
    const auto probs = s.probs();
    const auto plan = transport_plan(probs.data(), s.n(), s.k(), label_frequencies(s.labels(), s.n(), s.k()));
    const double error = static_cast<double>(s.n() - s.correct()) / static_cast<double>(s.n());
    std::vector<double> costs;
    for (const auto& f : plan) costs.push_back(f.cost);
    std::sort(costs.begin(), costs.end(), std::greater<>());
    costs.erase(std::unique(costs.begin(), costs.end()), costs.end());
    double best = costs.front(), best_gap = std::numeric_limits<double>::infinity();
    for (const double t : costs) {
        const double gap = std::abs(mass_above(plan, t) - error);
        if (gap < best_gap - 1e-12) best = t, best_gap = gap;
    }
    return {{"threshold", best}};
}

}  // namespace detail
}  // namespace mano

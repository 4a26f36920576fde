// COT's transport problem by an epsilon-scaling auction (detail/auction.hpp; Bertsekas and
// Castanon, "The auction algorithm for the transportation problem", 1989).
//
// The rows bid for the classes. A class c of supply s_c is s_c identical units; its price g_c is
// what its cheapest unit costs: the price it started the phase at while a unit is free, else the
// lowest bid it holds. A row with units left finds its best class c (the largest p_ic - g_c, by
// the kernel's best_values) and the second best value, and bids g_c + (best - second) + eps for
// as many units as are free at c, or as the cheapest holder of c holds; the holder's units go
// back to bidding. Every unit then stays within eps of its best class (eps-complementary
// slackness), so the plan costs at most eps per unit more than the optimum. Each phase keeps the
// prices, starts the rows over, and divides eps by 8. The plan is certified by the dual: with
// the prices g, D(g) = -sum_c a_c g_c + (1/N) sum_i min_c (1 - p_ic + g_c) is a lower bound of
// the optimal cost (weak duality), so cost - D(g) bounds the plan's distance to it; the phases
// stop once that is below the tolerance.
#include "mano/shift/detail/auction.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "mano/base/error.hpp"

namespace mano {
namespace detail {
namespace {

constexpr double first_eps = 0.05;
constexpr double eps_factor = 8;
// Below this eps the rounding of the prices would decide; the certificate says how close it got.
constexpr double last_eps = 1e-14;
// The dual is checked after each phase from this eps down (it comes out about eps / 100).
constexpr double check_from = 1e-5;
// Rows whose best classes are found at once (a round) when this many or more wait to bid; and
// the rows of one task of a round or of the dual's pass.
constexpr std::size_t round_rows = 1024;

struct holding {
    double price;  // what the row bid per unit
    std::size_t row;
    std::int64_t units;
};

// A class's holdings, the cheapest first (a binary heap on price).
struct holdings {
    std::vector<holding> items;
    static bool later(const holding& a, const holding& b) { return a.price > b.price; }
    void push(const holding& h) {
        items.push_back(h);
        std::push_heap(items.begin(), items.end(), later);
    }
    void pop() {
        std::pop_heap(items.begin(), items.end(), later);
        items.pop_back();
    }
    holding& cheapest() { return items.front(); }
};

class auction {
public:
    auction(const std::vector<const float*>& rows, std::size_t k, const std::vector<std::int64_t>& supply,
            std::int64_t demand, const shift_kernels& kernels, const parallel_for& parallel)
        : rows_(rows), k_(k), supply_(supply), demand_(demand), kernels_(kernels), parallel_(parallel),
          price_(k, 0.0), held_(k, 0), classes_(k), left_(rows.size(), 0), queued_(rows.size(), false) {
        // a class of supply 0 takes nothing: its price keeps it out of every row's choice
        for (std::size_t c = 0; c < k; ++c)
            if (supply[c] == 0) price_[c] = std::numeric_limits<double>::infinity();
    }

    void phase(double eps) {
        for (std::size_t c = 0; c < k_; ++c) classes_[c].items.clear(), held_[c] = 0;
        queue_.clear();
        for (std::size_t i = 0; i < rows_.size(); ++i) left_[i] = demand_, queued_[i] = true, queue_.push_back(i);
        while (!queue_.empty()) {
            if (queue_.size() >= round_rows) {
                round(eps);
                continue;
            }
            const std::size_t i = queue_.front();
            queue_.pop_front();
            queued_[i] = false;
            bid(i, eps, kernels_.best_values(rows_[i], k_, price_.data()));
        }
    }

    // The plan's cost and the dual value of the prices, per unit of mass.
    auction_plan plan() const {
        auction_plan out;
        const double total = static_cast<double>(demand_) * static_cast<double>(rows_.size());
        double cost = 0, compensation = 0;
        for (std::size_t c = 0; c < k_; ++c)
            for (const auto& h : classes_[c].items) {
                out.flows.push_back({h.row, c, h.units});
                const double term = static_cast<double>(h.units) * (1.0 - static_cast<double>(rows_[h.row][c]));
                const double next = cost + term;
                compensation += std::abs(cost) >= std::abs(term) ? (cost - next) + term : (term - next) + cost;
                cost = next;
            }
        out.cost = (cost + compensation) / total;
        // the benefit p's dual bound: sum_c a_c g_c + (1/N) sum_i max_c (p_ic - g_c) >= the
        // plan's benefit; the cost is 1 - the benefit
        double dual = 0;
        for (std::size_t c = 0; c < k_; ++c)
            if (supply_[c] > 0) dual -= static_cast<double>(supply_[c]) * price_[c];
        dual /= total;
        // min_c (1 - p_ic + g_c) = 1 - max_c (p_ic - g_c), summed in fixed row ranges
        const std::size_t tasks = (rows_.size() + round_rows - 1) / round_rows;
        std::vector<double> part(tasks, 0.0);
        parallel_(tasks, [&](std::size_t t) {
            for (std::size_t i = t * round_rows; i < std::min(rows_.size(), (t + 1) * round_rows); ++i)
                part[t] += 1.0 - kernels_.best_values(rows_[i], k_, price_.data()).first;
        });
        double rows_part = 0;
        for (const double x : part) rows_part += x;
        dual += rows_part / static_cast<double>(rows_.size());
        out.gap = std::max(0.0, out.cost - dual);
        return out;
    }

private:
    // Every queued row's best classes at the current prices at once (a Jacobi round: the bids
    // are then placed in queue order, each only if it still beats its class's price).
    void round(double eps) {
        const std::vector<std::size_t> batch(queue_.begin(), queue_.end());
        queue_.clear();
        for (const std::size_t i : batch) queued_[i] = false;
        std::vector<best_two> best(batch.size());
        const std::size_t tasks = (batch.size() + round_rows - 1) / round_rows;
        parallel_(tasks, [&](std::size_t t) {
            for (std::size_t j = t * round_rows; j < std::min(batch.size(), (t + 1) * round_rows); ++j)
                best[j] = kernels_.best_values(rows_[batch[j]], k_, price_.data());
        });
        for (std::size_t j = 0; j < batch.size(); ++j) bid(batch[j], eps, best[j]);
    }

    // Row i's bid for its best class at the prices `best` was found at: p_ic - second + eps, the
    // price at which c would be eps worse than the second best. Prices only rise, so the bid keeps
    // i within eps of its best class as long as it beats c's price now; else i bids again.
    void bid(std::size_t i, double eps, const best_two& best) {
        const std::int64_t units_left = left_[i];
        if (units_left == 0) return;
        const std::size_t c = best.index;
        const double offer = static_cast<double>(rows_[i][c]) - best.second + eps;
        if (!(offer > price_[c])) {
            requeue(i);
            return;
        }
        holdings& h = classes_[c];
        const std::int64_t free = supply_[c] - held_[c];
        std::int64_t units;
        if (free > 0) {
            units = std::min(units_left, free);
            held_[c] += units;
        } else {
            holding& cheapest = h.cheapest();
            units = std::min(units_left, cheapest.units);
            const std::size_t out = cheapest.row;
            if (cheapest.units == units) h.pop();
            else cheapest.units -= units;
            left_[out] += units;
            requeue(out);
        }
        h.push({offer, i, units});
        left_[i] -= units;
        if (left_[i] > 0) requeue(i);
        if (held_[c] == supply_[c]) price_[c] = h.cheapest().price;
    }

    void requeue(std::size_t row) {
        if (!queued_[row]) queued_[row] = true, queue_.push_back(row);
    }

    const std::vector<const float*>& rows_;
    std::size_t k_;
    const std::vector<std::int64_t>& supply_;
    std::int64_t demand_;
    const shift_kernels& kernels_;
    const parallel_for& parallel_;
    std::vector<double> price_;
    std::vector<std::int64_t> held_;
    std::vector<holdings> classes_;
    std::vector<std::int64_t> left_;
    std::vector<bool> queued_;
    std::deque<std::size_t> queue_;
};

}  // namespace

auction_plan auction_transport(const std::vector<const float*>& rows, std::size_t k, const std::vector<std::int64_t>& supply,
                               std::int64_t demand, const shift_kernels& kernels, double tolerance,
                               const parallel_for& parallel) {
    std::size_t active = 0, last = 0;
    for (std::size_t c = 0; c < k; ++c)
        if (supply[c] > 0) ++active, last = c;
    auction_plan plan;
    if (active == 1) {  // every row goes to the one class
        double cost = 0;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            plan.flows.push_back({i, last, demand});
            cost += 1.0 - static_cast<double>(rows[i][last]);
        }
        plan.cost = cost / static_cast<double>(rows.size());
        return plan;
    }
    auction a(rows, k, supply, demand, kernels, parallel);
    for (double eps = first_eps;; eps /= eps_factor) {
        a.phase(eps);
        if (eps > check_from) continue;
        plan = a.plan();
        if (plan.gap <= tolerance || eps < last_eps) return plan;
    }
}

}  // namespace detail
}  // namespace mano

// COT's transport problem by an epsilon-scaling auction (detail/auction.hpp; Bertsekas and
// Castanon, "The auction algorithm for the transportation problem", 1989).
//
// The rows bid for the classes. A class c of supply s_c is s_c identical units; its price g_c is
// what its cheapest unit costs: the price it started the phase at while a unit is free, else the
// lowest bid it holds. A row with units left finds its best class c (the largest p_ic - g_c,
// among its candidate classes while they hold it, else by a kernel pass: best_of) and the second
// best value (or a bound above it), and bids g_c + (best - second) + eps for
// as many units as are free at c, or as the cheapest holder of c holds; the holder's units go
// back to bidding. Every unit then stays within eps of its best class (eps-complementary
// slackness), so the plan costs at most eps per unit more than the optimum. Each phase keeps the
// prices and divides eps by 8; the coarse phases start the rows over, the fine ones keep the units
// still within eps of their best class. The auction first places whole rows (each class's supply
// rounded to rows), then, where the supplies are not whole rows, the units, eps starting over.
// The plan is certified by the dual: with
// the prices g, D(g) = -sum_c a_c g_c + (1/N) sum_i min_c (1 - p_ic + g_c) is a lower bound of
// the optimal cost (weak duality), so cost - D(g) bounds the plan's distance to it; the phases
// stop once that is below the tolerance.
#include "mano/shift/detail/auction.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
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
// Down to this eps each phase starts every row over; below, from the units still within eps of
// their row's best class, which the dual's pass (each row's best value) finds.
constexpr double check_from = 2e-5;
// The bids allowed: this many a row, plus a fixed part. Rows with many exact ties can make the
// units' auction trade small parts of rows at eps a bid for ever (measured: tens of millions of
// bids on 1000 x 300 rows of three levels, where random logits take about 8 a row); past this the
// auction gives up and says so (auction_plan::finished).
constexpr long long bids_per_row = 400;
constexpr long long bids_fixed = 1'000'000;
// Rows whose best classes are found at once (a round) when this many or more wait to bid; and
// the rows of one task of a round or of the dual's pass.
constexpr std::size_t round_rows = 1024;
// Classes a row keeps as its candidates (best_of), where K is more than 4 times this.
constexpr std::size_t candidates = 24;

// The next phase's eps once a plan's gap is known: the gap falls about in proportion to eps
// (measured: about eps / 100 at 50000 x 1000), so it aims at half the tolerance, dividing eps by
// eps_factor at least and by eps_factor^3 at most (a fine phase costs a pass over the rows for
// its plan, whatever its eps).
double next_eps(double eps, double gap, double tolerance) {
    const double most = eps_factor * eps_factor * eps_factor;
    return eps * std::clamp(0.5 * tolerance / gap, 1 / most, 1 / eps_factor);
}

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
          price_(k, 0.0), held_(k, 0), classes_(k), left_(rows.size(), demand), queued_(rows.size(), true),
          queue_(rows.size()), best_(rows.size()), candidates_(k > 4 * candidates ? rows.size() * candidates : 0),
          bound_(rows.size(), std::numeric_limits<double>::infinity()) {
        // a class of supply 0 takes nothing: its price keeps it out of every row's choice
        for (std::size_t c = 0; c < k; ++c)
            if (supply[c] == 0) price_[c] = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < rows.size(); ++i) queue_[i] = i;
    }

    // Every unit back to bidding, at the prices reached.
    void restart() {
        for (std::size_t c = 0; c < k_; ++c) classes_[c].items.clear(), held_[c] = 0;
        queue_.clear();
        for (std::size_t i = 0; i < rows_.size(); ++i) left_[i] = demand_, queued_[i] = true, queue_.push_back(i);
    }

    // Bids until every row is placed: every unit then within eps of its best class; false when
    // the bids ran out first.
    bool bid_all(double eps) {
        while (!queue_.empty()) {
            if (bids_ > budget_) return false;
            if (queue_.size() >= round_rows) {
                round(eps);
                continue;
            }
            const std::size_t i = queue_.front();
            queue_.pop_front();
            queued_[i] = false;
            bid(i, eps, best_of(i), true);
        }
        return true;
    }

    // Every row's best value at the current prices (one pass); returns the sum over the rows of
    // 1 - that, in a fixed order.
    double find_best() {
        const std::size_t tasks = (rows_.size() + round_rows - 1) / round_rows;
        std::vector<double> part(tasks, 0.0);
        parallel_(tasks, [&](std::size_t t) {
            for (std::size_t i = t * round_rows; i < std::min(rows_.size(), (t + 1) * round_rows); ++i) {
                best_[i] = best_of(i).first;
                part[t] += 1.0 - best_[i];
            }
        });
        double sum = 0;
        for (const double x : part) sum += x;
        return sum;
    }

    // find_best(), then the plan's cost and the dual bound of the prices, per unit of mass.
    auction_plan plan() {
        const double rows_part = find_best();
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
        // the benefit p's dual bound: sum_c a_c g_c + (1/N) sum_i max_c (p_ic - g_c) >= the plan's
        // benefit, and the cost is 1 - the benefit: min_c (1 - p_ic + g_c) = 1 - max_c (p_ic - g_c)
        double dual = 0;
        for (std::size_t c = 0; c < k_; ++c)
            if (supply_[c] > 0) dual -= static_cast<double>(supply_[c]) * price_[c];
        dual = dual / total + rows_part / static_cast<double>(rows_.size());
        out.gap = std::max(0.0, out.cost - dual);
        return out;
    }

    // The next phase starts from the class prices: a unit whose class is still within eps of its
    // row's best value there (plan() found them) stays, at its class's price, and the others go
    // back to bidding.
    void tighten(double eps) {
        for (std::size_t c = 0; c < k_; ++c) {
            auto& items = classes_[c].items;
            std::size_t kept = 0;
            for (holding h : items) {
                if (static_cast<double>(rows_[h.row][c]) - price_[c] >= best_[h.row] - eps) {
                    h.price = price_[c];
                    items[kept++] = h;
                    continue;
                }
                held_[c] -= h.units;
                left_[h.row] += h.units;
                requeue(h.row);
            }
            items.resize(kept);
            std::make_heap(items.begin(), items.end(), holdings::later);
        }
    }

    // From whole rows to `demand` units a row and these supplies (not multiples of it): every
    // holding in units, a class's units beyond its supply back to bidding (its cheapest first),
    // and a class that took no whole row priced as the dearest class, to be bid down to.
    void rescale(const std::vector<std::int64_t>& supply, std::int64_t demand) {
        double dearest = 0;
        for (const double g : price_)
            if (std::isfinite(g)) dearest = std::max(dearest, g);
        supply_ = supply, demand_ = demand;
        bool fell = false;  // a price that falls from infinity invalidates every candidate bound
        for (std::size_t c = 0; c < k_; ++c) {
            if (supply_[c] > 0 && !std::isfinite(price_[c])) price_[c] = dearest, fell = true;
            holdings& h = classes_[c];
            for (auto& item : h.items) item.units *= demand;
            held_[c] *= demand;
            while (held_[c] > supply_[c]) {
                holding& cheapest = h.cheapest();
                const std::int64_t out = std::min(held_[c] - supply_[c], cheapest.units);
                left_[cheapest.row] += out;
                requeue(cheapest.row);
                held_[c] -= out;
                if ((cheapest.units -= out) == 0) h.pop();
            }
        }
        if (fell) std::fill(bound_.begin(), bound_.end(), std::numeric_limits<double>::infinity());
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
                best[j] = best_of(batch[j]);
        });
        for (std::size_t j = 0; j < batch.size(); ++j)
            if (!bid(batch[j], eps, best[j], false))
                bid(batch[j], eps, best_of(batch[j]), true);
    }

    // Row i's bid for its best class c at the prices `best` was found at: p_ic - second + eps, the
    // price at which c would be eps worse than the second best. Prices only rise, so the bid keeps
    // i within eps of its best class as long as it beats c's price now; else nothing is placed
    // (false) and i bids again from the current prices (`fresh`: found at them, so only rounding
    // could keep the offer from beating the price, and the offer is then the next double up).
    // The bid takes c's free units, then its units held below the offer, the cheapest first (its
    // own move up to the offer), as many as i has left: one bid, however the units were split.
    bool bid(std::size_t i, double eps, const best_two& best, bool fresh) {
        ++bids_;
        if (left_[i] == 0) return true;
        const std::size_t c = best.index;
        double offer = static_cast<double>(rows_[i][c]) - best.second + eps;
        if (!(offer > price_[c])) {
            if (!fresh) return false;
            offer = std::nextafter(price_[c], std::numeric_limits<double>::infinity());
        }
        holdings& h = classes_[c];
        const std::int64_t free = std::min(left_[i], supply_[c] - held_[c]);
        std::int64_t units = free;
        held_[c] += free, left_[i] -= free;
        while (left_[i] > 0 && !h.items.empty() && h.cheapest().price < offer) {
            holding& cheapest = h.cheapest();
            if (cheapest.row == i) {
                units += cheapest.units;
                h.pop();
                continue;
            }
            const std::int64_t moved = std::min(left_[i], cheapest.units);
            const std::size_t out = cheapest.row;
            if ((cheapest.units -= moved) == 0) h.pop();
            left_[out] += moved;
            requeue(out);
            units += moved, left_[i] -= moved;
        }
        if (units > 0) h.push({offer, i, units});
        if (left_[i] > 0) requeue(i);
        if (held_[c] == supply_[c]) price_[c] = h.cheapest().price;
        return true;
    }

    // Row i's best and second-best values at the current prices. With candidates, from the row's
    // `candidates` classes of highest value when they were chosen, while the best of them beats
    // bound_[i], the highest value of any other class then: prices only rise, so no other class
    // can have risen above it, and the best is exact (ties to the lowest class, as best_values);
    // the second is then at most max(second of the candidates, bound_[i]), and bidding as if it
    // were that bound still leaves the row within eps of its best class (the bid is only
    // smaller). Otherwise (or without candidates) a pass over the row, which chooses them anew.
    // Only row i's own entries are written: rows may be looked at at once.
    best_two best_of(std::size_t i) {
        const float* p = rows_[i];
        if (!candidates_.empty() && std::isfinite(bound_[i])) {
            const candidate* own = &candidates_[i * candidates];
            best_two r{0, -std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
            for (std::size_t j = 0; j < candidates; ++j) {
                const std::size_t c = own[j].cls;
                const double v = static_cast<double>(own[j].p) - price_[c];
                if (v > r.first || (v == r.first && c < r.index)) r.second = r.first, r.first = v, r.index = c;
                else r.second = std::max(r.second, v);
            }
            if (r.first > bound_[i]) {
                r.second = std::max(r.second, bound_[i]);
                return r;
            }
        }
        if (candidates_.empty()) return kernels_.best_values(p, k_, price_.data());
        return choose_candidates(i);
    }

    // Row i's candidates: its classes of highest value at the current prices, and the highest
    // value of the others (bound_[i]); returns the row's best and second-best values (the
    // kernel's top_classes holds them, and ties go to the lower class, as in best_values). Where
    // every other class is without supply (value -inf), the bound is left infinite, which
    // best_of takes as no candidates.
    best_two choose_candidates(std::size_t i) {
        const float* p = rows_[i];
        using entry = std::pair<double, std::uint32_t>;
        thread_local std::vector<std::uint32_t> classes;
        thread_local std::vector<double> values, scratch;
        classes.resize(k_), values.resize(k_), scratch.resize(k_);
        const std::size_t kept =
            kernels_.top_classes(p, k_, price_.data(), candidates + 1, classes.data(), values.data(), scratch.data());
        // the candidates + 1 highest in descending order (ties to the lower class: the classes
        // come ascending, and a later one passes only a strictly lower value), by insertion
        entry top[candidates + 1];
        std::size_t size = 0;
        for (std::size_t j = 0; j < kept; ++j) {
            const entry e{values[j], classes[j]};
            if (size == candidates + 1 && !(e.first > top[candidates].first)) continue;
            std::size_t at = size <= candidates ? size++ : candidates;
            for (; at > 0 && top[at - 1].first < e.first; --at) top[at] = top[at - 1];
            top[at] = e;
        }
        const double rest = top[candidates].first;
        bound_[i] = std::isfinite(rest) ? rest : std::numeric_limits<double>::infinity();
        candidate* own = &candidates_[i * candidates];
        for (std::size_t j = 0; j < candidates; ++j) own[j] = {top[j].second, p[top[j].second]};
        return {top[0].second, top[0].first, top[1].first};
    }

    void requeue(std::size_t row) {
        if (!queued_[row]) queued_[row] = true, queue_.push_back(row);
    }

    const std::vector<const float*>& rows_;
    std::size_t k_;
    std::vector<std::int64_t> supply_;
    std::int64_t demand_;
    const shift_kernels& kernels_;
    const parallel_for& parallel_;
    std::vector<double> price_;
    std::vector<std::int64_t> held_;
    std::vector<holdings> classes_;
    std::vector<std::int64_t> left_;
    std::vector<bool> queued_;
    std::deque<std::size_t> queue_;
    std::vector<double> best_;  // each row's best value at the prices of the last plan()
    // each row's candidate classes (best_of) with their p, so that a look at them reads no row
    struct candidate {
        std::uint32_t cls;
        float p;
    };
    std::vector<candidate> candidates_;
    std::vector<double> bound_;              // and the highest value of its other classes then
    long long bids_ = 0;
    long long budget_ = bids_fixed + bids_per_row * static_cast<long long>(rows_.size());
};

}  // namespace

auction_plan auction_transport(const std::vector<const float*>& rows, std::size_t k, const std::vector<std::int64_t>& supply,
                               std::int64_t demand, const shift_kernels& kernels, double tolerance,
                               const parallel_for& parallel) {
    std::size_t active = 0, last = 0;
    for (std::size_t c = 0; c < k; ++c)
        if (supply[c] > 0) ++active, last = c;
    auction_plan plan, unfinished;
    unfinished.finished = false;
    if (active == 1) {  // every row goes to the one class
        double cost = 0;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            plan.flows.push_back({i, last, demand});
            cost += 1.0 - static_cast<double>(rows[i][last]);
        }
        plan.cost = cost / static_cast<double>(rows.size());
        return plan;
    }
    // Whole rows first (each class's supply in rows, rounded by largest remainders where it is not
    // whole): then most rows are placed as the optimum places them, and the units of the rows the
    // shares split only move a little.
    const std::size_t n = rows.size();
    std::vector<std::int64_t> whole(k, 0);
    std::vector<std::pair<std::int64_t, std::size_t>> remainders;
    std::int64_t placed = 0;
    bool exact = true;
    for (std::size_t c = 0; c < k; ++c) {
        whole[c] = supply[c] / demand, placed += whole[c];
        if (supply[c] % demand) exact = false, remainders.push_back({supply[c] % demand, c});
    }
    std::sort(remainders.begin(), remainders.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (std::size_t j = 0; placed < static_cast<std::int64_t>(n); ++j, ++placed) ++whole[remainders[j].second];
    auction a(rows, k, whole, 1, kernels, parallel);
    double eps = first_eps;
    for (;;) {
        if (!a.bid_all(eps)) return unfinished;
        if (eps > check_from) {
            a.restart();
            eps /= eps_factor;
            continue;
        }
        if (!exact) break;
        plan = a.plan();
        if (plan.gap <= tolerance || eps < last_eps) break;
        eps = next_eps(eps, plan.gap, tolerance);
        a.tighten(eps);
    }
    if (exact) {
        for (auto& f : plan.flows) f.units *= demand;
        return plan;
    }
    // The units' problem differs from the rows' where a class holds part of a row: its prices may
    // lie far from the rows', and an auction at a small eps would raise them by eps a bid, so eps
    // starts over (the units within eps of their best class stay where they are).
    a.rescale(supply, demand);
    for (eps = first_eps;; eps = next_eps(eps, plan.gap, tolerance)) {
        a.find_best();
        a.tighten(eps);
        if (!a.bid_all(eps)) return unfinished;
        plan = a.plan();
        if (plan.gap <= tolerance || eps < last_eps) return plan;
    }
}

}  // namespace detail
}  // namespace mano

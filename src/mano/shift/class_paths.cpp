// Successive shortest paths for COT's transport problem (detail/class_paths.hpp).
//
// The residual graph has a source S, the classes, the rows and a sink T. A path from S to T
// leaves a class a0 that has supply left, and moves through rows: a -> row i -> b takes row i's
// flow from class b over to class a (cost c_ia - c_ib), until a class sends to a row that still
// has demand (cost c_ia). The rows are only passed through, so the shortest path is found over
// the k classes alone, each class pair's cheapest move read from a heap of the rows that class b
// sends to (keyed by c_ia - c_ib), and each class's cheapest unsatisfied row from a heap keyed by
// c_ia. Potentials on the classes and T (Johnson) keep every reduced weight >= 0 for Dijkstra;
// the rows' potentials cancel along each pass through a row, so they are never needed. Heap
// entries of rows that have left a class (or been satisfied) are dropped when they reach the top.
#include "mano/shift/detail/class_paths.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "mano/base/error.hpp"

namespace mano {
namespace detail {
namespace {

struct heap_entry {
    double key;
    std::uint32_t row;
};

struct heap {
    std::vector<heap_entry> items;
    static bool later(const heap_entry& x, const heap_entry& y) { return x.key > y.key; }
    void push(double key, std::uint32_t row) {
        items.push_back({key, row});
        std::push_heap(items.begin(), items.end(), later);
    }
    void pop() {
        std::pop_heap(items.begin(), items.end(), later);
        items.pop_back();
    }
    // The cheapest entry still valid (valid(row)), or null; stale ones are dropped.
    template <class Valid>
    const heap_entry* top(Valid&& valid) {
        while (!items.empty() && !valid(items.front().row)) pop();
        return items.empty() ? nullptr : &items.front();
    }
};

class solver {
public:
    solver(const std::vector<double>& cost, std::size_t n, std::size_t k, std::vector<std::int64_t> supply,
           std::int64_t demand)
        : cost_(cost), n_(n), k_(k), supply_(std::move(supply)), demand_(n, demand), flows_(n), to_row_(k),
          moves_(k * k), potential_(k, 0.0), dist_(k), settled_(k), from_class_(k), via_row_(k) {
        for (std::size_t c = 0; c < k; ++c) {
            auto& h = to_row_[c].items;
            h.reserve(n);
            for (std::size_t i = 0; i < n; ++i) h.push_back({cost[i * k + c], static_cast<std::uint32_t>(i)});
            std::make_heap(h.begin(), h.end(), heap::later);
        }
    }

    std::vector<class_flow> run() {
        std::size_t unsatisfied = n_;
        // Each row first goes to its cheapest class while that class has supply: with zero class
        // potentials this partial plan is optimal (no residual arc has a negative reduced cost;
        // the sink's potential stays at 0, at most every unsatisfied row's cheapest cost), so the
        // paths only place the rest. Typically most rows stay where they went.
        for (std::size_t i = 0; i < n_; ++i) {
            const double* row = &cost_[i * k_];
            const auto c = static_cast<std::size_t>(std::min_element(row, row + k_) - row);
            const std::int64_t mass = std::min(demand_[i], supply_[c]);
            if (mass == 0) continue;
            supply_[c] -= mass;
            demand_[i] -= mass;
            add(i, c, mass);
            if (demand_[i] == 0) --unsatisfied;
        }
        while (unsatisfied > 0)
            if (augment()) --unsatisfied;
        std::vector<class_flow> plan;
        for (std::size_t i = 0; i < n_; ++i)
            for (const auto& [c, mass] : flows_[i]) plan.push_back({i, c, mass});
        return plan;
    }

private:
    static constexpr double inf = std::numeric_limits<double>::infinity();

    std::int64_t flow(std::size_t row, std::size_t c) const {
        for (const auto& [from, mass] : flows_[row])
            if (from == c) return mass;
        return 0;
    }
    void add(std::size_t row, std::size_t c, std::int64_t mass) {
        for (auto& [from, m] : flows_[row])
            if (from == c) {
                m += mass;
                return;
            }
        flows_[row].emplace_back(static_cast<std::uint32_t>(c), mass);
        for (std::size_t a = 0; a < k_; ++a)  // row can now move from c to any other class
            if (a != c) moves_[c * k_ + a].push(cost_[row * k_ + a] - cost_[row * k_ + c], static_cast<std::uint32_t>(row));
    }
    void take(std::size_t row, std::size_t c, std::int64_t mass) {
        auto& f = flows_[row];
        for (std::size_t j = 0; j < f.size(); ++j)
            if (f[j].first == c) {
                if ((f[j].second -= mass) == 0) {
                    f[j] = f.back();
                    f.pop_back();
                }
                return;
            }
    }

    // One shortest augmenting path, and the flow along it; true when it satisfied a row.
    bool augment() {
        std::fill(dist_.begin(), dist_.end(), inf);
        std::fill(settled_.begin(), settled_.end(), 0);
        for (std::size_t c = 0; c < k_; ++c)
            if (supply_[c] > 0) dist_[c] = -potential_[c], from_class_[c] = k_;  // k_: from the source
        double best = inf;  // to the sink
        std::size_t last_class = k_, last_row = 0;
        for (;;) {
            std::size_t a = k_;
            for (std::size_t c = 0; c < k_; ++c)
                if (!settled_[c] && dist_[c] < inf && (a == k_ || dist_[c] < dist_[a])) a = c;
            if (a == k_ || dist_[a] >= best) break;
            settled_[a] = 1;
            const auto unsatisfied = [&](std::uint32_t row) { return demand_[row] > 0; };
            if (const heap_entry* e = to_row_[a].top(unsatisfied)) {
                const double d = dist_[a] + std::max(0.0, e->key + potential_[a] - sink_potential_);
                if (d < best) best = d, last_class = a, last_row = e->row;
            }
            for (std::size_t b = 0; b < k_; ++b) {
                if (settled_[b] || b == a) continue;
                const auto from_b = [&](std::uint32_t row) { return flow(row, b) > 0; };
                if (const heap_entry* e = moves_[b * k_ + a].top(from_b)) {
                    // rounding must not make a reduced weight negative
                    const double d = dist_[a] + std::max(0.0, e->key + potential_[a] - potential_[b]);
                    if (d < dist_[b]) dist_[b] = d, from_class_[b] = a, via_row_[b] = e->row;
                }
            }
        }
        if (last_class == k_) throw error("transport: no augmenting path left; please report this input");
        // the most the path carries: the first class's supply, each moved row's flow, the row's demand
        std::int64_t mass = demand_[last_row];
        for (std::size_t b = last_class;; b = from_class_[b]) {
            if (from_class_[b] == k_) {
                mass = std::min(mass, supply_[b]);
                break;
            }
            mass = std::min(mass, flow(via_row_[b], b));
        }
        demand_[last_row] -= mass;
        add(last_row, last_class, mass);
        for (std::size_t b = last_class;; b = from_class_[b]) {
            if (from_class_[b] == k_) {
                supply_[b] -= mass;
                break;
            }
            take(via_row_[b], b, mass);
            add(via_row_[b], from_class_[b], mass);
        }
        for (std::size_t c = 0; c < k_; ++c) potential_[c] += settled_[c] ? dist_[c] : best;
        sink_potential_ += best;
        return demand_[last_row] == 0;
    }

    const std::vector<double>& cost_;
    std::size_t n_, k_;
    std::vector<std::int64_t> supply_, demand_;
    std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> flows_;  // per row: (class, mass)
    std::vector<heap> to_row_;  // per class c: the rows by c_ic (unsatisfied ones valid)
    std::vector<heap> moves_;   // [b * k + a]: the rows class b sends to, by c_ia - c_ib
    std::vector<double> potential_, dist_;
    double sink_potential_ = 0;
    std::vector<char> settled_;
    std::vector<std::size_t> from_class_, via_row_;  // the shortest path tree
};

}  // namespace

std::vector<class_flow> class_paths_plan(const std::vector<double>& cost, std::size_t n, std::size_t k,
                                         std::vector<std::int64_t> supply, std::int64_t demand) {
    return solver(cost, n, k, std::move(supply), demand).run();
}

}  // namespace detail
}  // namespace mano

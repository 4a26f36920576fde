#include "mano/shift/transport.hpp"
#include "mano/kernel/kernel.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>

// Header-only LEMON: nothing to link, and the same code compiles to WebAssembly.
#ifndef LEMON_ONLY_TEMPLATES
#define LEMON_ONLY_TEMPLATES
#endif
#include <lemon/network_simplex.h>
#include <lemon/static_graph.h>

#include "mano/shift/detail/auction.hpp"
#include "mano/shift/detail/class_paths.hpp"
#include "mano/base/error.hpp"
#include "mano/scan/registry.hpp"

namespace mano {
namespace {

using solver = lemon::NetworkSimplex<lemon::StaticDigraph, std::int64_t, std::int64_t>;

std::string show(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%.12g", x);
    return text;
}

int ceil_log2(std::uint64_t x) {
    int bits = 0;
    while ((std::uint64_t{1} << bits) < x) ++bits;
    return bits;
}

const std::string where = "transport_cost: ";

void validate_marginal(std::size_t n, std::size_t k, const std::vector<double>& marginal) {
    if (n == 0) throw error(where + "0 rows; COT needs at least one softmax row");
    if (k < 2) throw error(where + "the rows have " + std::to_string(k) + " columns; COT needs at least 2 columns (classes)");
    if (marginal.size() != k)
        throw error(where + "the label marginal has " + std::to_string(marginal.size()) + " entries but the rows have " +
                    std::to_string(k) + " columns; give one mass per class");
    double sum = 0;
    for (std::size_t c = 0; c < k; ++c) {
        if (!(std::isfinite(marginal[c]) && marginal[c] >= 0))
            throw error(where + "marginal[" + std::to_string(c) + "] = " + show(marginal[c]) +
                        "; class masses must be finite and non-negative");
        sum += marginal[c];
    }
    if (!(std::abs(sum - 1) <= 1e-9))
        throw error(where + "the label marginal sums to " + show(sum) + ", not 1; divide it by its sum");
}

void validate(const double* probs, std::size_t n, std::size_t k, const std::vector<double>& marginal) {
    validate_marginal(n, k, marginal);
    if (probs == nullptr) throw error(where + "the probability matrix is a null pointer");
    if (n > static_cast<std::size_t>(INT_MAX) / k)
        throw error(where + std::to_string(n) + " x " + std::to_string(k) +
                    " row-class pairs are too many for the exact solver (at most 2^31 - 1); score a random subset of rows");
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t c = 0; c < k; ++c) {
            const double p = probs[i * k + c];
            if (!(p >= 0 && p <= 1))
                throw error(where + "row " + std::to_string(i) + ", column " + std::to_string(c) + " is " + show(p) +
                            ", not a probability in [0, 1]; pass softmax rows, not logits");
        }
}

// Integer masses proportional to `marginal`, summing exactly to `total`, each within about a
// unit of its exact share (largest remainders); a class of mass 0 stays 0.
std::vector<std::int64_t> integer_masses(const std::vector<double>& marginal, std::int64_t total) {
    const double sum = std::accumulate(marginal.begin(), marginal.end(), 0.0);
    std::vector<std::int64_t> mass(marginal.size());
    std::vector<double> remainder(marginal.size());
    std::vector<std::size_t> order;
    std::int64_t left = total;
    for (std::size_t c = 0; c < marginal.size(); ++c) {
        const double share = marginal[c] / sum * static_cast<double>(total);
        mass[c] = static_cast<std::int64_t>(std::floor(share));
        remainder[c] = share - static_cast<double>(mass[c]);
        left -= mass[c];
        if (marginal[c] > 0) order.push_back(c);
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
    // `left` is a few units of either sign (floors, rounding of `share` and `sum`).
    for (std::size_t j = 0; left > 0; j = (j + 1) % order.size(), --left) ++mass[order[j]];
    for (std::size_t j = order.size() - 1; left < 0; j = (j + order.size() - 1) % order.size())
        if (mass[order[j]] > 0) --mass[order[j]], ++left;
    return mass;
}

// The classes' supplies and each row's demand in integer units (the solvers are exact on
// integers), for `classes`, the classes of positive mass.
struct unit_masses {
    std::vector<std::int64_t> supplies;
    std::int64_t row_mass;
};

unit_masses integer_supplies(const std::vector<double>& marginal, std::size_t n, const std::vector<std::size_t>& classes) {
    const std::size_t k = marginal.size();
    // LEMON's network simplex is exact on integers, so both sides are scaled and rounded; the two
    // roundings together move the cost by less than 1e-9 for every N * K up to 10^9.
    // Masses: each row takes 2^s units and the classes supply N * 2^s in proportion to the
    // marginal (N * 2^s <= 2^62; s <= 52 keeps a share's fraction in a double). Rounding moves
    // at most K * 2^-(s+1) of the marginal, and the cost by at most that (costs lie in [0, 1]).
    // Where every N * marginal[c] is whole, class c supplies exactly that many rows' units.
    const int mass_bits = std::min(52, 62 - ceil_log2(n));
    const std::int64_t row_mass = std::int64_t{1} << mass_bits;
    const auto rows = static_cast<std::int64_t>(n);
    bool whole = true;
    std::int64_t whole_rows = 0;
    for (const std::size_t c : classes) {
        const double share = marginal[c] * static_cast<double>(n);
        whole = whole && std::abs(share - std::round(share)) <= 1e-9 * static_cast<double>(n);
        whole_rows += std::llround(share);
    }
    whole = whole && whole_rows == rows;
    std::vector<std::int64_t> supplies(k, 0);
    if (whole) {
        for (const std::size_t c : classes) supplies[c] = std::llround(marginal[c] * static_cast<double>(n)) * row_mass;
    } else {
        const auto class_mass = integer_masses(marginal, row_mass);
        for (const std::size_t c : classes) supplies[c] = class_mass[c] * rows;
    }
    return {supplies, row_mass};
}

// Few classes: successive shortest paths, in time bounded by N and K whatever the data;
// value(i, c) is p_ic.
template <class Value>
std::vector<transport_flow> plan_by_class_paths(std::size_t n, const std::vector<std::size_t>& classes,
                                                const std::vector<std::int64_t>& supplies, std::int64_t row_mass,
                                                Value value) {
    const double unit = 1.0 / (static_cast<double>(n) * static_cast<double>(row_mass));
    const auto classes_n = classes.size();
    std::vector<double> cost(n * classes_n);
    std::vector<std::int64_t> class_supply(classes_n);
    for (std::size_t j = 0; j < classes_n; ++j) {
        class_supply[j] = supplies[classes[j]];
        for (std::size_t i = 0; i < n; ++i) cost[i * classes_n + j] = 1 - value(i, classes[j]);
    }
    std::vector<transport_flow> plan;
    for (const auto& f : detail::class_paths_plan(cost, n, classes_n, std::move(class_supply), row_mass))
        plan.push_back({f.row, classes[f.cls], static_cast<double>(f.mass) * unit, cost[f.row * classes_n + f.cls]});
    return plan;
}

// The plan's cost under the unrounded costs, with compensated summation over the arcs.
double cost_of(const std::vector<transport_flow>& plan) {
    double total = 0, compensation = 0;
    for (const auto& f : plan) {
        const double term = f.mass * f.cost;
        const double next = total + term;
        compensation += std::abs(total) >= std::abs(term) ? (total - next) + term : (term - next) + total;
        total = next;
    }
    return total + compensation;
}

std::vector<std::size_t> classes_with_mass(const std::vector<double>& marginal) {
    std::vector<std::size_t> classes;
    for (std::size_t c = 0; c < marginal.size(); ++c)
        if (marginal[c] > 0) classes.push_back(c);
    return classes;
}

}  // namespace

std::vector<transport_flow> transport_plan(const double* probs, std::size_t n, std::size_t k,
                                           const std::vector<double>& marginal) {
    validate(probs, n, k, marginal);
    const auto classes = classes_with_mass(marginal);

    const auto [supplies, row_mass] = integer_supplies(marginal, n, classes);
    if (classes.size() <= keeps_rows_max_k)
        return plan_by_class_paths(n, classes, supplies, row_mass, [&](std::size_t i, std::size_t c) { return probs[i * k + c]; });
    std::vector<transport_flow> plan;
    const double unit = 1.0 / (static_cast<double>(n) * static_cast<double>(row_mass));
    const auto classes_n = classes.size();
    // many classes (COT asked for by name beyond keeps_rows_max_k): LEMON's network simplex, fast
    // there, though its time depends on the data.
    // Costs 1 - p_ic to the nearest multiple of 2^-b: the plan found is optimal for the true
    // costs to within 2^-b. Potentials then lie in [-2^60, 2^62 + 2^60] (LEMON's artificial cost
    // is 2^62), so reduced costs cannot overflow int64.
    const int cost_bits = std::min(52, 60 - ceil_log2(n + classes.size() + 1));
    const double cost_scale = std::ldexp(1.0, cost_bits);

    // Class j is node j and row i is node classes_n + i; StaticDigraph wants arcs sorted by source
    // and numbers them in that order, so the arc from class j to row i is j * n + i.
    std::vector<std::pair<int, int>> arcs;
    arcs.reserve(n * classes_n);
    for (std::size_t j = 0; j < classes_n; ++j)
        for (std::size_t i = 0; i < n; ++i) arcs.emplace_back(static_cast<int>(j), static_cast<int>(classes_n + i));
    lemon::StaticDigraph graph;
    graph.build(static_cast<int>(n + classes_n), arcs.begin(), arcs.end());
    arcs = {};
    lemon::StaticDigraph::NodeMap<std::int64_t> supply(graph);
    lemon::StaticDigraph::ArcMap<std::int64_t> cost(graph);
    for (std::size_t j = 0; j < classes_n; ++j) supply[graph.node(static_cast<int>(j))] = supplies[classes[j]];
    for (std::size_t i = 0; i < n; ++i) supply[graph.node(static_cast<int>(classes_n + i))] = -row_mass;
    for (std::size_t j = 0; j < classes_n; ++j)
        for (std::size_t i = 0; i < n; ++i)
            cost[graph.arc(static_cast<int>(j * n + i))] = std::llround((1 - probs[i * k + classes[j]]) * cost_scale);

    solver simplex(graph);
    simplex.supplyMap(supply).costMap(cost);
    // Candidate-list pivoting measured 2-4x faster than LEMON's default block search on these
    // graphs for K <= 100 and N >= 10^4 (1.4x slower at K = 1000).
    if (simplex.run(solver::CANDIDATE_LIST) != solver::OPTIMAL)
        throw error("transport_cost: the network simplex found no optimal plan; please report this input");

    for (std::size_t j = 0; j < classes_n; ++j)
        for (std::size_t i = 0; i < n; ++i) {
            const std::int64_t flow = simplex.flow(graph.arc(static_cast<int>(j * n + i)));
            if (flow != 0)
                plan.push_back({i, classes[j], static_cast<double>(flow) * unit, 1 - probs[i * k + classes[j]]});
        }
    return plan;
}

double transport_cost(const double* probs, std::size_t n, std::size_t k, const std::vector<double>& marginal) {
    return cost_of(transport_plan(probs, n, k, marginal));
}

std::vector<transport_flow> transport_plan(const row_blocks& blocks, std::size_t k, const std::vector<double>& marginal,
                                           const detail::shift_kernels& kernels, const parallel_for& parallel) {
    const std::size_t n = rows_in(blocks);
    validate_marginal(n, k, marginal);
    std::vector<const float*> rows;
    rows.reserve(n);
    for (const auto& b : blocks)
        for (std::size_t i = 0; i < b.count; ++i) rows.push_back(b.rows + i * k);
    const auto classes = classes_with_mass(marginal);
    const auto [supplies, row_mass] = integer_supplies(marginal, n, classes);
    if (classes.size() <= keeps_rows_max_k)
        return plan_by_class_paths(n, classes, supplies, row_mass,
                                   [&](std::size_t i, std::size_t c) { return static_cast<double>(rows[i][c]); });
    const auto found = detail::auction_transport(rows, k, supplies, row_mass, kernels, transport_gap, parallel);
    if (!found.finished) {
        // rows the auction could not place in its bids (many exact ties): the network simplex on
        // the same values, where their N x K arcs fit
        if (n * k > auction_fallback_max_pairs)
            throw error("transport_cost: the auction found no plan for these " + std::to_string(n) + " x " + std::to_string(k) +
                        " rows (many exact ties) and they are too many for the exact network simplex (at most " +
                        std::to_string(auction_fallback_max_pairs) + " row-class pairs); please report this input");
        std::vector<double> widened;
        widened.reserve(n * k);
        for (const float* row : rows) widened.insert(widened.end(), row, row + k);
        return transport_plan(widened.data(), n, k, marginal);
    }
    if (!(found.gap <= transport_gap))
        throw error("transport_cost: the auction's plan is only certified within " + show(found.gap) +
                    " of the optimal cost; please report this input");
    std::vector<transport_flow> plan;
    const double unit = 1.0 / (static_cast<double>(n) * static_cast<double>(row_mass));
    for (const auto& f : found.flows)
        plan.push_back({f.row, f.cls, static_cast<double>(f.units) * unit, 1 - static_cast<double>(rows[f.row][f.cls])});
    return plan;
}

double transport_cost(const row_blocks& rows, std::size_t k, const std::vector<double>& marginal,
                      const detail::shift_kernels& kernels, const parallel_for& parallel) {
    return cost_of(transport_plan(rows, k, marginal, kernels, parallel));
}

}  // namespace mano

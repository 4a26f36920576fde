#include "mano/calibration/label_shift_copies.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/base/random.hpp"

namespace mano {

nlohmann::json label_shift_copies::to_json() const {
    return {{"copies", copies}, {"seed", seed}, {"max_rows", max_rows}, {"alphas", alphas}};
}

label_shift_copies label_shift_copies::from_json(const nlohmann::json& j, const std::string& what) {
    if (!j.is_object()) throw error(what + " must be an object {copies, seed, max_rows, alphas}");
    detail::check_known_keys(j, {"copies", "seed", "max_rows", "alphas"}, what);
    label_shift_copies o;
    if (j.contains("copies"))
        o.copies = static_cast<std::size_t>(detail::integer_of(j.at("copies"), what, "copies", 0, label_shift_max_copies));
    if (j.contains("seed"))
        o.seed = static_cast<std::uint64_t>(
            detail::integer_of(j.at("seed"), what, "seed", 0, static_cast<std::int64_t>(label_shift_max_seed)));
    if (j.contains("max_rows"))
        o.max_rows = static_cast<std::size_t>(detail::integer_of(j.at("max_rows"), what, "max_rows", 2, 1000000));
    if (j.contains("alphas")) {
        o.alphas = detail::numbers_of(j, "alphas", what);
        if (o.alphas.empty() || !std::all_of(o.alphas.begin(), o.alphas.end(), [](double a) { return a > 0 && a <= 1e6; }))
            throw error(what + ": \"alphas\" must be Dirichlet concentrations above 0 (and at most 1e6), at least one");
    }
    return o;
}

std::vector<std::uint64_t> label_shift_copy_rows(const std::vector<std::int64_t>& labels, std::size_t k,
                                                 const label_shift_copies& o, std::size_t set, std::size_t copy) {
    if (labels.empty()) throw error("a label-shifted copy needs the set's rows and labels");
    std::vector<std::vector<std::uint64_t>> rows_of(k);
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (labels[i] < 0 || static_cast<std::size_t>(labels[i]) >= k)
            throw error("row " + std::to_string(i) + ": label " + std::to_string(labels[i]) + " is outside [0, " +
                        std::to_string(k) + ")");
        rows_of[static_cast<std::size_t>(labels[i])].push_back(i);
    }
    detail::splitmix64 g{o.seed ^ (0x9e3779b97f4a7c15ULL * (set + 1)) ^ (0xc2b2ae3d27d4eb4fULL * (copy + 1))};
    const double alpha = o.alphas[copy % o.alphas.size()];
    // pi ~ Dirichlet(alpha) over the classes the set has, as cumulative shares
    std::vector<std::size_t> classes;
    std::vector<double> cumulative;
    double total = 0;
    for (std::size_t c = 0; c < k; ++c)
        if (!rows_of[c].empty()) {
            total += detail::gamma_draw(g, alpha);
            classes.push_back(c);
            cumulative.push_back(total);
        }
    const std::size_t m = std::min(labels.size(), o.max_rows);
    std::vector<std::uint64_t> out;
    out.reserve(m);
    for (std::size_t r = 0; r < m; ++r) {
        // a class by inverse CDF (at least one class has a positive share: the draws are > 0)
        const double u = detail::uniform01(g) * total;
        const auto at = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
        const auto& pool = rows_of[classes[std::min<std::size_t>(static_cast<std::size_t>(at), classes.size() - 1)]];
        out.push_back(pool[detail::uniform_below(g, pool.size())]);
    }
    return out;
}

}  // namespace mano

#include "mano/prediction/own_accuracy.hpp"

#include <algorithm>
#include <cmath>

#include "mano/calibration/student_t.hpp"

namespace mano {
namespace {

// Adds weight * P(Binomial(n, p) = k) to mass[k] for every k whose probability is above 1e-18 of
// the mode's: from the mode outwards by the ratio of neighbouring probabilities.
void add_binomial(std::vector<double>& mass, std::size_t n, double p, double weight) {
    if (p <= 0) {
        mass[0] += weight;
        return;
    }
    if (p >= 1) {
        mass[n] += weight;
        return;
    }
    const double dn = static_cast<double>(n);
    const auto mode = static_cast<std::size_t>(std::min(dn, std::floor((dn + 1) * p)));
    const double dm = static_cast<double>(mode);
    const double at_mode = std::exp(std::lgamma(dn + 1) - std::lgamma(dm + 1) - std::lgamma(dn - dm + 1) + dm * std::log(p) +
                                    (dn - dm) * std::log1p(-p));
    const double odds = p / (1 - p), floor = at_mode * 1e-18;
    mass[mode] += weight * at_mode;
    double q = at_mode;
    for (std::size_t k = mode; k < n && q > floor; ++k) {
        q *= static_cast<double>(n - k) / static_cast<double>(k + 1) * odds;
        mass[k + 1] += weight * q;
    }
    q = at_mode;
    for (std::size_t k = mode; k > 0 && q > floor; --k) {
        q *= static_cast<double>(k) / static_cast<double>(n - k + 1) / odds;
        mass[k - 1] += weight * q;
    }
}

std::pair<double, double> exact_ends(const std::vector<accuracy_candidate>& candidates, double below, double above,
                                     std::size_t rows) {
    std::vector<double> mass(rows + 1, 0.0);
    for (const auto& c : candidates) add_binomial(mass, rows, std::clamp(c.value, 0.0, 1.0), c.weight);
    std::size_t lower = 0, upper = rows;
    double before = 0;
    for (std::size_t k = 0; k <= rows; ++k) {
        if (before > below) break;
        lower = k;
        before += mass[k];
    }
    double upto = 0;
    for (std::size_t k = 0; k <= rows; ++k)
        if ((upto += mass[k]) >= above) {
            upper = k;
            break;
        }
    const double n = static_cast<double>(rows);
    return {static_cast<double>(lower) / n, static_cast<double>(upper) / n};
}

std::pair<double, double> normal_ends(const std::vector<accuracy_candidate>& candidates, double below, double above,
                                      std::size_t rows) {
    const double n = static_cast<double>(rows);
    const auto weight_below = [&](double v) {
        double sum = 0;
        for (const auto& c : candidates) {
            const double p = std::clamp(c.value, 0.0, 1.0), sd = std::sqrt(p * (1 - p) / n);
            sum += c.weight * (sd > 0 ? normal_cdf((v - p) / sd) : (v >= p ? 1.0 : 0.0));
        }
        return sum;
    };
    // the largest v with weight_below(v) <= below, and the least with weight_below(v) >= above
    double lo = 0, hi = 1;
    for (int i = 0; i < 60; ++i) {
        const double mid = (lo + hi) / 2;
        (weight_below(mid) <= below ? lo : hi) = mid;
    }
    const double lower = weight_below(1) <= below ? 1.0 : lo;
    lo = 0, hi = 1;
    for (int i = 0; i < 60; ++i) {
        const double mid = (lo + hi) / 2;
        (weight_below(mid) >= above ? hi : lo) = mid;
    }
    const double upper = weight_below(0) >= above ? 0.0 : weight_below(1) < above ? 1.0 : hi;
    return {lower, upper};
}

}  // namespace

std::pair<double, double> own_accuracy_ends(const std::vector<accuracy_candidate>& candidates, double total, std::size_t rows,
                                            double level) {
    // the shares with jackknife+'s tolerance for sums of weights
    const double below = (1 - level) / 2 * total + 1e-9 * total, above = (1 + level) / 2 * total - 1e-9 * total;
    return rows <= exact_rows_max ? exact_ends(candidates, below, above, rows) : normal_ends(candidates, below, above, rows);
}

std::vector<accuracy_candidate> interval_candidates(double centre, double half, double level, double dof) {
    constexpr int count = 200;
    const double at_level = dof > 0 ? student_t_quantile(0.5 + level / 2, dof) : normal_quantile(0.5 + level / 2);
    const double scale = half / at_level;
    std::vector<accuracy_candidate> out;
    out.reserve(count);
    for (int j = 0; j < count; ++j) {
        const double u = (j + 0.5) / count;
        out.push_back({centre + scale * (dof > 0 ? student_t_quantile(u, dof) : normal_quantile(u)), 1.0});
    }
    return out;
}

}  // namespace mano

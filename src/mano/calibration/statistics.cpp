#include "mano/calibration/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>

#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {
namespace {

void check_finite(const std::vector<double>& values, const char* name) {
    for (std::size_t i = 0; i < values.size(); ++i)
        if (!std::isfinite(values[i]))
            throw error(std::string(name) + "[" + std::to_string(i) + "] is " +
                        (std::isnan(values[i]) ? "NaN" : values[i] > 0 ? "+Inf" : "-Inf") +
                        "; every score and accuracy must be a finite number");
}

void check_sets(const std::vector<double>& scores, const std::vector<double>& accuracies, std::size_t min_sets,
                const std::string& statistic) {
    if (scores.size() != accuracies.size())
        throw error("got " + std::to_string(scores.size()) + " scores but " + std::to_string(accuracies.size()) +
                    " accuracies; pass one score and one accuracy per test set, in the same order");
    if (scores.size() < min_sets)
        throw error(statistic + " needs at least " + std::to_string(min_sets) + " test sets (got " +
                    std::to_string(scores.size()) + ")");
    check_finite(scores, "scores");
    check_finite(accuracies, "accuracies");
}

bool all_equal(const std::vector<double>& values) {
    return std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); });
}

// A score that saturates (MDE's at log K on probabilities read through their logs) comes out
// bit-equal on one kernel and a few ulps apart on another (MANO_ARCH=scalar), and a line through
// those ulps has a slope of 1e12: scores within score_rounding of each other count as equal.
void check_scores_vary(const std::vector<double>& scores, const std::string& consequence) {
    const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
    if (*hi - *lo <= score_rounding * std::max(std::abs(*lo), std::abs(*hi)))
        throw error("all scores are equal; " + consequence + " (the estimator gave every test set the same score)");
}

// A correlation is undefined, not 0, when either variable is constant.
void check_both_vary(const std::vector<double>& scores, const std::vector<double>& accuracies,
                     const std::string& statistic) {
    check_scores_vary(scores, statistic + " is undefined");
    if (all_equal(accuracies))
        throw error("all accuracies are equal; " + statistic +
                    " is undefined (use test sets whose accuracies differ)");
}

double correlation(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = static_cast<double>(x.size());
    const double mean_x = std::accumulate(x.begin(), x.end(), 0.0) / n;
    const double mean_y = std::accumulate(y.begin(), y.end(), 0.0) / n;
    double sxx = 0, syy = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double dx = x[i] - mean_x, dy = y[i] - mean_y;
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    return std::clamp(sxy / (std::sqrt(sxx) * std::sqrt(syy)), -1.0, 1.0);
}

std::vector<double> average_ranks(const std::vector<double>& values) {
    std::vector<std::size_t> order(values.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    std::vector<double> ranks(values.size());
    for (std::size_t first = 0, last = 0; first < order.size(); first = last + 1) {
        last = first;
        while (last + 1 < order.size() && values[order[last + 1]] == values[order[first]]) ++last;
        for (std::size_t k = first; k <= last; ++k) ranks[order[k]] = 0.5 * double(first + last) + 1.0;
    }
    return ranks;
}

// Number of pairs (i < j) with equal(i, j), for elements sorted so that equal ones are adjacent.
template <class Equal>
std::int64_t tied_pairs(std::size_t n, Equal equal) {
    std::int64_t pairs = 0, run = 1;
    for (std::size_t i = 1; i < n; ++i) {
        run = equal(i - 1, i) ? run + 1 : 1;
        pairs += run - 1;
    }
    return pairs;
}

// Bottom-up merge sort; every element a right run moves past is a strictly inverted pair.
std::int64_t sort_counting_inversions(std::vector<double>& v) {
    std::vector<double> merged(v.size());
    std::int64_t inversions = 0;
    for (std::size_t width = 1; width < v.size(); width *= 2) {
        for (std::size_t lo = 0; lo < v.size(); lo += 2 * width) {
            const std::size_t mid = std::min(lo + width, v.size()), hi = std::min(lo + 2 * width, v.size());
            std::size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (v[j] < v[i]) {
                    inversions += static_cast<std::int64_t>(mid - i);
                    merged[k++] = v[j++];
                } else {
                    merged[k++] = v[i++];
                }
            }
            const auto rest = std::copy(v.begin() + i, v.begin() + mid, merged.begin() + k);
            std::copy(v.begin() + j, v.begin() + hi, rest);
        }
        v.swap(merged);
    }
    return inversions;
}

struct line {
    double slope, intercept, ssr;
};

// Centered least squares over every set but `skip` (pass x.size() to use all), each set weighted
// by w (nullptr: 1 each); the scores of the sets used must not all be equal. ssr is weighted.
line least_squares(const std::vector<double>& x, const std::vector<double>& y, std::size_t skip,
                   const std::vector<double>* w = nullptr) {
    const auto weight = [&](std::size_t i) { return w ? (*w)[i] : 1.0; };
    double total = 0, mean_x = 0, mean_y = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (i == skip) continue;
        total += weight(i);
        mean_x += weight(i) * x[i];
        mean_y += weight(i) * y[i];
    }
    mean_x /= total;
    mean_y /= total;
    double sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (i == skip) continue;
        sxx += weight(i) * (x[i] - mean_x) * (x[i] - mean_x);
        sxy += weight(i) * (x[i] - mean_x) * (y[i] - mean_y);
    }
    line fit{sxy / sxx, 0, 0};
    fit.intercept = mean_y - fit.slope * mean_x;
    for (std::size_t i = 0; i < x.size(); ++i)
        if (i != skip) fit.ssr += weight(i) * std::pow(y[i] - (fit.slope * x[i] + fit.intercept), 2);
    return fit;
}

}  // namespace

double pearson(const std::vector<double>& scores, const std::vector<double>& accuracies) {
    check_sets(scores, accuracies, 2, "the Pearson correlation");
    check_both_vary(scores, accuracies, "the Pearson correlation");
    return correlation(scores, accuracies);
}

double spearman(const std::vector<double>& scores, const std::vector<double>& accuracies) {
    check_sets(scores, accuracies, 2, "the Spearman correlation");
    check_both_vary(scores, accuracies, "the Spearman correlation");
    return correlation(average_ranks(scores), average_ranks(accuracies));
}

double kendall_tau_b(const std::vector<double>& scores, const std::vector<double>& accuracies) {
    check_sets(scores, accuracies, 2, "Kendall's tau");
    check_both_vary(scores, accuracies, "Kendall's tau");
    const std::size_t n = scores.size();
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(scores[a], accuracies[a]) < std::tie(scores[b], accuracies[b]);
    });
    const auto x_ties = tied_pairs(n, [&](std::size_t i, std::size_t j) { return scores[order[i]] == scores[order[j]]; });
    const auto xy_ties = tied_pairs(n, [&](std::size_t i, std::size_t j) {
        return scores[order[i]] == scores[order[j]] && accuracies[order[i]] == accuracies[order[j]];
    });
    std::vector<double> y(n);
    for (std::size_t i = 0; i < n; ++i) y[i] = accuracies[order[i]];
    // Sorted by (score, accuracy), pairs tied in score are never inverted: inversions = discordant.
    const auto discordant = sort_counting_inversions(y);
    const auto y_ties = tied_pairs(n, [&](std::size_t i, std::size_t j) { return y[i] == y[j]; });
    const auto pairs = static_cast<std::int64_t>(n) * static_cast<std::int64_t>(n - 1) / 2;
    const auto concordant_minus_discordant = pairs - x_ties - y_ties + xy_ties - 2 * discordant;
    const double tau = static_cast<double>(concordant_minus_discordant) / std::sqrt(double(pairs - x_ties)) /
                       std::sqrt(double(pairs - y_ties));
    return std::clamp(tau, -1.0, 1.0);
}

linear_fit fit_line(const std::vector<double>& scores, const std::vector<double>& accuracies,
                    const std::vector<double>& weights) {
    check_sets(scores, accuracies, 2, "a line from score to accuracy");
    check_scores_vary(scores, "a line from score to accuracy cannot be fitted");
    if (!weights.empty()) {
        if (weights.size() != scores.size())
            throw error("got " + std::to_string(weights.size()) + " weights for " + std::to_string(scores.size()) + " test sets");
        for (const double w : weights)
            if (!(w > 0 && std::isfinite(w))) throw error("every test set's weight must be a finite number above 0");
    }
    const line l = least_squares(scores, accuracies, scores.size(), weights.empty() ? nullptr : &weights);
    const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
    const std::size_t n = scores.size();
    // frequency weights: a set of weight w counts as w sets
    const double dof = (weights.empty() ? static_cast<double>(n) : std::accumulate(weights.begin(), weights.end(), 0.0)) - 2;
    const double residual_se = dof > 0 ? std::sqrt(l.ssr / dof) : std::numeric_limits<double>::quiet_NaN();
    return {l.slope, l.intercept, residual_se, n, *lo, *hi};
}

double loo_mae(const std::vector<double>& scores, const std::vector<double>& accuracies) {
    check_sets(scores, accuracies, 3, "the leave-one-out MAE");
    check_scores_vary(scores, "the leave-one-out MAE is undefined");
    const std::size_t n = scores.size();
    const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
    for (const auto common : {lo, hi})
        if (std::count(scores.begin(), scores.end(), *common) == static_cast<std::ptrdiff_t>(n - 1))
            throw error("leaving out test set " + std::to_string((common == lo ? hi : lo) - scores.begin()) +
                        " leaves all other scores equal, so its leave-one-out line is undefined; the MAE needs "
                        "two distinct scores among every n - 1 test sets");
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const line l = least_squares(scores, accuracies, i);
        total += std::abs(accuracies[i] - (l.slope * scores[i] + l.intercept));
    }
    return total / double(n);
}

evaluation_summary summarize(const std::vector<double>& scores, const std::vector<double>& accuracies) {
    check_sets(scores, accuracies, 3, "the evaluation summary");
    const double r = pearson(scores, accuracies);
    return {r * r, r, spearman(scores, accuracies), kendall_tau_b(scores, accuracies), loo_mae(scores, accuracies),
            scores.size()};
}


std::optional<std::string> constant_scores(const std::vector<double>& scores, const std::vector<double>& ses) {
    if (scores.empty()) return std::nullopt;
    const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
    const double magnitude = std::max(std::abs(*lo), std::abs(*hi));
    if (*hi - *lo <= score_rounding * magnitude)
        return "its scores do not vary across the sets beyond rounding (range " + number_text(*hi - *lo) + ", within " +
               number_text(score_rounding) + " of their magnitude " + number_text(magnitude) + ")";
    if (ses.size() != scores.size() || scores.size() < 2) return std::nullopt;
    const double n = static_cast<double>(scores.size());
    const double mean = std::accumulate(scores.begin(), scores.end(), 0.0) / n;
    double spread = 0, noise = 0;
    for (std::size_t i = 0; i < scores.size(); ++i) {
        spread += (scores[i] - mean) * (scores[i] - mean) / n;
        noise += ses[i] * ses[i] / n;
    }
    spread = std::sqrt(spread);
    noise = std::sqrt(noise);
    if (spread < score_noise_ratio * noise)
        return "its scores spread across the sets by " + number_text(spread) + " (standard deviation), under " +
               number_text(score_noise_ratio) + " of a set's own standard error " + number_text(noise) +
               ": a line through them cannot predict";
    return std::nullopt;
}
}  // namespace mano

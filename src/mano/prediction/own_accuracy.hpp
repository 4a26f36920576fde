#pragma once
// The accuracy of the rows at hand (docs/cli.md, "Small sets"): a calibration's line estimates the
// accuracy of the population a set's rows come from; the set's own accuracy is that plus the
// sampling variability of its N rows, a binomial at the population's accuracy. With the
// population's accuracy one of a list of weighted candidates (jackknife+'s fold lines moved by
// their residuals, or a t or normal interval as a grid of its quantiles), the set's accuracy is a
// mixture of binomials, whose quantiles are the interval: exact up to exact_rows_max rows (the
// binomial probabilities summed over the support), each binomial as a normal beyond.

#include <cstddef>
#include <utility>
#include <vector>

namespace mano {

// A candidate of the population's accuracy (clipped to [0, 1]) and its weight.
struct accuracy_candidate {
    double value = 0, weight = 1;
};

// Up to this many rows the mixture is exact; beyond, each binomial is a normal of the same mean
// and variance (its standard deviation is then at most 0.0036).
inline constexpr std::size_t exact_rows_max = 20000;

// Below this many rows a set is too small to judge without labels: its interval is mostly the
// binomial's, and labeling its rows settles it (prediction.hpp, set_prediction::too_small).
inline constexpr std::size_t min_judged_rows = 10;

// The ends [lower, upper] at `level` of the accuracy of `rows` rows (>= 1) drawn from a population
// whose accuracy is one of `candidates`: lower the largest k / rows with mixture weight below it at
// most (1 - level) / 2 * total, upper the least k / rows with mixture weight up to it at least
// (1 + level) / 2 * total, 1 when the candidates never reach that. `total` is at least the
// candidates' weight (jackknife+ counts the new set: total = their weight + one set's).
std::pair<double, double> own_accuracy_ends(const std::vector<accuracy_candidate>& candidates, double total, std::size_t rows,
                                            double level);

// A symmetric interval centre -/+ half at `level` as candidates: the quantiles of centre + s T at
// the probabilities (j + 1/2) / 200, T Student's t with `dof` degrees of freedom (0: normal) and s
// the scale that puts T's level quantiles at centre -/+ half. Their total is their weight, 200.
std::vector<accuracy_candidate> interval_candidates(double centre, double half, double level, double dof);

}  // namespace mano

#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mano {

// Statistics that compare an accuracy estimator's scores with the true accuracies across many
// shifted test sets (docs/cli.md, "mano eval: the paper's tables"). Every function
// takes one score and one accuracy per set, in the same order, and throws mano::error when the
// lengths differ, there are too few sets, a value is not finite, or the scores or accuracies are
// all equal (the statistic is then undefined: refused with a message rather than returned as NaN).

// Pearson correlation; needs at least 2 sets.
double pearson(const std::vector<double>& scores, const std::vector<double>& accuracies);

// Spearman rank correlation with average ranks for ties (as scipy.stats.spearmanr); >= 2 sets.
double spearman(const std::vector<double>& scores, const std::vector<double>& accuracies);

// Kendall tau-b, corrected for ties in either variable (as scipy.stats.kendalltau); >= 2 sets.
double kendall_tau_b(const std::vector<double>& scores, const std::vector<double>& accuracies);

// Least squares line accuracy ~ slope * score + intercept (weighted when weights are given).
struct linear_fit {
    double slope = 0;
    double intercept = 0;
    // sqrt(SSR / (n - 2)), with weights sqrt(weighted SSR / (sum of weights - 2)); NaN without a
    // degree of freedom left
    double residual_se = 0;
    std::size_t n = 0;
    double x_min = 0;  // the range of scores the line was fitted on
    double x_max = 0;
};

// Needs at least 2 sets and two distinct scores; constant accuracies give slope 0. `weights`
// (empty: 1 each) are frequency weights: a set of weight w counts as w sets.
linear_fit fit_line(const std::vector<double>& scores, const std::vector<double>& accuracies,
                    const std::vector<double>& weights = {});

// Mean absolute error of predicting each set's accuracy from its score with the line fitted on
// the other sets. Needs at least 3 sets, and no set whose removal leaves all other scores equal.
double loo_mae(const std::vector<double>& scores, const std::vector<double>& accuracies);

struct evaluation_summary {
    double r2 = 0;  // squared Pearson correlation, the R^2 reported in the MaNo paper
    double pearson = 0;
    double spearman = 0;
    double kendall = 0;  // tau-b
    double mae = 0;      // loo_mae
    std::size_t n = 0;
};

evaluation_summary summarize(const std::vector<double>& scores, const std::vector<double>& accuracies);

// Scores whose range across sets is within this fraction of their magnitude differ by rounding
// only: the kernels sum each row's terms in float lanes (relative error about 1e-7 a term), and
// the sets of one family are often the same images. The narrowest range of a score that follows
// accuracy on the benchmarks is 8% of its magnitude (MDE on bench/digits_c's logreg: 10%).
inline constexpr double score_rounding = 1e-5;
// A line cannot predict from scores whose spread across the calibration sets (their standard
// deviation) is below this fraction of a set's own standard error: a new set's sampling noise
// alone would move its score ten times the calibration's spread. On the benchmarks the spread
// of every score with a standard error is 9-57 of them.
inline constexpr double score_noise_ratio = 0.1;

// Why `scores` (one per set) count as constant, in words for a note; nullopt when they vary.
// `ses` holds each set's standard error, or is empty where not every set has one.
std::optional<std::string> constant_scores(const std::vector<double>& scores, const std::vector<double>& ses);

}  // namespace mano

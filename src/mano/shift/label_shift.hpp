#pragma once
// Label shift (docs/methods.md, mlls): what the MLLS estimator learns on the labeled source set
// and computes on a set. Calibrated posteriors are bias-corrected temperature scaling (Alexandari
// et al., ICML 2020) of the rows p = softmax(q / T): P_i = softmax(a log p_i + b), a and b
// fitted by the source NLL. The class priors of a set are the maximum-likelihood priors under
// P (the EM of Saerens et al., 2002), and its accuracy is the mean adjusted probability of each
// row's predicted class.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace mano {

// Beyond this many classes the bias is not fitted (its Newton step is O(N K^2)): a alone.
inline constexpr std::size_t bias_correction_max_k = 100;
// EM stops when no prior moves by more than this, or after em_max_iterations (then it reports
// that it did not converge).
inline constexpr double em_tolerance = 1e-10;
inline constexpr std::size_t em_max_iterations = 20000;
// What bounds the source fit, whatever the source set's size: the calibration, the priors and the
// resampled residuals are fitted on at most this many source rows (every s-th row, s = ceil(N /
// this)); each synthetic resample has at most label_shift_resample_max_logits / K rows (at least
// label_shift_resample_min_rows), and its EM at most label_shift_resample_em_iterations steps and
// label_shift_resample_em_work (rows x K x steps; at least 100 steps). With all rows and no such
// bounds, 50000 x 100 source logits took 90 s to fit.
inline constexpr std::size_t label_shift_fit_max_rows = 20000;
inline constexpr std::size_t label_shift_resample_max_logits = 50000;
inline constexpr std::size_t label_shift_resample_min_rows = 200;
inline constexpr std::size_t label_shift_resample_em_iterations = 2000;
inline constexpr double label_shift_resample_em_work = 2.5e7;

struct posterior_calibration {
    double scale = 1;          // a
    std::vector<double> bias;  // b, K values, b_0 = 0

    // P = softmax(a log p + b) of n rows of k probabilities, into out (n x k).
    void apply(const double* probs, std::size_t n, std::size_t k, double* out) const;
};

// Fits a (and b, with_bias and k <= bias_correction_max_k) on labeled rows of softmax(q / T) by
// Newton's method on the mean negative log-likelihood (convex in a and b). a comes out near 0 (or
// below) when the logits carry no information about the labels: the posteriors are then flat.
posterior_calibration fit_posterior_calibration(const double* probs, std::size_t n, std::size_t k,
                                                const std::int64_t* labels, bool with_bias = true);

// The calibrated probability of a row's predicted class under a alone (b = 0):
// 1 / sum_k (p_k / p_max)^a.
double calibrated_confidence(const double* probs, std::size_t k, double scale);

struct prior_estimate {
    std::vector<double> priors;  // (1/N) sum_i Q_i
    double accuracy = 0;         // (1/N) sum_i Q_{i, argmax_k p_ik}
    double accuracy_se = 0;      // sqrt(sum_i Q(1 - Q)) / N at the predicted classes
    std::size_t iterations = 0;
    bool converged = false;
};

// EM from w = 1: Q_ik = w_k P_ik / sum_j w_j P_ij, w_k = ((1/N) sum_i Q_ik) / source_k. `calibrated`
// are the rows P, `predicted` each row's predicted class (the argmax of the original row).
prior_estimate estimate_priors(const double* calibrated, const std::int64_t* predicted, std::size_t n, std::size_t k,
                               const std::vector<double>& source_priors,
                               std::size_t max_iterations = em_max_iterations);

// What `mlls` keeps of the source set (source_model::fitted["mlls"]): the calibration, the class
// priors, the mean calibrated confidence of each class's rows (the label-shift check), and the
// errors (true accuracy - estimate) of MLLS on synthetic label-shift resamples of the source set,
// cross-fitted on its halves (the interval of a set routed to MLLS).
struct label_shift_model {
    posterior_calibration calibration;
    std::vector<double> priors;
    std::vector<double> confidence_by_class;
    std::vector<double> residuals;

    nlohmann::json to_json() const;
    // Throws mano::error naming what is missing or out of range for k classes.
    static label_shift_model from_json(const nlohmann::json& j, std::size_t k);
};

// A class without source rows gets add-1/2 priors (for every class) and no fitted bias. Beyond
// label_shift_fit_max_rows rows, the fit reads every s-th row only (above).
label_shift_model fit_label_shift(const double* probs, std::size_t n, std::size_t k, const std::int64_t* labels);

}  // namespace mano

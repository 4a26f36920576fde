#pragma once
// Label shift (docs/methods.md, mlls): what the MLLS estimator learns on the labeled source set
// and computes on a set. Calibrated posteriors are bias-corrected temperature scaling (Alexandari
// et al., ICML 2020) of the rows p = softmax(q / T): P_i = softmax(a log p_i + b), a and b
// fitted by the source NLL. The class priors of a set are the maximum-likelihood priors under
// P (the EM of Saerens et al., 2002, accelerated: prior_em.hpp), and its accuracy is the mean
// adjusted probability of each row's predicted class.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>


namespace mano {

// the kernels and the source's rows are private to the core (kernel/kernel.hpp,
// shift/source_rows.hpp): an installed header names them only
namespace detail {
struct shift_kernels;
class source_rows;
}  // namespace detail

// Beyond this many classes the bias is not fitted (its Newton step is O(N K^2)): a alone, the
// temperature scaling every source-based method shares (source_rows::scale).
inline constexpr std::size_t bias_correction_max_k = 100;
// What bounds the source fit, whatever the source set's size: the bias, the priors and the
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
};

// Fits a and b on labeled rows of softmax(q / T) by Newton's method on the mean negative
// log-likelihood (convex in a and b; O(N K^2) per step, for K <= bias_correction_max_k). a comes
// out near 0 (or below) when the logits carry no information about the labels.
posterior_calibration fit_posterior_calibration(const double* probs, std::size_t n, std::size_t k,
                                                const std::int64_t* labels);

// The calibrated rows P = softmax(a log p + b) = softmax(a q / T + b) of `count` contiguous rows of
// K logits (float rows_f or double rows_d, the other null) into out (count x K floats), and each
// row's largest P into max_prob (may be null). Without a bias, one kernel pass (scaled_softmax).
void calibrate_rows(const float* rows_f, const double* rows_d, std::size_t count, std::size_t k, double temperature,
                    const posterior_calibration& calibration, const detail::shift_kernels& kernels, float* out,
                    double* max_prob);

// The calibrated probability of class d over the rows predicted d (the argmax of their logits),
// per class d: its mean, standard deviation and the number of rows. What a dominant class's rows
// look like (the label-shift check, prediction/label_shift_check.hpp).
struct predicted_class_profile {
    std::vector<double> mean, sd, rows;
};

// What `mlls` keeps of the source set (source_model::fitted["mlls"]): the calibration, the class
// priors, the mean calibrated confidence of each class's rows and the profile of each predicted
// class (the label-shift check), and the errors (true accuracy - estimate) of MLLS on synthetic
// label-shift resamples of the source set, cross-fitted on its halves (the interval of a set
// routed to MLLS).
struct label_shift_model {
    posterior_calibration calibration;
    std::vector<double> priors;
    std::vector<double> confidence_by_class;
    std::optional<predicted_class_profile> predicted;  // absent in a model fitted by an older mano
    std::vector<double> residuals;

    nlohmann::json to_json() const;
    // Throws mano::error naming what is missing or out of range for k classes.
    static label_shift_model from_json(const nlohmann::json& j, std::size_t k);
};

// A class without source rows gets add-1/2 priors (for every class) and no fitted bias. Beyond
// label_shift_fit_max_rows rows, the bias, priors and residuals read every s-th row only (above).
label_shift_model fit_label_shift(const detail::source_rows& source);

}  // namespace mano

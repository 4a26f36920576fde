#pragma once
// The correctness model (docs/audit.md): P(correct | cell) over the cells of a correctness
// histogram (scan/correctness_histogram.hpp), fitted by calibrate on the labeled calibration sets'
// histograms. A set's mean and variance of the model's probability follow from its histogram
// alone, which is what the audit's PPI interval (audit/ppi.hpp) and "labels needed" read.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/scan/correctness_histogram.hpp"

namespace mano {

struct labeled_set;

// P(correct | cell) = sigmoid(intercept + slope * logit(mean confidence of the cell) + class
// effect of its predicted class), fitted by Newton's method on the labeled calibration sets'
// cells pooled, with a ridge penalty ridge/2 * sum(class effect^2) (which also fixes the split
// between the intercept and the class effects).
struct correctness_model {
    double intercept = 0;
    double slope = 0;
    std::vector<double> class_effects;  // one per class cell; empty when classes == 1
    std::size_t classes = 1;
    double ridge = 1;
    std::size_t iterations = 0;
    std::uint64_t rows = 0;  // the calibration rows it was fitted on
    // Var(c - f) over each calibration set's rows (c: 1 when correct), and their mean: the
    // spread an audit of a set like them has, for "labels needed".
    std::vector<double> set_residual_variances;
    double residual_variance = 0;

    // The probability for a cell of this mean confidence and class cell.
    double probability(double mean_confidence, std::size_t cls) const;
    // f for every cell of `h` (bin-major, as its cells), from each cell's own mean confidence;
    // `means` (optional) gives the mean confidences to use instead where it has rows (the whole
    // set's, for the audited rows of that set). Cells without rows get 0.
    std::vector<double> cell_probabilities(const correctness_histogram& h, const correctness_histogram* means = nullptr) const;

    // {"edges", "classes", "intercept", "slope", "class_effects", "ridge", "iterations", "rows",
    // "residual_variance", "set_residual_variances"}
    nlohmann::json to_json() const;
    // Throws mano::error naming the field at fault: another build's edges, a class count that is
    // not min(k, correctness_max_classes) or 1, values that are not finite.
    static correctness_model from_json(const nlohmann::json& j, std::size_t k);
};

// The mean of f over the rows of a histogram.
double mean_probability(const correctness_model& m, const correctness_histogram& h);

// Fits the model on labeled histograms (every one labeled, same K): nullopt with a line in
// `notes` when it cannot be fitted (every row correct or none, Newton not converging).
std::optional<correctness_model> fit_correctness(const std::vector<const correctness_histogram*>& sets,
                                                 std::vector<std::string>* notes);
// calibrate()'s: the model of labeled sets when every one has a labeled histogram (none without a
// note when no set has one: they were scored without the option).
std::optional<correctness_model> fit_correctness(const std::vector<labeled_set>& sets, std::vector<std::string>* notes);

}  // namespace mano

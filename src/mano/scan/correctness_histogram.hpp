#pragma once
// Per-row correctness (docs/audit.md): a mergeable histogram of a set's rows by confidence bin and
// predicted class, with the correct rows when labels came with them. The accumulator collects it
// when the options ask; the correctness model (calibration/correctness_model.hpp) is fitted on it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mano {

// Confidence c = max softmax(q / T) of a row, binned on logit(c) = log(c / (1 - c)) in bins of
// equal width: edges -4, -3.25, ..., 9.5 (19 edges, 20 bins, the first and last open). logit(c)
// rather than c: most rows of a trained classifier lie above c = 0.95, where equal widths in c
// would put them all in one bin. Any K: logit(1/K) is -2.2 for K = 10 and -6.9 for K = 1000.
inline constexpr std::size_t correctness_bins = 20;
inline constexpr double correctness_first_edge = -4.0;
inline constexpr double correctness_edge_step = 0.75;
// Rows are split by predicted class up to this many classes; beyond it, one class cell per bin,
// so that a histogram holds at most correctness_bins x correctness_max_classes cells whatever N.
inline constexpr std::size_t correctness_max_classes = 100;

// The bin edges in logit(confidence), ascending (correctness_bins - 1 of them).
std::vector<double> correctness_edges();
// Class cells per bin for K classes: K up to correctness_max_classes, else 1.
inline std::size_t correctness_classes(std::size_t k) { return k <= correctness_max_classes ? k : 1; }

// One cell: the rows of one confidence bin and one predicted class.
struct correctness_cell {
    std::uint64_t rows = 0;
    double confidence = 0;     // the sum of the rows' confidences
    std::uint64_t correct = 0;  // rows whose label is the predicted class (0 without labels)
};

class correctness_histogram {
public:
    explicit correctness_histogram(std::size_t k = 2);

    std::size_t k() const { return k_; }
    // Class cells per bin: K for K <= correctness_max_classes, else 1.
    std::size_t classes() const { return classes_; }
    // The cell a row of this confidence and predicted class falls in.
    std::size_t bin_of(double confidence) const;
    std::size_t class_cell(std::size_t predicted) const { return classes_ == 1 ? 0 : predicted; }
    const correctness_cell& cell(std::size_t bin, std::size_t cls) const { return cells_[bin * classes_ + cls]; }
    std::uint64_t rows() const;
    std::uint64_t correct() const;

    void add(double confidence, std::size_t predicted, bool correct) {
        auto& c = cells_[bin_of(confidence) * classes_ + class_cell(predicted)];
        c.rows += 1;
        c.confidence += confidence;
        c.correct += correct ? 1 : 0;
    }
    // Throws mano::error when `other` has another K.
    void merge(const correctness_histogram& other);

    // Whether every row came with its label (the cells' `correct` counts are then meaningful).
    bool labeled = false;

    // {"edges": [...], "classes", "labeled", "cells": [{"bin", "class", "rows", "confidence",
    // "correct"?}]}: the cells with rows, by bin then class; "confidence" is the cell's sum.
    nlohmann::json to_json() const;
    // Throws mano::error naming `what` unless `j` is a histogram of `rows` rows of K = k
    // classes written by to_json(): this build's edges, each cell once, counts that add up,
    // confidence sums within their bin's range.
    static correctness_histogram from_json(const nlohmann::json& j, std::size_t k, std::uint64_t rows,
                                           const std::string& what = "correctness histogram");

private:
    std::size_t k_ = 2, classes_ = 2;
    std::vector<double> thresholds_;  // the edges as confidences, ascending
    std::vector<correctness_cell> cells_;  // bin-major
};

}  // namespace mano

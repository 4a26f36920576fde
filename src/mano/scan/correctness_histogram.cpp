// The correctness histogram (correctness_histogram.hpp): binning, merging, the JSON form with its
// checks.
#include "mano/scan/correctness_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

namespace {

double sigmoid(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }

}  // namespace

std::vector<double> correctness_edges() {
    std::vector<double> edges;
    for (std::size_t i = 0; i + 1 < correctness_bins; ++i)
        edges.push_back(correctness_first_edge + correctness_edge_step * static_cast<double>(i));
    return edges;
}

correctness_histogram::correctness_histogram(std::size_t k) : k_(k), classes_(correctness_classes(k)) {
    for (const double e : correctness_edges()) thresholds_.push_back(sigmoid(e));
    cells_.resize(correctness_bins * classes_);
}

std::size_t correctness_histogram::bin_of(double confidence) const {
    return static_cast<std::size_t>(std::upper_bound(thresholds_.begin(), thresholds_.end(), confidence) - thresholds_.begin());
}

std::uint64_t correctness_histogram::rows() const {
    std::uint64_t n = 0;
    for (const auto& c : cells_) n += c.rows;
    return n;
}

std::uint64_t correctness_histogram::correct() const {
    std::uint64_t n = 0;
    for (const auto& c : cells_) n += c.correct;
    return n;
}

void correctness_histogram::merge(const correctness_histogram& other) {
    if (other.k_ != k_)
        throw error("cannot merge correctness histograms of " + std::to_string(k_) + " and " + std::to_string(other.k_) +
                    " classes");
    for (std::size_t i = 0; i < cells_.size(); ++i) {
        cells_[i].rows += other.cells_[i].rows;
        cells_[i].confidence += other.cells_[i].confidence;
        cells_[i].correct += other.cells_[i].correct;
    }
}

nlohmann::json correctness_histogram::to_json() const {
    nlohmann::json cells = nlohmann::json::array();
    for (std::size_t b = 0; b < correctness_bins; ++b)
        for (std::size_t c = 0; c < classes_; ++c) {
            const auto& x = cell(b, c);
            if (x.rows == 0) continue;
            nlohmann::json j = {{"bin", b}, {"class", c}, {"rows", x.rows}, {"confidence", x.confidence}};
            if (labeled) j["correct"] = x.correct;
            cells.push_back(std::move(j));
        }
    return {{"edges", correctness_edges()}, {"classes", classes_}, {"labeled", labeled}, {"cells", cells}};
}

correctness_histogram correctness_histogram::from_json(const nlohmann::json& j, std::size_t k, std::uint64_t rows,
                                                       const std::string& what) {
    if (!j.is_object()) throw error(what + ": must be an object");
    detail::check_known_keys(j, {"edges", "classes", "labeled", "cells"}, what);
    if (detail::numbers_of(j, "edges", what) != correctness_edges())
        throw error(what + ": its confidence bins are not this build's (edges " + printable(j.at("edges").dump(), 80) +
                    "); score the set again with this mano");
    correctness_histogram h(k);
    if (detail::count_of(j, "classes", what) != h.classes_)
        throw error(what + ": \"classes\" must be " + std::to_string(h.classes_) + " for " + std::to_string(k) + " classes");
    if (!j.contains("labeled") || !j.at("labeled").is_boolean()) throw error(what + ": \"labeled\" must be true or false");
    h.labeled = j.at("labeled").get<bool>();
    if (!j.contains("cells") || !j.at("cells").is_array()) throw error(what + ": \"cells\" must be a list");
    const auto& cells = j.at("cells");
    if (cells.size() > h.cells_.size())
        throw error(what + ": " + std::to_string(cells.size()) + " cells, more than its " + std::to_string(h.cells_.size()));
    std::uint64_t total = 0;
    std::size_t previous = 0;
    bool first = true;
    for (const auto& c : cells) {
        if (!c.is_object()) throw error(what + ": every cell must be an object");
        detail::check_known_keys(c, {"bin", "class", "rows", "confidence", "correct"}, what + " cell");
        const auto bin = static_cast<std::size_t>(detail::integer_of(c.at("bin"), what, "bin", 0, correctness_bins - 1));
        const auto cls = static_cast<std::size_t>(
            detail::integer_of(c.at("class"), what, "class", 0, static_cast<std::int64_t>(h.classes_) - 1));
        const std::size_t index = bin * h.classes_ + cls;
        if (!first && index <= previous)
            throw error(what + ": cells must be listed once each, by bin then class");
        first = false;
        previous = index;
        auto& x = h.cells_[index];
        x.rows = static_cast<std::uint64_t>(
            detail::integer_of(c.at("rows"), what, "rows", 1, static_cast<std::int64_t>(std::min<std::uint64_t>(rows, std::numeric_limits<std::int64_t>::max()))));
        x.confidence = detail::number_of(c, "confidence", what + " cell");
        if (h.labeled != c.contains("correct"))
            throw error(what + ": " + (h.labeled ? "a labeled histogram needs \"correct\" in every cell"
                                                 : "\"correct\" in a cell of a histogram without labels"));
        if (h.labeled)
            x.correct = static_cast<std::uint64_t>(
                detail::integer_of(c.at("correct"), what, "correct", 0, static_cast<std::int64_t>(x.rows)));
        // the confidences of the cell's rows lie within its bin: [lower edge, upper edge)
        const double low = bin == 0 ? 0.0 : h.thresholds_[bin - 1];
        const double high = bin + 1 == correctness_bins ? 1.0 : h.thresholds_[bin];
        const double n = static_cast<double>(x.rows);
        if (!(x.confidence >= n * low * (1 - 1e-9) - 1e-9 && x.confidence <= n * high * (1 + 1e-9) + 1e-9))
            throw error(what + ": the confidence sum of bin " + std::to_string(bin) + ", class " + std::to_string(cls) +
                        " lies outside what its " + std::to_string(x.rows) + " rows can have");
        total += x.rows;
    }
    if (total != rows)
        throw error(what + ": its cells hold " + std::to_string(total) + " rows but the set has " + std::to_string(rows));
    return h;
}

}  // namespace mano

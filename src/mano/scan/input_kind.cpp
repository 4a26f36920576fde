#include "mano/scan/input_kind.hpp"

#include <algorithm>
#include <cmath>

#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {

const char* input_kind_name(input_kind kind) noexcept {
    switch (kind) {
        case input_kind::logits: return "logits";
        case input_kind::probabilities: return "probabilities";
        case input_kind::binary_logit: return "binary-logit";
        case input_kind::binary_probability: return "binary-probability";
    }
    return "unknown";
}

input_kind parse_input_kind(const std::string& name) {
    for (const auto kind : {input_kind::logits, input_kind::probabilities, input_kind::binary_logit, input_kind::binary_probability})
        if (name == input_kind_name(kind)) return kind;
    throw error("input '" + printable(name, 60) + "' is not one of logits, probabilities, binary-logit, binary-probability");
}

namespace {

bool binary(input_kind kind) { return kind == input_kind::binary_logit || kind == input_kind::binary_probability; }

}  // namespace

std::size_t classes_of(input_kind kind, std::size_t columns) {
    if (binary(kind)) {
        if (columns != 1)
            throw error(std::string("input ") + input_kind_name(kind) + " takes one column per row (class 1's " +
                        (kind == input_kind::binary_logit ? "logit" : "probability") + "), but the rows have " +
                        std::to_string(columns) + (columns > 1 ? "; give input logits or probabilities for them" : ""));
        return 2;
    }
    if (columns < 2)
        throw error(std::string(input_kind_name(kind)) + " need at least 2 columns (classes); got " + std::to_string(columns) +
                    (columns == 1 ? " (a binary classifier's one column: give input binary-logit or binary-probability)" : ""));
    return columns;
}

std::size_t columns_of(input_kind kind, std::size_t classes) { return binary(kind) ? 1 : classes; }

std::string probabilities_warning(const std::string& where, const std::string& setting) {
    return where + ": every row lies in [0, 1] and sums to 1: these look like probabilities, not logits; give " + setting +
           " (read as logits, they give estimates on another scale)";
}

namespace detail {

namespace {

// A value as the accumulator's messages say it: NaN and +-Inf as such (accumulator.cpp).
std::string value_text(double x) { return std::isnan(x) ? "NaN" : std::isinf(x) ? (x > 0 ? "+Inf" : "-Inf") : number_text(x); }

[[noreturn]] void not_a_probability(input_kind kind, std::size_t row, std::size_t column, double p) {
    throw error("row " + std::to_string(row) + ", column " + std::to_string(column) + ": " + value_text(p) +
                " is not a probability (input " + input_kind_name(kind) + ": values in [0, 1]; rows and columns count from 0)");
}

double floored_log(double p) { return std::log(std::max(p, probability_floor)); }

}  // namespace

void to_logits(input_kind kind, double* rows, std::size_t count, std::size_t columns, std::size_t first_row) {
    switch (kind) {
        case input_kind::logits: return;
        case input_kind::probabilities:
            for (std::size_t r = 0; r < count; ++r) {
                double* row = rows + r * columns;
                double sum = 0;
                for (std::size_t c = 0; c < columns; ++c) {
                    if (!(row[c] >= 0 && row[c] <= 1)) not_a_probability(kind, first_row + r, c, row[c]);
                    sum += row[c];
                }
                if (!(std::abs(sum - 1) <= probability_sum_tolerance))
                    throw error("row " + std::to_string(first_row + r) + ": its probabilities sum to " + number_text(sum) +
                                ", not 1 (input probabilities: each row a softmax, to within " +
                                number_text(probability_sum_tolerance) + "; rows count from 0)");
                for (std::size_t c = 0; c < columns; ++c) row[c] = floored_log(row[c]);
            }
            return;
        case input_kind::binary_logit:
        case input_kind::binary_probability:
            // from the last row back, so that row r's one value is read before rows r and up are written
            for (std::size_t r = count; r-- > 0;) {
                const double x = rows[r];
                if (kind == input_kind::binary_logit && !std::isfinite(x))
                    throw error("row " + std::to_string(first_row + r) + ": logit is " + value_text(x) +
                                " (input binary-logit; rows count from 0); logits must be finite");
                if (kind == input_kind::binary_probability && !(x >= 0 && x <= 1)) not_a_probability(kind, first_row + r, 0, x);
                rows[2 * r] = kind == input_kind::binary_logit ? 0.0 : floored_log(1 - x);
                rows[2 * r + 1] = kind == input_kind::binary_logit ? x : floored_log(x);
            }
            return;
    }
}

namespace {

template <class T>
std::size_t leading_rows(const T* rows, std::size_t count, std::size_t k) {
    for (std::size_t r = 0; r < count; ++r) {
        const T* row = rows + r * k;
        double sum = 0;
        for (std::size_t c = 0; c < k; ++c) {
            if (!(row[c] >= 0 && row[c] <= 1)) return r;
            sum += row[c];
        }
        if (!(std::abs(sum - 1) <= probability_sum_tolerance)) return r;
    }
    return count;
}

}  // namespace

std::size_t leading_probability_rows(const float* f, const double* d, std::size_t count, std::size_t k) {
    return f ? leading_rows(f, count, k) : leading_rows(d, count, k);
}

}  // namespace detail

std::vector<double> logits_of(const logits_view& rows, input_kind kind, std::size_t first_row) {
    const std::size_t n = rows.rows(), k = classes_of(kind, rows.cols());
    std::vector<double> out(n * k);
    if (n == 0) return out;
    widen_rows(rows, 0, n, out.data());
    detail::to_logits(kind, out.data(), n, rows.cols(), first_row);
    return out;
}

}  // namespace mano

#pragma once
// What a file's values are (options::input): logits, the default; a model's probabilities (its
// softmax), taken through the log; or a binary classifier's one column, its logit z of class 1
// (the classes' logits are then [0, z]: softmax([0, z]) = [1 - sigmoid(z), sigmoid(z)]) or its
// probability p of class 1 (the rows [1 - p, p] as probabilities). The accumulator turns rows into
// logits a block at a time as it reads them (accumulator/accumulator.cpp), so no front end converts
// anything and no copy of a whole file is made.

#include <cstddef>
#include <string>
#include <vector>

#include "mano/scan/logits_view.hpp"

namespace mano {

enum class input_kind { logits, probabilities, binary_logit, binary_probability };

// "logits", "probabilities", "binary-logit", "binary-probability"; parse_input_kind is its inverse
// and throws mano::error listing the four.
const char* input_kind_name(input_kind kind) noexcept;
input_kind parse_input_kind(const std::string& name);

// The classes of rows of `columns` values of this kind: `columns` (at least 2) for logits and
// probabilities, 2 for the one column of the binary kinds. Any other shape is a mano::error naming
// the input kind that fits it (one column of logits: a binary kind).
std::size_t classes_of(input_kind kind, std::size_t columns);
// The values a row of `classes` classes has in this kind: 1 for the binary kinds.
std::size_t columns_of(input_kind kind, std::size_t classes);

// Probabilities below this (zeros) are raised to it before the log, so that every log p is at
// least log(FLT_MIN) = -87.34: finite in float32 and in every method (log 0 would be -inf), and
// softmax(log p) gives back p to within 1.2e-38.
inline constexpr double probability_floor = 1.1754943508222875e-38;  // FLT_MIN
// A row of probabilities must sum to 1 within this (rounded outputs, a CSV's few decimals, float16);
// softmax(log p) renormalizes it. The same tolerance tells logits that look like probabilities.
inline constexpr double probability_sum_tolerance = 1e-2;

// What a front end says of a result whose rows all looked like probabilities
// (result::looks_like_probabilities): one line naming `where` (the file, or "logits") and the
// front end's setting for probabilities ("--input probabilities", "input='probabilities'").
std::string probabilities_warning(const std::string& where, const std::string& setting);

// N x columns values of `kind` as N x classes_of(kind, columns) logits (a labeled source set, held
// whole); rows are numbered from `first_row` in messages.
std::vector<double> logits_of(const logits_view& rows, input_kind kind, std::size_t first_row = 0);

namespace detail {

// `count` rows of `kind`, count x columns doubles at the start of `rows`, turned in place into
// count x K logits (`rows` holds count x K doubles). Throws mano::error naming the row (from
// `first_row`) and column of a value that is not of this kind: a probability outside [0, 1], a row
// of probabilities that does not sum to 1, a binary logit that is not finite.
void to_logits(input_kind kind, double* rows, std::size_t count, std::size_t columns, std::size_t first_row);

// How many of the first rows (count x k, float or double: one of the two is null) lie in [0, 1]
// and sum to 1 within probability_sum_tolerance: logits that look like probabilities.
std::size_t leading_probability_rows(const float* f, const double* d, std::size_t count, std::size_t k);

}  // namespace detail
}  // namespace mano

#pragma once
// The audit sample (docs/audit.md): which rows of a set to label, drawn uniformly without
// replacement from a seed by a generator that gives the same rows on every platform (native,
// WebAssembly, any CPU), the CSV file that lists them (`row,weight`), and that file read back
// with the user's labels, every problem one line naming the file, line and column.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mano/base/random.hpp"

namespace mano {

// Limits that do not depend on the input.
inline constexpr std::uint64_t audit_max_rows = 1000000;              // rows of one audit (the budget)
inline constexpr std::size_t audit_max_bytes = std::size_t{64} << 20;  // an audit file
inline constexpr std::size_t audit_max_line_bytes = 4096;              // one line of it
inline constexpr std::size_t audit_max_field_bytes = 256;              // one field of a line
// Seeds are whole numbers a JavaScript number holds exactly, so every front end takes them.
inline constexpr std::uint64_t audit_max_seed = (std::uint64_t{1} << 53) - 1;


// `budget` of the rows 0 .. n_rows - 1, uniformly without replacement (Floyd's algorithm on
// splitmix64 seeded with `seed`), ascending. Throws mano::error for a budget of 0, above n_rows
// or above audit_max_rows, or a seed above audit_max_seed.
std::vector<std::uint64_t> audit_sample(std::uint64_t n_rows, std::uint64_t budget, std::uint64_t seed);

// The audit file for these rows of `source` (n_rows x k logits): a comment line that records the
// draw ("# mano audit: ..."; pandas reads past it with comment='#'), the header "row,weight", and
// one line "ROW,1" per row.
std::string audit_csv(const std::vector<std::uint64_t>& rows, std::uint64_t n_rows, std::size_t k, std::uint64_t seed,
                      const std::string& source);

// What audit_csv's first line records of the draw: "# mano audit: B of the N rows of SOURCE
// drawn uniformly ... with seed S ...". SOURCE is what mano audit was given (a file's path) or, for
// logits given as an array, audit_array_source.
inline constexpr const char* audit_array_source = "an array";

// An audit file with its labels, read back: the audited rows, ascending, and their labels; what
// its first line says of the draw, when it has one; and the warnings for the prediction to show.
struct audit_labels {
    std::vector<std::uint64_t> rows;
    std::vector<std::int64_t> labels;
    std::optional<std::uint64_t> drawn_rows;  // N, the rows of the set it was drawn from
    std::string drawn_from;                   // SOURCE
    std::vector<std::string> warnings;        // e.g. drawn from a file of another name

    nlohmann::json to_json() const;  // {"rows": [...], "labels": [...], "warnings"?: [...]}
};

// Reads an audit file (`file` names it in messages) of a set of n_rows rows with k classes: a
// header with the columns row, weight and label in any order (other columns ignored), then one
// line per audited row. Lines that start with '#' and blank lines are skipped; fields may be
// quoted. Rows are whole numbers in [0, n_rows), each once; labels whole numbers in [0, k);
// weights 1 (the uniform design, the only one implemented). A first line written by audit_csv
// must name n_rows: a draw from a set of another size is refused (its rows are another set's);
// one from a file whose name is not `set_name`'s (compared by the last path component; "" for
// none) is a warning. Throws mano::error, one line: "FILE, line L, column C (name): what is
// wrong; what to do".
audit_labels parse_audit(std::string_view text, const std::string& file, std::uint64_t n_rows, std::size_t k,
                         const std::string& set_name = "");

}  // namespace mano

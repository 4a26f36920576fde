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
// The fewest rows an audit has, drawn or read back: its interval needs 2 labeled rows (ppi.hpp).
inline constexpr std::uint64_t audit_min_rows = 2;


// `budget` of the rows 0 .. n_rows - 1, uniformly without replacement (Floyd's algorithm on
// splitmix64 seeded with `seed`), ascending. Throws mano::error for a budget below
// audit_min_rows, above n_rows or above audit_max_rows, or a seed above audit_max_seed.
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
    std::optional<std::uint64_t> budget;      // B, the rows drawn (with drawn_rows)
    std::optional<std::uint64_t> seed;        // S, the seed of the draw (with drawn_rows)
    std::string drawn_from;                   // SOURCE
    std::vector<std::string> warnings;        // e.g. drawn from a file of another name

    nlohmann::json to_json() const;  // {"rows": [...], "labels": [...], "warnings"?: [...]}
};

// Reads an audit file (`file` names it in messages) of a set of n_rows rows with k classes: a
// header with the columns row, weight and label in any order (other columns ignored), then one
// line per audited row. Lines that start with '#' and blank lines are skipped; fields may be
// quoted. Rows are whole numbers in [0, n_rows), each once, at least audit_min_rows; labels whole
// numbers in [0, k), as digits or a whole decimal ("3.0", the CSV readers' rule,
// mano/base/number_text.hpp); weights 1 (the uniform design, the only one implemented). A first
// line written by audit_csv is checked against the set and the rows: a draw from a set of another
// size is refused (its rows are another set's), the rows must be exactly those audit_sample
// draws for the budget and seed it records (recomputed: a row edited, added or left out, or an
// edited count or seed, is refused), a line that starts as audit_csv's but does not read as one
// is refused, and one from a file whose name is not `set_name`'s (compared by the last path
// component; "" for none) is a warning. A file without that line (rows listed by hand) is read
// as it is. Throws mano::error, one line: "FILE, line L, column C (name): what is wrong; what to
// do".
audit_labels parse_audit(std::string_view text, const std::string& file, std::uint64_t n_rows, std::size_t k,
                         const std::string& set_name = "");

// Labeled rows given as lists (the bindings' {rows, labels} form; `name` names them in messages)
// of a set of n_rows x k logits, in any order: the rules of parse_audit for the rows and labels,
// each named by its index (rows[i], labels[i]). With `seed` (the draw's, as audit_sample was
// given it) the rows must be exactly the draw of rows.size() rows of n_rows with that seed; with
// `drawn_rows` (the n_rows of that draw) the set must have that many rows.
audit_labels audit_rows(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& labels, std::uint64_t n_rows,
                        std::size_t k, const std::string& name, std::optional<std::uint64_t> seed = std::nullopt,
                        std::optional<std::uint64_t> drawn_rows = std::nullopt);

}  // namespace mano

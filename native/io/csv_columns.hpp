#pragma once
// Which columns of a CSV/TSV are classes: the one rule both CSV parsers follow (the native reader,
// native/io/csv.cpp, and the npm package's, web/src/csv.js, through bindings/wasm), from the
// header's names alone, before any row is read. A column that is not a class is left out of the
// logits and said so in a note:
//   - pandas' index column (df.to_csv(): the first column, its name empty or "Unnamed: 0", or any
//     name when the other columns are named 0, 1, 2, ..., as pandas names an array's columns);
//   - a column named as ids by convention: id, index, row, row_id, idx, sample, sample_id, uid,
//     uuid, key, or a name ending in _id, _idx, _index or _key (any case; spaces around ignored;
//     ' ', '-', '.' and camelCase read as '_': "Sample ID", "sampleId");
//   - a column named label, labels, y or target: without a label column option, the one such
//     column is the label column (several are refused, naming the option); with the option, the
//     others are left out.
// The label column option (a header name, else a 0-based index) is resolved here too, so both
// parsers give the same messages. An index under another name (pandas writes the index's name,
// whatever it is) is known by its values: check_index_column, on the first rows read.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mano {
namespace io {

struct csv_columns {
    std::optional<std::size_t> label;  // the label column, 0-based
    std::vector<std::size_t> dropped;  // neither logits nor labels, ascending
    std::vector<std::string> notes;    // one line per column left out or taken as labels, "FILE: ..."
    // The columns the logits have: every column but the label column and the dropped ones.
    std::size_t logit_columns(std::size_t fields) const;
};

// `names`: the header's names (empty without a header); `fields`: the columns of every row;
// `label_option`: the label column option as given ("" = none), `option_name` how the caller
// spells that option in a message ("--label-column", "label_column", "labelColumn");
// `index_only`: the option is a number (the npm package's labelColumn: 3), never a name;
// `for_labels`: the caller reads labels (a file of one column left is its labels). Throws
// mano::error "FILE: ..." for an option that names no column or several label columns.
csv_columns resolve_csv_columns(const std::string& file, const std::vector<std::string>& names, std::size_t fields,
                                const std::string& label_option, const std::string& option_name, bool index_only,
                                bool for_labels);

// The rows check_index_column reads: the first csv_index_rows of a file (all of a shorter one).
constexpr std::size_t csv_index_rows = 100;

// Refuses (mano::error "FILE: ...", naming the column and the fix) a first column that is a logit
// column but reads as an index or ids in the first `rows` rows: it counts 0, 1, 2, ... or 1, 2,
// 3, ... (past 1, which a column of probabilities never reaches) while no other logit column
// does, or it holds whole numbers no two the same (3 rows at least) while every other logit
// column holds a fraction. mano cannot tell it from a class by its name, and scoring it as one
// gives a wrong number. `logits`: those rows' logit columns (columns.logit_columns(fields) of
// them, `stride` values from one row to the next), rows <= csv_index_rows.
void check_index_column(const std::string& file, const std::vector<std::string>& names, const csv_columns& columns,
                        std::size_t fields, const double* logits, std::size_t rows, std::size_t stride);

}  // namespace io
}  // namespace mano

#pragma once
// What a history's readers hold its values to beyond its schema, from one table that the dashboard
// reads too (src/mano/schema/history_limits.json, built in): the most bytes of each value they read,
// checked from the row's header before the value is loaded or parsed, and the keys a point's
// prediction may hold (docs/monitor.md, "What a history may hold").

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <mano/base/error.hpp>

struct sqlite3;

namespace mano {
namespace history {

struct column_limit {
    std::string column;
    std::size_t max_bytes = 0;  // of a text or blob value; 0: a whole number, never text
    std::string why;            // what mano writes there, in words
};

// The columns of `table` that a reader reads, with their limits (none for another table).
const std::vector<column_limit>& column_limits(const std::string& table);
// The limit of one of them; throws when the table lists no such column.
const column_limit& limit_of(const std::string& table, const std::string& column);
// The largest limit of any column: the longest value a history's connection may load.
std::size_t largest_value_bytes();

// "PATH: the history is damaged (ROW: WHAT); restore it from a backup or start a new one".
error damaged(const std::string& path, const std::string& row, const std::string& what);

// Throws damaged() for the first row of `table` (in rowid order) with a text or blob value over its
// column's limit: "its prediction is N bytes, over the M-byte limit of points.prediction (WHY)". The
// sizes come from the rows' headers (SQLite's incremental I/O), so no value is loaded. `row` names
// a row by its rowid for the message ("point 5").
void check_value_sizes(sqlite3* db, const std::string& path, const std::string& table,
                       const std::function<std::string(std::int64_t)>& row);

// What is wrong with a point's prediction, in words ("its prediction holds the key \"extra\" in
// methods.mano, which mano does not write"), or "" when it is a Prediction of
// src/mano/schema/prediction.schema.json less the keys an add never writes (history_limits.json),
// each method one of the method table.
std::string prediction_problem(const nlohmann::json& prediction);

}  // namespace history
}  // namespace mano

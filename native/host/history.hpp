#pragma once
// A monitoring history: one SQLite file that `mano monitor add` appends estimates to and
// `mano monitor report` reads (docs/monitor.md documents its tables). Each add is one
// transaction; the file is in WAL mode and writers wait for each other (busy timeout), so several
// cron jobs may add to one file at once. A history is untrusted input: it is opened so that nothing
// in it runs (defensive mode, no views, triggers or schema functions), its schema must be exactly
// mano's (src/mano/schema/history.sql) before anything else is read or written, each value a reader
// reads is within its column's limit before it is loaded (history_limits.hpp), and only regular
// files are opened; anything else is refused with a mano::error naming it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

struct sqlite3;

namespace mano {
namespace history {

// PRAGMA user_version of the files this mano writes, and what its meta table says it is; it reads
// and adds to version 1's files too (src/mano/schema/history_v1.sql).
inline constexpr int schema_version = 2;
inline constexpr const char* format_name = "mano history";
// How long a writer waits for another one to finish its add before it gives up.
inline constexpr int busy_timeout_ms = 120000;

// A point as an add brings it: a file (or a chunk of one), predicted with a calibration.
struct new_point {
    std::string name;  // the file, or FILE[first:end] for a chunk
    std::string file;
    std::optional<std::size_t> chunk, first_row;
    nlohmann::json prediction;  // set_prediction::to_json(), what mano predict --json gives
    nlohmann::json state;       // the mergeable accumulator state (accumulator::to_json())
};

// A point as a report reads it.
struct stored_point {
    std::int64_t id = 0;      // insertion order
    std::int64_t add_id = 0;  // the add that wrote it
    std::string time, name, file;
    std::optional<std::int64_t> chunk, first_row;
    std::int64_t n = 0;
    std::string calibration;  // SHA-256 of the calibration file's bytes
    nlohmann::json prediction;
};

// The points an add has scored, until it appends them: in a private temporary SQLite database,
// which SQLite moves to a file once it outgrows its page cache, so an add's memory does not grow
// with its points.
class point_spool {
public:
    point_spool();
    point_spool(const point_spool&) = delete;
    point_spool& operator=(const point_spool&) = delete;
    ~point_spool();
    void add(const new_point& p);
    std::size_t size() const { return size_; }

private:
    friend class store;
    sqlite3* db_ = nullptr;
    std::size_t size_ = 0;
};

class store {
public:
    // A history to append to: a new one when `path` does not exist or is an empty SQLite file (its
    // first append writes the schema); refused when it is another file.
    static store for_writing(const std::string& path);
    // An existing history, opened read-only (immutable on read-only media); every read of the store
    // sees one snapshot of it, whatever adds commit meanwhile.
    static store for_reading(const std::string& path);

    store(store&& other) noexcept;
    store& operator=(store&&) = delete;
    store(const store&) = delete;
    ~store();

    // Appends the spool's points, all at `time`, scored with the calibration whose file holds
    // `calibration_text` (its SHA-256 `calibration_hash`), in one transaction; `inside` runs in
    // the transaction after the first point is written (a test hook: a kill there must leave the
    // history as it was). Returns the add's id.
    std::int64_t append(const std::string& time, const std::string& calibration_hash, const std::string& calibration_text,
                        const point_spool& points, const std::function<void()>& inside = {});

    // Calls `each` with every point from time `since` on ("": all), in time order (ties in
    // insertion order), one row at a time: memory does not grow with the history. Throws "the
    // history is damaged" naming the point when a row is not what mano writes.
    void each_point(const std::string& since, const std::function<void(const stored_point&)>& each) const;
    // How many points there are up to time `until` (inclusive; "": all of them).
    std::int64_t count_points(const std::string& until) const;
    // How many points lead the history (in time order) that the first point's add wrote.
    std::int64_t first_add_points() const;
    // The first point's time ("" when there is none).
    std::string first_time() const;
    // The calibration file's text recorded under its hash; nullopt when none is.
    std::optional<std::string> calibration(const std::string& hash) const;

    const std::string& path() const { return path_; }

private:
    store(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
    void check_schema(bool writing);
    void create_schema();
    std::string path_;
    sqlite3* db_ = nullptr;
};

}  // namespace history
}  // namespace mano

#include "host/history.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <thread>

#include <sqlite3.h>

#include <mano/mano.hpp>

namespace mano {
namespace history {

namespace {

// The schema of version 1 (docs/monitor.md explains each column). The estimate columns repeat,
// for queries, what the prediction column's JSON holds exactly (it is what mano predict --json
// gives for the point).
constexpr const char* schema_sql = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE calibrations (sha256 TEXT PRIMARY KEY, calibration TEXT NOT NULL);
CREATE TABLE adds (
  id INTEGER PRIMARY KEY,
  time TEXT NOT NULL,
  written_at TEXT NOT NULL,
  mano_version TEXT NOT NULL,
  calibration_sha256 TEXT NOT NULL REFERENCES calibrations(sha256)
);
CREATE TABLE points (
  id INTEGER PRIMARY KEY,
  add_id INTEGER NOT NULL REFERENCES adds(id),
  time TEXT NOT NULL,
  name TEXT NOT NULL,
  file TEXT NOT NULL,
  chunk INTEGER,
  first_row INTEGER,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  level REAL NOT NULL,
  method TEXT,
  accuracy REAL,
  lower REAL,
  upper REAL,
  fallback INTEGER,
  regime TEXT,
  shift_distance REAL,
  shift_range REAL,
  shift_outside INTEGER,
  calibration_sha256 TEXT NOT NULL REFERENCES calibrations(sha256),
  prediction TEXT NOT NULL,
  state TEXT NOT NULL
);
CREATE INDEX points_by_time ON points (time, id);
CREATE TABLE estimates (
  point_id INTEGER NOT NULL REFERENCES points(id),
  method TEXT NOT NULL,
  score REAL NOT NULL,
  se REAL,
  accuracy REAL NOT NULL,
  lower REAL NOT NULL,
  upper REAL NOT NULL,
  extrapolated INTEGER NOT NULL,
  PRIMARY KEY (point_id, method)
);
)sql";

constexpr const char* fix_it = "give a history written by mano monitor add, or a new path";

// "PATH: what (SQLite's words); fix" for the result code of the last call on `db`.
[[noreturn]] void fail(const std::string& path, sqlite3* db, int code, const std::string& what) {
    const std::string words = db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
    const int primary = code & 0xff;
    if (primary == SQLITE_NOTADB)
        throw error(path + ": not a mano history (not an SQLite database: " + words + "); " + fix_it);
    if (primary == SQLITE_CORRUPT)
        throw error(path + ": the history is damaged (" + words + "); restore it from a backup or start a new one");
    if (primary == SQLITE_BUSY)
        throw error(path + ": " + what + " (" + words + ": another mano kept the history locked for " +
                    std::to_string(busy_timeout_ms / 1000) + " s); try again");
    throw error(path + ": " + what + " (" + words + ")");
}

// One prepared statement, finalized however the scope ends.
class statement {
public:
    statement(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
        const int rc = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
        if (rc != SQLITE_OK) fail(path, db, rc, "cannot read the history");
    }
    ~statement() { sqlite3_finalize(stmt_); }
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;

    void bind(int i, const std::string& text) { sqlite3_bind_text(stmt_, i, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT); }
    void bind(int i, std::int64_t value) { sqlite3_bind_int64(stmt_, i, value); }
    void bind(int i, double value) { sqlite3_bind_double(stmt_, i, value); }
    void bind_null(int i) { sqlite3_bind_null(stmt_, i); }
    template <class T>
    void bind(int i, const std::optional<T>& value) {
        if (value) bind(i, *value);
        else bind_null(i);
    }
    // true while there is a row
    bool step(const char* what) {
        const int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        fail(path_, db_, rc, what);
    }
    void reset() {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }
    std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
    bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
    std::string text(int column) const {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
    }

private:
    sqlite3* db_;
    const std::string& path_;
    sqlite3_stmt* stmt_ = nullptr;
};

void execute(sqlite3* db, const std::string& path, const char* sql, const char* what) {
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) fail(path, db, rc, what);
}

std::int64_t single_integer(sqlite3* db, const std::string& path, const char* sql) {
    statement s(db, path, sql);
    return s.step("cannot read the history") ? s.integer(0) : 0;
}

std::string now_utc() {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm parts{};
    gmtime_r(&t, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

sqlite3* open_file(const std::string& path, int flags) {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string words = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        sqlite3_close(db);
        throw error(path + ": cannot open the history (" + words + ")");
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, busy_timeout_ms);
    return db;
}

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nullopt;
    return j.at(key).get<double>();
}

}  // namespace

store store::for_writing(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw error(path + ": a folder, not a history file; " + fix_it);
    store s(path, open_file(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
    s.check_schema(true);
    // WAL: readers do not block the writer, and a commit is one append to the log. The mode is
    // kept in the file; switching needs the file to itself, so a writer that meets another one
    // here waits its turn.
    // One deadline for the whole wait: SQLite's own busy handler is off meanwhile, so that each
    // try does not wait busy_timeout_ms of its own.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
    sqlite3_busy_timeout(s.db_, 0);
    for (;;) {
        const int rc = sqlite3_exec(s.db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
        if (rc == SQLITE_OK) break;
        if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline)
            fail(path, s.db_, rc, "cannot switch the history to WAL mode");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    sqlite3_busy_timeout(s.db_, busy_timeout_ms);
    return s;
}

store store::for_reading(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw error(path + ": no such history file; mano monitor add creates one");
    if (std::filesystem::is_directory(path, ec)) throw error(path + ": a folder, not a history file; " + fix_it);
    store s(path, open_file(path, SQLITE_OPEN_READONLY));
    s.check_schema(false);
    return s;
}

store::store(store&& other) noexcept : path_(std::move(other.path_)), db_(other.db_) { other.db_ = nullptr; }

store::~store() { sqlite3_close(db_); }

void store::check_schema(bool writing) {
    // one statement, one snapshot: a concurrent first add writes the schema and the version together
    statement s(db_, path_, "SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)");
    s.step("cannot read the history");
    const std::int64_t version = s.integer(0), tables = s.integer(1);
    if (version > schema_version)
        throw error(path_ + ": a mano history of schema version " + std::to_string(version) + ", newer than this mano reads (" +
                    std::to_string(schema_version) + "); use a newer mano");
    if (version == 0 && tables == 0) {
        if (writing) return;  // a new file: the first add writes the schema with its points
        throw error(path_ + ": an empty SQLite database, not a mano history yet; mano monitor add writes the first points");
    }
    bool named = false;
    if (version > 0 && single_integer(db_, path_, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'") == 1) {
        statement meta(db_, path_, "SELECT value FROM meta WHERE key = 'format'");
        named = meta.step("cannot read the history") && meta.text(0) == format_name;
    }
    if (!named)
        throw error(path_ + ": an SQLite database that is not a mano history (no meta table naming it \"" + format_name +
                    "\"); " + fix_it);
}

void store::create_schema() {
    execute(db_, path_, schema_sql, "cannot create the history");
    statement meta(db_, path_, "INSERT INTO meta (key, value) VALUES ('format', ?1), ('schema_version', ?2), ('created_by', ?3)");
    meta.bind(1, std::string(format_name));
    meta.bind(2, std::to_string(schema_version));
    meta.bind(3, std::string("mano ") + version_string);
    meta.step("cannot create the history");
    execute(db_, path_, ("PRAGMA user_version = " + std::to_string(schema_version)).c_str(), "cannot create the history");
}

std::int64_t store::append(const std::string& time, const std::string& calibration_hash, const std::string& calibration_text,
                           const std::vector<new_point>& points, const std::function<void()>& inside) {
    execute(db_, path_, "BEGIN IMMEDIATE", "cannot write the history");
    try {
        // a new file gets its schema in the transaction of its first add (unless a concurrent add
        // wrote it meanwhile)
        if (single_integer(db_, path_, "PRAGMA user_version") == 0) {
            if (single_integer(db_, path_, "SELECT count(*) FROM sqlite_master") != 0)
                throw error(path_ + ": an SQLite database that is not a mano history; " + fix_it);
            create_schema();
        }
        statement cal(db_, path_, "INSERT OR IGNORE INTO calibrations (sha256, calibration) VALUES (?1, ?2)");
        cal.bind(1, calibration_hash);
        cal.bind(2, calibration_text);
        cal.step("cannot write the history");
        statement add(db_, path_, "INSERT INTO adds (time, written_at, mano_version, calibration_sha256) VALUES (?1, ?2, ?3, ?4)");
        add.bind(1, time);
        add.bind(2, now_utc());
        add.bind(3, std::string(version_string));
        add.bind(4, calibration_hash);
        add.step("cannot write the history");
        const std::int64_t add_id = sqlite3_last_insert_rowid(db_);
        statement point(db_, path_,
                        "INSERT INTO points (add_id, time, name, file, chunk, first_row, n, k, level, method, accuracy, lower, "
                        "upper, fallback, regime, shift_distance, shift_range, shift_outside, calibration_sha256, prediction, "
                        "state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)");
        statement estimate(db_, path_,
                           "INSERT INTO estimates (point_id, method, score, se, accuracy, lower, upper, extrapolated) VALUES "
                           "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
        for (std::size_t i = 0; i < points.size(); ++i) {
            const auto& p = points[i];
            const auto& pr = p.prediction;
            point.bind(1, add_id);
            point.bind(2, time);
            point.bind(3, p.name);
            point.bind(4, p.file);
            point.bind(5, p.chunk ? std::optional<std::int64_t>(static_cast<std::int64_t>(*p.chunk)) : std::nullopt);
            point.bind(6, p.first_row ? std::optional<std::int64_t>(static_cast<std::int64_t>(*p.first_row)) : std::nullopt);
            point.bind(7, pr.at("n").get<std::int64_t>());
            point.bind(8, pr.at("k").get<std::int64_t>());
            point.bind(9, pr.at("level").get<double>());
            const nlohmann::json est = pr.value("estimate", nlohmann::json());
            if (est.is_object()) {
                point.bind(10, est.at("method").get<std::string>());
                point.bind(11, est.at("accuracy").get<double>());
                point.bind(12, est.at("interval").at(0).get<double>());
                point.bind(13, est.at("interval").at(1).get<double>());
                point.bind(14, std::int64_t{est.value("fallback", false) ? 1 : 0});
                if (est.contains("regime") && est.at("regime").is_string()) point.bind(15, est.at("regime").get<std::string>());
                else point.bind_null(15);
            } else {
                for (int c = 10; c <= 15; ++c) point.bind_null(c);
            }
            const nlohmann::json shift = pr.value("shift", nlohmann::json());
            point.bind(16, number_at(shift, "distance"));
            point.bind(17, number_at(shift, "range"));
            if (shift.is_object()) point.bind(18, std::int64_t{shift.value("outside", false) ? 1 : 0});
            else point.bind_null(18);
            point.bind(19, calibration_hash);
            point.bind(20, pr.dump());
            point.bind(21, p.state.dump());
            point.step("cannot write the history");
            const std::int64_t point_id = sqlite3_last_insert_rowid(db_);
            const nlohmann::json methods = pr.value("methods", nlohmann::json::object());
            for (const auto& [name, m] : methods.items()) {
                estimate.bind(1, point_id);
                estimate.bind(2, name);
                estimate.bind(3, m.at("score").get<double>());
                estimate.bind(4, number_at(m, "se"));
                estimate.bind(5, m.at("accuracy").get<double>());
                estimate.bind(6, m.at("interval").at(0).get<double>());
                estimate.bind(7, m.at("interval").at(1).get<double>());
                estimate.bind(8, std::int64_t{m.value("extrapolated", false) ? 1 : 0});
                estimate.step("cannot write the history");
                estimate.reset();
            }
            point.reset();
            if (i == 0 && inside) inside();
        }
        execute(db_, path_, "COMMIT", "cannot write the history");
        return add_id;
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

std::vector<stored_point> store::points() const {
    statement s(db_, path_,
                "SELECT id, add_id, time, name, file, chunk, first_row, n, calibration_sha256, prediction FROM points "
                "ORDER BY time, id");
    std::vector<stored_point> out;
    while (s.step("cannot read the history's points")) {
        stored_point p;
        p.id = s.integer(0);
        p.add_id = s.integer(1);
        p.time = s.text(2);
        p.name = s.text(3);
        p.file = s.text(4);
        if (!s.is_null(5)) p.chunk = s.integer(5);
        if (!s.is_null(6)) p.first_row = s.integer(6);
        p.n = s.integer(7);
        p.calibration = s.text(8);
        p.prediction = nlohmann::json::parse(s.text(9), nullptr, false);
        if (!p.prediction.is_object())
            throw error(path_ + ": the history is damaged (point " + std::to_string(p.id) +
                        "'s prediction is not JSON); restore it from a backup or start a new one");
        out.push_back(std::move(p));
    }
    return out;
}

std::optional<std::string> store::calibration(const std::string& hash) const {
    statement s(db_, path_, "SELECT calibration FROM calibrations WHERE sha256 = ?1");
    s.bind(1, hash);
    if (!s.step("cannot read the history's calibrations")) return std::nullopt;
    return s.text(0);
}

}  // namespace history
}  // namespace mano

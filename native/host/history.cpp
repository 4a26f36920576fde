#include "host/history.hpp"

#include <array>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <thread>

#include <sys/stat.h>

#include <sqlite3.h>

#include <mano/mano.hpp>

#include "host/history_limits.hpp"
#include "host/history_schema.hpp"
#include "host/history_sqlite.hpp"
#include "host/utc_time.hpp"

namespace mano {
namespace history {

using detail::execute;
using detail::fail;
using detail::fix_it;
using detail::statement;

namespace {

std::int64_t single_integer(sqlite3* db, const std::string& path, const char* sql) {
    statement s(db, path, sql);
    return s.step("cannot read the history") ? s.integer(0) : 0;
}

// Refuses a path that is there but is not a regular file (a FIFO would block the open forever, a
// device would be read without end), and so its WAL and shared-memory files.
void require_regular(const std::string& path) {
    for (const std::string& p : {path, path + "-wal", path + "-shm"}) {
        struct stat info {};
        if (::stat(p.c_str(), &info) != 0) continue;
        if (S_ISDIR(info.st_mode) && p == path) throw error(path + ": a folder, not a history file; " + fix_it);
        if (S_ISREG(info.st_mode)) continue;
        const char* kind = S_ISFIFO(info.st_mode)                              ? "a FIFO"
                           : S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode) ? "a device"
                                                                              : "a socket or another special file";
        throw error(p + ": not a regular file (" + kind + "); a history is a regular file: " + fix_it);
    }
}

// "file:PATH?immutable=1" with PATH's bytes escaped as a URI needs them
std::string immutable_uri(const std::string& path) {
    std::string uri = "file:";
    const char* hex = "0123456789ABCDEF";
    for (const unsigned char c : path) {
        if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') uri += static_cast<char>(c);
        else uri += std::string("%") + hex[c >> 4] + hex[c & 15];
    }
    return uri + "?immutable=1";
}

// Nothing a file holds runs: defensive mode (no writes to the schema, no shadow tables), no
// functions in its schema (trusted_schema off), no views and no triggers at all; and no value read
// longer than the longest limit of history_limits.json (the readers hold each column to its own).
sqlite3* open_file(const std::string& path, int flags, bool immutable = false) {
    sqlite3* db = nullptr;
    const std::string name = immutable ? immutable_uri(path) : path;
    const int rc = sqlite3_open_v2(name.c_str(), &db, flags | (immutable ? SQLITE_OPEN_URI : 0), nullptr);
    if (rc != SQLITE_OK) {
        const std::string words = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        sqlite3_close(db);
        throw error(path + ": cannot open the history (" + words + ")");
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, static_cast<int>(largest_value_bytes()));
    sqlite3_busy_timeout(db, busy_timeout_ms);
    return db;
}

// The schema's entries (type, name, table, statement), in one order.
using schema_entries = std::vector<std::array<std::string, 4>>;

schema_entries read_schema(sqlite3* db, const std::string& path) {
    statement s(db, path, "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name");
    schema_entries out;
    while (s.step("cannot read the history's schema"))
        out.push_back({s.text(0), s.text(1), s.text(2), s.text(3)});
    return out;
}

// What mano's own statements give, from a database in memory.
schema_entries schema_of(const char* sql) {
    sqlite3* db = open_file(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY);
    execute(db, "mano's history schema", sql, "cannot create the history schema");
    auto out = read_schema(db, "mano's history schema");
    sqlite3_close(db);
    return out;
}

// The entries of a file of schema version 1 (src/mano/schema/history_v1.sql) or of the current one.
const schema_entries& own_schema(std::int64_t version) {
    static const schema_entries current = schema_of(schema_sql), first = schema_of(schema_v1_sql);
    return version == 1 ? first : current;
}

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nullopt;
    return j.at(key).get<double>();
}

// The calibration (once per hash) and the add's row; the add's id.
std::int64_t insert_add(sqlite3* db, const std::string& path, const std::string& time, const std::string& calibration_hash,
                        const std::string& calibration_text) {
    statement cal(db, path, "INSERT OR IGNORE INTO calibrations (sha256, calibration) VALUES (:sha256, :calibration)");
    cal.bind(":sha256", calibration_hash);
    cal.bind(":calibration", calibration_text);
    cal.step("cannot write the history");
    statement add(db, path, "INSERT INTO adds (time, written_at, mano_version, calibration_sha256) VALUES "
                            "(:time, :written_at, :mano_version, :calibration_sha256)");
    add.bind(":time", time);
    add.bind(":written_at", now_utc());
    add.bind(":mano_version", std::string(version_string));
    add.bind(":calibration_sha256", calibration_hash);
    add.step("cannot write the history");
    return sqlite3_last_insert_rowid(db);
}

// A staged point's own columns (all but add_id, time and calibration_sha256), from its row in the
// spool and its prediction, whose estimate columns repeat what the JSON holds.
void bind_point(statement& point, const statement& staged, const nlohmann::json& pr) {
    point.bind(":name", staged.text(0));
    point.bind(":file", staged.text(1));
    if (staged.is_null(2)) point.bind_null(":chunk");
    else point.bind(":chunk", staged.integer(2));
    if (staged.is_null(3)) point.bind_null(":first_row");
    else point.bind(":first_row", staged.integer(3));
    point.bind(":n", pr.at("n").get<std::int64_t>());
    point.bind(":k", pr.at("k").get<std::int64_t>());
    point.bind(":level", pr.at("level").get<double>());
    const nlohmann::json est = pr.value("estimate", nlohmann::json());
    if (est.is_object()) {
        point.bind(":method", est.at("method").get<std::string>());
        point.bind(":accuracy", est.at("accuracy").get<double>());
        point.bind(":lower", est.at("interval").at(0).get<double>());
        point.bind(":upper", est.at("interval").at(1).get<double>());
        if (est.contains("regime") && est.at("regime").is_string()) point.bind(":regime", est.at("regime").get<std::string>());
        else point.bind_null(":regime");
    } else {
        for (const char* c : {":method", ":accuracy", ":lower", ":upper", ":regime"}) point.bind_null(c);
    }
    const nlohmann::json shift = pr.value("shift", nlohmann::json());
    point.bind(":shift_distance", number_at(shift, "distance"));
    point.bind(":shift_range", number_at(shift, "range"));
    if (shift.is_object()) point.bind(":shift_outside", std::int64_t{shift.value("outside", false) ? 1 : 0});
    else point.bind_null(":shift_outside");
    point.bind(":prediction", staged.text(4));
    point.bind(":state", staged.text(5));
}

// One row of estimates per method of the point's prediction.
void insert_estimates(statement& estimate, std::int64_t point_id, const nlohmann::json& pr) {
    const nlohmann::json methods = pr.value("methods", nlohmann::json::object());
    for (const auto& [name, m] : methods.items()) {
        estimate.bind(":point_id", point_id);
        estimate.bind(":method", name);
        estimate.bind(":score", m.at("score").get<double>());
        estimate.bind(":se", number_at(m, "se"));
        estimate.bind(":accuracy", m.at("accuracy").get<double>());
        estimate.bind(":lower", m.at("interval").at(0).get<double>());
        estimate.bind(":upper", m.at("interval").at(1).get<double>());
        estimate.bind(":extrapolated", std::int64_t{m.value("extrapolated", false) ? 1 : 0});
        estimate.step("cannot write the history");
        estimate.reset();
    }
}

}  // namespace

namespace {
const std::string spool_name = "the add's points";
}  // namespace

point_spool::point_spool() : db_(open_file("", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) {
    execute(db_, spool_name,
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; CREATE TABLE points (name TEXT, file TEXT, chunk INTEGER, "
            "first_row INTEGER, prediction TEXT, state TEXT)",
            "cannot keep the points");
}

point_spool::~point_spool() { sqlite3_close(db_); }

void point_spool::add(const new_point& p) {
    statement s(db_, spool_name, "INSERT INTO points VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    s.bind(1, p.name);
    s.bind(2, p.file);
    s.bind(3, p.chunk ? std::optional<std::int64_t>(static_cast<std::int64_t>(*p.chunk)) : std::nullopt);
    s.bind(4, p.first_row ? std::optional<std::int64_t>(static_cast<std::int64_t>(*p.first_row)) : std::nullopt);
    // never more than a report reads back (a new method or key that outgrew the limit is a bug)
    const std::string prediction = p.prediction.dump();
    const column_limit& limit = limit_of("points", "prediction");
    if (prediction.size() > limit.max_bytes)
        throw error(printable(p.name, 200) + ": its prediction is " + std::to_string(prediction.size()) + " bytes, over the " +
                    std::to_string(limit.max_bytes) + "-byte limit of a history's points.prediction (src/mano/schema/history_limits.json); "
                    "a bug of mano: please report it");
    s.bind(5, prediction);
    s.bind(6, p.state.dump());
    s.step("cannot keep the points");
    ++size_;
}

store store::for_writing(const std::string& path) {
    require_regular(path);
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
    require_regular(path);
    {
        store s(path, open_file(path, SQLITE_OPEN_READONLY));
        // one read transaction for the store's life: a report's passes see one snapshot
        execute(s.db_, path, "BEGIN", "cannot read the history");
        const int rc = sqlite3_exec(s.db_, "SELECT count(*) FROM sqlite_schema", nullptr, nullptr, nullptr);
        const int primary = rc & 0xff;
        if (rc == SQLITE_OK) {
            s.check_schema(false);
            return s;
        }
        if (primary != SQLITE_CANTOPEN && primary != SQLITE_READONLY) fail(path, s.db_, rc, "cannot read the history");
    }
    // read-only media: a WAL file's readers need a shared-memory file beside it, which cannot be
    // made there; nothing writes to such a history, so it is read as it is (immutable)
    store s(path, open_file(path, SQLITE_OPEN_READONLY, true));
    execute(s.db_, path, "BEGIN", "cannot read the history");
    s.check_schema(false);
    return s;
}

store::store(store&& other) noexcept : path_(std::move(other.path_)), db_(other.db_) { other.db_ = nullptr; }

store::~store() { sqlite3_close(db_); }

void store::check_schema(bool writing) {
    // one statement, one snapshot: a concurrent first add writes the schema and the version together
    statement s(db_, path_, "SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)");
    s.step("cannot read the history");
    const std::int64_t version = s.integer(0), tables = s.integer(1);
    if (version > schema_version)
        throw error(path_ + ": a mano history of schema version " + std::to_string(version) + ", newer than this mano reads (" +
                    std::to_string(schema_version) + "); use a newer mano");
    if (version == 0 && tables == 0) {
        if (writing) return;  // a new file: the first add writes the schema with its points
        throw error(path_ + ": an empty SQLite database, not a mano history yet; mano monitor add writes the first points");
    }
    // Nothing is read but the schema until it is exactly mano's: a view or a trigger a file brings
    // would run inside mano (docs/monitor.md, "What a history may hold").
    const schema_entries found = read_schema(db_, path_);
    const auto has_meta = std::any_of(found.begin(), found.end(), [](const auto& e) { return e[0] == "table" && e[1] == "meta"; });
    if (version == 0 || !has_meta)
        throw error(path_ + ": an SQLite database that is not a mano history (no meta table naming it \"" + format_name +
                    "\"); " + fix_it);
    const schema_entries& own = own_schema(version);
    for (const auto& e : found)
        if (std::find(own.begin(), own.end(), e) == own.end()) {
            const bool known = std::any_of(own.begin(), own.end(), [&](const auto& o) { return o[0] == e[0] && o[1] == e[1]; });
            throw error(path_ + ": refused: its schema has " + (known ? "another definition of the " : "a ") + printable(e[0], 64) +
                        " \"" + printable(e[1], 200) + "\" that mano does not write (a history may hold mano's tables and "
                        "indexes only, so that nothing in it runs); " + fix_it);
        }
    if (found.size() != own.size())
        throw error(path_ + ": the history is damaged (its schema lacks some of mano's tables or indexes); restore it from a "
                    "backup or start a new one");
    // every value a reader reads within its column's limit before any is loaded (history_limits.hpp)
    const auto row_of = [](const char* what) { return [what](std::int64_t r) { return what + std::to_string(r); }; };
    check_value_sizes(db_, path_, "meta", row_of("meta row "));
    statement meta(db_, path_, "SELECT value FROM meta WHERE key = 'format'");
    if (!meta.step("cannot read the history") || meta.text(0) != format_name)
        throw error(path_ + ": an SQLite database that is not a mano history (no meta table naming it \"" + format_name +
                    "\"); " + fix_it);
    if (writing) return;  // an add reads no point and no calibration
    check_value_sizes(db_, path_, "calibrations", row_of("calibration row "));
    check_value_sizes(db_, path_, "points", row_of("point "));
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
                           const point_spool& points, const std::function<void()>& inside) {
    execute(db_, path_, "BEGIN IMMEDIATE", "cannot write the history");
    try {
        // a new file gets its schema in the transaction of its first add (unless a concurrent add
        // wrote it meanwhile)
        // the schema again, now that no other writer can change it before the commit
        if (single_integer(db_, path_, "PRAGMA user_version") == 0 &&
            single_integer(db_, path_, "SELECT count(*) FROM sqlite_schema") == 0)
            create_schema();
        else
            check_schema(true);
        const std::int64_t add_id = insert_add(db_, path_, time, calibration_hash, calibration_text);
        // a file of schema version 1 keeps its column fallback, NULL in the points added now
        statement point(db_, path_,
                        "INSERT INTO points (add_id, time, name, file, chunk, first_row, n, k, level, method, accuracy, lower, "
                        "upper, regime, shift_distance, shift_range, shift_outside, calibration_sha256, prediction, state) VALUES "
                        "(:add_id, :time, :name, :file, :chunk, :first_row, :n, :k, :level, :method, :accuracy, :lower, :upper, "
                        ":regime, :shift_distance, :shift_range, :shift_outside, :calibration_sha256, :prediction, :state)");
        statement estimate(db_, path_,
                           "INSERT INTO estimates (point_id, method, score, se, accuracy, lower, upper, extrapolated) VALUES "
                           "(:point_id, :method, :score, :se, :accuracy, :lower, :upper, :extrapolated)");
        statement staged(points.db_, spool_name, "SELECT name, file, chunk, first_row, prediction, state FROM points ORDER BY rowid");
        for (std::size_t i = 0; staged.step("cannot read the points kept"); ++i) {
            const nlohmann::json pr = nlohmann::json::parse(staged.text(4));
            point.bind(":add_id", add_id);
            point.bind(":time", time);
            point.bind(":calibration_sha256", calibration_hash);
            bind_point(point, staged, pr);
            point.step("cannot write the history");
            insert_estimates(estimate, sqlite3_last_insert_rowid(db_), pr);
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

void store::each_point(const std::string& since, const std::function<void(const stored_point&)>& each) const {
    statement s(db_, path_,
                "SELECT id, add_id, time, name, file, chunk, first_row, n, calibration_sha256, prediction FROM points "
                "WHERE time >= ?1 ORDER BY time, id");
    s.bind(1, since);
    stored_point p;
    while (s.step("cannot read the history's points")) {
        const auto damaged = [&](const std::string& what) { return history::damaged(path_, "point " + std::to_string(s.integer(0)), what); };
        const auto is = [&](int column, int type) { return sqlite3_column_type(s.handle(), column) == type; };
        for (const int c : {0, 1, 7})
            if (!is(c, SQLITE_INTEGER)) throw damaged("a count or id that is not a whole number");
        for (const int c : {2, 3, 4, 8, 9})
            if (!is(c, SQLITE_TEXT)) throw damaged("a time, name, file, calibration or prediction that is not text");
        for (const int c : {5, 6})
            if (!is(c, SQLITE_INTEGER) && !is(c, SQLITE_NULL)) throw damaged("a chunk or first row that is not a whole number");
        p.id = s.integer(0);
        p.add_id = s.integer(1);
        p.time = s.text(2);
        if (!is_utc_time(p.time)) throw damaged("its time \"" + printable(p.time, 40) + "\" is not YYYY-MM-DDTHH:MM:SSZ");
        p.name = s.text(3);
        p.file = s.text(4);
        p.chunk = is(5, SQLITE_NULL) ? std::nullopt : std::optional<std::int64_t>(s.integer(5));
        p.first_row = is(6, SQLITE_NULL) ? std::nullopt : std::optional<std::int64_t>(s.integer(6));
        p.n = s.integer(7);
        if (p.n < 0 || (p.chunk && *p.chunk < 0) || (p.first_row && *p.first_row < 0)) throw damaged("a negative count");
        p.calibration = s.text(8);
        if (p.calibration.size() != 64 ||
            !std::all_of(p.calibration.begin(), p.calibration.end(), [](char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); }))
            throw damaged("its calibration is not a SHA-256");
        p.prediction = nlohmann::json::parse(s.text(9), nullptr, false);
        if (!p.prediction.is_object()) throw damaged("its prediction is not a JSON object");
        each(p);
    }
}

std::int64_t store::count_points(const std::string& until) const {
    statement s(db_, path_, until.empty() ? "SELECT count(*) FROM points" : "SELECT count(*) FROM points WHERE time <= ?1");
    if (!until.empty()) s.bind(1, until);
    return s.step("cannot read the history's points") ? s.integer(0) : 0;
}

std::int64_t store::first_add_points() const {
    // the points before the first one (in time order) of another add
    statement s(db_, path_,
                "SELECT count(*) FROM points, (SELECT time AS t, id AS i FROM points WHERE add_id != "
                "(SELECT add_id FROM points ORDER BY time, id LIMIT 1) ORDER BY time, id LIMIT 1) WHERE time < t OR (time = t AND id < i)");
    const std::int64_t before_another = s.step("cannot read the history's points") ? s.integer(0) : 0;
    statement other(db_, path_, "SELECT EXISTS (SELECT 1 FROM points WHERE add_id != (SELECT add_id FROM points ORDER BY time, id LIMIT 1))");
    const bool another = other.step("cannot read the history's points") && other.integer(0) != 0;
    return another ? before_another : count_points("");
}

std::string store::first_time() const {
    statement s(db_, path_, "SELECT time FROM points ORDER BY time, id LIMIT 1");
    return s.step("cannot read the history's points") ? printable(s.text(0), 40) : std::string();
}

std::optional<std::string> store::calibration(const std::string& hash) const {
    statement s(db_, path_, "SELECT calibration FROM calibrations WHERE sha256 = ?1");
    s.bind(1, hash);
    if (!s.step("cannot read the history's calibrations")) return std::nullopt;
    return s.text(0);
}

}  // namespace history
}  // namespace mano

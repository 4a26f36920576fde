#pragma once
// What the history's files (history.cpp, history_limits.cpp) share of SQLite: its errors in mano's
// words, one prepared statement finalized however the scope ends, a statement run for its effect.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <sqlite3.h>

#include <mano/base/error.hpp>

#include "host/history.hpp"

namespace mano {
namespace history {
namespace detail {

inline constexpr const char* fix_it = "give a history written by mano monitor add, or a new path";

// "PATH: what (SQLite's words); fix" for the result code of the last call on `db`.
[[noreturn]] inline void fail(const std::string& path, sqlite3* db, int code, const std::string& what) {
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
    // A parameter by its :name, so that no binding hangs on the order of the statement's columns.
    template <class T>
    void bind(const char* name, const T& value) { bind(parameter(name), value); }
    void bind_null(const char* name) { bind_null(parameter(name)); }
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
    sqlite3_stmt* handle() const { return stmt_; }
    bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
    std::string text(int column) const {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
    }

private:
    int parameter(const char* name) const {
        const int i = sqlite3_bind_parameter_index(stmt_, name);
        if (i == 0) throw std::logic_error(std::string("mano's history statement has no parameter ") + name);
        return i;
    }
    sqlite3* db_;
    const std::string& path_;
    sqlite3_stmt* stmt_ = nullptr;
};

inline void execute(sqlite3* db, const std::string& path, const char* sql, const char* what) {
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) fail(path, db, rc, what);
}

}  // namespace detail
}  // namespace history
}  // namespace mano

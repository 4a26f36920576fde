// The history readers' limits (history_limits.hpp) from src/mano/schema/history_limits.json, the
// sizes of a table's values read from its rows' headers, and a prediction checked against its
// shape in src/mano/schema/prediction.schema.json.
#include "host/history_limits.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <regex>
#include <optional>
#include <set>
#include <string_view>
#include <variant>

#include <sqlite3.h>

#include <mano/mano.hpp>

#include "host/history_schema.hpp"
#include "host/history_sqlite.hpp"
#include "io/json.hpp"

namespace mano {
namespace history {

namespace {

using json = nlohmann::json;

const json* find(const json& schema, const char* keyword) {
    const auto it = schema.find(keyword);
    return it == schema.end() ? nullptr : &*it;
}

bool is_method(std::string_view name) {
    for (const auto& m : method_table)
        if (name == m.name) return true;
    return false;
}

bool is_integer(const json& v) {
    return v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>());
}

// A shape compiled once from its JSON, so that checking a value looks nothing up by name.
enum class value_type { any, object, array, string, boolean, number, integer, null };

struct shape {
    value_type type = value_type::any;
    std::string type_name;  // for messages
    const json* allowed = nullptr;  // enum
    const json* minimum = nullptr;
    std::optional<std::regex> pattern;
    bool method_name = false;  // a name of the method table (MethodName)
    const json *min_items = nullptr, *max_items = nullptr;
    std::vector<const shape*> prefix;
    const shape* items = nullptr;
    std::vector<std::string> required;
    std::map<std::string, const shape*, std::less<>> properties;
    const shape* additional = nullptr;  // additionalProperties' shape
    bool closed = false;                // additionalProperties false
    const shape* names = nullptr;       // propertyNames
    const shape* ref = nullptr;
};

// Keywords the shapes may use; a shape file with another one fails every read loudly rather
// than be half checked.
const std::set<std::string> keywords = {"$ref",  "type",  "enum",   "properties", "required", "additionalProperties", "propertyNames",
                                        "items", "prefixItems", "minItems", "maxItems", "minimum", "pattern",
                                        "description", "title", "x-ts", "x-py"};
const std::map<std::string, value_type> types = {{"object", value_type::object}, {"array", value_type::array},
                                                  {"string", value_type::string}, {"boolean", value_type::boolean},
                                                  {"number", value_type::number}, {"integer", value_type::integer},
                                                  {"null", value_type::null}};

struct shapes {
    std::deque<shape> all;
    std::map<std::string, const shape*> by_name;

    const shape* compile(const json& s, const json& defs) {
        shape& out = all.emplace_back();
        for (const auto& item : s.items())
            if (!keywords.count(item.key())) throw error("src/mano/schema: a keyword \"" + item.key() + "\" that the history's reader does not know");
        if (const json* r = find(s, "$ref")) {
            const std::string name = r->get<std::string>().substr(std::string("#/$defs/").size());
            out.method_name = name == "MethodName";
            const auto it = by_name.find(name);
            out.ref = it != by_name.end() ? it->second : (by_name[name] = compile(defs.at(name), defs));
        }
        if (const json* t = find(s, "type")) {
            out.type_name = t->get<std::string>();
            const auto known = types.find(out.type_name);
            if (known == types.end()) throw error("src/mano/schema: a type \"" + out.type_name + "\" that the history's reader does not know");
            out.type = known->second;
        }
        out.allowed = find(s, "enum");
        out.minimum = find(s, "minimum");
        if (const json* p = find(s, "pattern")) out.pattern.emplace(p->get<std::string>());
        out.min_items = find(s, "minItems");
        out.max_items = find(s, "maxItems");
        if (const json* p = find(s, "prefixItems"))
            for (const auto& item : *p) out.prefix.push_back(compile(item, defs));
        if (const json* i = find(s, "items")) out.items = compile(*i, defs);
        if (const json* r = find(s, "required"))
            for (const auto& key : *r) out.required.push_back(key.get<std::string>());
        if (const json* p = find(s, "properties"))
            for (const auto& [key, sub] : p->items()) out.properties[key] = compile(sub, defs);
        if (const json* a = find(s, "additionalProperties")) {
            if (a->is_object()) out.additional = compile(*a, defs);
            out.closed = *a == false;
        }
        if (const json* n = find(s, "propertyNames")) out.names = compile(*n, defs);
        return &out;
    }
};

// Where a value is: its keys and indices from the prediction down.
using place = std::vector<std::variant<std::string_view, std::size_t>>;

std::string place_text(const place& at) {
    std::string out;
    for (const auto& step : at) {
        if (const auto* key = std::get_if<std::string_view>(&step)) out += (out.empty() ? "" : ".") + printable(*key, 64);
        else out += "[" + std::to_string(std::get<std::size_t>(step)) + "]";
    }
    return out;
}

std::string here(const place& at) { return at.empty() ? "its prediction" : "its prediction's " + place_text(at); }

// Whether a key is a name `s` allows (propertyNames).
bool key_allowed(std::string_view key, const shape& s) {
    if (s.ref && !key_allowed(key, *s.ref)) return false;
    if (s.method_name && !is_method(key)) return false;
    if (s.type != value_type::any && s.type != value_type::string) return false;
    if (s.allowed && std::find(s.allowed->begin(), s.allowed->end(), json(key)) == s.allowed->end()) return false;
    return !s.pattern || std::regex_search(key.begin(), key.end(), *s.pattern);
}

bool has_type(const json& v, value_type type) {
    switch (type) {
        case value_type::any: return true;
        case value_type::object: return v.is_object();
        case value_type::array: return v.is_array();
        case value_type::string: return v.is_string();
        case value_type::boolean: return v.is_boolean();
        case value_type::number: return v.is_number();
        case value_type::integer: return is_integer(v);
        case value_type::null: return v.is_null();
    }
    return false;
}

// What is wrong with `v`, at `at`, against the shape `s`; "" when nothing.
std::string problem(const json& v, const shape& s, place& at) {
    if (s.ref)
        if (std::string p = problem(v, *s.ref, at); !p.empty()) return p;
    if (s.method_name && !is_method(v.get_ref<const std::string&>())) return here(at) + " is not a method of mano's table";
    if (s.allowed && std::find(s.allowed->begin(), s.allowed->end(), v) == s.allowed->end()) return here(at) + " is not one of " + s.allowed->dump();
    if (!has_type(v, s.type)) return here(at) + " is not of type " + s.type_name;
    if (s.minimum && v.is_number() && v.get<double>() < s.minimum->get<double>()) return here(at) + " is below " + s.minimum->dump();
    if (s.pattern && v.is_string() && !std::regex_search(v.get_ref<const std::string&>(), *s.pattern)) return here(at) + " is not a name mano writes";
    if (v.is_array()) {
        if (s.min_items && v.size() < s.min_items->get<std::size_t>()) return here(at) + " has fewer than " + s.min_items->dump() + " items";
        if (s.max_items && v.size() > s.max_items->get<std::size_t>()) return here(at) + " has more than " + s.max_items->dump() + " items";
        for (std::size_t i = 0; i < v.size(); ++i) {
            const shape* sub = i < s.prefix.size() ? s.prefix[i] : s.items;
            if (!sub) continue;
            at.emplace_back(i);
            if (std::string p = problem(v[i], *sub, at); !p.empty()) return p;
            at.pop_back();
        }
    }
    if (!v.is_object()) return "";
    for (const auto& key : s.required)
        if (!v.contains(key)) return here(at) + " lacks \"" + key + "\"";
    for (const auto& [key, value] : v.items()) {
        const auto known = s.properties.find(key);
        const shape* sub = known != s.properties.end() ? known->second : s.additional;
        if ((s.names && !key_allowed(key, *s.names)) || (!sub && s.closed))
            return "its prediction holds the key \"" + printable(key, 64) + "\"" + (at.empty() ? "" : " in " + place_text(at)) +
                   ", which mano does not write";
        if (!sub) continue;
        at.emplace_back(std::string_view(key));
        if (std::string p = problem(value, *sub, at); !p.empty()) return p;
        at.pop_back();
    }
    return "";
}

struct limits_table {
    std::map<std::string, std::vector<column_limit>> columns;
    std::size_t largest = 0;
    json defs;        // the $defs of every shape file, one namespace
    json prediction;  // the Prediction shape less the keys an add never writes
    shapes compiled;
    const shape* prediction_shape = nullptr;
};

const limits_table& table() {
    // on the heap, built in place: the compiled shapes point into its JSON
    static const std::unique_ptr<limits_table> t = [] {
        auto made = std::make_unique<limits_table>();
        limits_table& out = *made;
        const json j = json::parse(limits_json);
        for (const auto& [name, columns] : j.at("columns").items())
            for (const auto& [column, limit] : columns.items()) {
                out.columns[name].push_back({column, limit.at("max_bytes").get<std::size_t>(), limit.at("why").get<std::string>()});
                out.largest = std::max(out.largest, out.columns[name].back().max_bytes);
            }
        out.defs = json::object();
        for (const char* text : shape_files) {
            const json file = json::parse(text);
            for (const auto& [name, shape] : file.at("$defs").items()) out.defs[name] = shape;
        }
        const json& p = j.at("prediction");
        out.prediction = out.defs.at(p.at("shape").get<std::string>());
        for (const auto& key : p.at("not_written")) {
            out.prediction.at("properties").erase(key.get<std::string>());
            auto& required = out.prediction.at("required");
            required.erase(std::remove(required.begin(), required.end(), key), required.end());
        }
        out.prediction_shape = out.compiled.compile(out.prediction, out.defs);
        return made;
    }();
    return *t;
}

}  // namespace

const std::vector<column_limit>& column_limits(const std::string& name) {
    static const std::vector<column_limit> none;
    const auto it = table().columns.find(name);
    return it == table().columns.end() ? none : it->second;
}

const column_limit& limit_of(const std::string& name, const std::string& column) {
    for (const auto& l : column_limits(name))
        if (l.column == column) return l;
    throw error("src/mano/schema/history_limits.json has no limit for " + name + "." + column);
}

std::size_t largest_value_bytes() {
    // the calibration's limit is the calibration reader's: a history holds the file mano read
    if (limit_of("calibrations", "calibration").max_bytes != io::calibration_max_bytes)
        throw error("src/mano/schema/history_limits.json: calibrations.calibration is not native/io/json.hpp's calibration_max_bytes");
    return table().largest;
}

error damaged(const std::string& path, const std::string& row, const std::string& what) {
    return error(path + ": the history is damaged (" + row + ": " + what + "); restore it from a backup or start a new one");
}

void check_value_sizes(sqlite3* db, const std::string& path, const std::string& name,
                       const std::function<std::string(std::int64_t)>& row) {
    const auto& limits = column_limits(name);
    std::string sql = "SELECT rowid";
    for (const auto& l : limits) sql += ", typeof(" + l.column + ")";  // typeof reads the header only
    detail::statement s(db, path, (sql + " FROM " + name + " ORDER BY rowid").c_str());
    // one handle a column, moved from row to row; each reads the value's size from the row's header
    struct handles {
        std::vector<sqlite3_blob*> blobs;
        ~handles() {
            for (auto* b : blobs) sqlite3_blob_close(b);
        }
    } h{std::vector<sqlite3_blob*>(limits.size(), nullptr)};
    while (s.step("cannot read the history")) {
        const std::int64_t rowid = s.integer(0);
        for (std::size_t c = 0; c < limits.size(); ++c) {
            const auto* type = reinterpret_cast<const char*>(sqlite3_column_text(s.handle(), static_cast<int>(c) + 1));
            if (!type || (std::string_view(type) != "text" && std::string_view(type) != "blob")) continue;
            sqlite3_blob*& b = h.blobs[c];
            const int rc = b ? sqlite3_blob_reopen(b, rowid) : sqlite3_blob_open(db, "main", name.c_str(), limits[c].column.c_str(), rowid, 0, &b);
            if (rc != SQLITE_OK) detail::fail(path, db, rc, "cannot read the history");
            const auto bytes = static_cast<std::size_t>(sqlite3_blob_bytes(b));
            const column_limit& l = limits[c];
            if (l.max_bytes == 0)
                throw damaged(path, row(rowid), "its " + l.column + " is text or a blob (" + std::to_string(bytes) + " bytes), where mano writes " + l.why);
            if (bytes > l.max_bytes)
                throw damaged(path, row(rowid), "its " + l.column + " is " + std::to_string(bytes) + " bytes, over the " + std::to_string(l.max_bytes) +
                                                    "-byte limit of " + name + "." + l.column + ": " + l.why);
        }
    }
}

std::string prediction_problem(const json& prediction) {
    place at;
    return problem(prediction, *table().prediction_shape, at);
}

}  // namespace history
}  // namespace mano

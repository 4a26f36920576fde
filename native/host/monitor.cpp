// The monitoring history's add and report (monitor.hpp): scoring as mano predict does, the points
// appended in one transaction, and the timeline read back with the core's rules.
#include "host/monitor.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "host/calibration_file.hpp"
#include "host/history.hpp"
#include "host/history_limits.hpp"
#include "host/scan.hpp"
#include "host/sha256.hpp"
#include "io/json.hpp"

namespace mano {
namespace history {

namespace {

using json = nlohmann::json;

// The state as a history keeps it: without the sections of the methods that keep every row
// (method_cost::keeps_rows: COT, COTT, MLLS), up to N x K numbers each; `mano merge` of stored
// states scores every other method (docs/monitor.md, "The file").
json mergeable_state(json state) {
    json& listed = state.at("options").at("methods");
    json kept = json::array();
    for (const auto& name : listed) {
        if (info_of(parse_method(name.get<std::string>())).cost == method_cost::keeps_rows) state.at("methods").erase(name.get<std::string>());
        else kept.push_back(name);
    }
    listed = kept;
    return state;
}

// The name of the points of `path`, before a chunk's [FIRST:END].
std::string point_label(const add_request& r, const std::string& path) {
    return r.name.empty() ? path : r.files.size() == 1 ? r.name : r.name + " (" + path + ")";
}

}  // namespace

added add(const add_request& r) {
    added out;
    out.time = r.at.empty() ? now_utc() : utc_time(r.at, r.at_option);
    if (r.files.empty()) throw error("no logit files to add: give at least one");
    {
        std::vector<std::string> inputs = r.files;
        inputs.push_back(r.calibration);
        std::error_code ec;
        if (std::filesystem::exists(r.history, ec))
            for (const auto& input : inputs)
                if (std::filesystem::equivalent(r.history, input, ec))
                    throw error(r.history + ": the history is one of the input files (" + input +
                                "); give the history file first, then the logit files");
    }
    // the points' names and files within what a report reads back (history_limits.json), before any row is scored
    const column_limit& name_limit = limit_of("points", "name");
    const column_limit& file_limit = limit_of("points", "file");
    for (const auto& path : r.files) {
        if (path.size() > file_limit.max_bytes)
            throw error(printable(path, 200) + ": a path of " + std::to_string(path.size()) + " bytes, over the " +
                        std::to_string(file_limit.max_bytes) + " bytes a history keeps for a file (" + file_limit.why + "); give a shorter path");
        const std::size_t chunk_suffix = r.chunk_size > 0 ? 43 : 0;  // "[FIRST:END]", two numbers of up to 20 digits
        if (point_label(r, path).size() + chunk_suffix > name_limit.max_bytes)
            throw error(r.name_option + ": the points' names would be " + std::to_string(point_label(r, path).size() + chunk_suffix) +
                        " bytes, over the " + std::to_string(name_limit.max_bytes) + " bytes a history keeps for a name; give a shorter one");
    }
    // a file that is there must be a history before any row is scored
    if (std::filesystem::exists(r.history)) store::for_writing(r.history);
    std::string cal_text;
    const calibration cal = host::read_calibration(r.calibration, &cal_text);
    const std::string cal_hash = host::sha256_hex(cal_text);
    const unsigned threads = host::thread_count(r.threads);

    point_spool points;
    for (const auto& path : r.files) {
        const auto reader = io::open_matrix(path, r.read);
        out.notes.insert(out.notes.end(), reader->notes().begin(), reader->notes().end());
        std::vector<std::string> unused;  // the notes of each chunk's size come below
        host::prediction_options(cal, path, reader->rows(), reader->cols(), r.input, unused);  // the input kind and K, first
        const std::size_t rows = reader->rows();
        const std::size_t step = r.chunk_size > 0 ? r.chunk_size : std::max<std::size_t>(rows, 1);
        const std::string label = point_label(r, path);
        for (std::size_t first = 0; first < rows || (first == 0 && r.chunk_size == 0); first += step) {
            const std::size_t end = std::min(rows, first + step);
            // as mano predict scores a file: the calibration's options for this size, one threaded scan
            const options opts = host::prediction_options(cal, path, end - first, reader->cols(), r.input, out.notes);
            new_point p;
            p.file = path;
            p.name = r.chunk_size > 0 ? label + "[" + std::to_string(first) + ":" + std::to_string(end) + "]" : label;
            if (r.chunk_size > 0) {
                p.chunk = first / step;
                p.first_row = first;
            }
            host::scan_inputs in;
            in.logits = reader.get();
            host::progress bar(p.name, end - first, !r.progress);
            try {
                const accumulator acc = host::scan(in, first, end, opts, threads, &bar);
                p.state = mergeable_state(acc.to_json());
                const result scored = acc.finalize();
                if (scored.looks_like_probabilities) out.notes.push_back(probabilities_warning(p.name, r.probabilities_setting));
                out.predictions.push_back(predict(cal, scored, 0.9));
            } catch (const error& e) {
                throw host::file_error(path, e);
            }
            p.prediction = out.predictions.back().to_json();
            out.names.push_back(p.name);
            points.add(p);
            // what the warnings read is kept, the rest is in the history: memory of a few bytes a point
            auto& methods = out.predictions.back().methods;
            for (auto it = methods.begin(); it != methods.end();) it = it->second.extrapolated ? std::next(it) : methods.erase(it);
            if (end == rows) break;
        }
    }
    if (points.size() == 0) throw error("no rows to add: every file is empty");
    auto s = store::for_writing(r.history);
    out.add = s.append(out.time, cal_hash, cal_text, points, r.inside);
    return out;
}

namespace {

// What a report reads of a calibration, read as the text goes (nlohmann's SAX interface): the
// recommended method and each method's link and slope, so that a calibration of up to
// calibrations.calibration's limit (256 MiB) takes no memory beyond its text.
class recommended_reader final : public json::json_sax_t {
public:
    std::optional<std::string> recommended;
    std::map<std::string, std::pair<std::string, std::optional<double>>, std::less<>> methods;  // link, slope

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t v) override { return number(static_cast<double>(v)); }
    bool number_unsigned(number_unsigned_t v) override { return number(static_cast<double>(v)); }
    bool number_float(number_float_t v, const string_t&) override { return number(v); }
    bool string(string_t& v) override {
        if (in_method("link")) methods[keys_[1]].first = v;
        else if (depth() == 1 && keys_[0] == "recommended") recommended = v;
        return true;
    }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return open(true); }
    bool key(string_t& k) override {
        if (depth() <= 3) keys_[depth() - 1] = k;
        return true;
    }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

private:
    std::vector<bool> objects_;  // each open container: an object?
    std::array<std::string, 3> keys_;  // the keys at depths 1 to 3
    std::size_t depth() const { return objects_.size(); }
    bool open(bool object) {
        objects_.push_back(object);
        if (depth() <= 3) keys_[depth() - 1].clear();
        return depth() <= io::json_max_depth;
    }
    bool close() {
        objects_.pop_back();
        return true;
    }
    // a value at methods.NAME.`key`, NAME a method of the table
    bool in_method(const char* key) const {
        if (depth() != 3 || !objects_[0] || !objects_[1] || !objects_[2] || keys_[0] != "methods" || keys_[2] != key) return false;
        return std::any_of(std::begin(method_table), std::end(method_table), [&](const method_info& m) { return keys_[1] == m.name; });
    }
    bool number(double v) {
        if (in_method("slope")) methods[keys_[1]].second = v;
        return true;
    }
};

// The recommended method of the calibration, and its line's slope where that is the slope at every
// score (the identity link, which the file leaves unsaid): the too-small rule's slope for points
// whose prediction does not carry its own (histories written before predictions had "slope").
std::optional<double> recommended_slope(const std::string& calibration_text, std::string* method_out) {
    recommended_reader r;
    if (!json::sax_parse(calibration_text, &r) || !r.recommended) return std::nullopt;
    const auto it = r.methods.find(*r.recommended);
    if (it == r.methods.end()) return std::nullopt;
    *method_out = it->first;
    return it->second.first.empty() || it->second.first == "identity" ? it->second.second : std::nullopt;
}

error damaged(const std::string& path, const stored_point& p, const std::string& what) {
    return history::damaged(path, "point " + std::to_string(p.id), what);
}

bool is_accuracy(const json& v) {
    return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0 && v.get<double>() <= 1;
}

// The point's estimate (nullptr when it has none), checked as far as a report reads it.
const json* checked_estimate(const std::string& path, const stored_point& p) {
    const json& pr = p.prediction;
    if (pr.contains("methods") && !pr.at("methods").is_object()) throw damaged(path, p, "its methods are not an object");
    const auto it = pr.find("estimate");
    if (it == pr.end() || it->is_null()) return nullptr;
    const json& e = *it;
    if (!e.is_object() || !e.contains("method") || !e.at("method").is_string()) throw damaged(path, p, "its estimate names no method");
    if (!e.contains("accuracy") || !is_accuracy(e.at("accuracy")))
        throw damaged(path, p, "its estimated accuracy is not a number in [0, 1]");
    const json* interval = e.contains("interval") ? &e.at("interval") : nullptr;
    if (!interval || !interval->is_array() || interval->size() != 2 || !is_accuracy(interval->at(0)) ||
        !is_accuracy(interval->at(1)) || interval->at(0).get<double>() > interval->at(1).get<double>())
        throw damaged(path, p, "its estimate's interval is not two numbers in [0, 1], lower first");
    return &e;
}

// A number of the noise method's entry: none when absent or null; finite (and >= 0 for a standard
// error) or the point is damaged.
std::optional<double> noise_number(const std::string& path, const stored_point& p, const json& m, const char* key, bool positive) {
    if (!m.is_object() || !m.contains(key) || m.at(key).is_null()) return std::nullopt;
    const json& v = m.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || (positive && v.get<double>() < 0))
        throw damaged(path, p, std::string("its ") + key + " is not a finite number" + (positive ? " >= 0" : ""));
    return v.get<double>();
}

std::string hex(const std::string& bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (const unsigned char c : bytes) out += {digits[c >> 4], digits[c & 15]};
    return out;
}

}  // namespace

void put_text(json& j, const std::string& key, const std::string& text) {
    // nlohmann's replacing dump marks each byte of a sequence that is not UTF-8 with U+FFFD
    json shown = json::parse(json(text).dump(-1, ' ', false, json::error_handler_t::replace));
    if (shown.get_ref<const std::string&>() != text) j[key + "_bytes"] = hex(text);
    j[key] = std::move(shown);
}

struct timeline::state {
    store history;
    std::string path, since;
    std::size_t reference = 0;  // the reference period's points
    std::string calibration;    // the reference period's
    std::size_t skipped = 0;    // points before `since`
    std::vector<std::size_t> alerts;
    bool latest_alerts = false, latest_changed = false;
    json summary;
};

timeline::timeline(const report_request& r) {
    // the times are checked before the history is read
    const std::string since = r.since.empty() ? "" : utc_time(r.since, r.since_option);
    const std::string until = r.reference_until.empty() ? "" : utc_time(r.reference_until, r.reference_until_option);
    const std::string choose_another = r.reference_option + " or " + r.reference_until_option + " TIME";
    s_.reset(new state{store::for_reading(r.history), r.history, since, 0, "", 0, {}, false, false, json()});
    state& st = *s_;
    const std::string& path = r.history;
    const auto total = static_cast<std::size_t>(st.history.count_points(""));
    if (total == 0) throw error(path + ": the history has no points yet; mano monitor add writes them");
    std::string chosen_by;
    if (r.reference > 0) {
        st.reference = r.reference;
        chosen_by = "the first " + std::to_string(r.reference) + " points";
    } else if (!until.empty()) {
        st.reference = static_cast<std::size_t>(st.history.count_points(until));
        chosen_by = "the points up to " + until;
        if (st.reference == 0)
            throw error(path + ": the reference period (" + chosen_by + ") holds no point: the first is at " +
                        st.history.first_time() + "; choose another with " + choose_another);
    } else {
        st.reference = static_cast<std::size_t>(st.history.first_add_points());
        chosen_by = "the first add's points";
    }
    const auto refused = [&](const error& e) {
        return error(path + ": " + e.what() + " (reference: " + chosen_by + "); choose another with " + choose_another);
    };

    // the first pass: the reference period's line, then the monitored points against it
    std::optional<monitoring::timeline_check> check;
    std::string noise_method;
    std::size_t index = 0;
    st.history.each_point("", [&](const stored_point& p) {
        if (index == 0) {
            st.calibration = p.calibration;
            const auto text = st.history.calibration(p.calibration);
            check.emplace(st.reference, 0.0, text ? recommended_slope(*text, &noise_method) : std::nullopt);
        }
        const json* estimate = checked_estimate(path, p);
        // the whole prediction is what an add writes (the later passes read the same snapshot)
        if (const std::string why = prediction_problem(p.prediction); !why.empty()) throw damaged(path, p, why);
        if (index < st.reference && p.calibration != st.calibration)
            throw error(path + ": the reference period (" + chosen_by + ") mixes calibrations (" + st.calibration.substr(0, 12) +
                        " and " + p.calibration.substr(0, 12) + "); choose a reference within one calibration with " +
                        choose_another);
        monitoring::point q;
        q.rows = static_cast<std::size_t>(p.n);
        if (p.calibration == st.calibration && estimate) {
            q.estimate = estimate->at("accuracy").get<double>();
            const json& m = p.prediction.value("methods", json::object()).value(noise_method, json());
            q.score_se = noise_number(path, p, m, "se", true);
            q.slope = noise_number(path, p, m, "slope", false);
        }
        try {
            check->add(q);
        } catch (const error& e) {
            throw refused(e);
        }
        if (!since.empty() && p.time < since) ++st.skipped;
        st.latest_changed = p.calibration != st.calibration;
        ++index;
    });
    monitoring::assessment assessment;
    try {
        assessment = check->finish();
    } catch (const error& e) {
        throw refused(e);
    }
    st.alerts = std::move(assessment.alerts);
    st.latest_alerts = !st.alerts.empty() && st.alerts.back() + 1 == index;
    // the alerts are written from st.alerts: as JSON numbers they would take twice the memory
    json& t = st.summary = assessment.to_json();
    t.erase("alerts");
    put_text(t, "history", path);
    t["reference"] = {{"points", st.reference}, {"chosen_by", chosen_by}, {"calibration", st.calibration}};
    if (!noise_method.empty()) t["noise_method"] = noise_method;
    if (!since.empty()) t["since"] = since;
    t["latest"] = {{"index", index - 1}, {"alert", st.latest_alerts}, {"calibration_changed", st.latest_changed}};
}

timeline::timeline(timeline&&) noexcept = default;
timeline::~timeline() = default;

const json& timeline::summary() const { return s_->summary; }
const std::vector<std::size_t>& timeline::alerts() const { return s_->alerts; }
bool timeline::latest_alerts() const { return s_->latest_alerts; }
bool timeline::latest_changed() const { return s_->latest_changed; }

void timeline::each_point(const std::function<void(const json&)>& each) const {
    const state& st = *s_;
    std::size_t index = st.skipped;
    st.history.each_point(st.since, [&](const stored_point& p) {
        const json* estimate = checked_estimate(st.path, p);
        json j = {{"index", index}, {"id", p.id}, {"add", p.add_id}, {"time", p.time}};
        put_text(j, "name", p.name);
        put_text(j, "file", p.file);
        if (p.chunk) j["chunk"] = *p.chunk;
        if (p.first_row) j["first_row"] = *p.first_row;
        j["n"] = p.n;
        j["calibration"] = p.calibration;
        j["reference"] = index < st.reference;
        j["estimate"] = estimate ? *estimate : json();
        for (const char* key : {"methods", "shift", "level"})
            if (p.prediction.contains(key)) j[key] = p.prediction.at(key);
        j["alert"] = std::binary_search(st.alerts.begin(), st.alerts.end(), index);
        j["calibration_changed"] = p.calibration != st.calibration;
        ++index;
        each(j);
    });
}

void timeline::write_json(std::ostream& out) const {
    // the keys in nlohmann's order (sorted), "alerts" and "points" among them written as they come
    std::vector<std::string> keys = {"alerts", "points"};
    for (const auto& item : s_->summary.items()) keys.push_back(item.key());
    std::sort(keys.begin(), keys.end());
    const auto text = [](const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); };
    out << '{';
    for (std::size_t k = 0; k < keys.size(); ++k) {
        out << (k ? "," : "") << text(json(keys[k])) << ':';
        if (keys[k] == "alerts") {
            out << '[';
            for (std::size_t i = 0; i < s_->alerts.size(); ++i) out << (i ? "," : "") << s_->alerts[i];
            out << ']';
        } else if (keys[k] == "points") {
            out << '[';
            bool first = true;
            each_point([&](const json& p) {
                out << (first ? "" : ",") << text(p);
                first = false;
            });
            out << ']';
        } else {
            out << text(s_->summary.at(keys[k]));
        }
    }
    out << '}';
}

}  // namespace history
}  // namespace mano

// The monitoring history's add and report (monitor.hpp): scoring as mano predict does, the points
// appended in one transaction, and the timeline read back with the core's rules.
#include "host/monitor.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <optional>
#include <regex>

#include "host/calibration_file.hpp"
#include "host/history.hpp"
#include "host/scan.hpp"
#include "host/sha256.hpp"

namespace mano {
namespace history {

namespace {

using json = nlohmann::json;

std::string format_utc(std::time_t t) {
    std::tm parts{};
    gmtime_r(&t, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

}  // namespace

std::string utc_time(const std::string& text, const std::string& what) {
    static const std::regex iso(
        R"((\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?)");
    std::smatch m;
    const auto bad = [&](const std::string& why) {
        return error(what + " '" + printable(text) + "': " + why +
                     "; give an ISO 8601 time such as 2026-11-27, 2026-11-27T06:00:00Z or 2026-11-27T08:00+02:00");
    };
    if (!std::regex_match(text, m, iso)) throw bad("not an ISO 8601 date or time");
    const auto number = [&](int i) { return m[i].matched ? std::stoi(m[i].str()) : 0; };
    std::tm parts{};
    parts.tm_year = number(1) - 1900;
    parts.tm_mon = number(2) - 1;
    parts.tm_mday = number(3);
    parts.tm_hour = number(4);
    parts.tm_min = number(5);
    parts.tm_sec = number(6);
    const int year = number(1), month = number(2), day = number(3);
    if (year < 1970 || month < 1 || month > 12 || day < 1 || parts.tm_hour > 23 || parts.tm_min > 59 || parts.tm_sec > 59)
        throw bad("a field is out of range (from 1970 on)");
    std::time_t t = timegm(&parts);
    std::tm check{};
    gmtime_r(&t, &check);
    if (check.tm_mday != day) throw bad("no such day");
    if (m[7].matched && m[7].str() != "Z") {
        std::string offset = m[7].str();
        offset.erase(std::remove(offset.begin(), offset.end(), ':'), offset.end());
        const int hours = std::stoi(offset.substr(1, 2)), minutes = std::stoi(offset.substr(3, 2));
        if (hours > 23 || minutes > 59) throw bad("the UTC offset is out of range");
        const long seconds = (hours * 60L + minutes) * 60L;
        t -= offset[0] == '+' ? seconds : -seconds;
    }
    return format_utc(t);
}

added add(const add_request& r) {
    added out;
    out.time = r.at.empty() ? format_utc(std::time(nullptr)) : utc_time(r.at, r.at_option);
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
    // a file that is there must be a history before any row is scored
    if (std::filesystem::exists(r.history)) store::for_writing(r.history);
    std::string cal_text;
    const calibration cal = host::read_calibration(r.calibration, &cal_text);
    const std::string cal_hash = host::sha256_hex(cal_text);
    const unsigned threads = host::thread_count(r.threads);

    std::vector<new_point> points;
    for (const auto& path : r.files) {
        const auto reader = io::open_matrix(path, r.read);
        out.notes.insert(out.notes.end(), reader->notes().begin(), reader->notes().end());
        std::vector<std::string> unused;  // the notes of each chunk's size come below
        host::prediction_options(cal, path, reader->rows(), reader->cols(), r.input, unused);  // the input kind and K, first
        const std::size_t rows = reader->rows();
        const std::size_t step = r.chunk_size > 0 ? r.chunk_size : std::max<std::size_t>(rows, 1);
        const std::string label = r.name.empty() ? path : r.files.size() == 1 ? r.name : r.name + " (" + path + ")";
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
                p.state = acc.to_json();
                const result scored = acc.finalize();
                if (scored.looks_like_probabilities) out.notes.push_back(probabilities_warning(p.name, r.probabilities_setting));
                out.predictions.push_back(predict(cal, scored, 0.9));
            } catch (const error& e) {
                throw host::file_error(path, e);
            }
            p.prediction = out.predictions.back().to_json();
            out.names.push_back(p.name);
            points.push_back(std::move(p));
            if (end == rows) break;
        }
    }
    if (points.empty()) throw error("no rows to add: every file is empty");
    auto s = store::for_writing(r.history);
    out.add = s.append(out.time, cal_hash, cal_text, points, r.inside);
    return out;
}

namespace {

// The reference period: how many leading points, and what chose them.
struct reference_period {
    std::size_t points = 0;
    std::string chosen_by;
};

reference_period choose_reference(const report_request& r, const std::vector<stored_point>& points) {
    if (r.reference > 0) return {r.reference, "the first " + std::to_string(r.reference) + " points"};
    if (!r.reference_until.empty()) {
        const std::string until = utc_time(r.reference_until, r.reference_until_option);
        std::size_t n = 0;
        while (n < points.size() && points[n].time <= until) ++n;
        return {n, "the points up to " + until};
    }
    std::size_t n = 0;
    while (n < points.size() && points[n].add_id == points.front().add_id) ++n;
    return {n, "the first add's points"};
}

// The recommended method of the calibration, and its line's slope where that is the slope at every
// score (the identity link): the too-small rule's slope for points whose prediction does not carry
// its own (histories written before predictions had "slope").
std::optional<double> recommended_slope(const std::string& calibration_text, std::string* method_out) {
    try {
        const calibration cal = calibration::from_json(json::parse(calibration_text));
        if (!cal.recommended) return std::nullopt;
        for (const auto& mc : cal.methods)
            if (mc.m == *cal.recommended) {
                *method_out = method_name(mc.m);
                if (mc.link == link::identity) return mc.fit.slope;
                return std::nullopt;
            }
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

}  // namespace

report read_report(const report_request& r) {
    // the times are checked before the history is read
    const std::string since = r.since.empty() ? "" : utc_time(r.since, r.since_option);
    if (!r.reference_until.empty()) utc_time(r.reference_until, r.reference_until_option);
    const std::string choose_another = r.reference_option + " or " + r.reference_until_option + " TIME";
    const auto s = store::for_reading(r.history);
    const std::string& path = r.history;
    const auto points = s.points();
    if (points.empty()) throw error(path + ": the history has no points yet; mano monitor add writes them");
    const reference_period reference = choose_reference(r, points);
    const std::string& calibration_hash = points.front().calibration;
    for (std::size_t i = 0; i < reference.points && i < points.size(); ++i)
        if (points[i].calibration != calibration_hash)
            throw error(path + ": the reference period (" + reference.chosen_by + ") mixes calibrations (" +
                        calibration_hash.substr(0, 12) + " and " + points[i].calibration.substr(0, 12) +
                        "); choose a reference within one calibration with " + choose_another);
    std::string slope_method;
    const auto text = s.calibration(calibration_hash);
    const std::optional<double> slope = text ? recommended_slope(*text, &slope_method) : std::nullopt;

    std::vector<monitoring::point> core;
    for (const auto& p : points) {
        monitoring::point q;
        q.rows = static_cast<std::size_t>(p.n);
        const json& estimate = p.prediction.value("estimate", json());
        if (p.calibration == calibration_hash && estimate.is_object()) {
            q.estimate = estimate.at("accuracy").get<double>();
            const json& m = p.prediction.value("methods", json::object()).value(slope_method, json());
            if (m.is_object() && m.contains("se") && m.at("se").is_number()) q.score_se = m.at("se").get<double>();
            if (m.is_object() && m.contains("slope") && m.at("slope").is_number()) q.slope = m.at("slope").get<double>();
        }
        core.push_back(q);
    }
    monitoring::assessment assessment;
    try {
        assessment = monitoring::assess(core, reference.points, 0, slope);
    } catch (const error& e) {
        throw error(path + ": " + e.what() + " (reference: " + reference.chosen_by +
                    "); choose another with " + choose_another);
    }

    report t;
    t.timeline = assessment.to_json();
    json listed = json::array();
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto& p = points[i];
        const bool alert = std::find(assessment.alerts.begin(), assessment.alerts.end(), i) != assessment.alerts.end();
        const bool changed = p.calibration != calibration_hash;
        if (i + 1 == points.size()) t.latest_alerts = alert, t.latest_changed = changed;
        if (!since.empty() && p.time < since) continue;
        json j = {{"index", i}, {"id", p.id}, {"add", p.add_id}, {"time", p.time}, {"name", p.name}, {"file", p.file}};
        if (p.chunk) j["chunk"] = *p.chunk;
        if (p.first_row) j["first_row"] = *p.first_row;
        j["n"] = p.n;
        j["calibration"] = p.calibration;
        j["reference"] = i < reference.points;
        j["estimate"] = p.prediction.value("estimate", json());
        for (const char* key : {"methods", "shift", "level"})
            if (p.prediction.contains(key)) j[key] = p.prediction.at(key);
        j["alert"] = alert;
        j["calibration_changed"] = changed;
        listed.push_back(j);
    }
    t.timeline["history"] = path;
    t.timeline["points"] = listed;
    t.timeline["reference"] = {{"points", reference.points}, {"chosen_by", reference.chosen_by}, {"calibration", calibration_hash}};
    if (!slope_method.empty()) t.timeline["noise_method"] = slope_method;
    if (!since.empty()) t.timeline["since"] = since;
    t.timeline["latest"] = {{"index", points.size() - 1}, {"alert", t.latest_alerts}, {"calibration_changed", t.latest_changed}};
    return t;
}

}  // namespace history
}  // namespace mano

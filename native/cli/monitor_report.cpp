// `mano monitor report`: the history's timeline with the core's monitoring rules
// (src/mano/workflow/monitoring.hpp: the alert line mean - 3 sd of the reference period, the points below
// it, the too-small warning), as text, Markdown or JSON; exit status 3 when the latest point
// alerts. A point scored with another calibration than the reference period's is marked and not
// compared.
#include <algorithm>
#include <iostream>
#include <sstream>

#include "cli/monitor_commands.hpp"
#include "cli/output.hpp"
#include "cli/plot.hpp"
#include "host/history.hpp"

namespace mano {
namespace cli {

namespace {

using json = nlohmann::json;

std::string percent(double x) { return fixed(100 * x, 1) + "%"; }

// The reference period: how many leading points, and what chose them.
struct reference_period {
    std::size_t points = 0;
    std::string chosen_by;
};

reference_period choose_reference(const monitor_report_command& c, const std::vector<history::stored_point>& points) {
    if (c.reference > 0) return {c.reference, "--reference " + std::to_string(c.reference)};
    if (!c.reference_until.empty()) {
        const std::string until = utc_time(c.reference_until, "--reference-until");
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

struct timeline {
    json report;
    bool latest_alerts = false;
    bool latest_changed = false;
};

timeline assess_history(const monitor_report_command& c, const std::string& path, const history::store& store) {
    const auto points = store.points();
    if (points.empty()) throw error(path + ": the history has no points yet; mano monitor add writes them");
    const reference_period reference = choose_reference(c, points);
    const std::string& calibration_hash = points.front().calibration;
    for (std::size_t i = 0; i < reference.points && i < points.size(); ++i)
        if (points[i].calibration != calibration_hash)
            throw error(path + ": the reference period (" + reference.chosen_by + ") mixes calibrations (" +
                        calibration_hash.substr(0, 12) + " and " + points[i].calibration.substr(0, 12) +
                        "); choose a reference within one calibration with --reference N or --reference-until TIME");
    std::string slope_method;
    const auto text = store.calibration(calibration_hash);
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
                    "); choose another with --reference N or --reference-until TIME");
    }

    timeline t;
    t.report = assessment.to_json();
    const std::string since = c.since.empty() ? "" : utc_time(c.since, "--since");
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
    t.report["history"] = path;
    t.report["points"] = listed;
    t.report["reference"] = {{"points", reference.points}, {"chosen_by", reference.chosen_by}, {"calibration", calibration_hash}};
    if (!slope_method.empty()) t.report["noise_method"] = slope_method;
    if (!since.empty()) t.report["since"] = since;
    t.report["latest"] = {{"index", points.size() - 1}, {"alert", t.latest_alerts}, {"calibration_changed", t.latest_changed}};
    return t;
}

std::string status_of(const json& p) {
    if (p.at("reference").get<bool>()) return "reference";
    if (p.at("calibration_changed").get<bool>()) return "other calibration: not compared";
    if (p.at("estimate").is_null()) return "no estimate";
    return p.at("alert").get<bool>() ? "ALERT" : "ok";
}

// The words above and below the table, the same in text and Markdown.
std::vector<std::string> summary_lines(const json& r) {
    const json& line = r.at("threshold");
    const json& ref = r.at("reference");
    std::vector<std::string> out;
    out.push_back("reference: " + ref.at("chosen_by").get<std::string>() + " (" + std::to_string(ref.at("points").get<std::size_t>()) +
                  " points), calibration " + ref.at("calibration").get<std::string>().substr(0, 12));
    out.push_back("alert line: " + percent(line.at("value").get<double>()) + " (reference mean " + percent(line.at("mean").get<double>()) +
                  ", sd " + percent(line.at("sd").get<double>()) + ", mean - 3 sd)");
    if (r.contains("noise")) {
        const json& n = r.at("noise");
        out.push_back("warning: points of " + std::to_string(n.at("rows").get<std::size_t>()) + " rows are small for " +
                      r.value("noise_method", std::string("the recommended method")) +
                      ": the score's sampling noise alone moves the estimate by +/-" + percent(n.at("half_width").get<double>()) +
                      " (90%); about " + std::to_string(n.at("rows_needed").get<std::size_t>()) + " rows per point bring it to +/-" +
                      percent(n.at("limit").get<double>()));
    }
    return out;
}

std::string latest_line(const json& r) {
    const json& latest = r.at("latest");
    const std::size_t alerts = r.at("alerts").size();
    std::string text = std::to_string(alerts) + " point" + (alerts == 1 ? "" : "s") + " below the alert line; latest point: ";
    if (latest.at("calibration_changed").get<bool>()) return text + "scored with another calibration, not compared";
    return text + (latest.at("alert").get<bool>() ? "ALERT" : "ok");
}

std::string text_report(const json& r, bool markdown) {
    std::vector<std::vector<std::string>> rows = {{"time", "name", "n", "method", "estimate", "interval", "status"}};
    for (const auto& p : r.at("points")) {
        const json& e = p.at("estimate");
        const bool has = e.is_object();
        rows.push_back({p.at("time").get<std::string>(), p.at("name").get<std::string>(), std::to_string(p.at("n").get<std::int64_t>()),
                        has ? e.at("method").get<std::string>() : "-", has ? percent(e.at("accuracy").get<double>()) : "-",
                        has ? "[" + percent(e.at("interval").at(0).get<double>()) + ", " + percent(e.at("interval").at(1).get<double>()) + "]"
                            : "-",
                        status_of(p)});
    }
    std::ostringstream out;
    const auto lines = summary_lines(r);
    if (markdown) {
        out << "## Monitoring history " << r.at("history").get<std::string>() << "\n\n";
        for (const auto& l : lines) out << "- " << l << '\n';
        out << '\n';
        for (std::size_t i = 0; i < rows.size(); ++i) {
            out << '|';
            for (const auto& cell : rows[i]) {
                std::string escaped;
                for (const char ch : cell) escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
                out << ' ' << escaped << " |";
            }
            out << '\n';
            if (i == 0) out << "|---|---|---:|---|---:|---|---|\n";
        }
        out << "\n" << latest_line(r) << '\n';
        return out.str();
    }
    out << "history " << r.at("history").get<std::string>() << '\n';
    for (const auto& l : lines) out << l << '\n';
    std::vector<std::size_t> width(rows[0].size(), 0);
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            const std::string pad(width[i] - row[i].size(), ' ');
            const bool left = i == 0 || i == 1 || i == 3 || i == 6;
            line += (i ? "  " : "") + (left ? row[i] + (i + 1 == row.size() ? "" : pad) : pad + row[i]);
        }
        out << line << '\n';
    }
    out << latest_line(r) << '\n';
    return out.str();
}

}  // namespace

int run_monitor_report(monitor_report_command& c) {
    if (c.json && c.markdown) throw error("--json and --markdown each choose the output; give one of them");
    for (const auto& [time, flag] : {std::make_pair(c.since, "--since"), std::make_pair(c.reference_until, "--reference-until")})
        if (!time.empty()) utc_time(time, flag);  // checked before the history is read
    // never over the history, nor over its WAL and shared-memory files
    if (!c.output.empty()) refuse_overwriting_inputs(c.output, {c.history, c.history + "-wal", c.history + "-shm"}, "-o");
    const auto store = history::store::for_reading(c.history);
    const timeline t = assess_history(c, c.history, store);
    const std::string text = c.json ? t.report.dump() + "\n" : text_report(t.report, c.markdown);
    if (c.output.empty()) std::cout << text;
    else write_file(c.output, text);
    if (t.latest_changed) warn(c.history + ": the latest point was scored with another calibration than the reference period's; it is not compared");
    return t.latest_alerts ? monitor_alert_status : 0;
}

}  // namespace cli
}  // namespace mano

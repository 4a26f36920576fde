// `mano monitor report`: the history's timeline (native/host/monitor.hpp, with the core's
// monitoring rules: the alert line mean - 3 sd of the reference period, the points below it, the
// too-small warning) as text, Markdown or JSON; exit status 3 when the latest point alerts. A point
// scored with another calibration than the reference period's is marked and not compared.
#include <algorithm>
#include <iostream>
#include <sstream>

#include "cli/monitor_commands.hpp"
#include "cli/output.hpp"
#include "cli/plot.hpp"
#include "host/monitor.hpp"

namespace mano {
namespace cli {

namespace {

using json = nlohmann::json;

std::string percent(double x) { return fixed(100 * x, 1) + "%"; }

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
    const auto points = ref.at("points").get<std::size_t>();
    out.push_back("reference: " + ref.at("chosen_by").get<std::string>() + " (" + std::to_string(points) +
                  (points == 1 ? " point" : " points") + "), calibration " + ref.at("calibration").get<std::string>().substr(0, 12));
    if (!line.contains("value"))
        out.push_back("alert line: none yet (it needs 2 reference points with an estimate)");
    else
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

std::string latest_line(const json& r, std::size_t alerts) {
    if (r.value("waiting", false))
        return "not enough points yet: every point is in the reference period; the points added after it are compared with "
               "its alert line";
    const json& latest = r.at("latest");
    std::string text = std::to_string(alerts) + " point" + (alerts == 1 ? "" : "s") + " below the alert line; latest point: ";
    if (latest.at("calibration_changed").get<bool>()) return text + "scored with another calibration, not compared";
    return text + (latest.at("alert").get<bool>() ? "ALERT" : "ok");
}

// Text from the history as it is, escaped as every message is: a name that is not UTF-8 comes from
// its bytes (KEY_bytes, in hex), so they show as \xNN rather than as the JSON's U+FFFD.
std::string shown(const json& j, const std::string& key) {
    if (!j.contains(key + "_bytes")) return printable(j.at(key).get<std::string>(), 200);
    const std::string hex = j.at(key + "_bytes").get<std::string>();
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return printable(bytes, 200);
}

// A point's cells, each escaped (printable): a name or path from the history cannot move the
// cursor, retitle the terminal or split the line into a forged one.
std::vector<std::string> cells_of(const json& p) {
    const json& e = p.at("estimate");
    const bool has = e.is_object();
    std::vector<std::string> row = {p.at("time").get<std::string>(), shown(p, "name"), std::to_string(p.at("n").get<std::int64_t>()),
                                    has ? e.at("method").get<std::string>() : "-", has ? percent(e.at("accuracy").get<double>()) : "-",
                                    has ? "[" + percent(e.at("interval").at(0).get<double>()) + ", " +
                                              percent(e.at("interval").at(1).get<double>()) + "]"
                                        : "-",
                                    status_of(p)};
    for (std::size_t i = 2; i < row.size(); ++i) row[i] = printable(row[i], 200);
    return row;
}

const std::vector<std::string> header = {"time", "name", "n", "method", "estimate", "interval", "status"};

// The report in text or Markdown, the points read from the history as they are written (twice for
// text: the columns' widths, then the rows).
void text_report(const history::timeline& t, bool markdown, std::ostream& out) {
    const json& r = t.summary();
    const std::string history = shown(r, "history");
    const auto lines = summary_lines(r);
    if (markdown) {
        const auto row = [&](const std::vector<std::string>& cells) {
            out << '|';
            for (const auto& cell : cells) {
                std::string escaped;
                for (const char ch : cell) escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
                out << ' ' << escaped << " |";
            }
            out << '\n';
        };
        std::string title;
        for (const char ch : history) title += ch == '|' ? std::string("\\|") : std::string(1, ch);
        out << "## Monitoring history " << title << "\n\n";
        for (const auto& l : lines) out << "- " << l << '\n';
        out << '\n';
        row(header);
        out << "|---|---|---:|---|---:|---|---|\n";
        t.each_point([&](const json& p) { row(cells_of(p)); });
        out << "\n" << latest_line(r, t.alerts().size()) << '\n';
        return;
    }
    out << "history " << history << '\n';
    for (const auto& l : lines) out << l << '\n';
    std::vector<std::size_t> width(header.size(), 0);
    const auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    };
    measure(header);
    t.each_point([&](const json& p) { measure(cells_of(p)); });
    const auto print = [&](const std::vector<std::string>& row) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            const std::string pad(width[i] - row[i].size(), ' ');
            const bool left = i == 0 || i == 1 || i == 3 || i == 6;
            line += (i ? "  " : "") + (left ? row[i] + (i + 1 == row.size() ? "" : pad) : pad + row[i]);
        }
        out << line << '\n';
    };
    print(header);
    t.each_point([&](const json& p) { print(cells_of(p)); });
    out << latest_line(r, t.alerts().size()) << '\n';
}

}  // namespace

int run_monitor_report(monitor_report_command& c) {
    if (c.json && c.markdown) throw error("--json and --markdown each choose the output; give one of them");
    // never over the history, nor over its WAL and shared-memory files
    if (!c.output.empty()) refuse_overwriting_inputs(c.output, {c.history, c.history + "-wal", c.history + "-shm"}, "-o");
    history::report_request r;
    r.history = c.history;
    r.reference = c.reference;
    r.reference_until = c.reference_until;
    r.since = c.since;
    const history::timeline t(r);
    const auto write = [&](std::ostream& out) {
        if (c.json) {
            t.write_json(out);
            out << '\n';
        } else {
            text_report(t, c.markdown, out);
        }
    };
    if (c.output.empty()) {
        write(std::cout);
    } else {
        std::ostringstream text;
        write(text);
        write_file(c.output, text.str());
    }
    if (t.latest_changed()) warn(c.history + ": the latest point was scored with another calibration than the reference period's; it is not compared");
    return t.latest_alerts() ? monitor_alert_status : 0;
}

}  // namespace cli
}  // namespace mano

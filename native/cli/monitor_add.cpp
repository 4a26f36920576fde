// `mano monitor` on the command line, its times, and `mano monitor add`: each file (or chunk)
// scored and predicted exactly as `mano predict` does it, then appended to the history in one
// transaction.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/monitor_commands.hpp"
#include "cli/output.hpp"
#include "host/history.hpp"
#include "host/scan.hpp"
#include "host/sha256.hpp"

namespace mano {
namespace cli {

namespace {

std::string format_utc(std::time_t t) {
    std::tm parts{};
    gmtime_r(&t, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

// The calibration file's bytes, for its identity (read_calibration has checked its size).
std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in && !in.eof()) throw error(path + ": cannot read the calibration file");
    return bytes.str();
}

// A test hook: MANO_MONITOR_TEST_PAUSE_MS=T makes an add say so on stderr and wait T ms inside
// its transaction, after its first point, so that a test can kill it there
// (tests/cli/test_monitor.py). Unset, it does nothing.
std::function<void()> pause_inside_transaction() {
    const char* value = std::getenv("MANO_MONITOR_TEST_PAUSE_MS");
    if (!value || !*value) return {};
    const long ms = std::strtol(value, nullptr, 10);
    return [ms] {
        std::cerr << "mano: test pause inside the add's transaction" << std::endl;
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    };
}

}  // namespace

std::string utc_time(const std::string& text, const std::string& flag) {
    static const std::regex iso(
        R"((\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?)");
    std::smatch m;
    const auto bad = [&](const std::string& why) {
        return error(flag + " '" + printable(text) + "': " + why +
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

CLI::App* add_monitor_command(CLI::App& app, monitor_command& c) {
    auto* monitor = app.add_subcommand("monitor", "A monitoring history in one SQLite file: add batches' estimates, report "
                                                  "the timeline with alerts (docs/monitor.md)");
    monitor->require_subcommand(1);

    auto& a = c.add_args;
    c.add = monitor->add_subcommand("add", "Score files as mano predict does and append one point per file (or chunk) "
                                           "to the history, in one transaction");
    c.add->add_option("history", a.history, "the history file (SQLite; created when absent)")->required();
    c.add->add_option("files", a.files, "logit files, one batch each")->required()->check(CLI::ExistingFile);
    c.add->add_option("--calibration", a.calibration, "cal.json from mano calibrate")->required()->check(CLI::ExistingFile);
    c.add->add_option("--at", a.at, "the batch's time, ISO 8601 (UTC unless it has an offset; default: now)");
    c.add->add_option("--name", a.name, "the points' name (default: each file's path)");
    c.add->add_option("--chunk-size", a.chunk_size, "one point per consecutive chunk of R rows of each file")
        ->check(whole_number(true));
    a.input.add_to(c.add);

    auto& r = c.report_args;
    c.report = monitor->add_subcommand("report", "The history's timeline with the alert line of a reference period (mean - "
                                                 "3 sd); exit status 3 when the latest point alerts");
    c.report->add_option("history", r.history, "the history file")->required();
    c.report->add_flag("--json", r.json, "print the timeline as JSON");
    c.report->add_flag("--markdown", r.markdown, "print the timeline as Markdown");
    auto* reference = c.report->add_option("--reference", r.reference,
                                           "the reference period: the first N points (default: the first add's points)")
                          ->check(whole_number(true));
    c.report->add_option("--reference-until", r.reference_until, "the reference period: the points up to this time (ISO 8601)")
        ->excludes(reference);
    c.report->add_option("--since", r.since, "list only the points from this time on (ISO 8601); the reference stays");
    c.report->add_option("-o,--output", r.output, "write the report here (atomically) instead of printing it");
    return monitor;
}

int run_monitor(monitor_command& c) {
    if (c.add->parsed()) return run_monitor_add(c.add_args);
    return run_monitor_report(c.report_args);
}

int run_monitor_add(monitor_add_command& c) {
    c.input.finish();
    const std::string time = c.at.empty() ? format_utc(std::time(nullptr)) : utc_time(c.at, "--at");
    {
        std::vector<std::string> inputs = c.files;
        inputs.push_back(c.calibration);
        std::error_code ec;
        if (std::filesystem::exists(c.history, ec))
            for (const auto& input : inputs)
                if (std::filesystem::equivalent(c.history, input, ec))
                    throw error(c.history + ": the history is one of the input files (" + input +
                                "); give the history file first, then the logit files");
    }
    // a file that is there must be a history before any row is scored
    if (std::filesystem::exists(c.history)) history::store::for_writing(c.history);
    const calibration cal = read_calibration(c.calibration);
    const std::string cal_text = file_bytes(c.calibration);
    const std::string cal_hash = host::sha256_hex(cal_text);
    const unsigned threads = host::thread_count(c.input.threads);

    std::vector<history::new_point> points;
    std::vector<std::string> names;
    std::vector<set_prediction> predictions;
    for (const auto& path : c.files) {
        const auto reader = io::open_matrix(path, c.input.read);
        if (reader->cols() != cal.k)
            throw host::file_error(path, error("the logits have " + std::to_string(reader->cols()) +
                                               " classes but the calibration was fitted on logits with " + std::to_string(cal.k)));
        const std::size_t rows = reader->rows();
        const std::size_t step = c.chunk_size > 0 ? c.chunk_size : std::max<std::size_t>(rows, 1);
        const std::string label = c.name.empty() ? path : c.files.size() == 1 ? c.name : c.name + " (" + path + ")";
        for (std::size_t first = 0; first < rows || (first == 0 && c.chunk_size == 0); first += step) {
            const std::size_t end = std::min(rows, first + step);
            // as mano predict scores a file: the calibration's options for this size, one threaded scan
            const options opts = prediction_options(cal, path, end - first, reader->cols(), c.input.quiet);
            history::new_point p;
            p.file = path;
            p.name = c.chunk_size > 0 ? label + "[" + std::to_string(first) + ":" + std::to_string(end) + "]" : label;
            if (c.chunk_size > 0) {
                p.chunk = first / step;
                p.first_row = first;
            }
            host::scan_inputs in;
            in.logits = reader.get();
            host::progress bar(p.name, end - first, c.input.quiet);
            try {
                const accumulator acc = host::scan(in, first, end, opts, threads, &bar);
                p.state = acc.to_json();
                predictions.push_back(predict(cal, acc.finalize(), 0.9));
            } catch (const error& e) {
                throw host::file_error(path, e);
            }
            p.prediction = predictions.back().to_json();
            names.push_back(p.name);
            points.push_back(std::move(p));
            if (end == rows) break;
        }
    }
    if (points.empty()) throw error("no rows to add: every file is empty");
    warn_extrapolation(names, predictions);
    auto store = history::store::for_writing(c.history);
    const auto add = store.append(time, cal_hash, cal_text, points, pause_inside_transaction());
    if (!c.input.quiet)
        std::cerr << "mano: added " << points.size() << " point" << (points.size() == 1 ? "" : "s") << " at " << time << " to "
                  << c.history << " (add " << add << ")\n";
    return 0;
}

}  // namespace cli
}  // namespace mano

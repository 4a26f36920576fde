// `mano monitor` on the command line, and `mano monitor add` (native/host/monitor.hpp: each file
// or chunk scored and predicted exactly as `mano predict` does it, then appended to the history in
// one transaction).
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/monitor_commands.hpp"
#include "cli/output.hpp"
#include "host/monitor.hpp"

namespace mano {
namespace cli {

namespace {

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
    history::add_request r;
    r.history = c.history;
    r.files = c.files;
    r.calibration = c.calibration;
    r.at = c.at;
    r.name = c.name;
    r.chunk_size = c.chunk_size;
    r.read = c.input.read;
    r.input = c.input.input;
    r.threads = c.input.threads;
    r.progress = !c.input.quiet;
    r.inside = pause_inside_transaction();
    const history::added a = history::add(r);
    if (!c.input.quiet)
        for (const auto& note : a.notes) warn(note);
    warn_extrapolation(a.names, a.predictions);
    if (!c.input.quiet)
        std::cerr << "mano: added " << a.names.size() << " point" << (a.names.size() == 1 ? "" : "s") << " at " << a.time
                  << " to " << printable(c.history) << " (add " << a.add << ")\n";
    return 0;
}

}  // namespace cli
}  // namespace mano

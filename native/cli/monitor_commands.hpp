#pragma once
// `mano monitor add` and `mano monitor report`: a monitoring history in one SQLite file
// (native/host/monitor.hpp, docs/monitor.md). add scores files as mano predict does and appends
// one point per file or chunk; report gives the timeline with the core's alert rules
// (src/mano/workflow/monitoring.hpp) and exits 3 when the latest point alerts.

#include <cstddef>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"

namespace mano {
namespace cli {

// The exit status of `mano monitor report` when the latest point is below the alert line.
inline constexpr int monitor_alert_status = 3;

struct monitor_add_command {
    std::string history;
    std::vector<std::string> files;
    std::string calibration;
    std::string at;    // ISO 8601; default now
    std::string name;  // the points' name; default each file's path
    std::size_t chunk_size = 0;
    input_args input;
};

struct monitor_report_command {
    std::string history;
    bool json = false;
    bool markdown = false;
    std::size_t reference = 0;  // 0: --reference-until, or the first add's points
    std::string reference_until;
    std::string since;
    std::string output;
};

struct monitor_command {
    CLI::App* add = nullptr;
    CLI::App* report = nullptr;
    monitor_add_command add_args;
    monitor_report_command report_args;
};

// Registers `monitor` and its two subcommands on `app`; returns the `monitor` subcommand.
CLI::App* add_monitor_command(CLI::App& app, monitor_command& c);
int run_monitor(monitor_command& c);

int run_monitor_add(monitor_add_command& c);
int run_monitor_report(monitor_report_command& c);

}  // namespace cli
}  // namespace mano

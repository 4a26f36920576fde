#pragma once
// A monitoring history's two operations, once for every native front end (`mano monitor` and
// Python's mano.monitor; docs/monitor.md): add scores files exactly as `mano predict` does and
// appends one point per file or chunk to the history (history.hpp) in one transaction; report
// reads the timeline back with the core's monitoring rules (src/mano/workflow/monitoring.hpp).
// The front ends parse options and present what these return.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <mano/mano.hpp>

#include "io/reader.hpp"

namespace mano {
namespace history {

// An ISO 8601 time (a date, or a date and time with an optional fraction and Z or +HH:MM offset)
// as UTC "YYYY-MM-DDTHH:MM:SSZ"; throws mano::error naming `what` (the option that gave it).
std::string utc_time(const std::string& text, const std::string& what);

struct add_request {
    std::string history;
    std::vector<std::string> files;  // logit files, one batch each
    std::string calibration;         // cal.json from mano calibrate
    std::string at;                  // the batch's time, ISO 8601; "" = now
    std::string at_option = "--at";  // how the front end names `at`, for its errors
    std::string name;                // the points' name; "" = each file's path
    std::size_t chunk_size = 0;      // one point per consecutive chunk of this many rows; 0 = per file
    io::read_options read;
    input_kind input = input_kind::logits;  // what the files' values are; the calibration's kind
    std::string probabilities_setting = "--input probabilities";  // how the front end says input probabilities
    unsigned threads = 0;  // 0 = every core
    bool progress = false;  // a progress line on stderr while a file is scored
    // runs inside the add's transaction after its first point (a test hook: a kill there must
    // leave the history as it was)
    std::function<void()> inside;
};

struct added {
    std::int64_t add = 0;  // the add's id
    std::string time;      // UTC
    std::vector<std::string> names;           // each point's
    std::vector<set_prediction> predictions;  // each point's, as mano predict gives them
    // "FILE: METHOD left out ...": methods that keep every row, left out for a file's size; a
    // CSV's columns that are not classes (io::matrix_reader::notes)
    std::vector<std::string> notes;
};

// Scores and appends; throws mano::error naming the file or option at fault, before anything is
// written (a file that is there must be a history; the history must not be one of the inputs).
added add(const add_request& r);

struct report_request {
    std::string history;
    std::size_t reference = 0;    // the first N points; 0: reference_until, else the first add's
    std::string reference_until;  // ISO 8601
    std::string since;            // ISO 8601: list only the points from this time on
    // how the front end names these, for its errors
    std::string reference_option = "--reference N", reference_until_option = "--reference-until",
                since_option = "--since";
};

struct report {
    // what `mano monitor report --json` prints (docs/monitor.md)
    nlohmann::json timeline;
    bool latest_alerts = false;   // the latest point is below the alert line
    bool latest_changed = false;  // the latest point was scored with another calibration
};

// Throws mano::error naming the history or option at fault.
report read_report(const report_request& r);

}  // namespace history
}  // namespace mano

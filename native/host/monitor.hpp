#pragma once
// A monitoring history's two operations, once for every native front end (`mano monitor` and
// Python's mano.monitor; docs/monitor.md): add scores files exactly as `mano predict` does and
// appends one point per file or chunk to the history (history.hpp) in one transaction; report
// reads the timeline back with the core's monitoring rules (src/mano/workflow/monitoring.hpp).
// The front ends parse options and present what these return.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <mano/mano.hpp>

#include "host/utc_time.hpp"
#include "io/reader.hpp"

namespace mano {
namespace history {

struct add_request {
    std::string history;
    std::vector<std::string> files;  // logit files, one batch each
    std::string calibration;         // cal.json from mano calibrate
    std::string at;                  // the batch's time, ISO 8601; "" = now
    std::string at_option = "--at";  // how the front end names `at`, for its errors
    std::string name;                // the points' name; "" = each file's path
    std::string name_option = "--name";  // how the front end names `name`, for its errors
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
    // each point's, as mano predict gives them, less the methods that do not extrapolate (what a
    // front end warns of; the history holds the whole prediction)
    std::vector<set_prediction> predictions;
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

// A history's timeline, read in passes over its points, one row at a time, in one snapshot of the
// file: memory stays flat in the number of points (docs/monitor.md, "Reliability"). The
// constructor reads the history once (the reference period, the alert line, the alerts, the noise
// warning; it throws mano::error naming the history or option at fault, "the history is damaged"
// for a point that is not what mano writes); each_point reads it again for the points listed.
class timeline {
public:
    explicit timeline(const report_request& r);
    timeline(timeline&&) noexcept;
    ~timeline();

    // What `mano monitor report --json` prints but its "points" and "alerts" (docs/monitor.md).
    const nlohmann::json& summary() const;
    // The indices of the points below the alert line, ascending.
    const std::vector<std::size_t>& alerts() const;
    bool latest_alerts() const;   // the latest point is below the alert line
    bool latest_changed() const;  // the latest point was scored with another calibration
    // Each listed point (from `since` on) as the report's "points" give it, in order.
    void each_point(const std::function<void(const nlohmann::json&)>& each) const;
    // The whole report as JSON, the points written as they are read.
    void write_json(std::ostream& out) const;

private:
    struct state;
    std::unique_ptr<state> s_;
};

// Text from a history (a name, a path) as a JSON string: as it is when it is UTF-8, else with each
// byte that is not as U+FFFD, and the bytes themselves, lossless, in hex under `key`_bytes.
void put_text(nlohmann::json& j, const std::string& key, const std::string& text);

}  // namespace history
}  // namespace mano

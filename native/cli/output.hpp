#pragma once
// What the `mano` subcommands print for users: tables (text or Markdown), warnings, and the
// JSON files they write.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <mano/mano.hpp>

namespace mano {
namespace cli {

std::string fixed(double x, int digits);
void warn(const std::string& message);
// A plain text table: first column left-aligned, the others right-aligned.
void print_table(const std::vector<std::vector<std::string>>& rows);
void write_json(const std::string& path, const nlohmann::json& j);

// The entries of a per-method map in name order: the order of the JSON objects, which the
// tables that list them follow too.
template <class T>
std::vector<std::pair<std::string, const T*>> in_name_order(const std::map<method, T>& by_method) {
    std::map<std::string, const T*> sorted;
    for (const auto& [m, value] : by_method) sorted[method_name(m)] = &value;
    return {sorted.begin(), sorted.end()};
}

// score, merge, infer: one row per file (or chunk), one column per method.
void print_results(const std::vector<std::string>& names, const std::vector<result>& results);
// score --calibration, predict, infer --calibration: one row per set, an interval per method.
void print_predictions(const std::vector<std::string>& names, const std::vector<set_prediction>& predictions, double level);
// Tells the user which estimates extrapolate: one line per set (or one summary for many).
void warn_extrapolation(const std::vector<std::string>& names, const std::vector<set_prediction>& predictions);
// predict --manifest with labels: how often each method's intervals held the true accuracy.
void print_coverage(const coverage_report& coverage);
// eval: each set's scores, each method's statistics over all the sets (and `per_set_criterion`,
// MaNo with each set's own softrun branch, when `choice` chose one for all), then per group.
void print_evaluation(const evaluation_report& report, const std::optional<normalization_choice>& choice,
                      const std::optional<evaluation_summary>& per_set_criterion, bool markdown);
// Prints the fitted lines and writes the calibration, with `extra` keys, to `output` (or prints
// it when empty).
void report_calibration(const calibration& cal, const std::string& output,
                        const nlohmann::json& extra = nlohmann::json::object());
// mano methods: the estimator table.
void print_method_table();

}  // namespace cli
}  // namespace mano

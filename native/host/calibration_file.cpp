#include "host/calibration_file.hpp"

#include "host/scan.hpp"
#include "io/json.hpp"

namespace mano {
namespace host {

calibration read_calibration(const std::string& path, std::string* bytes) {
    std::string text = io::read_text(path, "calibration", io::calibration_max_bytes);
    const nlohmann::json j = io::parse_json(text, path, "calibration");
    if (bytes) *bytes = std::move(text);
    try {
        return calibration::from_json(j);
    } catch (const nlohmann::json::exception& e) {
        throw error(path + ": not a calibration file written by mano calibrate (" + e.what() + ")");
    } catch (const error& e) {
        throw file_error(path, e);
    }
}

options prediction_options(const calibration& cal, const std::string& path, std::size_t n, std::size_t columns,
                           input_kind input, std::vector<std::string>& notes) {
    std::vector<method> left_out;
    options o;
    try {
        o = scoring_options(cal, n, columns, input, &left_out);
    } catch (const error& e) {
        throw file_error(path, e);
    }
    // a file of 0 rows is refused by the scan ("no rows to score"); its size leaves nothing out
    if (n == 0) return o;
    for (const method m : left_out)
        notes.push_back(path + ": " + method_name(m) + " left out of this prediction: it keeps every row, which a prediction " +
                        "does only up to " + std::to_string(keeps_rows_max_logits) + " logits and " +
                        std::to_string(keeps_rows_max_k) + " classes (this file: " + std::to_string(n) + " x " +
                        std::to_string(columns) + "); mano predict --methods " + method_name(m) + " runs it anyway");
    return o;
}

}  // namespace host
}  // namespace mano

// Calibrations (`mano predict`, `score --calibration`): the whole input is the JSON text. A believed
// calibration must serialize back to itself and predict accuracies in [0, 1] inside their intervals.
#include <cmath>
#include <optional>
#include <string>

#include <mano/calibration/calibration.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    mano_fuzz::fuzz_json(data, size, "calibration.json", "calibration", [](const nlohmann::json& j) {
        const mano::calibration c = mano::calibration::from_json(j);
        const nlohmann::json again = c.to_json();
        if (mano::calibration::from_json(again).to_json() != again) mano_fuzz::finding("a calibration does not serialize back to itself");
        for (const auto& m : c.methods) {
            for (const double score : {-1e300, -1.0, 0.0, 0.25, 0.5, 1.0, 3.0, 1e300}) {
                for (const auto se : {std::optional<double>{}, std::optional<double>{0.01}}) {
                    const mano::prediction p = mano::predict(m, score, se, 0.9);
                    if (!(p.accuracy >= 0 && p.accuracy <= 1 && p.lower >= 0 && p.upper <= 1 && p.lower <= p.accuracy &&
                          p.accuracy <= p.upper))
                        mano_fuzz::finding("a prediction outside [0, 1] or outside its interval: " + std::to_string(p.lower) +
                                           " <= " + std::to_string(p.accuracy) + " <= " + std::to_string(p.upper));
                }
            }
        }
    });
    return 0;
}

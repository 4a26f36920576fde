// Accumulator states (`mano merge`, `score --emit-state`): the whole input is the JSON text. A state
// is either refused (a mano::error, or a nlohmann::json exception that the CLI reports as "not an
// accumulator state") or believed; a believed state must finalize into numbers in their ranges and
// serialize back to itself.
#include <cmath>
#include <string>

#include <mano/accumulator/accumulator.hpp>
#include <mano/scan/result.hpp>

#include "fuzz_support.hpp"

namespace {

void check_result(const mano::result& r, std::size_t n) {
    if (r.n != n) mano_fuzz::finding("the result's n differs from the state's");
    for (const auto& v : r.values()) {
        if (!std::isfinite(v.value)) mano_fuzz::finding(std::string("a believed state finalizes to a non-finite ") + mano::method_name(v.m));
        const bool accuracy = mano::info_of(v.m).returns == mano::method_returns::accuracy;
        if ((accuracy || v.m == mano::method::mano) && !(v.value >= 0 && v.value <= 1))
            mano_fuzz::finding(std::string("a value outside [0, 1]: ") + mano::method_name(v.m));
    }
    if (r.confidence && !(*r.confidence >= 0 && *r.confidence <= 1)) mano_fuzz::finding("a confidence outside [0, 1]");
    std::uint64_t total = 0;
    for (const auto c : r.predicted) total += c;
    if (!r.predicted.empty() && total != n) mano_fuzz::finding("predicted class counts do not sum to n");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    mano_fuzz::fuzz_json(data, size, "state.json", "accumulator state", [](const nlohmann::json& j) {
        const mano::accumulator acc = mano::accumulator::from_json(j);
        const nlohmann::json again = acc.to_json();
        if (mano::accumulator::from_json(again).to_json() != again) mano_fuzz::finding("a state does not serialize back to itself");
        if (acc.rows() > 0) check_result(acc.finalize(), acc.rows());
    });
    return 0;
}

#include "mano/workflow/monitoring.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"

namespace mano {
namespace monitoring {

threshold reference_threshold(const std::vector<point>& points, std::size_t reference) {
    std::vector<double> values;
    for (std::size_t i = 0; i < reference && i < points.size(); ++i)
        if (points[i].estimate) values.push_back(*points[i].estimate);
    if (values.size() < 2)
        throw error("a reference period needs at least 2 points with a value (it has " + std::to_string(values.size()) + ")");
    if (reference >= points.size())
        throw error("the reference period (" + std::to_string(reference) + " points) leaves no point to monitor (" +
                    std::to_string(points.size()) + " in all)");
    double sum = 0;
    for (const double v : values) sum += v;
    const double mean = sum / static_cast<double>(values.size());
    double squares = 0;
    for (const double v : values) squares += (v - mean) * (v - mean);
    const double sd = std::sqrt(squares / static_cast<double>(values.size() - 1));
    return {mean - 3 * sd, reference, mean, sd};
}

std::optional<sampling_noise> too_small(const std::vector<point>& points, std::optional<double> slope, double limit) {
    std::vector<double> noise;
    for (const auto& p : points) {
        const std::optional<double> at = p.slope ? p.slope : slope;
        if (p.score_se && at) noise.push_back(1.645 * std::abs(*at) * *p.score_se);
    }
    if (noise.empty() || points.empty()) return std::nullopt;
    std::sort(noise.begin(), noise.end());
    const double median = noise[noise.size() / 2];
    if (!(median > limit)) return std::nullopt;
    const std::size_t rows = points.front().rows;
    const double needed = std::ceil(static_cast<double>(rows) * (median / limit) * (median / limit));
    return sampling_noise{median, rows,
                          needed < 9.0e18 ? static_cast<std::size_t>(needed) : std::numeric_limits<std::size_t>::max(), limit};
}

assessment assess(const std::vector<point>& points, std::size_t reference, double given, std::optional<double> slope) {
    assessment out;
    if (reference > 0) {
        out.line = reference_threshold(points, reference);
    } else {
        if (!std::isfinite(given)) throw error("the alert threshold must be a number");
        out.line.value = given;
    }
    for (std::size_t i = reference; i < points.size(); ++i)
        if (points[i].estimate && *points[i].estimate < out.line.value) out.alerts.push_back(i);
    const std::vector<point> monitored(points.begin() + static_cast<std::ptrdiff_t>(std::min(reference, points.size())), points.end());
    out.noise = too_small(monitored, slope);
    return out;
}

nlohmann::json assessment::to_json() const {
    nlohmann::json t = {{"value", line.value}, {"reference", line.reference}};
    if (line.reference > 0) {
        t["mean"] = line.mean;
        t["sd"] = line.sd;
    }
    nlohmann::json j = {{"threshold", t}, {"alerts", alerts}};
    if (noise)
        j["noise"] = {{"half_width", noise->half_width}, {"rows", noise->rows}, {"rows_needed", noise->rows_needed},
                      {"limit", noise->limit}};
    return j;
}

std::vector<point> points_from_json(const nlohmann::json& j) {
    if (!j.is_array()) throw error("points must be a list of {estimate?, score_se?, slope?, rows?}");
    std::vector<point> out;
    for (const auto& item : j) {
        if (!item.is_object()) throw error("points must be a list of {estimate?, score_se?, slope?, rows?}");
        detail::check_known_keys(item, {"estimate", "score_se", "slope", "rows"}, "a point");
        point p;
        if (item.contains("estimate") && !item.at("estimate").is_null()) p.estimate = detail::number_of(item, "estimate", "a point");
        if (item.contains("score_se") && !item.at("score_se").is_null()) p.score_se = detail::number_of(item, "score_se", "a point");
        if (item.contains("slope") && !item.at("slope").is_null()) p.slope = detail::number_of(item, "slope", "a point");
        if (item.contains("rows")) p.rows = detail::count_of(item, "rows", "a point");
        out.push_back(p);
    }
    return out;
}

}  // namespace monitoring
}  // namespace mano

#include "mano/workflow/monitoring.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mano/base/detail/json_fields.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {
namespace monitoring {

namespace {

// mean - 3 sd from the running sums of `values` estimates; throws unless 2 or more, and unless a
// point is left to monitor
threshold line_of(std::size_t values, double mean, double squares, std::size_t reference, std::size_t points) {
    if (values < 2)
        throw error("a reference period needs at least 2 points with a value (it has " + std::to_string(values) + ")");
    if (reference >= points)
        throw error("the reference period (" + std::to_string(reference) + " points) leaves no point to monitor (" +
                    std::to_string(points) + " in all)");
    const double sd = std::sqrt(squares / static_cast<double>(values - 1));
    return {mean - 3 * sd, reference, mean, sd};
}

// The median of the noise values, when above `limit`, with the rows that bring it to `limit`.
std::optional<sampling_noise> noise_above(std::vector<double> noise, std::size_t rows, double limit) {
    if (noise.empty()) return std::nullopt;
    const auto middle = noise.begin() + static_cast<std::ptrdiff_t>(noise.size() / 2);
    std::nth_element(noise.begin(), middle, noise.end());
    const double median = *middle;
    if (!(median > limit)) return std::nullopt;
    const double needed = std::ceil(static_cast<double>(rows) * (median / limit) * (median / limit));
    return sampling_noise{median, rows,
                          needed < 9.0e18 ? static_cast<std::size_t>(needed) : std::numeric_limits<std::size_t>::max(), limit};
}

std::optional<double> noise_of(const point& p, std::optional<double> slope) {
    const std::optional<double> at = p.slope ? p.slope : slope;
    if (p.score_se && at) return 1.645 * std::abs(*at) * *p.score_se;
    return std::nullopt;
}

}  // namespace

threshold reference_threshold(const std::vector<point>& points, std::size_t reference) {
    std::size_t values = 0;
    double mean = 0, squares = 0;
    for (std::size_t i = 0; i < reference && i < points.size(); ++i)
        if (points[i].estimate) {
            const double delta = *points[i].estimate - mean;
            mean += delta / static_cast<double>(++values);
            squares += delta * (*points[i].estimate - mean);
        }
    return line_of(values, mean, squares, reference, points.size());
}

std::optional<sampling_noise> too_small(const std::vector<point>& points, std::optional<double> slope, double limit) {
    std::vector<double> noise;
    for (const auto& p : points)
        if (const auto n = noise_of(p, slope)) noise.push_back(*n);
    if (points.empty()) return std::nullopt;
    return noise_above(std::move(noise), points.front().rows, limit);
}

timeline_check::timeline_check(std::size_t reference, double given, std::optional<double> slope)
    : reference_(reference), slope_(slope) {
    if (reference == 0) {
        if (!std::isfinite(given)) throw error("the alert threshold must be a number");
        out_.line.value = given;
    }
}

void timeline_check::close_reference() {
    // the reference has ended and at least one point follows it
    out_.line = line_of(values_, mean_, squares_, reference_, reference_ + 1);
}

bool timeline_check::add(const point& p) {
    const std::string which = "point " + std::to_string(seen_);
    const auto finite = [&](const std::optional<double>& v, const char* what) {
        if (v && !std::isfinite(*v)) throw error(which + ": its " + what + " is not a finite number");
    };
    finite(p.estimate, "estimate");
    finite(p.score_se, "score's standard error");
    finite(p.slope, "slope");
    if (p.estimate && (*p.estimate < 0 || *p.estimate > 1))
        throw error(which + ": its estimate " + number_text(*p.estimate) + " is not an accuracy in [0, 1]");
    if (p.score_se && *p.score_se < 0) throw error(which + ": its score's standard error is negative");
    const std::size_t index = seen_++;
    if (index < reference_) {
        if (p.estimate) {
            const double delta = *p.estimate - mean_;
            mean_ += delta / static_cast<double>(++values_);
            squares_ += delta * (*p.estimate - mean_);
        }
        return false;
    }
    if (index == reference_) {
        if (reference_ > 0) close_reference();
        first_rows_ = p.rows;
    }
    if (const auto n = noise_of(p, slope_)) noise_.push_back(*n);
    const bool below = p.estimate && *p.estimate < out_.line.value;
    if (below) out_.alerts.push_back(index);
    return below;
}

assessment timeline_check::finish() {
    if (reference_ > 0 && seen_ <= reference_) {
        // no point after the reference period yet (a cron job reporting after its first add): its
        // line when it has 2 estimates, none before, and nothing compared with it yet
        out_.waiting = true;
        if (values_ >= 2)
            out_.line = line_of(values_, mean_, squares_, reference_, reference_ + 1);
        else
            out_.line = {std::numeric_limits<double>::quiet_NaN(), reference_, 0, 0};
    }
    out_.noise = seen_ > reference_ ? noise_above(std::move(noise_), first_rows_, chunk_noise_limit) : std::nullopt;
    noise_.clear();
    return std::move(out_);
}

assessment assess(const std::vector<point>& points, std::size_t reference, double given, std::optional<double> slope) {
    timeline_check check(reference, given, slope);
    for (const auto& p : points) check.add(p);
    return check.finish();
}

nlohmann::json assessment::to_json() const {
    nlohmann::json t = {{"reference", line.reference}};
    if (!std::isnan(line.value)) t["value"] = line.value;  // no line yet: a waiting reference of < 2 estimates
    if (line.reference > 0 && !std::isnan(line.value)) {
        t["mean"] = line.mean;
        t["sd"] = line.sd;
    }
    nlohmann::json j = {{"threshold", t}, {"alerts", alerts}};
    if (waiting) j["waiting"] = true;
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

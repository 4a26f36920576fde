#pragma once
// The monitoring rules over a timeline of estimates (one point per set, chunk or batch), the same
// for the dashboard, the npm package and the CLI: the alert threshold from a reference period,
// the points below it, and whether the points are too small for their estimates to be read.

#include <cstddef>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace mano {
namespace monitoring {

// One point of a timeline: its estimated accuracy (none when no calibrated method gives one), the
// standard error of the score it was estimated from, its rows, and the accuracy per unit of score
// at its score (the prediction's "slope": the calibrated line's local slope, which on the probit
// link differs from point to point).
struct point {
    std::optional<double> estimate;
    std::optional<double> score_se;
    std::size_t rows = 0;
    std::optional<double> slope;
};

// The alert line: below `value`, a point alerts. From a reference period it is the mean - 3 sd of
// the estimates of its first `reference` points (NannyML's default rule); else a value given.
struct threshold {
    double value = 0;
    std::size_t reference = 0;  // 0: the value was given
    double mean = 0, sd = 0;    // of the reference period's estimates
};

// mean - 3 sd (sample standard deviation) of the first `reference` points that have an estimate.
// Throws mano::error when fewer than 2 of them have one, or when the period leaves no point to
// monitor.
threshold reference_threshold(const std::vector<point>& points, std::size_t reference);

// A chunk is too small when its score's sampling noise alone moves the estimate by more than
// this (90% half-width, in accuracy).
inline constexpr double chunk_noise_limit = 0.05;

// The median over the points of the 90% half-width 1.645 |slope| se that a score's sampling noise
// gives the estimate (slope: the point's own, else `slope`, the calibrated line's slope, which is
// the local one only on the identity link; a point with neither is left out), when it is above
// `limit`, with the rows per point that would bring it to `limit` (the noise falls as
// 1 / sqrt(rows)). The rows are the first point's.
struct sampling_noise {
    double half_width = 0;
    std::size_t rows = 0;
    std::size_t rows_needed = 0;
    double limit = chunk_noise_limit;
};
std::optional<sampling_noise> too_small(const std::vector<point>& points, std::optional<double> slope,
                                        double limit = chunk_noise_limit);

// The whole check of a timeline: the threshold (from the first `reference` points, or `given`
// when reference is 0), the points from `reference` on below it, and the noise warning for those
// points whose slope is known (their own, else `slope`).
struct assessment {
    threshold line;
    std::vector<std::size_t> alerts;  // indices into the points
    std::optional<sampling_noise> noise;
    // every point is in the reference period (not enough points yet, not an error: a cron job
    // reports after its first add): no point is compared, and the line is NaN (its JSON has no
    // "value", "mean" or "sd") until the period has 2 estimates
    bool waiting = false;

    // {"threshold": {"value", "reference", "mean"?, "sd"?}, "alerts": [...], "noise"?: {"half_width",
    // "rows", "rows_needed", "limit"}, "waiting"?: true}
    nlohmann::json to_json() const;
};
assessment assess(const std::vector<point>& points, std::size_t reference, double given, std::optional<double> slope);

// The same check one point at a time, in timeline order, for a timeline too long to hold
// (native/host/monitor.cpp streams a history's points): it keeps the reference period's running
// mean and sum of squares (Welford), the indices of the points below the line, and one double per
// monitored point, its noise, for the median. assess() is this over a vector.
class timeline_check {
public:
    // The line from the first `reference` points, or `given` when reference is 0.
    timeline_check(std::size_t reference, double given, std::optional<double> slope);
    // The next point; throws mano::error naming its index when a value is not finite, an
    // estimate is outside [0, 1] or a standard error is negative, or (at the first monitored
    // point) as reference_threshold does. Returns whether it alerts.
    bool add(const point& p);
    // Once. No point after the reference period yet: the assessment is `waiting`.
    assessment finish();

private:
    std::size_t reference_, seen_ = 0, values_ = 0;
    double mean_ = 0, squares_ = 0;
    std::optional<double> slope_;
    std::size_t first_rows_ = 0;
    std::vector<double> noise_;
    assessment out_;
    void close_reference();
};

// [{"estimate"?: number|null, "score_se"?: number|null, "slope"?: number|null, "rows"?: whole number}]
// as points.
std::vector<point> points_from_json(const nlohmann::json& j);

}  // namespace monitoring
}  // namespace mano

#pragma once
// Standalone SVG scatter plots for `mano eval --plots`: score against true accuracy per set.

#include <optional>
#include <string>
#include <vector>

namespace mano {
namespace cli {

struct plot_point {
    std::string name;   // the set, shown in the point's tooltip
    std::string group;  // one colour per distinct group; "" for none
    double score = 0;
    double accuracy = 0;
};

// The calibration's fit at scores along the axis, as the core predicts them (on the probit link a
// curve, not a line on the raw score): its accuracy and its prediction band.
struct plot_band {
    double level = 0.9;                   // e.g. 0.9 for a 90% prediction band
    std::string equation;                 // the fit in the user's terms (calibration.hpp, fit_equation)
    std::vector<double> xs, fit, lo, hi;  // sampled along the score axis, xs increasing
};

// An SVG document (opens in any browser): the points coloured by group with a legend, the fit
// across the score range, the shaded band, R^2 and Spearman's rho in the title ("n/a" when
// not finite), the set name and values as each point's tooltip. Points with a non-finite score or
// accuracy are left out; equal scores or a single point still give a finite, readable plot.
// Throws mano::error when the band's xs, fit, lo and hi differ in length.
std::string scatter_svg(const std::string& method, const std::vector<plot_point>& points,
                        const std::optional<plot_band>& band, double r2, double spearman);

// Writes `text` to `path` atomically: into a temporary file in the same folder, flushed to disk,
// then renamed over `path`, so that a crash or a concurrent writer never leaves a partial file and
// the previous one stays whole until the new one is complete. Refuses to replace an SQLite file
// (a monitoring history). Throws mano::error naming the path.
void write_file(const std::string& path, const std::string& text);

// Throws mano::error when `output` is one of `inputs` (the same file, by any path): mano never
// writes over what it reads. `flag` names the option that gave `output`.
void refuse_overwriting_inputs(const std::string& output, const std::vector<std::string>& inputs, const std::string& flag);

}  // namespace cli
}  // namespace mano

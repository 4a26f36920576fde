// Audit mode (audit.hpp): PPI on the calibration's correctness model, Wilson with labels alone,
// and the labels needed for an interval width.
#include "mano/audit.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "mano/calibration.hpp"
#include "mano/correctness.hpp"
#include "mano/error.hpp"
#include "mano/result.hpp"
#include "mano/text.hpp"

namespace mano {

nlohmann::json audit_estimate::to_json() const {
    return {{"n", n}, {"accuracy", accuracy}, {"interval", {lower, upper}}, {"method", method},
            {"wilson", {wilson_lower, wilson_upper}}};
}

nlohmann::json labels_needed::to_json() const { return {{"width", width}, {"n", n}, {"method", method}}; }

double normal_quantile(double probability) {
    if (!(probability > 0 && probability < 1)) throw error("a normal quantile needs a probability in (0, 1)");
    // Acklam's rational approximation (relative error 1.15e-9), then one Halley step on erfc
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01,  -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
    const double p = probability;
    double x;
    if (p < 0.02425) {
        const double q = std::sqrt(-2 * std::log(p));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    } else if (p <= 1 - 0.02425) {
        const double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    } else {
        const double q = std::sqrt(-2 * std::log1p(-p));
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
    const double u = e * std::sqrt(2 * std::acos(-1.0)) * std::exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

namespace {

double clip01(double x) { return std::min(1.0, std::max(0.0, x)); }

double z_of(double level) {
    if (!(level > 0 && level < 1)) throw error("the interval level must lie strictly between 0 and 1 (e.g. 0.9)");
    return normal_quantile(0.5 + level / 2);
}

double wilson_width(double p, double n, double z) {
    const double z2 = z * z;
    return 2 * z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
}

}  // namespace

std::pair<double, double> wilson_interval(std::size_t correct, std::size_t n, double level) {
    if (n == 0) throw error("a Wilson interval needs at least one labeled row");
    if (correct > n) throw error("a Wilson interval: more correct rows than rows");
    const double z = z_of(level), z2 = z * z, m = static_cast<double>(n);
    const double p = static_cast<double>(correct) / m;
    const double center = (p + z2 / (2 * m)) / (1 + z2 / m);
    const double half = wilson_width(p, m, z) / 2;
    return {clip01(center - half), clip01(center + half)};
}

audit_estimate audit(const calibration& c, const result& all, const result& audited, double level) {
    const double z = z_of(level);
    if (all.k != c.k || audited.k != c.k)
        throw error("audit: the logits have " + std::to_string(all.k != c.k ? all.k : audited.k) +
                    " classes but the calibration was fitted on logits with " + std::to_string(c.k));
    if (!audited.accuracy)
        throw error("audit: the audited rows were scored without their labels; score them with their labels and the "
                    "calibration's scoring options");
    if (audited.n < 2) throw error("audit: " + std::to_string(audited.n) + " labeled row; an audit needs at least 2");
    if (audited.n > all.n)
        throw error("audit: " + std::to_string(audited.n) + " audited rows but the set has " + std::to_string(all.n) +
                    "; audit rows of this set");
    audit_estimate out;
    out.n = audited.n;
    out.correct = static_cast<std::size_t>(std::llround(*audited.accuracy * static_cast<double>(audited.n)));
    std::tie(out.wilson_lower, out.wilson_upper) = wilson_interval(out.correct, out.n, level);
    if (!c.correctness) {
        out.method = "wilson";
        out.accuracy = static_cast<double>(out.correct) / static_cast<double>(out.n);
        out.lower = out.wilson_lower;
        out.upper = out.wilson_upper;
        return out;
    }
    if (!all.correctness || !audited.correctness || !audited.correctness->labeled)
        throw error(std::string("audit: ") + (all.correctness ? "the audited rows were" : "the set was") +
                    " scored without the correctness histogram (option \"correctness_histogram\"); score " +
                    (all.correctness ? "them with their labels" : "it") + " and the calibration's scoring options");
    const auto& h = *audited.correctness;
    const auto& model = *c.correctness;
    const auto whole = probability_moments(model, *all.correctness);
    const auto f = model.cell_probabilities(h, &*all.correctness);
    // c - f over the audited rows: c is 1 on the cell's correct rows, 0 on the others
    double sum = 0, sum_sq = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
        const auto& x = h.cell(i / h.classes(), i % h.classes());
        const double good = static_cast<double>(x.correct), bad = static_cast<double>(x.rows - x.correct);
        sum += good * (1 - f[i]) - bad * f[i];
        sum_sq += good * (1 - f[i]) * (1 - f[i]) + bad * f[i] * f[i];
    }
    const double n = static_cast<double>(audited.n), big_n = static_cast<double>(all.n);
    const double rectifier = sum / n;
    const double s2 = std::max(0.0, (sum_sq - n * rectifier * rectifier) / (n - 1));
    const double theta = whole.mean + rectifier;
    const double sd = std::sqrt((1 - n / big_n) * s2 / n + whole.variance / big_n);
    out.accuracy = clip01(theta);
    out.lower = clip01(theta - z * sd);
    out.upper = clip01(theta + z * sd);
    return out;
}

std::optional<labels_needed> labels_for_width(const calibration& c, const result& r, const set_prediction& p, double width) {
    if (!p.estimate || !(p.estimate->value.upper - p.estimate->value.lower > width) || r.n == 0) return std::nullopt;
    const double z = z_of(p.level), half = width / 2, big_n = static_cast<double>(r.n);
    labels_needed out;
    out.width = width;
    if (c.correctness && r.correctness) {
        // (1 - n/N) V/n + Vf/N <= h^2  <=>  n >= V / (h^2 + V/N - Vf/N)
        const double v = c.correctness->residual_variance;
        const double vf = probability_moments(*c.correctness, *r.correctness).variance;
        const double room = half * half / (z * z) + (v - vf) / big_n;
        const double n = room > 0 ? std::ceil(v / room - 1e-9) : big_n;
        out.n = static_cast<std::size_t>(std::min(big_n, std::max(2.0, n)));
        return out;
    }
    out.method = "wilson";
    const double p_worst = std::min(p.estimate->value.upper, std::max(p.estimate->value.lower, 0.5));
    std::size_t low = 1, high = r.n;
    if (wilson_width(p_worst, big_n, z) > width) {
        out.n = r.n;
        return out;
    }
    while (low < high) {  // the Wilson width falls as n grows
        const std::size_t mid = low + (high - low) / 2;
        if (wilson_width(p_worst, static_cast<double>(mid), z) <= width) high = mid;
        else low = mid + 1;
    }
    out.n = std::min(r.n, std::max<std::size_t>(2, low));
    return out;
}

set_prediction predict_audited(const calibration& c, const result& all, const result& audited, double level) {
    set_prediction p = predict(c, all, level);
    p.audit = audit(c, all, audited, level);
    return p;
}

}  // namespace mano

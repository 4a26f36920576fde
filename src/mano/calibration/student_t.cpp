#include "mano/calibration/student_t.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mano/base/error.hpp"
#include "mano/base/text.hpp"

namespace mano {
namespace {

constexpr double half_log_two_pi = 0.91893853320467274178;

// lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2) by its Stirling series, for z >= 10 (the first
// omitted term is below 1e-15 there).
double stirling_remainder(double z) {
    const double w = 1 / (z * z);
    return (1.0 / 12 - w * (1.0 / 360 - w * (1.0 / 1260 - w * (1.0 / 1680 - w * (1.0 / 1188 - w * 691.0 / 360360))))) / z;
}

// log B(a, b) without the cancellation of lgamma(a) + lgamma(b) - lgamma(a + b) for a large argument
// (lgamma(5e5) ~ 6e6 would leave only 1e-9 absolute accuracy in a result of size ~7).
double log_beta(double a, double b) {
    const double small = std::min(a, b), large = std::max(a, b);
    if (large < 10) return std::lgamma(small) + std::lgamma(large) - std::lgamma(small + large);
    const double sum = small + large;
    if (small < 10)
        // lgamma(large) - lgamma(sum) expanded with Stirling's formula.
        return std::lgamma(small) - (large - 0.5) * std::log1p(small / large) - small * std::log(sum) + small +
               stirling_remainder(large) - stirling_remainder(sum);
    return half_log_two_pi - 0.5 * std::log(sum) + (small - 0.5) * std::log(small / sum) +
           (large - 0.5) * std::log1p(-small / sum) + stirling_remainder(small) + stirling_remainder(large) -
           stirling_remainder(sum);
}

// The continued fraction of I_x(a, b) (Numerical Recipes 6.4) by the modified Lentz method;
// converges fast for x < (a + 1) / (a + b + 2).
double incomplete_beta_fraction(double a, double b, double x) {
    constexpr double tiny = 1e-300, eps = std::numeric_limits<double>::epsilon();
    constexpr int max_terms = 100000;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (std::abs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= max_terms; ++m) {
        const double two_m = 2.0 * m;
        double term = m * (b - m) * x / ((a - 1 + two_m) * (a + two_m));
        d = 1 + term * d;
        if (std::abs(d) < tiny) d = tiny;
        c = 1 + term / c;
        if (std::abs(c) < tiny) c = tiny;
        d = 1 / d;
        h *= d * c;
        term = -(a + m) * (a + b + m) * x / ((a + two_m) * (a + 1 + two_m));
        d = 1 + term * d;
        if (std::abs(d) < tiny) d = tiny;
        c = 1 + term / c;
        if (std::abs(c) < tiny) c = tiny;
        d = 1 / d;
        const double step = d * c;
        h *= step;
        if (std::abs(step - 1) < eps) return h;
    }
    throw error("the incomplete beta function did not converge for a = " + number_text(a) + ", b = " + number_text(b) +
                ", x = " + number_text(x));
}

struct beta_pair {
    double lower;  // I_x(a, b)
    double upper;  // 1 - I_x(a, b), computed without cancellation when it is the small one
};

// The regularized incomplete beta function at x, given x, y = 1 - x and their logarithms, each
// computed accurately by the caller (so neither 1 - x nor log(x) near 1 loses digits here, and
// an x that underflows still has its logarithm).
beta_pair incomplete_beta(double a, double b, double x, double y, double log_x, double log_y) {
    if (x < (a + 1) / (a + b + 2)) {
        const double lower = std::exp(a * log_x + b * log_y - log_beta(a, b)) * incomplete_beta_fraction(a, b, x) / a;
        return {lower, 1 - lower};
    }
    const double upper = std::exp(a * log_x + b * log_y - log_beta(a, b)) * incomplete_beta_fraction(b, a, y) / b;
    return {1 - upper, upper};
}

// I_x(a, 1/2) for large a and x near 1 by the asymptotic expansion of DiDonato & Morris (1992,
// ACM TOMS 18, "BGRAT", eq. 9 with Q(1/2, u) = erfc(sqrt(u))): there the continued fraction
// loses about eps / (1 - x) to cancellation (1e-11 at dof = 1e6, t = 2). Needs u < ~700.
double incomplete_beta_half_large_a(double a, double log_x) {
    constexpr double b = 0.5, pi = 3.14159265358979323846;
    const double big_t = a + (b - 1) / 2, u = -big_t * log_x;
    const double h = std::sqrt(u / pi) * std::exp(-u);  // u^b e^-u / Gamma(b)
    double j = std::erfc(std::sqrt(u)) / h;               // J_0
    double sum = j;
    double p[30] = {1};
    const double log_x_half_squared = log_x * log_x / 4, four_t_squared = 4 * big_t * big_t;
    double log_x_power = 1, b_plus_2n = b;
    for (int n = 1; n < 30; ++n) {
        double inverse_odd_factorial = 1.0 / 6;  // 1 / (2m + 1)!; 1 / (2n + 1)! after the loop
        p[n] = 0;
        for (int m = 1; m < n; ++m) {
            p[n] += (m * b - n) * p[n - m] * inverse_odd_factorial;
            inverse_odd_factorial /= (2 * m + 2) * (2 * m + 3);
        }
        p[n] = p[n] / n + (b - 1) * inverse_odd_factorial;
        j = (b_plus_2n * (b_plus_2n + 1) * j + (u + b_plus_2n + 1) * log_x_power) / four_t_squared;
        log_x_power *= log_x_half_squared;
        b_plus_2n += 2;
        const double term = p[n] * j;
        sum += term;
        if (std::abs(term) <= 1e-17 * std::abs(sum)) break;
    }
    // Gamma(a + b) / (Gamma(a) T^b) = Gamma(b) / (B(a, b) T^b)
    return std::exp(0.5 * std::log(pi) - log_beta(a, b) - b * std::log(big_t)) * h * sum;
}

// Everything about |T| = s > 0 that the cdf and the quantile search need.
struct t_point {
    double tail;          // P(T > s) = I_x(dof/2, 1/2) / 2 with x = dof / (dof + s^2)
    double central;       // P(|T| < s) = 1 - I_x(dof/2, 1/2)
    double log_s_density;  // log(s * pdf(s))
};

t_point evaluate(double s, double dof) {
    double r = s * s / dof;
    double log_x, log_y, log1p_r;
    if (std::isfinite(r)) {
        log1p_r = std::log1p(r);
        log_x = -log1p_r;
        log_y = std::log(r) - log1p_r;
    } else {
        // s^2 overflows (only for dof well below 1): the same quantities from log(r).
        const double log_r = 2 * std::log(s) - std::log(dof);
        r = std::numeric_limits<double>::infinity();
        log1p_r = log_r + std::log1p(std::exp(-log_r));
        log_x = -log1p_r;
        log_y = -std::log1p(std::exp(-log_r));
    }
    const double x = std::exp(log_x), y = std::isfinite(r) ? r / (1 + r) : 1.0;
    const double a = dof / 2;
    const bool cancels = a >= 15 && y < 0.1 && x < (a + 1) / (a + 2.5) && -(a - 0.25) * log_x < 700;
    const auto beta = cancels ? beta_pair{0, 0} : incomplete_beta(a, 0.5, x, y, log_x, log_y);
    const double lower = cancels ? incomplete_beta_half_large_a(a, log_x) : beta.lower;
    const double upper = cancels ? 1 - lower : beta.upper;
    // pdf(s) = (1 + s^2/dof)^(-(dof+1)/2) / (sqrt(dof) B(dof/2, 1/2))
    const double log_density = -(dof + 1) / 2 * log1p_r - 0.5 * std::log(dof) - log_beta(a, 0.5);
    return {lower / 2, upper, std::log(s) + log_density};
}

void check_dof(double dof, const char* function) {
    if (!(dof > 0) || !std::isfinite(dof)) {
        throw error(std::string(function) + ": the degrees of freedom must be a finite number > 0 (got " + number_text(dof) + ")");
    }
}

// A rough upper quantile of the standard normal (Abramowitz & Stegun 26.2.23, |error| < 4.5e-4)
// for q in (0, 1/2]: only a starting point for the search.
double rough_normal_upper_quantile(double q) {
    const double t = std::sqrt(-2 * std::log(q));
    return t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
}

}  // namespace

double student_t_cdf(double t, double dof) {
    check_dof(dof, "student_t_cdf");
    if (std::isnan(t)) throw error("student_t_cdf: t is NaN");
    if (t == 0) return 0.5;
    if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
    const auto point = evaluate(std::abs(t), dof);
    if (t < 0) return point.tail;
    // 1 - tail loses nothing that matters: the result is at least 1/2.
    return point.central < 0.5 ? 0.5 + point.central / 2 : 1 - point.tail;
}

double student_t_quantile(double probability, double dof) {
    check_dof(dof, "student_t_quantile");
    if (!(probability > 0 && probability < 1)) {
        throw error("student_t_quantile: the probability must be in (0, 1) (got " + number_text(probability) + ")");
    }
    if (probability == 0.5) return 0;
    const double sign = probability < 0.5 ? -1 : 1;
    const double q = std::min(probability, 1 - probability);  // exact: 1 - p has no rounding for p >= 1/2

    // Solve for s = |t| on a log scale, where the equation is close to linear both in the tails
    // (tail ~ s^-dof) and at the centre (central ~ s): g(s) = 0 with g increasing in s.
    // Far out, match log tail(s) to log q; near the centre, log central(s) to log(1 - 2q), which
    // is exact for q >= 1/4 and keeps full relative accuracy when s is small.
    const bool use_tail = q < 0.25;
    const double target = use_tail ? std::log(q) : std::log(1 - 2 * q);
    struct value {
        double g;      // the equation's residual
        double slope;  // dg / d(log s)
    };
    const auto residual = [&](double s) -> value {
        const auto point = evaluate(s, dof);
        if (use_tail)
            return {target - std::log(point.tail), std::exp(point.log_s_density - std::log(point.tail))};
        return {std::log(point.central) - target, 2 * std::exp(point.log_s_density - std::log(point.central))};
    };

    // Starting points: the normal quantile corrected by Cornish-Fisher (large dof), the power-law
    // tail (small dof, small q) and the linear centre; keep the one with the smallest residual.
    const double a = dof / 2, log_b = log_beta(a, 0.5);
    const double z = rough_normal_upper_quantile(q), z2 = z * z;
    const double candidates[] = {
        z + z * (z2 + 1) / (4 * dof) + z * (5 * z2 * z2 + 16 * z2 + 3) / (96 * dof * dof),
        std::exp(0.5 * std::log(dof) - (std::log(q) + std::log(dof) + log_b) / dof),
        (0.5 - q) * std::sqrt(dof) * std::exp(log_b),
    };
    double s = 1;
    value at_s = residual(s);
    for (double candidate : candidates) {
        if (!(candidate > 0) || !std::isfinite(candidate)) continue;
        const auto v = residual(candidate);
        if (std::abs(v.g) < std::abs(at_s.g)) s = candidate, at_s = v;
    }

    // Newton on log s, safeguarded by a bracket (low, high) around the root and bisection (on the
    // log scale) whenever a step would leave it.
    const double infinity = std::numeric_limits<double>::infinity(), largest = std::numeric_limits<double>::max();
    double low = 0, high = infinity;
    for (int iteration = 0; iteration < 200 && at_s.g != 0; ++iteration) {
        if (at_s.g < 0) low = s; else high = s;
        double step = -at_s.g / at_s.slope;  // in log s
        if (!std::isfinite(step)) step = at_s.g < 0 ? 20.0 : -20.0;
        step = std::clamp(step, -700.0, 700.0);
        double next = s + s * std::expm1(step);
        if (std::abs(step) <= 1e-14) {  // converged: a further step would be below the rounding noise
            s = next;
            break;
        }
        if (!(next > low && next < high)) {
            if (high < infinity)
                next = low > 0 ? std::sqrt(low) * std::sqrt(high) : high * std::exp(-20.0);
            else if (s < largest)
                next = std::min(s * std::exp(20.0), largest);
            else
                return sign * infinity;  // beyond the double range
        }
        s = next;
        if (high < infinity && high - low <= 1e-15 * high) break;
        at_s = residual(s);
    }
    return sign * s;
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double normal_quantile(double probability) {
    if (!(probability > 0 && probability < 1)) throw error("a normal quantile needs a probability strictly between 0 and 1");
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                               1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01, -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
    const double low = 0.02425;
    double x;
    if (probability < low || probability > 1 - low) {
        const double q = std::sqrt(-2 * std::log(probability < low ? probability : 1 - probability));
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
        if (probability > 1 - low) x = -x;
    } else {
        const double q = probability - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    // one Halley step on Phi(x) - probability
    const double e = normal_cdf(x) - probability;
    const double u = e * std::sqrt(2 * 3.141592653589793) * std::exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

}  // namespace mano

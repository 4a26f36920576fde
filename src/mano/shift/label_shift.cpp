// Label shift (label_shift.hpp): the posterior calibration's Newton fit, the EM over class priors,
// and the source model of `mlls` with its resampled residuals.
#include "mano/shift/label_shift.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "mano/base/error.hpp"

namespace mano {

namespace {

// log p, bounded below so that a probability that underflowed to 0 stays finite
double safe_log(double p) { return std::log(std::max(p, 1e-300)); }

// softmax(a log p + b) of one row into out; returns nothing, the row sums to 1
void calibrate_row(const double* p, std::size_t k, double a, const std::vector<double>& b, double* out) {
    double top = -INFINITY;
    for (std::size_t c = 0; c < k; ++c) out[c] = a * safe_log(p[c]) + b[c], top = std::max(top, out[c]);
    double sum = 0;
    for (std::size_t c = 0; c < k; ++c) out[c] = std::exp(out[c] - top), sum += out[c];
    for (std::size_t c = 0; c < k; ++c) out[c] /= sum;
}

// Solves H x = g for the symmetric positive definite H (dim x dim, row-major) by Cholesky; a
// dozen lines rather than a linear-algebra library in the WebAssembly build, whose size is budgeted.
std::vector<double> solve_spd(std::vector<double> h, std::vector<double> g, std::size_t dim) {
    for (std::size_t j = 0; j < dim; ++j) {
        double d = h[j * dim + j];
        for (std::size_t p = 0; p < j; ++p) d -= h[j * dim + p] * h[j * dim + p];
        d = std::sqrt(std::max(d, 1e-300));
        h[j * dim + j] = d;
        for (std::size_t i = j + 1; i < dim; ++i) {
            double v = h[i * dim + j];
            for (std::size_t p = 0; p < j; ++p) v -= h[i * dim + p] * h[j * dim + p];
            h[i * dim + j] = v / d;
        }
    }
    for (std::size_t i = 0; i < dim; ++i) {  // L y = g
        for (std::size_t p = 0; p < i; ++p) g[i] -= h[i * dim + p] * g[p];
        g[i] /= h[i * dim + i];
    }
    for (std::size_t i = dim; i-- > 0;) {  // L^T x = y
        for (std::size_t p = i + 1; p < dim; ++p) g[i] -= h[p * dim + i] * g[p];
        g[i] /= h[i * dim + i];
    }
    return g;
}

std::int64_t argmax(const double* row, std::size_t k) {
    return static_cast<std::int64_t>(std::max_element(row, row + k) - row);
}

double mean_nll(const double* probs, std::size_t n, std::size_t k, const std::int64_t* labels, double a,
                const std::vector<double>& b, std::vector<double>& scratch) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        calibrate_row(probs + i * k, k, a, b, scratch.data());
        sum -= safe_log(scratch[static_cast<std::size_t>(labels[i])]);
    }
    return sum / static_cast<double>(n);
}

// A portable stream of random numbers (splitmix64): the same draws on every platform and in
// WebAssembly, so that the resampled residuals are too.
class random_stream {
public:
    explicit random_stream(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
    std::size_t below(std::size_t m) { return std::min(m - 1, static_cast<std::size_t>(uniform() * static_cast<double>(m))); }
    double normal() {
        const double u = 1 - uniform(), v = uniform();
        return std::sqrt(-2 * std::log(u)) * std::cos(2 * 3.141592653589793 * v);
    }
    // Gamma(alpha, 1) by Marsaglia and Tsang (2000); alpha < 1 through Gamma(alpha + 1) u^(1/alpha)
    double gamma(double alpha) {
        if (alpha < 1) return gamma(alpha + 1) * std::pow(1 - uniform(), 1 / alpha);
        const double d = alpha - 1.0 / 3, c = 1 / std::sqrt(9 * d);
        for (;;) {
            double x, v;
            do x = normal(), v = 1 + c * x;
            while (v <= 0);
            v = v * v * v;
            const double u = 1 - uniform();
            if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
        }
    }

private:
    std::uint64_t state_;
};

}  // namespace

void posterior_calibration::apply(const double* probs, std::size_t n, std::size_t k, double* out) const {
    for (std::size_t i = 0; i < n; ++i) calibrate_row(probs + i * k, k, scale, bias, out + i * k);
}

posterior_calibration fit_posterior_calibration(const double* probs, std::size_t n, std::size_t k,
                                                const std::int64_t* labels, bool bias) {
    // parameters: a, then b_1 .. b_{k-1} when the bias is fitted (b_0 = 0 fixes softmax's shift)
    const bool with_bias = bias && k <= bias_correction_max_k;
    const std::size_t dim = with_bias ? k : 1;
    posterior_calibration fit;
    fit.bias.assign(k, 0.0);
    std::vector<double> p(k);
    double value = mean_nll(probs, n, k, labels, fit.scale, fit.bias, p);
    for (int iteration = 0; iteration < 100; ++iteration) {
        std::vector<double> gradient(dim, 0.0), hessian(dim * dim, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            const double* row = probs + i * k;
            calibrate_row(row, k, fit.scale, fit.bias, p.data());
            // d/da z_c = log p_c, d/db_c z_c = 1: the gradient is E_P[phi] - phi_y, the Hessian Cov_P[phi]
            double mean_log = 0, mean_log_sq = 0;
            for (std::size_t c = 0; c < k; ++c) mean_log += p[c] * safe_log(row[c]), mean_log_sq += p[c] * safe_log(row[c]) * safe_log(row[c]);
            const auto y = static_cast<std::size_t>(labels[i]);
            gradient[0] += mean_log - safe_log(row[y]);
            hessian[0] += mean_log_sq - mean_log * mean_log;
            if (!with_bias) continue;
            for (std::size_t c = 1; c < k; ++c) {
                gradient[c] += p[c] - (y == c ? 1.0 : 0.0);
                const double cross = p[c] * safe_log(row[c]) - p[c] * mean_log;
                hessian[c] += cross;
                hessian[c * dim] += cross;
                hessian[c * dim + c] += p[c];
                for (std::size_t d = 1; d < k; ++d) hessian[c * dim + d] -= p[c] * p[d];
            }
        }
        double largest = 0;
        for (auto& g : gradient) g /= static_cast<double>(n), largest = std::max(largest, std::abs(g));
        for (auto& h : hessian) h /= static_cast<double>(n);
        if (largest < 1e-10) break;
        for (std::size_t j = 0; j < dim; ++j) hessian[j * dim + j] += 1e-12;
        const std::vector<double> step = solve_spd(hessian, gradient, dim);
        // backtracking: the NLL is convex, a full Newton step is taken near the optimum
        double t = 1;
        bool moved = false;
        for (int half = 0; half < 40 && !moved; ++half, t /= 2) {
            posterior_calibration next = fit;
            next.scale -= t * step[0];
            for (std::size_t c = 1; with_bias && c < k; ++c) next.bias[c] -= t * step[c];
            const double next_value = mean_nll(probs, n, k, labels, next.scale, next.bias, p);
            if (std::isfinite(next_value) && next_value <= value) fit = next, value = next_value, moved = true;
        }
        if (!moved) break;
    }
    if (!std::isfinite(fit.scale))
        throw error("the source set's calibration did not converge (its temperature scale is not a finite number); check "
                    "that the source labels belong to these logits");
    return fit;
}

double calibrated_confidence(const double* probs, std::size_t k, double scale) {
    const double top = safe_log(*std::max_element(probs, probs + k));
    double sum = 0;
    for (std::size_t c = 0; c < k; ++c) sum += std::exp(scale * (safe_log(probs[c]) - top));
    return 1 / sum;
}

prior_estimate estimate_priors(const double* calibrated, const std::int64_t* predicted, std::size_t n, std::size_t k,
                               const std::vector<double>& source_priors, std::size_t max_iterations) {
    prior_estimate out;
    std::vector<double> w(k, 1.0), q(k);
    out.priors = source_priors;
    const double count = static_cast<double>(n);
    const auto posterior_row = [&](std::size_t i) {
        const double* row = calibrated + i * k;
        double sum = 0;
        for (std::size_t c = 0; c < k; ++c) q[c] = w[c] * row[c], sum += q[c];
        for (std::size_t c = 0; c < k; ++c) q[c] = sum > 0 ? q[c] / sum : 1.0 / static_cast<double>(k);
    };
    while (out.iterations < max_iterations) {
        // the hot loop (n K per step): one division per row
        std::vector<double> priors(k, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            const double* row = calibrated + i * k;
            double sum = 0;
            for (std::size_t c = 0; c < k; ++c) sum += w[c] * row[c];
            if (sum > 0) {
                const double inverse = 1 / sum;
                for (std::size_t c = 0; c < k; ++c) priors[c] += w[c] * row[c] * inverse;
            } else {
                for (std::size_t c = 0; c < k; ++c) priors[c] += 1.0 / static_cast<double>(k);
            }
        }
        double moved = 0;
        for (std::size_t c = 0; c < k; ++c) {
            priors[c] /= count;
            moved = std::max(moved, std::abs(priors[c] - out.priors[c]));
            w[c] = priors[c] / source_priors[c];
        }
        out.priors = priors;
        ++out.iterations;
        if (moved < em_tolerance) {
            out.converged = true;
            break;
        }
    }
    double sum = 0, variance = 0;
    for (std::size_t i = 0; i < n; ++i) {
        posterior_row(i);
        const double f = q[static_cast<std::size_t>(predicted[i])];
        sum += f;
        variance += f * (1 - f);
    }
    out.accuracy = sum / count;
    out.accuracy_se = std::sqrt(variance) / count;
    return out;
}

label_shift_model fit_label_shift(const double* all_probs, std::size_t all_n, std::size_t k, const std::int64_t* all_labels) {
    // at most label_shift_fit_max_rows rows: every stride-th one
    const std::size_t stride = (all_n + label_shift_fit_max_rows - 1) / label_shift_fit_max_rows;
    std::vector<double> kept_probs;
    std::vector<std::int64_t> kept_labels;
    if (stride > 1) {
        for (std::size_t i = 0; i < all_n; i += stride) {
            kept_probs.insert(kept_probs.end(), all_probs + i * k, all_probs + (i + 1) * k);
            kept_labels.push_back(all_labels[i]);
        }
    }
    const double* probs = stride > 1 ? kept_probs.data() : all_probs;
    const std::int64_t* labels = stride > 1 ? kept_labels.data() : all_labels;
    const std::size_t n = stride > 1 ? kept_labels.size() : all_n;
    label_shift_model m;
    std::vector<double> counts(k, 0.0);
    for (std::size_t i = 0; i < n; ++i) counts[static_cast<std::size_t>(labels[i])] += 1;
    // A class without source rows has no frequency to divide by, and its bias would run to minus
    // infinity: then the priors take add-1/2 counts and the bias is not fitted.
    const bool every_class = *std::min_element(counts.begin(), counts.end()) > 0;
    m.priors.assign(k, 0.0);
    for (std::size_t c = 0; c < k; ++c)
        m.priors[c] = every_class ? counts[c] / static_cast<double>(n)
                                  : (counts[c] + 0.5) / (static_cast<double>(n) + 0.5 * static_cast<double>(k));
    m.calibration = fit_posterior_calibration(probs, n, k, labels, every_class);
    std::vector<double> calibrated(n * k);
    m.calibration.apply(probs, n, k, calibrated.data());
    // a class without rows: the mean confidence of all rows
    m.confidence_by_class.assign(k, 0.0);
    double all = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double conf = *std::max_element(&calibrated[i * k], &calibrated[i * k] + k);
        m.confidence_by_class[static_cast<std::size_t>(labels[i])] += conf;
        all += conf;
    }
    for (std::size_t c = 0; c < k; ++c)
        m.confidence_by_class[c] = counts[c] > 0 ? m.confidence_by_class[c] / counts[c] : all / static_cast<double>(n);

    // Residuals: each half of the source set (even rows, odd rows) is resampled to Dirichlet class
    // proportions and estimated with what the other half fits. Halves need every class twice.
    std::vector<std::size_t> half_counts[2] = {std::vector<std::size_t>(k, 0), std::vector<std::size_t>(k, 0)};
    for (std::size_t i = 0; i < n; ++i) ++half_counts[i % 2][static_cast<std::size_t>(labels[i])];
    for (const auto& h : half_counts)
        if (*std::min_element(h.begin(), h.end()) < 2) return m;
    constexpr double alphas[] = {0.5, 1, 5, 20};
    constexpr int draws = 6;
    for (std::size_t half = 0; half < 2; ++half) {
        std::vector<double> fit_rows, test_rows;
        std::vector<std::int64_t> fit_labels, test_labels;
        for (std::size_t i = 0; i < n; ++i) {
            auto& rows = i % 2 == half ? test_rows : fit_rows;
            (i % 2 == half ? test_labels : fit_labels).push_back(labels[i]);
            rows.insert(rows.end(), probs + i * k, probs + (i + 1) * k);
        }
        const std::size_t fit_n = fit_labels.size(), test_n = test_labels.size();
        const std::size_t resample_n =
            std::min(test_n, std::max(label_shift_resample_min_rows, label_shift_resample_max_logits / k));
        const auto em_steps = static_cast<std::size_t>(std::min(
            static_cast<double>(label_shift_resample_em_iterations),
            std::max(100.0, label_shift_resample_em_work / static_cast<double>(resample_n * k))));
        const auto cal = fit_posterior_calibration(fit_rows.data(), fit_n, k, fit_labels.data());
        std::vector<double> priors(k, 0.0);
        for (const auto y : fit_labels) priors[static_cast<std::size_t>(y)] += 1.0 / static_cast<double>(fit_n);
        std::vector<std::vector<std::size_t>> by_class(k);
        for (std::size_t i = 0; i < test_n; ++i) by_class[static_cast<std::size_t>(test_labels[i])].push_back(i);
        std::vector<double> test_calibrated(test_n * k);
        cal.apply(test_rows.data(), test_n, k, test_calibrated.data());
        for (std::size_t a = 0; a < std::size(alphas); ++a)
            for (int draw = 0; draw < draws; ++draw) {
                random_stream random(0x6d6c6c73ULL * (half + 1) + 1000003ULL * a + static_cast<std::uint64_t>(draw));
                std::vector<double> share(k);
                double total = 0;
                for (auto& s : share) s = random.gamma(alphas[a]), total += s;
                std::vector<double> rows;
                std::vector<std::int64_t> predicted;
                std::size_t correct = 0;
                for (std::size_t r = 0; r < resample_n; ++r) {
                    // the class of the r-th row: inverse CDF of the drawn proportions
                    double u = random.uniform() * total;
                    std::size_t c = 0;
                    while (c + 1 < k && u >= share[c]) u -= share[c], ++c;
                    const std::size_t i = by_class[c][random.below(by_class[c].size())];
                    rows.insert(rows.end(), &test_calibrated[i * k], &test_calibrated[(i + 1) * k]);
                    predicted.push_back(argmax(&test_rows[i * k], k));
                    correct += predicted.back() == test_labels[i] ? 1 : 0;
                }
                const auto e = estimate_priors(rows.data(), predicted.data(), resample_n, k, priors,
                                               em_steps);
                m.residuals.push_back(static_cast<double>(correct) / static_cast<double>(resample_n) - e.accuracy);
            }
    }
    return m;
}

nlohmann::json label_shift_model::to_json() const {
    return {{"scale", calibration.scale},
            {"bias", calibration.bias},
            {"priors", priors},
            {"confidence_by_class", confidence_by_class},
            {"residuals", residuals}};
}

label_shift_model label_shift_model::from_json(const nlohmann::json& j, std::size_t k) {
    const auto numbers = [&](const char* key, std::size_t size, double lo, double hi) {
        if (!j.is_object() || !j.contains(key) || !j.at(key).is_array() || (size && j.at(key).size() != size))
            throw error(std::string("source model: mlls needs an array \"") + key + "\"" +
                        (size ? " of " + std::to_string(size) + " numbers" : std::string(" of numbers")) +
                        "; fit the source with mlls among the methods");
        std::vector<double> v;
        for (const auto& x : j.at(key)) {
            if (!x.is_number() || !(x.get<double>() >= lo && x.get<double>() <= hi))
                throw error(std::string("source model: mlls \"") + key + "\" holds a value outside [" + std::to_string(lo) +
                            ", " + std::to_string(hi) + "]");
            v.push_back(x.get<double>());
        }
        return v;
    };
    label_shift_model m;
    if (!j.is_object() || !j.contains("scale") || !j.at("scale").is_number() || !std::isfinite(j.at("scale").get<double>()))
        throw error("source model: mlls needs a number \"scale\"; fit the source with mlls among the methods");
    m.calibration.scale = j.at("scale").get<double>();
    m.calibration.bias = numbers("bias", k, -1e6, 1e6);
    m.priors = numbers("priors", k, 0, 1);
    if (*std::min_element(m.priors.begin(), m.priors.end()) <= 0)
        throw error("source model: mlls \"priors\" must all be above 0");
    m.confidence_by_class = numbers("confidence_by_class", k, 0, 1);
    m.residuals = numbers("residuals", 0, -1, 1);
    return m;
}

}  // namespace mano

// Label shift (label_shift.hpp): the posterior calibration's Newton fit, the EM over class priors,
// and the source model of `mlls` with its resampled residuals.
#include "mano/shift/label_shift.hpp"
#include "mano/kernel/kernel.hpp"
#include "mano/shift/prior_em.hpp"
#include "mano/shift/source_rows.hpp"

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

// The profile of each predicted class over the calibrated rows P (one per kept row) of the rows
// `kept`, whose predicted classes are predicted[kept[j]].
predicted_class_profile predicted_profile(const std::vector<float>& P, const std::vector<std::size_t>& kept,
                                          const std::int32_t* predicted, std::size_t k) {
    predicted_class_profile out;
    out.mean.assign(k, 0.0), out.sd.assign(k, 0.0), out.rows.assign(k, 0.0);
    std::vector<double> square(k, 0.0);
    for (std::size_t j = 0; j < kept.size(); ++j) {
        const auto c = static_cast<std::size_t>(predicted[kept[j]]);
        const double p = static_cast<double>(P[j * k + c]);
        out.rows[c] += 1, out.mean[c] += p, square[c] += p * p;
    }
    for (std::size_t c = 0; c < k; ++c) {
        if (out.rows[c] == 0) continue;
        out.mean[c] /= out.rows[c];
        const double variance = square[c] / out.rows[c] - out.mean[c] * out.mean[c];
        // the sample standard deviation; 0 for a single row
        out.sd[c] = out.rows[c] > 1 ? std::sqrt(std::max(0.0, variance) * out.rows[c] / (out.rows[c] - 1)) : 0.0;
    }
    return out;
}

}  // namespace

posterior_calibration fit_posterior_calibration(const double* probs, std::size_t n, std::size_t k,
                                                const std::int64_t* labels) {
    // parameters: a, then b_1 .. b_{k-1} when the bias is fitted (b_0 = 0 fixes softmax's shift)
    const bool with_bias = k <= bias_correction_max_k;
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

void calibrate_rows(const float* rows_f, const double* rows_d, std::size_t count, std::size_t k, double temperature,
                    const posterior_calibration& calibration, const detail::shift_kernels& kernels, float* out,
                    double* max_prob) {
    const double a = calibration.scale / temperature;
    const bool biased = std::any_of(calibration.bias.begin(), calibration.bias.end(), [](double b) { return b != 0; });
    if (!biased) {
        kernels.scaled_softmax(rows_f, rows_d, count, k, a, out, max_prob, nullptr);
        return;
    }
    // with a bias (K <= bias_correction_max_k): in double, row by row
    std::vector<double> z(k);
    for (std::size_t i = 0; i < count; ++i) {
        double top = -INFINITY, sum = 0;
        for (std::size_t c = 0; c < k; ++c) {
            const double q = rows_f ? static_cast<double>(rows_f[i * k + c]) : rows_d[i * k + c];
            z[c] = a * q + calibration.bias[c], top = std::max(top, z[c]);
        }
        for (std::size_t c = 0; c < k; ++c) z[c] = std::exp(z[c] - top), sum += z[c];
        for (std::size_t c = 0; c < k; ++c) out[i * k + c] = static_cast<float>(z[c] / sum);
        if (max_prob) max_prob[i] = 1 / sum;
    }
}

namespace {

// The calibration of `rows` (indices into the source set), with their labels: the bias fitted
// when asked and K allows it, else the temperature scale alone.
posterior_calibration calibration_of(const detail::source_rows& source, const std::vector<std::size_t>& rows,
                                     const std::vector<std::int64_t>& y, bool bias) {
    const std::size_t k = source.k();
    if (bias && k <= bias_correction_max_k) return fit_posterior_calibration(source.probs(&rows).data(), rows.size(), k, y.data());
    posterior_calibration c;
    c.scale = rows.size() == source.n() ? source.scale() : source.fit_scale(&rows);
    c.bias.assign(k, 0.0);
    return c;
}

// P of the rows `rows`, K floats each, and each row's largest P
std::vector<float> calibrated(const detail::source_rows& source, const std::vector<std::size_t>& rows,
                              const posterior_calibration& c, std::vector<double>* confidence) {
    const std::size_t k = source.k();
    std::vector<float> out(rows.size() * k);
    if (confidence) confidence->resize(rows.size());
    for (std::size_t j = 0; j < rows.size(); ++j)
        calibrate_rows(source.row_f(rows[j]), source.row_d(rows[j]), 1, k, source.temperature(), c, source.kernels(),
                       out.data() + j * k, confidence ? confidence->data() + j : nullptr);
    return out;
}

// The residuals of one half of the kept rows (j % 2 == half): resampled to Dirichlet class
// proportions and estimated with what the other half fits, 6 draws for each concentration.
void half_residuals(const detail::source_rows& source, std::size_t half, const std::vector<std::size_t>& kept,
                    const std::vector<std::int64_t>& labels, std::vector<double>& residuals) {
    constexpr double alphas[] = {0.5, 1, 5, 20};
    constexpr int draws = 6;
    const std::size_t n = kept.size(), k = source.k();
    std::vector<std::size_t> fit_rows, test_rows;
    std::vector<std::int64_t> fit_labels, test_labels;
    for (std::size_t j = 0; j < n; ++j) {
        (j % 2 == half ? test_rows : fit_rows).push_back(kept[j]);
        (j % 2 == half ? test_labels : fit_labels).push_back(labels[j]);
    }
    const std::size_t fit_n = fit_labels.size(), test_n = test_labels.size();
    const std::size_t resample_n = std::min(test_n, std::max(label_shift_resample_min_rows, label_shift_resample_max_logits / k));
    const auto em_steps = static_cast<std::size_t>(
        std::min(static_cast<double>(label_shift_resample_em_iterations),
                 std::max(100.0, label_shift_resample_em_work / static_cast<double>(resample_n * k))));
    const auto cal = calibration_of(source, fit_rows, fit_labels, true);
    std::vector<double> priors(k, 0.0);
    for (const auto y : fit_labels) priors[static_cast<std::size_t>(y)] += 1.0 / static_cast<double>(fit_n);
    std::vector<std::vector<std::size_t>> by_class(k);
    for (std::size_t i = 0; i < test_n; ++i) by_class[static_cast<std::size_t>(test_labels[i])].push_back(i);
    const std::vector<float> test_calibrated = calibrated(source, test_rows, cal, nullptr);
    std::vector<float> rows(resample_n * k);
    std::vector<std::int32_t> predicted(resample_n);
    for (std::size_t a = 0; a < std::size(alphas); ++a)
        for (int draw = 0; draw < draws; ++draw) {
            random_stream random(0x6d6c6c73ULL * (half + 1) + 1000003ULL * a + static_cast<std::uint64_t>(draw));
            std::vector<double> share(k);
            double total = 0;
            for (auto& s : share) s = random.gamma(alphas[a]), total += s;
            std::size_t correct = 0;
            for (std::size_t r = 0; r < resample_n; ++r) {
                // the class of the r-th row: inverse CDF of the drawn proportions
                double u = random.uniform() * total;
                std::size_t c = 0;
                while (c + 1 < k && u >= share[c]) u -= share[c], ++c;
                const std::size_t i = by_class[c][random.below(by_class[c].size())];
                std::copy(&test_calibrated[i * k], &test_calibrated[(i + 1) * k], &rows[r * k]);
                predicted[r] = source.predicted()[test_rows[i]];
                correct += predicted[r] == test_labels[i] ? 1 : 0;
            }
            const auto e = estimate_priors({{rows.data(), resample_n}}, predicted.data(), k, priors, source.kernels(),
                                           run_in_order, em_steps);
            residuals.push_back(static_cast<double>(correct) / static_cast<double>(resample_n) - e.accuracy);
        }
}

}  // namespace

label_shift_model fit_label_shift(const detail::source_rows& source) {
    const std::size_t all_n = source.n(), k = source.k();
    // at most label_shift_fit_max_rows rows: every stride-th one
    const std::size_t stride = (all_n + label_shift_fit_max_rows - 1) / label_shift_fit_max_rows;
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < all_n; i += stride) kept.push_back(i);
    const std::size_t n = kept.size();
    std::vector<std::int64_t> labels(n);
    for (std::size_t j = 0; j < n; ++j) labels[j] = source.labels()[kept[j]];
    label_shift_model m;
    std::vector<double> counts(k, 0.0);
    for (const auto y : labels) counts[static_cast<std::size_t>(y)] += 1;
    // A class without source rows has no frequency to divide by, and its bias would run to minus
    // infinity: then the priors take add-1/2 counts and the bias is not fitted.
    const bool every_class = *std::min_element(counts.begin(), counts.end()) > 0;
    m.priors.assign(k, 0.0);
    for (std::size_t c = 0; c < k; ++c)
        m.priors[c] = every_class ? counts[c] / static_cast<double>(n)
                                  : (counts[c] + 0.5) / (static_cast<double>(n) + 0.5 * static_cast<double>(k));
    m.calibration = calibration_of(source, kept, labels, every_class);
    if (!std::isfinite(m.calibration.scale))
        throw error("the source set's calibration did not converge (its temperature scale is not a finite number); check "
                    "that the source labels belong to these logits");
    // a class without rows: the mean confidence of all rows
    std::vector<double> confidence;
    m.predicted = predicted_profile(calibrated(source, kept, m.calibration, &confidence), kept, source.predicted().data(), k);
    m.confidence_by_class.assign(k, 0.0);
    double all = 0;
    for (std::size_t j = 0; j < n; ++j) {
        m.confidence_by_class[static_cast<std::size_t>(labels[j])] += confidence[j];
        all += confidence[j];
    }
    for (std::size_t c = 0; c < k; ++c)
        m.confidence_by_class[c] = counts[c] > 0 ? m.confidence_by_class[c] / counts[c] : all / static_cast<double>(n);

    // Residuals: each half of the source set (even rows, odd rows) is resampled to Dirichlet class
    // proportions and estimated with what the other half fits. Halves need every class twice.
    std::vector<std::size_t> half_counts[2] = {std::vector<std::size_t>(k, 0), std::vector<std::size_t>(k, 0)};
    for (std::size_t j = 0; j < n; ++j) ++half_counts[j % 2][static_cast<std::size_t>(labels[j])];
    for (const auto& h : half_counts)
        if (*std::min_element(h.begin(), h.end()) < 2) return m;
    for (std::size_t half = 0; half < 2; ++half) half_residuals(source, half, kept, labels, m.residuals);
    return m;
}

nlohmann::json label_shift_model::to_json() const {
    nlohmann::json j = {{"scale", calibration.scale},
                        {"bias", calibration.bias},
                        {"priors", priors},
                        {"confidence_by_class", confidence_by_class},
                        {"residuals", residuals}};
    if (predicted) j["predicted_profile"] = {{"mean", predicted->mean}, {"sd", predicted->sd}, {"rows", predicted->rows}};
    return j;
}

label_shift_model label_shift_model::from_json(const nlohmann::json& j, std::size_t k) {
    // the array `key` of `from` (j, or j's "predicted_profile")
    const auto numbers_of = [](const nlohmann::json& from, const char* key, std::size_t size, double lo, double hi) {
        if (!from.is_object() || !from.contains(key) || !from.at(key).is_array() || (size && from.at(key).size() != size))
            throw error(std::string("source model: mlls needs an array \"") + key + "\"" +
                        (size ? " of " + std::to_string(size) + " numbers" : std::string(" of numbers")) +
                        "; fit the source with mlls among the methods");
        std::vector<double> v;
        for (const auto& x : from.at(key)) {
            if (!x.is_number() || !(x.get<double>() >= lo && x.get<double>() <= hi))
                throw error(std::string("source model: mlls \"") + key + "\" holds a value outside [" + std::to_string(lo) +
                            ", " + std::to_string(hi) + "]");
            v.push_back(x.get<double>());
        }
        return v;
    };
    const auto numbers = [&](const char* key, std::size_t size, double lo, double hi) { return numbers_of(j, key, size, lo, hi); };
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
    if (j.contains("predicted_profile")) {
        const auto& profile = j.at("predicted_profile");
        m.predicted = predicted_class_profile{numbers_of(profile, "mean", k, 0, 1), numbers_of(profile, "sd", k, 0, 1),
                                              numbers_of(profile, "rows", k, 0, 1e18)};
    }
    return m;
}

}  // namespace mano

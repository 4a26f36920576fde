#include "mano/shift/source_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "mano/base/detail/json_fields.hpp"
#include "mano/scan/registry.hpp"
#include "mano/base/error.hpp"
#include "mano/base/text.hpp"
#include "mano/kernel/architecture.hpp"
#include "mano/shift/source_rows.hpp"

namespace mano {

namespace {

std::string percent(std::size_t part, std::size_t whole) {
    return number_text(100.0 * static_cast<double>(part) / static_cast<double>(whole)) + "%";
}

const detail::shift_kernels& kernels_for(const std::string& architecture) {
    return detail::shift_kernels_of(resolve_architecture(architecture));
}

}  // namespace

double fit_temperature(const logits_view& logits, const std::int64_t* labels, const std::string& architecture,
                       const parallel_for& parallel) {
    const detail::source_rows rows(logits, labels, 1.0, kernels_for(architecture), parallel);
    const std::size_t n = rows.n();
    // Mean NLL(beta) = mean_i [LSE(beta d_i) - beta d_iy] is convex in beta = 1/T (source_rows.hpp)
    const auto derivatives = [&](double beta) { return rows.slope(beta, nullptr, true); };
    double lo = 1 / temperature_max, hi = 1 / temperature_min;  // the bracket, in beta = 1/T
    const auto at_lo = derivatives(lo);
    const std::string accuracy = " (source accuracy " + percent(rows.correct(), n) + ")";
    if (at_lo.slope >= 0) {
        if (derivatives(0).slope >= 0)
            throw error("temperature fit: the source NLL keeps falling as T grows, so the logits do not favour the "
                        "true labels" + accuracy + "; check that the labels belong to these rows and classes, "
                        "or use temperature 1");
        throw error("temperature fit: the best temperature is above the largest supported one, " +
                    number_text(temperature_max) + accuracy + "; the logits are on a very large scale: divide them by "
                    "a constant first, or use temperature 1");
    }
    if (derivatives(hi).slope <= 0) {
        if (rows.correct() == n)
            throw error("temperature fit: every source prediction is correct, so the NLL keeps falling as T -> 0 "
                        "and no temperature minimizes it; use temperature 1 or a source set on which the model "
                        "makes mistakes");
        throw error("temperature fit: the best temperature is below the smallest supported one, " +
                    number_text(temperature_min) + accuracy + "; the logits are on a very small scale: multiply them "
                    "by a constant first, or use temperature 1");
    }
    // Safeguarded Newton on the slope (rtsafe): a Newton step is taken only when it stays inside
    // the bracket and at least halves the previous step; otherwise bisect log(beta).
    double beta = 1, last_step = hi - lo;
    for (int iteration = 0; iteration < 200; ++iteration) {
        const auto at = derivatives(beta);
        if (at.slope == 0) return 1 / beta;
        (at.slope < 0 ? lo : hi) = beta;
        double next = beta - at.slope / at.curvature;
        if (!(at.curvature > 0 && next > lo && next < hi && std::abs(next - beta) < 0.5 * std::abs(last_step)))
            next = std::sqrt(lo * hi);
        last_step = next - beta;
        beta = next;
        if (std::abs(last_step) <= 1e-13 * beta || hi - lo <= 1e-13 * lo) return 1 / beta;
    }
    throw error("temperature fit: no convergence after 200 iterations; the source NLL is too flat or too noisy "
                "to fit a temperature; use temperature 1");
}

double atc_threshold(std::vector<double> scores, const std::vector<bool>& correct) {
    const std::size_t n = scores.size();
    if (n == 0) throw error("ATC threshold: no source scores; ATC needs labeled source rows");
    if (correct.size() != n)
        throw error("ATC threshold: " + std::to_string(n) + " scores but " + std::to_string(correct.size()) +
                    " correctness flags; pass one flag per score");
    for (std::size_t i = 0; i < n; ++i)
        if (std::isnan(scores[i])) throw error("ATC threshold: source score " + std::to_string(i) + " is NaN");
    const auto n_correct = static_cast<std::ptrdiff_t>(std::count(correct.begin(), correct.end(), true));
    std::sort(scores.begin(), scores.end());
    // Candidates are the distinct scores v, ascending, so tied scores always fall on one side:
    // fp(v) = #incorrect with s > v, fn(v) = #correct with s <= v. As fp - fn = #{s > v} - #correct,
    // t is the lowest v where the share of scores above v is nearest the source accuracy (Garg et
    // al. 2022); their code walks argsort positions (splitting ties) and starts "below every score"
    // with t = 0, which is no candidate here.
    double best_t = scores[0];
    std::ptrdiff_t best_gap = std::numeric_limits<std::ptrdiff_t>::max();
    for (std::size_t i = 0; i < n;) {
        const double v = scores[i];
        while (i < n && scores[i] == v) ++i;
        const std::ptrdiff_t gap = std::abs(static_cast<std::ptrdiff_t>(n - i) - n_correct);
        if (gap < best_gap) {
            best_gap = gap;
            best_t = v;
        }
    }
    return best_t;
}

source_model fit_source(const logits_view& logits, const std::int64_t* labels, double temperature,
                        const std::vector<method>& methods, const std::string& architecture,
                        const parallel_for& parallel) {
    if (!(std::isfinite(temperature) && temperature > 0))
        throw error("temperature must be a finite number > 0 (1 means no scaling); got " + number_text(temperature));
    const detail::source_rows rows(logits, labels, temperature, kernels_for(architecture), parallel);
    const std::size_t n = rows.n(), k = rows.k();
    // Per row, in double: the maximum's probability 1 / sum_k e_k and sum_k p log p = E_p[d] - log s,
    // with e_k = exp(d_k), d = (q - max q) / T.
    // (one exact pass at beta = 1 / T, which also gives the temperature scale's fit its start)
    std::vector<double> max_prob(n), neg_entropy(n);
    rows.exact_slope(1 / temperature, [&](std::size_t i, const double* sums) {
        max_prob[i] = 1 / sums[1];
        neg_entropy[i] = sums[2] / temperature / sums[1] - std::log(sums[1]);
    });
    std::vector<bool> correct(n);
    for (std::size_t i = 0; i < n; ++i) correct[i] = rows.predicted()[i] == labels[i];
    source_model m;
    m.n = n;
    m.k = k;
    m.temperature = temperature;
    double prob_sum = 0;
    for (double p : max_prob) prob_sum += p;
    m.accuracy = static_cast<double>(rows.correct()) / static_cast<double>(n);
    m.confscore = prob_sum / static_cast<double>(n);
    m.atc_mc_threshold = atc_threshold(std::move(max_prob), correct);
    m.atc_ne_threshold = atc_threshold(std::move(neg_entropy), correct);
    std::vector<method> fitted;
    for (const method f : methods)
        if (info_of(f).fit_source && std::find(fitted.begin(), fitted.end(), f) == fitted.end()) {
            fitted.push_back(f);
            m.fitted[method_name(f)] = info_of(f).fit_source(rows);
        }
    return m;
}

void check_source(const logits_view& logits, const std::int64_t* labels, const parallel_for& parallel) {
    detail::source_rows(logits, labels, 1.0, kernels_for(""), parallel);
}

std::vector<double> label_frequencies(const std::int64_t* labels, std::size_t n, std::size_t k) {
    if (n == 0) throw error("no labels: the class frequencies of an empty set are undefined");
    std::vector<double> counts(k, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        if (labels[i] < 0 || static_cast<std::size_t>(labels[i]) >= k)
            throw error("label " + std::to_string(labels[i]) + " is outside [0, " + std::to_string(k) + ")");
        counts[static_cast<std::size_t>(labels[i])] += 1;
    }
    for (auto& c : counts) c /= static_cast<double>(n);
    return counts;
}

}  // namespace mano

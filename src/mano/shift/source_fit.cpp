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

namespace mano {

namespace {

// Row `r` of any supported dtype, widened to double.
void widen_row(const logits_view& v, std::size_t r, std::vector<double>& out) {
    out.resize(v.cols());
    widen_rows(v, r, 1, out.data());
}

std::string describe(double x) {
    if (std::isnan(x)) return "NaN";
    return x > 0 ? "+Inf" : "-Inf";
}

std::string percent(std::size_t part, std::size_t whole) {
    return number_text(100.0 * static_cast<double>(part) / static_cast<double>(whole)) + "%";
}

// One labeled source row, widened, with its logits shifted so that the maximum is 0.
struct source_row {
    std::size_t index;
    const std::vector<double>& shifted;  // q_k - max_k q_k
    std::size_t label;
    bool correct;  // the first maximum (numpy.argmax) is the label
};

// Validates the source set and calls f(source_row) for every row, in order.
template <class F>
void for_each_row(const logits_view& logits, const std::int64_t* labels, F&& f) {
    const std::size_t n = logits.rows(), k = logits.cols();
    if (n == 0) throw error("the source logits have 0 rows; ATC, DoC and temperature fitting need labeled source rows");
    if (k < 2) throw error("source logits need at least 2 columns (classes); got " + std::to_string(k));
    if (labels == nullptr) throw error("the source labels are missing; pass one class index per source row");
    std::vector<double> q;
    for (std::size_t r = 0; r < n; ++r) {
        widen_row(logits, r, q);
        const std::int64_t label = labels[r];
        if (label < 0 || static_cast<std::uint64_t>(label) >= k)
            throw error("source row " + std::to_string(r) + ": label " + std::to_string(label) + " is outside [0, " +
                        std::to_string(k) + "); labels must be class indices counting from 0");
        std::size_t arg = 0;
        double low = q[0];
        for (std::size_t c = 0; c < k; ++c) {
            if (!std::isfinite(q[c]))
                throw error("source row " + std::to_string(r) + ", column " + std::to_string(c) + ": logit is " +
                            describe(q[c]) + " (rows and columns count from 0); logits must be finite");
            if (q[c] > q[arg]) arg = c;
            low = std::min(low, q[c]);
        }
        const double high = q[arg];
        if (!std::isfinite(high - low))
            throw error("source row " + std::to_string(r) +
                        ": logits are too far apart to subtract in double precision");
        for (double& x : q) x -= high;
        f(source_row{r, q, static_cast<std::size_t>(label), arg == static_cast<std::size_t>(label)});
    }
}

// Mean NLL(beta) = mean_i [LSE(beta d_i) - beta d_iy] is convex in beta = 1/T with
// slope mean_i (E_p[d_i] - d_iy) and curvature mean_i Var_p(d_i), p = softmax(beta d_i).
struct nll_derivatives {
    double slope = 0;
    double curvature = 0;
    std::size_t correct = 0;
};

nll_derivatives derivatives(const logits_view& logits, const std::int64_t* labels, double beta) {
    nll_derivatives out;
    std::vector<double> e;
    for_each_row(logits, labels, [&](const source_row& row) {
        const auto& d = row.shifted;
        e.resize(d.size());
        double s = 0, sd = 0;
        for (std::size_t c = 0; c < d.size(); ++c) {
            e[c] = std::exp(beta * d[c]);
            s += e[c];
            sd += e[c] * d[c];
        }
        const double mean = sd / s;
        double var = 0;
        for (std::size_t c = 0; c < d.size(); ++c) var += e[c] * (d[c] - mean) * (d[c] - mean);
        out.slope += mean - d[row.label];
        out.curvature += var / s;
        out.correct += row.correct;
    });
    const double n = static_cast<double>(logits.rows());
    out.slope /= n;
    out.curvature /= n;
    return out;
}

}  // namespace

double fit_temperature(const logits_view& logits, const std::int64_t* labels) {
    const std::size_t n = logits.rows();
    double lo = 1 / temperature_max, hi = 1 / temperature_min;  // the bracket, in beta = 1/T
    const auto at_lo = derivatives(logits, labels, lo);
    const std::string accuracy = " (source accuracy " + percent(at_lo.correct, n) + ")";
    if (at_lo.slope >= 0) {
        if (derivatives(logits, labels, 0).slope >= 0)
            throw error("temperature fit: the source NLL keeps falling as T grows, so the logits do not favour the "
                        "true labels" + accuracy + "; check that the labels belong to these rows and classes, "
                        "or use temperature 1");
        throw error("temperature fit: the best temperature is above the largest supported one, " +
                    number_text(temperature_max) + accuracy + "; the logits are on a very large scale: divide them by "
                    "a constant first, or use temperature 1");
    }
    if (derivatives(logits, labels, hi).slope <= 0) {
        if (at_lo.correct == n)
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
        const auto at = derivatives(logits, labels, beta);
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
                        const std::vector<method>& methods) {
    if (!(std::isfinite(temperature) && temperature > 0))
        throw error("temperature must be a finite number > 0 (1 means no scaling); got " + number_text(temperature));
    const std::size_t n = logits.rows(), k = logits.cols();
    std::vector<method> fitters;
    for (const method m : methods)
        if (info_of(m).fit_source && std::find(fitters.begin(), fitters.end(), m) == fitters.end()) fitters.push_back(m);
    // the rows of softmax(q / T), only for the estimators that fit on them
    std::vector<double> probs(fitters.empty() ? 0 : n * k);
    std::vector<double> max_prob(n), neg_entropy(n);
    std::vector<bool> correct(n);
    for_each_row(logits, labels, [&](const source_row& row) {
        double s = 0, sd = 0;
        for (double d : row.shifted) {
            d /= temperature;
            const double e = std::exp(d);
            s += e;
            sd += e * d;
        }
        // The maximum's shifted logit is 0, so its probability is 1/s; sum_k p log p = E_p[d] - log s.
        max_prob[row.index] = 1 / s;
        neg_entropy[row.index] = sd / s - std::log(s);
        correct[row.index] = row.correct;
        if (!probs.empty())
            for (std::size_t c = 0; c < k; ++c) probs[row.index * k + c] = std::exp(row.shifted[c] / temperature) / s;
    });
    source_model m;
    m.n = n;
    m.k = logits.cols();
    m.temperature = temperature;
    double prob_sum = 0;
    for (double p : max_prob) prob_sum += p;
    m.accuracy = static_cast<double>(std::count(correct.begin(), correct.end(), true)) / static_cast<double>(n);
    m.confscore = prob_sum / static_cast<double>(n);
    m.atc_mc_threshold = atc_threshold(std::move(max_prob), correct);
    m.atc_ne_threshold = atc_threshold(std::move(neg_entropy), correct);
    for (const method f : fitters) m.fitted[method_name(f)] = info_of(f).fit_source(detail::source_sample{probs.data(), n, k, labels});
    return m;
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

// Fitting the calibration (calibration.hpp, calibrate): one line per method over labeled sets,
// its leave-one-group-out folds, the ranking that picks the recommended method,
// and the class-shift reference with its range.
#include "mano/calibration/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "mano/calibration/detail/labeled_sets.hpp"
#include "mano/base/error.hpp"
#include "mano/calibration/student_t.hpp"
#include "mano/base/text.hpp"

namespace mano {

namespace detail {

std::vector<std::string> fold_keys(const std::vector<labeled_set>& sets) {
    // a label-shifted copy goes with its set: leaving the set out leaves its copies out
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < sets.size(); ++i) {
        const auto& own = sets[sets[i].copy_of.value_or(i)];
        keys.push_back(own.group.empty() ? own.name : own.group);
    }
    // one group: leave one set out at a time, each with its copies
    if (std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return k == keys.front(); }))
        for (std::size_t i = 0; i < sets.size(); ++i) {
            const std::size_t own = sets[i].copy_of.value_or(i);
            keys[i] = sets[own].name + "#" + std::to_string(own);
        }
    return keys;
}

std::vector<group_fold> fit_folds(const std::vector<double>& x, const std::vector<double>& y,
                                  const std::vector<std::string>& keys, enum link l, const std::vector<double>& w,
                                  const std::vector<bool>& copies) {
    std::vector<std::string> order;
    for (const auto& k : keys)
        if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
    std::vector<group_fold> folds;
    for (const auto& g : order) {
        std::vector<double> xs, ys;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (keys[i] != g && !(copies.size() && copies[i])) xs.push_back(x[i]), ys.push_back(to_link(l, y[i]));
        group_fold f;
        f.group = g;
        try {
            const auto line = fit_line(xs, ys);
            f.slope = line.slope;
            f.intercept = line.intercept;
        } catch (const error&) {
            return {};
        }
        for (std::size_t i = 0; i < x.size(); ++i)
            if (keys[i] == g) {
                f.residuals.push_back(y[i] - clip01(from_link(l, f.slope * x[i] + f.intercept)));
                if (!w.empty()) f.weights.push_back(w[i]);
                if (!copies.empty()) f.copy.push_back(copies[i]);
            }
        folds.push_back(std::move(f));
    }
    return folds;
}

long long error_key(double logo_mae) { return std::llround(logo_mae * 1e9); }

std::vector<const method_calibration*> by_held_out_error(const std::vector<method_calibration>& methods) {
    std::vector<const method_calibration*> ranked;
    for (const auto& mc : methods)
        if (!mc.folds.empty()) ranked.push_back(&mc);
    std::sort(ranked.begin(), ranked.end(), [](const method_calibration* a, const method_calibration* b) {
        return std::make_pair(error_key(a->logo_mae), a->m) < std::make_pair(error_key(b->logo_mae), b->m);
    });
    return ranked;
}

double mean_abs_residual(const std::vector<group_fold>& folds) {
    double sum = 0, total = 0;
    for (const auto& f : folds)
        for (std::size_t i = 0; i < f.residuals.size(); ++i)
            if (!f.is_copy(i)) sum += f.weight(i) * std::abs(f.residuals[i]), total += f.weight(i);
    return sum / total;
}

std::vector<bool> copy_flags(const std::vector<labeled_set>& sets) {
    std::vector<bool> out;
    for (const auto& s : sets) out.push_back(s.copy_of.has_value());
    if (std::none_of(out.begin(), out.end(), [](bool c) { return c; })) out.clear();
    return out;
}

// One method's line on a link: the fit and the score moments of the sets themselves (label-shift
// copies left out, as in fit_folds), and the folds. Throws mano::error when the line cannot be fitted.
method_calibration fit_method(method m, enum link l, const std::vector<double>& values, const std::vector<double>& acc,
                              const std::vector<std::string>& keys, const std::vector<double>& w,
                              const std::vector<bool>& copies) {
    method_calibration mc;
    mc.m = m;
    mc.link = l;
    std::vector<double> x, own_x, own_y;  // every set's scores; the line's sets, copies left out
    for (std::size_t i = 0; i < values.size(); ++i) {
        x.push_back(to_link(l, values[i]));
        if (copies.empty() || !copies[i]) own_x.push_back(x.back()), own_y.push_back(to_link(l, acc[i]));
    }
    mc.fit = fit_line(own_x, own_y);
    mc.score_mean = std::accumulate(own_x.begin(), own_x.end(), 0.0) / static_cast<double>(own_x.size());
    for (const double v : own_x) mc.score_sxx += (v - mc.score_mean) * (v - mc.score_mean);
    mc.folds = fit_folds(x, acc, keys, l, w, copies);
    if (!mc.folds.empty()) mc.logo_mae = mean_abs_residual(mc.folds);
    return mc;
}

}  // namespace detail

const char* link_name(link l) noexcept { return l == link::probit ? "probit" : "identity"; }

double to_link(link l, double x) {
    return l == link::probit ? normal_quantile(std::min(1 - probit_margin, std::max(probit_margin, x))) : x;
}

double from_link(link l, double y) { return l == link::probit ? normal_cdf(y) : y; }

const method_calibration* calibration_of(const calibration& c, method m) {
    for (const auto& mc : c.methods)
        if (mc.m == m) return &mc;
    return nullptr;
}

std::pair<double, double> score_range(const method_calibration& mc) {
    return {from_link(mc.link, mc.fit.x_min), from_link(mc.link, mc.fit.x_max)};
}

std::string fit_equation(const method_calibration& mc) {
    // snprintf, not a stream: the WebAssembly package would carry the locale machinery
    const auto digits = [](double v) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.4g", v);
        return std::string(buffer);
    };
    const std::string sign = mc.fit.intercept < 0 ? " \u2212 " : " + ";
    const std::string intercept = sign + digits(std::abs(mc.fit.intercept));
    if (mc.link == link::probit)
        return "accuracy = \u03a6(" + digits(mc.fit.slope) + " \u00d7 \u03a6\u207b\u00b9(score)" + intercept + ")";
    return "accuracy = " + digits(mc.fit.slope) + " \u00d7 score" + intercept;
}

double shift_reference::range_at(double confidence) const {
    std::vector<double> confidences;
    for (const auto& [c, d] : sets) confidences.push_back(c);
    std::sort(confidences.rbegin(), confidences.rend());
    // never fewer than the three most confident sets: one set's distance is too thin a range
    const double floor = std::min(confidence, confidences[std::min<std::size_t>(2, confidences.size() - 1)]);
    double range = 0;
    for (const auto& [c, d] : sets)
        if (c >= floor) range = std::max(range, d);
    return range;
}

double class_shift(const result& r, const std::vector<double>& proportions) {
    if (r.predicted.size() != proportions.size() || r.n == 0)
        throw error("the set's predicted class counts do not match the calibration's " + std::to_string(proportions.size()) +
                    " classes");
    double sum = 0;
    for (std::size_t c = 0; c < proportions.size(); ++c)
        sum += std::abs(static_cast<double>(r.predicted[c]) / static_cast<double>(r.n) - proportions[c]);
    return sum / 2;
}

calibration calibrate(const std::vector<labeled_set>& given, const options& opts, std::vector<std::string>* notes,
                      bool family) {
    detail::check_labeled(given, "calibration");
    calibration c;
    c.opts = opts;
    c.k = given.front().scores.k;
    for (const auto& s : given) {
        if (s.scores.k != c.k)
            throw error("calibration: set '" + printable(s.name, 256) + "' has " + std::to_string(s.scores.k) + " classes but set '" +
                        printable(given.front().name, 256) + "' has " + std::to_string(c.k) + "; calibrate one classifier at a time");
        if (s.copy_of) ++c.copy_sets;
        else c.sets.push_back(s.name);
    }
    const bool choose = family && opts.norm == normalization::softrun && !opts.criterion &&
                        std::all_of(given.begin(), given.end(), [](const labeled_set& s) {
                            return s.scores.mano && !s.scores.mano->variants.empty();
                        });
    std::vector<labeled_set> chosen;
    if (choose) {
        c.normalization = choose_normalization(given, opts);
        chosen = detail::on_branch(given, *c.normalization, notes);
        c.opts.norm = c.normalization->norm;
        c.opts.taylor_order = c.normalization->taylor_order;
    }
    const auto& sets = choose ? chosen : given;
    const auto acc = detail::accuracies(sets);
    const auto keys = detail::fold_keys(sets);
    const auto w = detail::weights(sets);
    const auto copies = detail::copy_flags(sets);
    for (const auto& [m, values] : detail::common_values(sets)) {
        if (const auto why = detail::constant_over(sets, m, values)) {
            if (notes) notes->push_back(std::string(method_name(m)) + ": not calibrated: " + *why);
            continue;
        }
        method_calibration mc;
        try {
            mc = detail::fit_method(m, link::identity, values, acc, keys, w, copies);
        } catch (const error& e) {
            if (notes) notes->push_back(std::string(method_name(m)) + ": not calibrated: " + e.what());
            continue;
        }
        // the probit link where every score is a proportion, kept when its held-out error is lower
        if (!mc.folds.empty() && std::all_of(values.begin(), values.end(), [](double v) { return v >= 0 && v <= 1; })) {
            try {
                auto probit = detail::fit_method(m, link::probit, values, acc, keys, w, copies);
                if (!probit.folds.empty() && detail::error_key(probit.logo_mae) < detail::error_key(mc.logo_mae)) mc = probit;
            } catch (const error&) {
                // constant probit scores: the identity stays
            }
        }
        c.methods.push_back(mc);
    }
    if (c.methods.empty()) throw error("calibration: no method could be fitted on these sets");
    c.opts.methods.clear();
    for (const auto& mc : c.methods) c.opts.methods.push_back(mc.m);
    const auto ranked = detail::by_held_out_error(c.methods);
    if (!ranked.empty()) c.recommended = ranked.front()->m;
    // the class-shift reference and the correctness model describe the calibration sets themselves
    std::vector<labeled_set> originals;
    for (const auto& s : sets)
        if (!s.copy_of) originals.push_back(s);
    if (std::all_of(originals.begin(), originals.end(), [&](const labeled_set& s) {
            return s.scores.predicted.size() == c.k && s.scores.confidence;
        })) {
        shift_reference ref;
        ref.proportions.assign(c.k, 0.0);
        for (const auto& s : originals)
            for (std::size_t j = 0; j < c.k; ++j)
                ref.proportions[j] += static_cast<double>(s.scores.predicted[j]) / static_cast<double>(s.scores.n) /
                                      static_cast<double>(originals.size());
        for (const auto& s : originals) ref.sets.emplace_back(*s.scores.confidence, class_shift(s.scores, ref.proportions));
        c.shift = ref;
    }
    c.correctness = fit_correctness(originals, notes);
    c.opts.correctness_histogram = c.correctness.has_value();
    return c;
}
}  // namespace mano

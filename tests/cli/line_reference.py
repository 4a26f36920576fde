"""An independent NumPy/SciPy reference of calibrate's lines and predict's intervals (docs/cli.md,
"mano calibrate and mano predict", "Links"): leave-one-group-out folds on the identity or probit
link, the link of lower held-out error, jackknife+ intervals; each set with a weight (label-shift
copies: an original R, a copy 1; frequency weights, as if each set were there w times). Used by
test_workflow.py."""
import numpy as np
from scipy import stats

MARGIN = 1e-3  # src/mano/calibration/calibration.hpp, probit_margin


def to_link(link, v):
    v = np.asarray(v, float)
    return stats.norm.ppf(np.clip(v, MARGIN, 1 - MARGIN)) if link == "probit" else v


def from_link(link, v):
    return stats.norm.cdf(v) if link == "probit" else v


def fold_keys(names, groups):
    keys = [g if g else n for n, g in zip(names, groups)]
    return [f"{n}#{i}" for i, n in enumerate(names)] if len(set(keys)) < 2 else keys


def logo_folds(x, y, keys, link="identity", w=None, copy=None):
    """[(group, slope, intercept, [indices], [residuals], [weights], [copy])]: each group's sets
    predicted by the line of the others (fitted on the link's scale on the sets that are not
    label-shift copies, `copy` true; residuals are accuracies, for every set of the group)."""
    xl, y = to_link(link, x), np.asarray(y, float)
    yl = to_link(link, y)
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    copy = np.zeros(len(y), bool) if copy is None else np.asarray(copy, bool)
    folds = []
    for g in dict.fromkeys(keys):
        out = np.array([k == g for k in keys])
        a, b = np.polyfit(xl[~out & ~copy], yl[~out & ~copy], 1)
        idx = np.flatnonzero(out)
        folds.append((g, a, b, idx, y[idx] - np.clip(from_link(link, a * xl[idx] + b), 0, 1), w[idx], copy[idx]))
    return folds


def logo_mae(folds):
    """The held-out error that ranks methods: the weighted mean |residual| of the sets that are
    not label-shift copies."""
    r = np.concatenate([f[4] for f in folds])
    w = np.concatenate([f[5] for f in folds]) if all(len(f) > 5 for f in folds) else np.ones(len(r))
    own = ~np.concatenate([f[6] for f in folds]) if all(len(f) > 6 for f in folds) else np.ones(len(r), bool)
    return float(np.sum((w * np.abs(r))[own]) / np.sum(w[own]))


def fit_method(x, y, keys, w=None, copy=None):
    """The line calibrate keeps: the identity, or the probit link where every score lies in [0, 1]
    and its held-out error is lower (compared at 1e-9); the line on the sets that are not
    label-shift copies, each once."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    own = np.ones(len(y), bool) if copy is None else ~np.asarray(copy, bool)
    candidates = ["identity"] + (["probit"] if np.all((x >= 0) & (x <= 1)) else [])
    best = None
    for link in candidates:
        xl, yl = to_link(link, x[own]), to_link(link, y[own])
        a, b = np.polyfit(xl, yl, 1)
        folds = logo_folds(x, y, keys, link, w, None if copy is None else ~own)
        fit = {"link": link, "slope": a, "intercept": b, "folds": folds, "logo_mae": logo_mae(folds),
               "rse": np.sqrt(np.sum((yl - (a * xl + b)) ** 2) / (len(yl) - 2)), "score_min": xl.min(),
               "score_max": xl.max()}
        if best is None or round(fit["logo_mae"] * 1e9) < round(best["logo_mae"] * 1e9):
            best = fit
    return best


def within_unit(lo, hi):
    """An interval within [0, 1]: clipped where it overlaps it; wholly outside, its width kept at
    the nearer end (docs/cli.md, mano predict)."""
    width = min(1.0, hi - lo)
    if hi < 0:
        return np.array([0.0, width])
    if lo > 1:
        return np.array([1 - width, 1.0])
    return np.clip([lo, hi], 0, 1)


def line_value(fit, x):
    """The line at score x, on its link's scale."""
    return fit["slope"] * to_link(fit.get("link", "identity"), x) + fit["intercept"]


def own_ends(values, weights, total, rows, level):
    """The interval of the accuracy of `rows` rows drawn from a population whose accuracy is one of
    `values` (weighted): SciPy's binomial probabilities of every k summed over the candidates;
    lower the largest k / rows with weight below it <= (1 - level) / 2 total, upper the least with
    weight up to it >= (1 + level) / 2 total (src/mano/prediction/own_accuracy.hpp)."""
    k = np.arange(rows + 1)
    mass = sum(w * stats.binom.pmf(k, rows, np.clip(v, 0, 1)) for v, w in zip(values, weights))
    before = np.concatenate([[0.0], np.cumsum(mass)[:-1]])
    lower = k[before <= (1 - level) / 2 * total + 1e-9 * total].max()
    reach = np.flatnonzero(np.cumsum(mass) >= (1 + level) / 2 * total - 1e-9 * total)
    upper = reach[0] if len(reach) else rows
    return lower / rows, upper / rows


def spread_values(centre, half, level, dof):
    """A symmetric interval as 200 quantiles of its t (dof) or normal (dof 0) distribution."""
    u = (np.arange(200) + 0.5) / 200
    dist = stats.t(dof) if dof > 0 else stats.norm()
    return centre + half / dist.ppf(0.5 + level / 2) * dist.ppf(u)


def reference_interval(fit, folds, x, se, level, rows=0):
    """Jackknife+ over groups, or a t interval on the held-out residuals when the sets are too few;
    the score's noise through the line's slope as accuracy per score at x. With rows > 0, for the
    accuracy of those rows themselves: widened (before the score's noise) to the quantiles of the
    binomial mixture at the fold lines -/+ their residuals, or at the t interval's quantiles."""
    link = fit.get("link", "identity")
    xl = to_link(link, x)
    line = fit["slope"] * xl + fit["intercept"]
    yhat = from_link(link, line)
    slope = fit["slope"] * (stats.norm.pdf(line) / stats.norm.pdf(xl) if link == "probit" else 1.0)
    r = np.concatenate([f[4] for f in folds])
    w = np.concatenate([f[5] if len(f) > 5 else np.ones(len(f[4])) for f in folds])
    at = np.concatenate([np.full(len(f[4]), from_link(link, f[1] * xl + f[2])) for f in folds])
    # weighted jackknife+: the new set weighs the mean weight, so equal weights give the
    # ceil(level (m + 1))-th upper end and the floor((1 - level)(m + 1))-th lower one
    total = w.sum() + w.mean()
    t = stats.t.ppf(0.5 + level / 2, fit["n"] - 2)
    order_hi, order_lo = np.argsort(at + np.abs(r), kind="stable"), np.argsort(at - np.abs(r), kind="stable")
    cum_hi, cum_lo = np.cumsum(w[order_hi]), np.cumsum(w[order_lo])
    reach = np.flatnonzero(cum_hi >= level * total - 1e-9 * total)
    under = np.flatnonzero(cum_lo <= (1 - level) * total + 1e-9 * total)
    if len(reach) == 0 or len(under) == 0:
        half = stats.t.ppf(0.5 + level / 2, len(folds) - 1) * np.sqrt(np.sum(w * r ** 2) / w.sum() + (slope * se) ** 2)
        lo, hi = yhat - half, yhat + half
        if rows > 0 and hi >= 0 and lo <= 1:
            own_lo, own_hi = own_ends(spread_values(yhat, half, level, len(folds) - 1), np.ones(200), 200.0, rows, level)
            lo, hi = min(lo, own_lo), max(hi, own_hi)
        return within_unit(lo, hi)
    lo = (at - np.abs(r))[order_lo][under[-1]]
    hi = (at + np.abs(r))[order_hi][reach[0]]
    if rows > 0:
        own_lo, own_hi = own_ends(np.concatenate([at - np.abs(r), at + np.abs(r)]), np.concatenate([w, w]) / 2, total,
                                  rows, level)
        lo, hi = min(lo, own_lo), max(hi, own_hi)
    lo, hi = min(lo, yhat), max(hi, yhat)
    noise = t * abs(slope) * se
    return within_unit(yhat - np.hypot(yhat - lo, noise), yhat + np.hypot(hi - yhat, noise))

"""An independent NumPy/SciPy reference of calibrate's lines and predict's intervals (docs/cli.md,
"mano calibrate and mano predict", "Links"): leave-one-group-out folds on the identity or probit
link, the link of lower held-out error, jackknife+ intervals. Used by test_workflow.py."""
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


def logo_folds(x, y, keys, link="identity"):
    """[(group, slope, intercept, [indices], [residuals])]: each group's sets predicted by the line
    of the others (fitted on the link's scale; residuals are accuracies)."""
    xl, y = to_link(link, x), np.asarray(y, float)
    yl = to_link(link, y)
    folds = []
    for g in dict.fromkeys(keys):
        out = np.array([k == g for k in keys])
        a, b = np.polyfit(xl[~out], yl[~out], 1)
        idx = np.flatnonzero(out)
        folds.append((g, a, b, idx, y[idx] - np.clip(from_link(link, a * xl[idx] + b), 0, 1)))
    return folds


def logo_mae(folds):
    return float(np.mean(np.abs(np.concatenate([f[4] for f in folds]))))


def fit_method(x, y, keys):
    """The line calibrate keeps: the identity, or the probit link where every score lies in [0, 1]
    and its held-out error is lower (compared at 1e-9)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    candidates = ["identity"] + (["probit"] if np.all((x >= 0) & (x <= 1)) else [])
    best = None
    for link in candidates:
        xl, yl = to_link(link, x), to_link(link, y)
        a, b = np.polyfit(xl, yl, 1)
        folds = logo_folds(x, y, keys, link)
        fit = {"link": link, "slope": a, "intercept": b, "folds": folds, "logo_mae": logo_mae(folds),
               "rse": np.sqrt(np.sum((yl - (a * xl + b)) ** 2) / (len(y) - 2)), "score_min": xl.min(), "score_max": xl.max()}
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


def reference_interval(fit, folds, x, se, level):
    """Jackknife+ over groups, or a t interval on the held-out residuals when the sets are too few;
    the score's noise through the line's slope as accuracy per score at x."""
    link = fit.get("link", "identity")
    xl = to_link(link, x)
    line = fit["slope"] * xl + fit["intercept"]
    yhat = from_link(link, line)
    slope = fit["slope"] * (stats.norm.pdf(line) / stats.norm.pdf(xl) if link == "probit" else 1.0)
    r = np.concatenate([f[4] for f in folds])
    at = np.concatenate([np.full(len(f[4]), from_link(link, f[1] * xl + f[2])) for f in folds])
    m = len(r)
    hi_rank, lo_rank = int(np.ceil(level * (m + 1) - 1e-9)), int(np.floor((1 - level) * (m + 1) + 1e-9))
    t = stats.t.ppf(0.5 + level / 2, fit["n"] - 2)
    if hi_rank > m or lo_rank < 1:
        half = stats.t.ppf(0.5 + level / 2, len(folds) - 1) * np.sqrt(np.mean(r ** 2) + (slope * se) ** 2)
        return within_unit(yhat - half, yhat + half)
    lo = min(np.sort(at - np.abs(r))[lo_rank - 1], yhat)
    hi = max(np.sort(at + np.abs(r))[hi_rank - 1], yhat)
    noise = t * abs(slope) * se
    return within_unit(yhat - np.hypot(yhat - lo, noise), yhat + np.hypot(hi - yhat, noise))

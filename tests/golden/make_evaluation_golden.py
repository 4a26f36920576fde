"""Writes tests/golden/evaluation.json: (score, accuracy) pairs over many test sets with the
statistics that compare accuracy estimators, computed with SciPy and NumPy.
Run with Debian's Python: /usr/bin/python3 tests/golden/make_evaluation_golden.py"""
import json
import pathlib

import numpy as np
from scipy import stats

here = pathlib.Path(__file__).resolve().parent
rng = np.random.default_rng(20250117)
cases = []


def loo_mae(x, y):
    errors = []
    for i in range(len(x)):
        rest_x, rest_y = np.delete(x, i), np.delete(y, i)
        assert np.unique(rest_x).size > 1, "leaving out one set must not leave all scores equal"
        slope, intercept = np.polyfit(rest_x, rest_y, 1)
        errors.append(abs(y[i] - (slope * x[i] + intercept)))
    return float(np.mean(errors))


def add(name, scores, accuracies):
    x, y = np.asarray(scores, dtype=np.float64), np.asarray(accuracies, dtype=np.float64)
    r = stats.pearsonr(x, y)[0]
    slope, intercept = np.polyfit(x, y, 1)
    residuals = y - (slope * x + intercept)
    expected = {
        "pearson": float(r),
        "r2": float(r * r),
        "spearman": float(stats.spearmanr(x, y)[0]),
        "kendall": float(stats.kendalltau(x, y)[0]),
        "mae": loo_mae(x, y),
        "slope": float(slope),
        "intercept": float(intercept),
        "residual_se": float(np.sqrt(np.sum(residuals**2) / (len(x) - 2))),
    }
    assert all(np.isfinite(v) for v in expected.values()), (name, expected)
    cases.append({"name": name, "scores": x.tolist(), "accuracies": y.tolist(), "expected": expected})
    return expected


def noisy_line(n, slope, noise, lo=0.1, hi=0.6):
    """Scores spread over [lo, hi] and accuracies on a line through them plus Gaussian noise."""
    scores = rng.uniform(lo, hi, n)
    return scores, 0.2 + slope * scores + rng.normal(0, noise, n)


add("n3", [0.21, 0.35, 0.42], [0.48, 0.71, 0.69])
add("n5", *noisy_line(5, 1.2, 0.05))
add("n12", *noisy_line(12, 1.2, 0.04))
add("n50", *noisy_line(50, 1.2, 0.03))

s, a = noisy_line(12, 1.0, 0.05)
add("n12 ties in scores", np.round(s, 1), a)
s, a = noisy_line(12, 1.0, 0.05)
add("n12 ties in accuracies", s, np.round(a, 1))
s, a = noisy_line(50, 1.0, 0.06)
add("n50 ties in both", np.round(s, 1), np.round(a, 1))  # includes sets tied in both at once

s = np.linspace(0.1, 0.6, 12)
e = add("n12 perfectly linear", s, 0.15 + 1.25 * s)
assert abs(e["r2"] - 1) < 1e-12 and e["mae"] < 1e-12, e

# Entropy-like: the score falls as accuracy rises.
add("n50 negatively correlated", *noisy_line(50, -0.4, 0.03, lo=0.5, hi=2.0))

s, a = noisy_line(12, 1.2, 0.02)
a[7] -= 0.4
add("n12 outlier in accuracy", s, a)
s, a = noisy_line(50, 1.2, 0.02)
s[3], a[3] = 1.5, 0.35  # a high-leverage set far from the rest
add("n50 high-leverage outlier", s, a)

(here / "evaluation.json").write_text(json.dumps({"cases": cases}, indent=1) + "\n")
print(f"wrote {len(cases)} cases to {here / 'evaluation.json'}")

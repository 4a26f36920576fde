"""Writes the golden vectors of the source-based baselines (temperature fit, accuracy, ConfScore,
ATC-MC and ATC-NE thresholds): logits as tests/data/golden/source_*.npy and
tests/golden/source.json with the labels and the float64 NumPy/SciPy results.
Run with Debian's Python: /usr/bin/python3 tests/golden/make_source_golden.py"""
import json
import math
import pathlib

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import logsumexp

here = pathlib.Path(__file__).resolve().parent
data_dir = here.parent / "data" / "golden"
data_dir.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20250207)
T_MIN, T_MAX = 1e-3, 1e3
cases = []


def nll(q, y, t):
    return float(np.mean(logsumexp(q / t, axis=1) - q[np.arange(len(y)), y] / t))


def nll_slope(q, y, beta):
    """d mean NLL / d beta at beta = 1/T: mean_i (E_p[d_i] - d_iy) with d = q - max q."""
    d = q - q.max(axis=1, keepdims=True)
    p = np.exp(beta * d - logsumexp(beta * d, axis=1, keepdims=True))
    return float(np.mean((p * d).sum(axis=1) - d[np.arange(len(y)), y]))


def fit_temperature(q, y):
    """Bounded Brent on log T, then the slope's root bracketed around it for full precision."""
    coarse = math.exp(minimize_scalar(lambda u: nll(q, y, math.exp(u)), bounds=(math.log(T_MIN), math.log(T_MAX)),
                                      method="bounded", options={"xatol": 1e-10}).x)
    assert T_MIN * 1.01 < coarse < T_MAX / 1.01, f"no interior minimum: {coarse}"
    beta = brentq(lambda b: nll_slope(q, y, b), 0.999 / coarse, 1.001 / coarse,
                  xtol=1e-300, rtol=4 * np.finfo(float).eps)
    assert abs(1 / beta - coarse) < 1e-6 * coarse, (1 / beta, coarse)
    return 1 / beta


def atc_walk(s, correct):
    """docs/methods.md#atc_mc: candidates t = the distinct source scores, ascending; fp = #incorrect above t,
    fn = #correct at or below t; the first t with the smallest |fp - fn|."""
    best_t, best_gap = None, None
    for t in np.unique(s):
        gap = abs(int(np.sum(~correct & (s > t))) - int(np.sum(correct & (s <= t))))
        if best_gap is None or gap < best_gap:
            best_t, best_gap = float(t), gap
    return best_t


def official_atc(s, correct):
    """The walk of Garg et al.'s ATC code: positions in argsort order, start 'below every score'."""
    fp, fn, best, t = int(np.sum(~correct)), 0, int(np.sum(~correct)), 0.0
    for i in np.argsort(s, kind="stable"):
        fp, fn = fp - (not correct[i]), fn + bool(correct[i])
        if abs(fp - fn) < best:
            best, t = abs(fp - fn), float(s[i])
    return t


def source_stats(q, y, t):
    # Columns are summed in order, like the C++ code, so that scores equal in exact arithmetic
    # (repeated or shifted rows) are equal here too and the ATC candidates match.
    d = (q - q.max(axis=1, keepdims=True)) / t
    s = np.zeros(len(q))
    sd = np.zeros(len(q))
    for c in range(q.shape[1]):
        e = np.exp(d[:, c])
        s += e
        sd += e * d[:, c]
    max_prob = 1 / s
    neg_entropy = sd / s - np.log(s)
    # Independent check of both scores against the plain softmax definition.
    p = np.exp(q / t - logsumexp(q / t, axis=1, keepdims=True))
    assert np.allclose(max_prob, p.max(axis=1), rtol=1e-12, atol=0)
    assert np.allclose(neg_entropy, np.sum(p * np.log(np.maximum(p, 1e-300)), axis=1), rtol=1e-9, atol=1e-12)
    correct = q.argmax(axis=1) == y
    return {
        "temperature": t,
        "accuracy": float(np.mean(correct)),
        "confscore": float(np.mean(max_prob)),
        "atc_mc_threshold": atc_walk(max_prob, correct),
        "atc_ne_threshold": atc_walk(neg_entropy, correct),
    }


def add(name, q, y, fit_fails=None, temperatures=(1.0,)):
    """Saves q (float32 or float16) and records the statistics at each temperature and the fit."""
    file = f"source_{name}.npy"
    np.save(data_dir / file, q)
    q = q.astype(np.float64)
    y = np.asarray(y, dtype=np.int64)
    case = {"name": name, "file": f"data/golden/{file}", "labels": y.tolist()}
    ts = list(temperatures)
    if fit_fails is None:
        case["fitted_temperature"] = fit_temperature(q, y)
        ts.append(case["fitted_temperature"])
    else:
        case["fit_fails"] = fit_fails
    case["expected"] = [source_stats(q, y, t) for t in ts]
    cases.append(case)
    return case


def model_logits(n, k, signal, noise):
    """Logits of a model that puts `signal` extra on the true class."""
    y = rng.integers(0, k, n)
    q = rng.standard_normal((n, k)) * noise
    q[np.arange(n), y] += signal
    return q, y


# K from binary to 1000 classes, N small.
for k, n, signal in [(2, 300, 1.5), (10, 400, 3.0), (1000, 30, 4.0)]:
    q, y = model_logits(n, k, signal, 1.0)
    add(f"k{k}", q.astype(np.float32), y, temperatures=(1.0, 2.5))

# Over- and under-confident logits of the same model: the fit must undo the scale.
q, y = model_logits(300, 10, 2.0, 1.0)
over = add("overconfident", (q * 5).astype(np.float32), y)
under = add("underconfident", (q * 0.2).astype(np.float32), y)
assert over["fitted_temperature"] > 2 and under["fitted_temperature"] < 0.5

# 100% source accuracy: the NLL falls as T -> 0, there is no fit; the ATC threshold is the lowest score.
q, y = model_logits(100, 10, 6.0, 1.0)
q[np.arange(100), y] = q.max(axis=1) + 0.5
case = add("all_correct", q.astype(np.float32), y, fit_fails="every source prediction is correct")
assert case["expected"][0]["accuracy"] == 1.0

# 0% source accuracy (the label is always the runner-up): a temperature still fits; the ATC
# threshold is the highest score.
q = rng.standard_normal((100, 10)) * 2
y = np.argsort(q, axis=1)[:, -2]
case = add("all_wrong", q.astype(np.float32), y)
assert case["expected"][0]["accuracy"] == 0.0

# Tied scores: float16 logits on a coarse grid, rows repeated and shifted by a constant, with
# correct and incorrect rows in the same tie groups.
base = np.round(rng.standard_normal((40, 10)) * 8) / 4
rows = np.repeat(base, 5, axis=0) + np.tile(np.arange(5) * 0.5, 40)[:, None]
y = np.where(rng.random(200) < 0.6, rows.argmax(axis=1), rng.integers(0, 10, 200))
add("ties_f16", rows.astype(np.float16), y, temperatures=(1.0, 0.75))
q = np.round(rng.standard_normal((300, 2)) * 4) / 2
y = np.where(rng.random(300) < 0.7, q.argmax(axis=1), rng.integers(0, 2, 300))
add("ties_k2_f16", q.astype(np.float16), y)

# Ten distinct rows, ten copies each, 85 correct: the position 14th from the top lies inside a
# tie group, so candidates that are distinct values (here) and positions (the official code) differ.
base = np.round(rng.standard_normal((10, 10)) * 8) / 4
rows = np.repeat(base, 10, axis=0)
correct = rng.permutation(np.arange(100) < 85)
y = np.where(correct, rows.argmax(axis=1), (rows.argmax(axis=1) + 1 + rng.integers(0, 9, 100)) % 10)
case = add("ties_split", rows.astype(np.float32), y)
max_prob = 1 / np.exp(rows - rows.max(axis=1, keepdims=True)).sum(axis=1)
assert case["expected"][0]["accuracy"] == 0.85
assert len(np.unique(max_prob)) == 10
assert abs(official_atc(max_prob, correct) - case["expected"][0]["atc_mc_threshold"]) > 1e-3

for case in cases:
    for e in case["expected"]:
        assert all(math.isfinite(v) for v in e.values()), case["name"]

(here / "source.json").write_text(json.dumps({"cases": cases}, indent=1) + "\n")
total = sum((data_dir / pathlib.Path(c["file"]).name).stat().st_size for c in cases)
print(f"wrote {len(cases)} cases, {total} bytes of .npy")

"""An independent reference of audit mode (docs/audit.md) for tests/cli/test_audit.py and
tests/python/test_audit.py: the rows `mano audit` draws (splitmix64 and Floyd's algorithm), PPI
with lambda = 1 over a set's rows (Student t, pseudo-rows in the variance, joined with the score
set at the correctness model's variance), Wilson on the labels alone below 10 labels, the labels a width needs, and the labeled sets both tests calibrate on."""
import json

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit
from scipy.stats import norm, t


def sample(n_rows, budget, seed):
    """The rows drawn: splitmix64 seeded with `seed`, rejection for an unbiased bound, Floyd."""
    mask, state = (1 << 64) - 1, seed

    def draw():
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    def below(bound):
        reject = (1 << 64) % bound
        while True:
            x = draw()
            if x >= reject:
                return x % bound

    taken = set()
    for j in range(n_rows - budget, n_rows):
        t = below(j + 1)
        taken.add(j if t in taken else t)
    return sorted(taken)


MIN_PPI_LABELS = 10  # below: Wilson on the labels alone
PSEUDO_ROWS = 0.25  # weight of a correct and of a wrong pseudo-row at the audited mean f, in the variance only
FEW_REASON = "n < 10 labels: Wilson on the labels alone"


def model_score(f, estimate, k):
    """The hull of {theta0 : (estimate - theta0)^2 <= k V(theta0)} or None: theta0 the mean over the
    set's rows of f_d = expit(logit f + d), V(theta0) the variance of c - f were each row correct with
    probability f_d (mean f_d (1 - f_d) + Var(f_d - f)), d in [-60, 60]: a grid of 12001 shifts, each
    end refined by Brent's method."""
    p = np.clip(f, 1e-15, 1 - 1e-15)
    eta = np.log(p) - np.log1p(-p)

    def gap(d):  # <= 0 inside the set
        fd = expit(eta + d)
        return (estimate - fd.mean()) ** 2 - k * (np.mean(fd * (1 - fd)) + np.var(fd - f))

    grid = np.linspace(-60, 60, 12001)
    inside = np.flatnonzero([gap(d) <= 0 for d in grid])
    if inside.size == 0:
        return None
    ends = []
    for j, step in ((inside[0], -1), (inside[-1], 1)):
        d = grid[j] if j + step in (-1, len(grid)) else brentq(gap, grid[j], grid[j + step], xtol=1e-14)
        ends.append(expit(eta + d).mean())
    return ends


def ppi(f, correct, rows, level):
    """theta = mean_all(f) + mean_audit(c - f), Var = (1 - n/N) s^2 / n with s^2 the weighted sample
    variance of the audited c - f and two pseudo-rows of weight PSEUDO_ROWS (residuals 1 - g and -g, g the
    audited mean f; divisor: the weights less 1), interval theta -/+ t_{n-1} sd, joined with the
    model's score set at z^2 (1 - n/N) / n: (theta, [lo, hi]) within [0, 1]. f and correct are per
    row of the whole set; rows the audited ones."""
    n, big_n = len(rows), len(f)
    r = correct[rows] - f[rows]
    estimate = f.mean() + r.mean()
    g = f[rows].mean()
    values = np.concatenate([r, [1 - g, -g]])
    weights = np.concatenate([np.ones(n), [PSEUDO_ROWS, PSEUDO_ROWS]])
    center = np.average(values, weights=weights)
    s2 = np.sum(weights * (values - center) ** 2) / (weights.sum() - 1)
    half = t.ppf(0.5 + level / 2, n - 1) * np.sqrt((1 - n / big_n) * s2 / n)
    lo, hi = estimate - half, estimate + half
    score = model_score(f, estimate, norm.ppf(0.5 + level / 2) ** 2 * (1 - n / big_n) / n)
    if score is not None:
        lo, hi = min(lo, score[0]), max(hi, score[1])
    return estimate, [max(0, lo), min(1, hi)]


def audited(f, correct, rows, level):
    """What mano predict --audit gives with a correctness model: (method, estimate, [lo, hi])."""
    if len(rows) < MIN_PPI_LABELS:
        k = int(correct[rows].sum())
        return "wilson", k / len(rows), wilson(k, len(rows), level)
    return ("ppi", *ppi(f, correct, rows, level))


def ppi_width(v, n, big_n, level):
    """The expected width of the PPI interval with n of N rows audited, V the calibration's mean
    Var(c - f), the pseudo-rows at their widest (residuals 1 and 0 about 0)."""
    v_n = ((n - 1) * v + PSEUDO_ROWS) / (n + 2 * PSEUDO_ROWS - 1)
    return 2 * t.ppf(0.5 + level / 2, n - 1) * np.sqrt((1 - n / big_n) * v_n / n)


def wilson_width(p, n, level):
    z = norm.ppf(0.5 + level / 2)
    return 2 * z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)


def labels_for_width(v, big_n, lower, upper, level, width=0.25):
    """{"width", "n", "method"} as mano's labels_for_width, by counting up (v None: no model)."""
    if not upper - lower > width or big_n < 2:
        return None
    if big_n < MIN_PPI_LABELS:
        return {"width": width, "n": big_n, "method": "wilson"}
    p = min(upper, max(lower, 0.5))
    for n in range(2, big_n + 1):
        if n < MIN_PPI_LABELS or v is None:
            if wilson_width(p, n, level) <= width:
                return {"width": width, "n": n, "method": "wilson"}
        elif ppi_width(v, n, big_n, level) <= width:
            return {"width": width, "n": n, "method": "ppi"}
    return {"width": width, "n": big_n, "method": "wilson" if v is None else "ppi"}


def wilson(correct, n, level):
    """The Wilson score interval of `correct` right of n, within [0, 1]."""
    z = norm.ppf(0.5 + level / 2)
    p = correct / n
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [max(0, center - half), min(1, center + half)]


def make_sets(tmp, rng, k, n):
    """Labeled sets of falling accuracy in 4 groups (set0 .. set7, each n x k, with manifest.json in
    tmp), and a hard target set far below them (target.npy, 1500 rows); returns the manifest's sets."""
    sets = []
    for i in range(8):
        labels = rng.integers(0, k, n)
        q = rng.standard_normal((n, k)) * 1.5 + rng.normal(0, 0.3, k)
        q[np.arange(n), labels] += 1.0 + 0.45 * i
        q *= [0.5, 1.0, 2.0, 3.0][i % 4]  # a scale per group: confidence alone estimates poorly, intervals are wide
        np.save(tmp / f"set{i}.npy", q.astype(np.float32))
        np.save(tmp / f"set{i}_labels.npy", labels)
        sets.append({"name": f"set{i}", "group": f"g{i % 4}", "logits": f"set{i}.npy", "labels": f"set{i}_labels.npy"})
    (tmp / "manifest.json").write_text(json.dumps({"sets": sets}))
    labels = rng.integers(0, k, 1500)
    q = rng.standard_normal((1500, k)) * 2.5
    q[np.arange(1500), labels] += 0.6
    np.save(tmp / "target.npy", q.astype(np.float32))
    np.save(tmp / "target_labels.npy", labels)
    return sets

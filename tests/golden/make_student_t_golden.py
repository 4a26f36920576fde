"""Writes tests/golden/student_t.json: quantiles and cdf values of Student's t distribution
(the prediction intervals of a calibration).
Run with Debian's Python: /usr/bin/python3 tests/golden/make_student_t_golden.py

The values are computed with mpmath at 40 significant digits, because SciPy's are not accurate
enough for a 1e-10 relative test everywhere: scipy.stats.t.ppf (cdflib's stdtrit) is off by up to
~1e-10 near the centre, and scipy.special.betainc(1/2, dof/2, .) by ~2e-10 at dof = 1e6. Every
value is still checked against scipy.stats.t.ppf / cdf to 1e-8, and against closed forms for
dof 1 and 2."""
import json
import pathlib

import mpmath as mp
import numpy as np
from scipy import stats

mp.mp.dps = 40
here = pathlib.Path(__file__).resolve().parent
half = mp.mpf(1) / 2


def log_beta(a, b):
    return mp.loggamma(a) + mp.loggamma(b) - mp.loggamma(a + b)


def incomplete_beta(a, b, x):
    """I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * 2F1(a+b, 1; a+1; x), summed term by term (all
    positive, so no cancellation); converges geometrically for x <= 1/2."""
    total = term = mp.mpf(1)
    n = 0
    while term >= total * mp.eps:
        term *= (a + b + n) / (a + 1 + n) * x
        total += term
        n += 1
    return mp.exp(a * mp.log(x) + b * mp.log1p(-x) - mp.log(a) - log_beta(a, b)) * total


def tail(s, dof):
    """P(T > s) for s > 0: I_x(dof/2, 1/2) / 2 with x = dof / (dof + s^2)."""
    s, dof = mp.mpf(s), mp.mpf(dof)
    x, y = dof / (dof + s * s), s * s / (dof + s * s)
    if y >= half:
        return incomplete_beta(dof / 2, half, x) / 2
    # (1 - I_y(1/2, dof/2)) / 2 cancels when the tail is small: carry enough extra digits.
    extra = 20
    while True:
        with mp.workdps(mp.mp.dps + extra):
            value = (1 - incomplete_beta(half, dof / 2, y)) / 2
            if value > mp.mpf(10) ** (10 - extra):
                return +value
        extra *= 4


def cdf(t, dof):
    t = mp.mpf(t)
    if t == 0:
        return half
    return tail(-t, dof) if t < 0 else 1 - tail(t, dof)


def density(s, dof):
    return mp.exp(-(dof + 1) / 2 * mp.log1p(s * s / dof) - mp.log(dof) / 2 - log_beta(dof / 2, half))


def quantile(p, dof):
    """Newton on log s for log tail(s) = log q, started from SciPy's quantile."""
    if p == 0.5:
        return mp.mpf(0)
    p, dof = mp.mpf(p), mp.mpf(dof)
    q = min(p, 1 - p)
    s = mp.mpf(abs(float(stats.t.ppf(float(q), float(dof)))))
    for _ in range(100):
        t = tail(s, dof)
        step = (mp.log(t) - mp.log(q)) / (s * density(s, dof) / t)
        s *= mp.exp(step)
        if abs(step) < mp.mpf(10) ** -35:
            return s if p > 0.5 else -s
    raise RuntimeError(f"the quantile of {p} at dof {dof} did not converge")


dofs = [1, 2, 2.5, 3, 5, 10, 30, 1000, 1e6]
probabilities = [1e-10, 1e-6, 0.025, 0.05, 0.3, 0.5, 0.5000001, 0.9, 0.95, 0.975, 0.995, 1 - 1e-10]
ts = [-1e4, -30, -6, -2, -0.5, 1e-3, 1, 2.5, 8]
cases = []
for dof in dofs:
    for p in probabilities:
        t = float(quantile(p, dof))
        scipy_t = float(stats.t.ppf(p, dof))
        assert abs(scipy_t - t) <= 1e-8 * max(abs(t), 1e-8), (p, dof, t, scipy_t)
        cases.append({"kind": "quantile", "dof": dof, "probability": p, "expected": t})
    for t in ts:
        value = float(cdf(t, dof))
        scipy_value = float(stats.t.cdf(t, dof))
        assert abs(scipy_value - value) <= 1e-8 * value, (t, dof, value, scipy_value)
        cases.append({"kind": "cdf", "dof": dof, "t": t, "expected": value})

# Closed forms: Cauchy (dof 1) and dof 2.
for c in cases:
    if c["kind"] == "cdf" and c["dof"] == 1:
        t = c["t"]
        cauchy = np.arctan(-1 / t) / np.pi if t < 0 else 0.5 + np.arctan(t) / np.pi
        assert np.isclose(c["expected"], cauchy, rtol=1e-14, atol=0), c
    if c["kind"] == "quantile" and c["dof"] == 2:
        p = c["probability"]
        assert np.isclose(c["expected"], (2 * p - 1) / np.sqrt(2 * p * (1 - p)), rtol=1e-12, atol=1e-300), c

(here / "student_t.json").write_text(json.dumps({"cases": cases}, indent=1) + "\n")
print(f"wrote {len(cases)} cases to {here / 'student_t.json'}")

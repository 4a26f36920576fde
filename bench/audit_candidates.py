"""The candidates for the audited interval (docs/audit.md, "The interval"), measured side by side:
on the protocol of bench/audit_report.py (its calibration, predicted sets and sets simulated at
`--accuracies` with a "good" and a "poor" correctness model, `--sim-rows` rows each), seeded audits
of n rows, each read by every candidate in a NumPy replica of the core's PPI (f of a row: the
correctness model at its cell with the set's mean confidence there; the replica is checked against
the core's audited estimate):
- z: the normal quantile with the audited rows' s^2(c - f) (until issue 45);
- t: Student t with n - 1 degrees of freedom, the same s^2;
- t+bin(l): t with s^2 at least l p(1 - p), p the Agresti-Coull point of the audited labels;
- t+pseudo(w): t with w correct and w wrong pseudo-rows at the audited mean f in s^2 (w = 0.25: issue 45's);
- score(w): a Wilson-type score interval on the PPI estimate with the effective sample size
  n p(1 - p) / s^2 (s^2 with the pseudo-rows of weight w);
- ppi-score: a score set with Var(c - f) at theta0 exact given the audited correct (or wrong) rows'
  mean f;
- model-score: the score set {theta0 : (theta - theta0)^2 <= q^2 (1 - n/N) V(theta0) / n}, V the
  correctness model's variance of c - f with its intercept moved to theta0 (q: z or t), alone and
  joined with t+pseudo(0.25) (mano's, with z) or the others;
- t+pseudo ∪ t-score(floor l): joined with the score set of the variance l theta0 (1 - theta0);
- bernstein: the empirical Bernstein bound (Maurer and Pontil 2009), range 2;
- wilson, clopper-pearson: the labels alone, and each joined with t+pseudo(0.25).
Prints, per candidate and n, the worst (model, accuracy) coverage below 0.95 and at 0.95-0.999 per
model quality, the worst predicted set coverage per model, and the mean width over today's
(t+pseudo(0.25)); --json keeps every (model, kind, n, candidate) cell.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/audit_candidates.py build/release/native/mano \
        bench/fashion_mnist_c bench/digits_c [--n 10,25,50,100,300] [--draws 100] \
        [--accuracies 0.5,0.8,0.9,0.95,0.97,0.99,0.995,0.999] [--qualities good,poor] [--sim-rows 2000] \
        [--json cells.json]
"""
import argparse
import json
import pathlib
import sys
import tempfile

import numpy as np
from scipy import stats
from scipy.special import expit, log_softmax

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from audit_report import model_sets, run, set_audits  # noqa: E402



def row_f(cal, logits):
    """f of every row, as the core computes it from the set's correctness histogram."""
    m = cal["correctness"]
    q = logits.astype(np.float64) / cal["options"]["temperature"]
    conf, pred = np.exp(log_softmax(q, axis=1)).max(1), q.argmax(1)
    cls = pred if m["classes"] == q.shape[1] else np.zeros_like(pred)
    cell = np.searchsorted(expit(np.array(m["edges"])), conf, side="right") * m["classes"] + cls
    cells = 20 * m["classes"]
    mean = np.clip((np.bincount(cell, conf, cells) / np.maximum(np.bincount(cell, minlength=cells), 1))[cell],
                   1e-12, 1 - 1e-12)
    eta = m["intercept"] + m["slope"] * (np.log(mean) - np.log1p(-mean))
    return expit(eta + (np.array(m["class_effects"])[cls] if m["class_effects"] else 0))


def clip(lo, hi):
    return np.clip(lo, 0, 1), np.clip(hi, 0, 1)


def score_set(theta, k, alpha, beta, f1, f2):
    """{theta0: (theta - theta0)^2 <= k (alpha + beta theta0 + f2 - (theta0 - f1)^2)}: the roots, NaN when empty."""
    a, b = 1 + k, -(2 * theta + k * (beta + 2 * f1))
    c = theta * theta - k * (alpha + f2 - f1 * f1)
    disc = b * b - 4 * a * c
    root = np.sqrt(np.where(disc >= 0, disc, np.nan))
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def hull(lo1, hi1, lo2, hi2):
    """The smallest interval holding both (the first alone where the second is empty)."""
    return np.fmin(lo1, lo2), np.fmax(hi1, hi2)


F_CLAMP = 1e-15  # f kept within [F_CLAMP, 1 - F_CLAMP] for its logit, as the core does (src/mano/audit/ppi.cpp)
SHIFT_RANGE = 60.0  # the intercept shifts tried, as the core's


def model_curve(f, points=4801):
    """(theta0, V(theta0)) at intercept shifts delta on a grid over [-SHIFT_RANGE, SHIFT_RANGE]: the
    mean of f_d = sigma(logit f + delta) over the set, and the variance of c - f over the set were
    each row correct with probability f_d: mean f_d (1 - f_d) + Var(f_d - f)."""
    values, counts = np.unique(f, return_counts=True)
    w = counts / counts.sum()
    v = np.clip(values, F_CLAMP, 1 - F_CLAMP)
    fd = expit((np.log(v) - np.log1p(-v))[None, :] + np.linspace(-SHIFT_RANGE, SHIFT_RANGE, points)[:, None])
    gap = fd - values
    return fd @ w, (fd * (1 - fd)) @ w + (gap * gap) @ w - (gap @ w) ** 2


def model_score_set(theta, k, curve):
    """The hull of {theta0 on the curve : (theta - theta0)^2 <= k V(theta0)}; NaN where empty."""
    grid, var = curve
    inside = (theta[:, None] - grid[None, :]) ** 2 <= k * var[None, :]
    any_in = inside.any(1)
    lo = np.where(any_in, grid[np.argmax(inside, 1)], np.nan)
    hi = np.where(any_in, grid[len(grid) - 1 - np.argmax(inside[:, ::-1], 1)], np.nan)
    return lo, hi


def candidates(r, f, c, whole_mean, big_n, level, f2, curve):
    """{name: (lower, upper)} for audits r = c - f (draws x n) of a set of big_n rows whose f has mean
    whole_mean and mean square f2."""
    n = r.shape[1]
    fpc, theta, s2 = 1 - n / big_n, whole_mean + r.mean(1), r.var(1, ddof=1)
    z, tq = stats.norm.ppf(0.5 + level / 2), stats.t.ppf(0.5 + level / 2, n - 1)
    p = (c.sum(1) + z * z / 2) / (n + z * z)
    out = {}

    def symmetric(name, q, v):
        half = q * np.sqrt(fpc * v / n)
        out[name] = clip(theta - half, theta + half)
        return theta - half, theta + half

    symmetric("z", z, s2)
    lo_plain, hi_plain = symmetric("t", tq, s2)
    for lam in (0.1, 0.25):
        symmetric(f"t+bin({lam})", tq, np.maximum(s2, lam * p * (1 - p)))
    pseudo = {}
    for w in (0.1, 0.25, 0.5, z * z / 2):
        g = f.mean(1)
        m = (r.sum(1) + w * (1 - 2 * g)) / (n + 2 * w)
        s2w = (((r - m[:, None]) ** 2).sum(1) + w * ((1 - g - m) ** 2 + (g + m) ** 2)) / (n + 2 * w - 1)
        pseudo[w] = symmetric(f"t+pseudo({w:.2f})", tq, s2w)
        k = z * z * fpc * s2w / (n * p * (1 - p))  # z^2 / the effective sample size
        th = np.clip(theta, 0, 1)
        center, half = (th + k / 2) / (1 + k), np.sqrt(k * th * (1 - th) + k * k / 4) / (1 + k)
        out[f"score({w:.2f})"] = clip(center - half, center + half)
    lo_t, hi_t = pseudo[0.25]
    # Var(c - f) at theta0, exact given the mean f of the audited correct (or wrong) rows: E[c(1 - 2f)] + E f^2 - (theta0 - E f)^2
    good = c.sum(1)
    a_hat = (c * f).sum(1) / np.maximum(good, 1)
    b_hat = ((1 - c) * f).sum(1) / np.maximum(n - good, 1)
    by_right = good >= n - good
    alpha = np.where(by_right, 0.0, 1 - 2 * whole_mean - (1 - 2 * b_hat))
    beta = np.where(by_right, 1 - 2 * a_hat, 1 - 2 * b_hat)
    for name, q in (("z", z), ("t", tq)):
        lo_s, hi_s = score_set(theta, q * q * fpc / n, alpha, beta, whole_mean, f2)
        out[f"ppi-score({name})"] = clip(np.where(np.isnan(lo_s), lo_t, lo_s), np.where(np.isnan(hi_s), hi_t, hi_s))
    for name, q in (("z", z), ("t", tq)):
        lo_s, hi_s = model_score_set(theta, q * q * fpc / n, curve)
        out[f"model-score({name})"] = clip(np.where(np.isnan(lo_s), lo_t, lo_s), np.where(np.isnan(hi_s), hi_t, hi_s))
        out[f"t+pseudo ∪ model-score({name})"] = clip(*hull(lo_t, hi_t, lo_s, hi_s))
        if name == "z":
            out["t ∪ model-score(z)"] = clip(*hull(lo_plain, hi_plain, lo_s, hi_s))
            out["t+pseudo(0.10) ∪ model-score(z)"] = clip(*hull(*pseudo[0.1], lo_s, hi_s))
    for lam in (0.25, 0.5, 1.0):  # the variance at least lam theta0 (1 - theta0): the pseudo-row interval and a score set
        lo_s, hi_s = score_set(theta, lam * tq * tq * fpc / n, 0.0, 1.0, 0.0, 0.0)
        out[f"t+pseudo ∪ t-score(floor {lam})"] = clip(*hull(lo_t, hi_t, lo_s, hi_s))
    log_term = np.log(2 / (1 - level))
    half = np.sqrt(2 * fpc * s2 * log_term / n) + 7 * 2 * log_term / (3 * (n - 1))
    out["bernstein"] = clip(theta - half, theta + half)
    k = c.sum(1)
    ph, z2 = k / n, z * z
    center, half = (ph + z2 / (2 * n)) / (1 + z2 / n), z * np.sqrt(ph * (1 - ph) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    out["wilson"] = clip(center - half, center + half)
    out["t+pseudo ∪ wilson"] = clip(*hull(lo_t, hi_t, center - half, center + half))
    cp_lo = np.where(k > 0, stats.beta.ppf((1 - level) / 2, k, n - k + 1), 0.0)
    cp_hi = np.where(k < n, stats.beta.ppf((1 + level) / 2, k + 1, n - k), 1.0)
    out["clopper-pearson"] = (cp_lo, cp_hi)
    out["t+pseudo ∪ clopper-pearson"] = clip(*hull(lo_t, hi_t, cp_lo, cp_hi))
    return out


def main(args):
    ns = [int(x) for x in args.n.split(",")]
    args.accuracies = [float(x) for x in args.accuracies.split(",")]
    args.qualities = args.qualities.split(",")
    rng = np.random.default_rng(45)
    agg = {}
    for manifest in [m for b in args.bench for m in sorted(pathlib.Path(b, "data").glob("*/manifest.json"))]:
        if args.models and manifest.parent.name not in args.models.split(","):
            continue
        model = f"{manifest.parent.parent.parent.name.split('_')[0]} {manifest.parent.name}"
        fit_on, sets = model_sets(args, manifest)
        with tempfile.TemporaryDirectory() as tmp:
            cal_path = pathlib.Path(tmp, "cal.json")
            run(args.mano, "calibrate", manifest, *[a for g in fit_on for a in ("--group", g)], "-o", cal_path, "--quiet")
            cal = json.loads(cal_path.read_text())
            for index, (name, kind, _, logits, labels) in enumerate(sets):
                f, c = row_f(cal, logits), (logits.argmax(1) == labels).astype(float)
                truth, big_n = c.mean(), len(c)
                if index == 0:  # the replica against the core: the audited estimate of one draw of 100
                    a = set_audits(cal_path.read_text(), logits, labels).draw(100, 0, args.level)
                    rows = np.array(__import__("mano")._core.audit_sample(big_n, 100, 0)["rows"])
                    replica = f.mean() + (c[rows] - f[rows]).mean()
                    if abs(replica - a["accuracy"]) > 1e-3:
                        raise SystemExit(f"{model}: the replica's estimate {replica} is not the core's {a['accuracy']}")
                kind, curve = kind or ("predicted",), model_curve(f)
                for n in (n for n in ns if n < big_n):
                    idx = np.argpartition(rng.random((args.draws, big_n)), n, axis=1)[:, :n]
                    cands = candidates(c[idx] - f[idx], f[idx], c[idx], f.mean(), big_n, args.level, (f * f).mean(),
                                       curve)
                    for cand, (lo, hi) in cands.items():
                        agg.setdefault((model, kind, n, cand), []).append(
                            (np.mean((lo <= truth) & (truth <= hi)), np.mean(hi - lo)))
        print(f"{model}: done", file=sys.stderr, flush=True)
    rows = [{"model": m, "kind": list(kd), "n": n, "candidate": cand, "coverage": float(np.mean([v[0] for v in vs])),
             "width": float(np.mean([v[1] for v in vs])), "sets": len(vs)} for (m, kd, n, cand), vs in agg.items()]
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows))
    summary(rows, ns, args.accuracies, args.qualities)


def summary(rows, ns, accuracies, qualities):
    """Per candidate and n: the worst (model, accuracy) coverage at 0.95-0.999 and below, per model
    quality, and the mean width relative to today's interval (t+pseudo(0.25))."""
    base = {(r["model"], tuple(r["kind"]), r["n"]): r["width"] for r in rows if r["candidate"] == "t+pseudo(0.25)"}
    print("| candidate | n | " + " | ".join(f"{q}: worst < 0.95 | {q}: worst 0.95–0.999" for q in qualities) +
          " | predicted: worst model | width / today's (mean) |")
    print("|---|---:|" + "---:|" * (2 * len(qualities) + 2))
    for cand in dict.fromkeys(r["candidate"] for r in rows):
        for n in ns:
            mine = [r for r in rows if r["candidate"] == cand and r["n"] == n]
            cells = []
            for q in qualities:
                for near in (False, True):
                    cov = [r["coverage"] for r in mine if r["kind"][0] != "predicted" and r["kind"][1] == q and
                           (r["kind"][0] >= 0.95) == near]
                    cells.append(f"{100 * min(cov):.1f}%" if cov else "")
            pred = [r["coverage"] for r in mine if r["kind"][0] == "predicted"]
            ratio = np.mean([r["width"] / base[(r["model"], tuple(r["kind"]), n)] for r in mine])
            print(f"| {cand} | {n} | " + " | ".join(cells) + f" | {100 * min(pred):.1f}% | {ratio:.3f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mano")
    parser.add_argument("bench", nargs="+")
    parser.add_argument("--n", default="10,25,50,100,300")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--accuracies", default="0.5,0.8,0.9,0.95,0.97,0.99,0.995,0.999")
    parser.add_argument("--qualities", default="good,poor",
                        help="good: the set's own wrong rows; poor: errors the model cannot see")
    parser.add_argument("--sim-rows", type=int, default=2000)
    parser.add_argument("--models", default="")
    parser.add_argument("--json", default="")
    main(parser.parse_args())

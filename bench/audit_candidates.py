"""The candidates for the audited interval (docs/audit.md, "The interval"), measured side by side:
on the protocol of bench/audit_report.py (its calibration, predicted sets and sets simulated at
accuracies 0.5, 0.8, 0.97 and 0.99), seeded audits of n rows, each read by every candidate in a
NumPy replica of the core's PPI (f of a row: the correctness model at its cell with the set's mean
confidence there; the replica is checked against the core's audited estimate):
- z: today's (until issue 45) normal quantile with the audited rows' s^2(c - f);
- t: Student t with n - 1 degrees of freedom, the same s^2;
- t+bin(l): t with s^2 at least l p(1 - p), p the Agresti-Coull point of the audited labels;
- t+pseudo(w): t with w correct and w wrong pseudo-rows at the audited mean f in s^2 (mano's, w = 0.25);
- score(w): a Wilson-type score interval on the PPI estimate with the effective sample size
  n p(1 - p) / s^2 (s^2 with the pseudo-rows of weight w);
- bernstein: the empirical Bernstein bound (Maurer and Pontil 2009), range 2;
- wilson: the labels alone.
Prints, per n, the worst (model, accuracy) coverage, the mean coverage per accuracy (and on the
predicted sets of accuracy >= 0.965 and the rest), the mean width, and the mean width on the
Fashion predicted sets.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/audit_candidates.py build/release/native/mano \
        bench/fashion_mnist_c bench/digits_c [--n 10,25,100] [--draws 200]
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

ACCURACIES = (0.5, 0.8, 0.97, 0.99)


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


def candidates(r, f, c, whole_mean, big_n, level):
    """{name: (lower, upper)} for audits r = c - f (draws x n) of a set of big_n rows."""
    n = r.shape[1]
    fpc, theta, s2 = 1 - n / big_n, whole_mean + r.mean(1), r.var(1, ddof=1)
    z, tq = stats.norm.ppf(0.5 + level / 2), stats.t.ppf(0.5 + level / 2, n - 1)
    p = (c.sum(1) + z * z / 2) / (n + z * z)
    out = {}

    def symmetric(name, q, v):
        half = q * np.sqrt(fpc * v / n)
        out[name] = clip(theta - half, theta + half)

    symmetric("z", z, s2)
    symmetric("t", tq, s2)
    for lam in (0.1, 0.25):
        symmetric(f"t+bin({lam})", tq, np.maximum(s2, lam * p * (1 - p)))
    for w in (0.25, 0.5, z * z / 2):
        g = f.mean(1)
        m = (r.sum(1) + w * (1 - 2 * g)) / (n + 2 * w)
        s2w = (((r - m[:, None]) ** 2).sum(1) + w * ((1 - g - m) ** 2 + (g + m) ** 2)) / (n + 2 * w - 1)
        symmetric(f"t+pseudo({w:.2f})", tq, s2w)
        k = z * z * fpc * s2w / (n * p * (1 - p))  # z^2 / the effective sample size
        th = np.clip(theta, 0, 1)
        center, half = (th + k / 2) / (1 + k), np.sqrt(k * th * (1 - th) + k * k / 4) / (1 + k)
        out[f"score({w:.2f})"] = clip(center - half, center + half)
    log_term = np.log(2 / (1 - level))
    half = np.sqrt(2 * fpc * s2 * log_term / n) + 7 * 2 * log_term / (3 * (n - 1))
    out["bernstein"] = clip(theta - half, theta + half)
    k = c.sum(1)
    ph, z2 = k / n, z * z
    center, half = (ph + z2 / (2 * n)) / (1 + z2 / n), z * np.sqrt(ph * (1 - ph) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    out["wilson"] = clip(center - half, center + half)
    return out


def main(args):
    ns = [int(x) for x in args.n.split(",")]
    args.accuracies, args.sim_rows = list(ACCURACIES), 500
    rng = np.random.default_rng(45)
    agg = {}
    for manifest in [m for b in args.bench for m in sorted(pathlib.Path(b, "data").glob("*/manifest.json"))]:
        model = f"{manifest.parent.parent.parent.name.split('_')[0]} {manifest.parent.name}"
        fit_on, sets = model_sets(args, manifest)
        with tempfile.TemporaryDirectory() as tmp:
            cal_path = pathlib.Path(tmp, "cal.json")
            run(args.mano, "calibrate", manifest, *[a for g in fit_on for a in ("--group", g)], "-o", cal_path, "--quiet")
            cal = json.loads(cal_path.read_text())
            for index, (name, accuracy, _, logits, labels) in enumerate(sets):
                f, c = row_f(cal, logits), (logits.argmax(1) == labels).astype(float)
                truth, big_n = c.mean(), len(c)
                if index == 0:  # the replica against the core: the audited estimate of one draw of 100
                    a = set_audits(cal_path.read_text(), logits, labels).draw(100, 0, args.level)
                    rows = np.array(json.loads(__import__("mano")._core.audit_sample(big_n, 100, 0))["rows"])
                    replica = f.mean() + (c[rows] - f[rows]).mean()
                    if abs(replica - a["accuracy"]) > 1e-3:
                        raise SystemExit(f"{model}: the replica's estimate {replica} is not the core's {a['accuracy']}")
                kind = accuracy if accuracy is not None else ("predicted >= 0.965" if truth >= 0.965 else "predicted")
                for n in ns:
                    idx = np.argsort(rng.random((args.draws, big_n)), 1)[:, :n]
                    for cand, (lo, hi) in candidates(c[idx] - f[idx], f[idx], c[idx], f.mean(), big_n, args.level).items():
                        agg.setdefault((model, kind, n, cand), []).append(
                            (np.mean((lo <= truth) & (truth <= hi)), np.mean(hi - lo)))
        print(f"{model}: done", file=sys.stderr, flush=True)
    kinds = [*ACCURACIES, "predicted >= 0.965", "predicted"]
    for n in ns:
        print(f"\n| n = {n} | worst (model, accuracy) | " + " | ".join(map(str, kinds)) +
              " | width at " + ", ".join(map(str, ACCURACIES)) + " | width, Fashion predicted sets |")
        print("|---|---:|" + "---:|" * len(kinds) + "---|---:|")
        for cand in dict.fromkeys(k[3] for k in agg):
            cov = {(m, kd): np.mean([v[0] for v in vs]) for (m, kd, nn, cc), vs in agg.items() if nn == n and cc == cand}
            wid = {(m, kd): np.mean([v[1] for v in vs]) for (m, kd, nn, cc), vs in agg.items() if nn == n and cc == cand}
            worst = min(v for (m, kd), v in cov.items() if kd in ACCURACIES)
            by_kind = [np.mean([v for (m, kd), v in cov.items() if kd == k]) for k in kinds]
            widths = [np.mean([v for (m, kd), v in wid.items() if kd == k]) for k in ACCURACIES]
            fashion = [np.mean([v for (m, kd), v in wid.items() if m == model and kd in kinds[4:]])
                       for model in dict.fromkeys(m for m, _ in wid) if model.startswith("fashion")]
            print(f"| {cand} | {100 * worst:.1f}% | " + " | ".join(f"{100 * x:.1f}%" for x in by_kind) + " | " +
                  ", ".join(f"{x:.3f}" for x in widths) + f" | {min(fashion):.3f}–{max(fashion):.3f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mano")
    parser.add_argument("bench", nargs="+")
    parser.add_argument("--n", default="10,25,100")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--level", type=float, default=0.9)
    main(parser.parse_args())

"""MLLS and CBPE (`mano score --methods mlls,cbpe`), the label-shift check and the routing of
`mano predict`, against an independent reference: SciPy's L-BFGS on the source NLL for the
(bias-corrected) temperature scaling, NumPy's EM for the priors.
Run: /usr/bin/python3 tests/estimators/test_mlls.py build/release/native/mano"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax
from scipy.stats import norm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "cli"))
from harness import check, finish  # noqa: E402
from line_reference import own_ends, spread_values  # noqa: E402

mano = sys.argv[1]


def run(*args):
    return subprocess.run([mano, *map(str, args)], capture_output=True, text=True)


def fit_calibration(q, y, bias=True):
    """a, b (b_0 = 0) minimizing the mean NLL of softmax(a log softmax(q) + b)."""
    logp = log_softmax(q, axis=1)
    k = q.shape[1]

    def nll(x):
        b = np.r_[0.0, x[1:]] if bias else np.zeros(k)
        return -log_softmax(x[0] * logp + b, axis=1)[np.arange(len(y)), y].mean()

    x = minimize(nll, np.r_[1.0, np.zeros(k - 1)] if bias else np.array([1.0]), method="L-BFGS-B",
                 options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000}).x
    return x[0], (np.r_[0.0, x[1:]] if bias else np.zeros(k))


def em_step(P, priors, source_priors):
    Q = P * (priors / source_priors)
    return (Q / Q.sum(1, keepdims=True)).mean(0)


def em(P, source_priors, tol=1e-10, limit=20000):
    w = np.ones(P.shape[1])
    priors = source_priors
    for i in range(1, limit + 1):
        Q = P * w
        Q /= Q.sum(1, keepdims=True)
        new = Q.mean(0)
        moved = np.abs(new - priors).max()
        priors, w = new, new / source_priors
        if moved < tol:
            break
    Q = P * w
    return Q / Q.sum(1, keepdims=True), priors, i


def reference(qs, ys, qt):
    k = qs.shape[1]
    a, b = fit_calibration(qs, ys)
    calibrate = lambda q: softmax(a * log_softmax(q, axis=1) + b, axis=1)
    pi = np.bincount(ys, minlength=k) / len(ys)
    Ps, Pt = calibrate(qs), calibrate(qt)
    by_class = np.array([Ps.max(1)[ys == c].mean() for c in range(k)])
    Q, priors, iterations = em(Pt, pi)
    predicted = qt.argmax(1)
    f = Q[np.arange(len(qt)), predicted]
    conf = Pt.max(1)
    # the dominant class (the largest prior): its calibrated probability over the rows predicted it,
    # in the set and in the source (src/mano/prediction/label_shift_check.hpp)
    d = int(np.argmax(priors))
    set_d, source_d = Pt[predicted == d, d], Ps[qs.argmax(1) == d, d]
    dominant = {"class": d, "gap": source_d.mean() - set_d.mean(),
                "se": np.hypot(set_d.std(ddof=1) / np.sqrt(len(set_d)), source_d.std(ddof=1) / np.sqrt(len(source_d)))}
    # the error of each class's source calibration at the priors: sqrt(sum pi_y^2 c_y (1 - c_y) / n_y)
    class_se = np.sqrt(np.sum(priors ** 2 * by_class * (1 - by_class) / (pi * len(ys))))
    a1, _ = fit_calibration(qs, ys, bias=False)
    cbpe = softmax(a1 * log_softmax(qt, axis=1), axis=1).max(1)
    return {"P": Pt, "pi": pi, "accuracy": f.mean(), "se": np.sqrt((f * (1 - f)).sum()) / len(qt), "priors": priors,
            "iterations": iterations, "confidence": conf.mean(), "confidence_se": conf.std(ddof=1) / np.sqrt(len(qt)),
            "expected_confidence": priors @ by_class, "dominant": dominant, "class_se": class_se,
            "source_prior": pi[d], "cbpe": cbpe.mean(), "cbpe_se": cbpe.std(ddof=1) / np.sqrt(len(qt))}


def make(rng, n, k, proportions, noise=1.0, strength=2.5):
    y = rng.choice(k, size=n, p=proportions)
    return rng.normal(size=(n, k)) * noise + strength * np.eye(k)[y] + 0.3 * np.arange(k) / k, y


with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    rng = np.random.default_rng(31)
    k = 4
    qs, ys = make(rng, 600, k, np.full(k, 1 / k))
    np.save(tmp / "s.npy", qs)
    np.save(tmp / "ys.npy", ys)
    source = ["--source-logits", tmp / "s.npy", "--source-labels", tmp / "ys.npy"]
    for case, proportions in enumerate([[0.25] * 4, [0.55, 0.25, 0.15, 0.05], [0.1, 0.1, 0.2, 0.6]]):
        qt, yt = make(rng, 400, k, proportions)
        np.save(tmp / "t.npy", qt)
        want = reference(qs, ys, qt)
        proc = run("score", tmp / "t.npy", *source, "--methods", "mlls,cbpe", "--json")
        if proc.returncode != 0:
            check(False, f"case {case}: mano score failed: {proc.stderr.strip()}")
            continue
        got = json.loads(proc.stdout)["methods"]
        m = got["mlls"]
        # the optimizers stop at different points of a flat optimum: 1e-6 on what they feed
        close = lambda x, y, tol=1e-6: abs(x - y) <= tol
        check(close(m["accuracy"], want["accuracy"]) and close(m["se"], want["se"]),
              f"case {case}: mlls accuracy {m['accuracy']:.8f} se {m['se']:.8f} vs NumPy {want['accuracy']:.8f} {want['se']:.8f}")
        check(np.allclose(m["priors"], want["priors"], atol=1e-6, rtol=0),
              f"case {case}: mlls priors {np.round(m['priors'], 6)} vs NumPy {np.round(want['priors'], 6)}")
        # mano's EM is accelerated (Anderson): fewer passes than plain EM, to the same fixed point,
        # where one plain EM step in NumPy moves no prior by more than the tolerance
        step = np.abs(em_step(want["P"], np.array(m["priors"]), want["pi"]) - m["priors"]).max()
        check(m["converged"] and m["iterations"] <= want["iterations"] and step < 1e-7,
              f"case {case}: EM converged in {m['iterations']} passes (plain EM in NumPy: {want['iterations']} steps); "
              f"a NumPy EM step from its priors moves them by {step:.1e}")
        check(all(close(m[key], want[key]) for key in ("confidence", "confidence_se", "expected_confidence")),
              f"case {case}: the label-shift check's confidence {m['confidence']:.6f} (se {m['confidence_se']:.6f}), "
              f"expected {m['expected_confidence']:.6f} vs NumPy {want['confidence']:.6f}, {want['expected_confidence']:.6f}")
        check(close(got["cbpe"]["accuracy"], want["cbpe"]) and close(got["cbpe"]["se"], want["cbpe_se"]),
              f"case {case}: cbpe {got['cbpe']['accuracy']:.8f} vs NumPy {want['cbpe']:.8f}")

    # streaming and merging: two shards give the whole set's values
    common = [*source, "--methods", "mlls,cbpe", "--quiet"]
    np.save(tmp / "a.npy", qt[:150])
    np.save(tmp / "b.npy", qt[150:])
    run("score", tmp / "a.npy", "--emit-state", tmp / "a.json", *common)
    run("score", tmp / "b.npy", "--emit-state", tmp / "b.json", *common)
    merged = run("merge", tmp / "a.json", tmp / "b.json", "--json")
    whole = run("score", tmp / "t.npy", *common[:-1], "--json")
    if merged.returncode == 0 and whole.returncode == 0:
        a, b = json.loads(merged.stdout)["methods"], json.loads(whole.stdout)["methods"]
        check(abs(a["mlls"]["accuracy"] - b["mlls"]["accuracy"]) <= 1e-12 and
              abs(a["cbpe"]["accuracy"] - b["cbpe"]["accuracy"]) <= 1e-12,
              f"two shards merged: mlls {a['mlls']['accuracy']} cbpe {a['cbpe']['accuracy']} vs the whole set "
              f"{b['mlls']['accuracy']} {b['cbpe']['accuracy']}")
    else:
        check(False, f"merge: {merged.stderr.strip()} {whole.stderr.strip()}")

    # the routing in predict: calibrate on shifted sets (groups), predict a label-shift set and a
    # corrupted one; the regime follows the check, whose numbers the reference recomputes
    sets = []
    for g, (noise, strength) in enumerate([(1.0, 2.5), (1.6, 2.0), (2.2, 1.6)]):
        for j in range(2):
            q, y = make(rng, 300, k, np.full(k, 1 / k), noise, strength + 0.2 * j)
            np.save(tmp / f"c{g}{j}.npy", q)
            np.save(tmp / f"c{g}{j}_y.npy", y)
            sets.append({"name": f"c{g}{j}", "group": f"g{g}", "logits": f"c{g}{j}.npy", "labels": f"c{g}{j}_y.npy"})
    (tmp / "m.json").write_text(json.dumps({"source": {"logits": "s.npy", "labels": "ys.npy"}, "sets": sets}))
    proc = run("calibrate", tmp / "m.json", "-o", tmp / "cal.json", "--quiet")
    check(proc.returncode == 0, f"calibrate with a source set: {proc.stderr.strip()}")
    qa, ya = make(rng, 500, k, [0.5, 0.3, 0.15, 0.05])  # label shift of the source
    qb, yb = make(rng, 500, k, np.full(k, 1 / k), 1.8, 2.0)  # a corruption: noisier, and overconfident
    qb *= 3
    qc, yc = make(rng, 500, k, [0.85, 0.05, 0.05, 0.05])  # one dominant class: label shift all the same
    level = 0.9
    cal = json.loads((tmp / "cal.json").read_text())
    residuals = np.abs(cal["options"]["source"]["fitted"]["mlls"]["residuals"])
    check(len(residuals) == 48, f"the source's resampled residuals: {len(residuals)}")
    for name, q, y, want_regime in [("a", qa, ya, "label_shift"), ("b", qb, yb, "general"), ("c", qc, yc, "label_shift")]:
        np.save(tmp / f"{name}.npy", q)
        proc = run("predict", "--calibration", tmp / "cal.json", tmp / f"{name}.npy", "--json", "--quiet")
        if proc.returncode != 0:
            check(False, f"predict {name}: {proc.stderr.strip()}")
            continue
        s = json.loads(proc.stdout.splitlines()[0])
        want = reference(qs, ys, q)
        gap = abs(want["confidence"] - want["expected_confidence"])
        dominant = want["dominant"]
        collapsed = max(want["priors"]) > want["source_prior"] and dominant["gap"] > 0.02 + 3 * dominant["se"]
        passed = gap <= 0.02 + 3 * want["confidence_se"] and not collapsed and len(q) >= 10
        got_dominant = s["label_shift"].get("dominant", {"class": -1, "gap": np.inf, "se": np.inf})
        check(s["label_shift"]["passed"] == passed and abs(s["label_shift"]["gap"] - gap) <= 1e-6 and
              abs(s["label_shift"]["max_prior"] - max(want["priors"])) <= 1e-6 and
              (not passed or max(want["priors"]) <= want["source_prior"] or
               (got_dominant["class"] == dominant["class"] and abs(got_dominant["gap"] - dominant["gap"]) <= 1e-6 and
                abs(got_dominant["se"] - dominant["se"]) <= 1e-6)),
              f"set {name}: the label-shift check {s['label_shift']} vs NumPy gap {gap:.6f} dominant {dominant} "
              f"passed {passed}")
        check(s["estimate"]["regime"] == want_regime, f"set {name}: regime {s['estimate']['regime']}, want {want_regime}")
        if want_regime == "label_shift":
            m = len(residuals)
            rank = int(np.ceil(level * (m + 1) - 1e-9))
            q_res = np.sort(residuals)[min(rank, m) - 1]
            z = norm.ppf(0.5 + level / 2)
            half = max(0.01, np.sqrt(q_res ** 2 + z ** 2 * (want["se"] ** 2 + want["class_se"] ** 2)))
            # for the set's own accuracy: the binomial mixture of its rows at the interval's quantiles
            own_lo, own_hi = own_ends(spread_values(want["accuracy"], half, level, 0), np.ones(200), 200.0, len(q), level)
            want_lo, want_hi = max(0, min(own_lo, want["accuracy"] - half)), min(1, max(own_hi, want["accuracy"] + half))
            # a weak check, or priors at the simplex's edge: the interval holds the general regime's too
            if 3 * want["confidence_se"] > 0.02 or len(q) * (1 - max(want["priors"])) < 3:
                general = s["methods"][next(r["method"] for r in cal["ranking"] if r["method"] in s["methods"])]["interval"]
                want_lo, want_hi = min(want_lo, general[0]), max(want_hi, general[1])
            lo, hi = s["estimate"]["interval"]
            check(s["estimate"]["method"] == "mlls" and abs(s["estimate"]["accuracy"] - want["accuracy"]) <= 1e-6 and
                  abs(lo - want_lo) <= 1e-6 and abs(hi - want_hi) <= 1e-6,
                  f"set {name}: the MLLS estimate {s['estimate']} vs NumPy {want['accuracy']:.6f} -/+ {half:.6f}")
        else:
            ranking = [r["method"] for r in cal["ranking"]]
            check(s["estimate"]["method"] == ranking[0], f"set {name}: the general estimate by {s['estimate']['method']}, "
                                                         f"want the lowest held-out error {ranking[0]}")

    # bad input: one clear line and exit 2
    for methods, needle in [("mlls", "mlls needs"), ("cbpe", "cbpe needs")]:
        proc = run("score", tmp / "t.npy", "--methods", methods)
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and needle in lines[0] and "--source-logits" in lines[0],
              f"{methods} without a source set: {proc.stderr.strip()!r}")
    # a class without source rows: add-1/2 priors, no bias (a alone), still an estimate
    ys3 = np.minimum(ys, 2)
    np.save(tmp / "ys3.npy", ys3)
    proc = run("score", tmp / "t.npy", "--source-logits", tmp / "s.npy", "--source-labels", tmp / "ys3.npy", "--methods", "mlls",
               "--json")
    if proc.returncode == 0:
        a, _ = fit_calibration(qs, ys3, bias=False)
        pi = (np.bincount(ys3, minlength=k) + 0.5) / (len(ys3) + 0.5 * k)
        Q, _, _ = em(softmax(a * log_softmax(qt, axis=1), axis=1), pi)
        want = Q[np.arange(len(qt)), qt.argmax(1)].mean()
        got = json.loads(proc.stdout)["methods"]["mlls"]["accuracy"]
        check(abs(got - want) <= 1e-6, f"a class without source rows: mlls {got:.8f} vs NumPy (add-1/2 priors, no bias) {want:.8f}")
    else:
        check(False, f"mlls with a class missing from the source labels: {proc.stderr.strip()!r}")

finish()

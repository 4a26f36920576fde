"""COTT (`mano score --methods cott`) against an independent reference built on POT: the N x N
assignment of one-hot label vectors to softmax rows (ot.emd), as in the authors' code, with the
threshold rule mano documents (the largest cost above which the source plan's mass is nearest the
source error). Run: /usr/bin/python3 tests/estimators/test_cott.py build/release/native/mano"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import ot

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

mano = sys.argv[1]


def softmax(q, t=1.0):
    z = q / t - (q / t).max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def plan_costs(onehot_labels, probs):
    """The costs 1 - p_ic of the pairs an optimal N x N assignment uses, each of mass 1/N."""
    n = len(probs)
    cost = 1.0 - probs[:, onehot_labels].T  # label row i to softmax row j
    plan = ot.emd(np.full(n, 1.0 / n), np.full(n, 1.0 / n), cost)
    rows, cols = np.nonzero(plan > 0.5 / n / n)
    return cost[rows, cols], plan[rows, cols]


def reference(source, source_labels, target, temperature=1.0):
    k = source.shape[1]
    ps, pt = softmax(source, temperature), softmax(target, temperature)
    costs, mass = plan_costs(source_labels, ps)
    error = np.mean(ps.argmax(1) != source_labels)
    best, best_gap = None, np.inf
    for t in sorted(set(costs), reverse=True):
        gap = abs(mass[costs > t].sum() - error)
        if gap < best_gap - 1e-12:
            best, best_gap = t, gap
    # the target's one-hot side: the uniform label marginal, N / K labels of each class
    labels = np.repeat(np.arange(k), len(target) // k)
    costs, mass = plan_costs(labels, pt)
    return 1.0 - mass[costs > best].sum(), best


def run(*args):
    return subprocess.run([mano, *map(str, args)], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    rng = np.random.default_rng(11)
    k, n = 5, 250
    for case, (shift, temperature) in enumerate([(0.0, 1.0), (1.0, 1.0), (2.0, 1.0), (1.0, 1.7)]):
        ys = rng.integers(0, k, 300)
        source = rng.normal(size=(300, k)) + 2.0 * np.eye(k)[ys]
        yt = rng.integers(0, k, n)
        target = rng.normal(size=(n, k)) * (1 + shift / 2) + (2.0 - shift) * np.eye(k)[yt]
        np.save(tmp / "s.npy", source)
        np.save(tmp / "ys.npy", ys)
        np.save(tmp / "t.npy", target)
        want, want_t = reference(source, ys, target, temperature)
        proc = run("score", tmp / "t.npy", "--source-logits", tmp / "s.npy", "--source-labels", tmp / "ys.npy",
                   "--methods", "cott", "--temperature", temperature, "--json")
        got = json.loads(proc.stdout)["methods"]["cott"] if proc.returncode == 0 else {}
        check(proc.returncode == 0 and abs(got["accuracy"] - want) <= 1e-12 and abs(got["threshold"] - want_t) <= 1e-6,
              f"case {case}: cott {got} vs POT reference accuracy {want:.6f}, threshold {want_t:.9f} {proc.stderr.strip()}")

        if case == 1:
            # the threshold reproduces the source error: the source scored on itself, with the label
            # frequencies as its marginal (as the fit uses), gets its own accuracy
            proc = run("score", tmp / "s.npy", "--source-logits", tmp / "s.npy", "--source-labels", tmp / "ys.npy",
                       "--methods", "cott", "--label-marginal", "source", "--json")
            acc = np.mean(source.argmax(1) == ys)
            got = json.loads(proc.stdout)["methods"]["cott"]["accuracy"] if proc.returncode == 0 else -1
            check(abs(got - acc) <= 1e-12, f"the source scored on itself: cott {got} vs its accuracy {acc} {proc.stderr.strip()}")
            # two shards merged give the whole set's value
            common = ["--source-logits", tmp / "s.npy", "--source-labels", tmp / "ys.npy", "--methods", "cott", "--quiet"]
            np.save(tmp / "a.npy", target[:100])
            np.save(tmp / "b.npy", target[100:])
            run("score", tmp / "a.npy", "--emit-state", tmp / "a.json", *common)
            run("score", tmp / "b.npy", "--emit-state", tmp / "b.json", *common)
            proc = run("merge", tmp / "a.json", tmp / "b.json", "--json")
            whole = run("score", tmp / "t.npy", *common[:-1], "--json")
            a = json.loads(proc.stdout)["methods"]["cott"]["accuracy"] if proc.returncode == 0 else -1
            b = json.loads(whole.stdout)["methods"]["cott"]["accuracy"] if whole.returncode == 0 else -2
            check(a == b, f"two shards merged: cott {a} vs the whole set {b} {proc.stderr.strip()}")

    # bad input: one clear line and exit 2
    proc = run("score", tmp / "t.npy", "--methods", "cott")
    lines = proc.stderr.strip().splitlines()
    check(proc.returncode == 2 and len(lines) == 1 and "cott needs" in lines[0] and "--source-logits" in lines[0],
          f"cott without a source set: {proc.stderr.strip()!r}")

finish()

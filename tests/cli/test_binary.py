"""Binary models (K = 2: `--input binary-logit`, `binary-probability` or two logit columns) on the
CLI. MaNo's Taylor rows are one-hot at K = 2 whatever the logits (docs/methods.md#mano), so
softrun scores the softmax branch there: MaNo, the softrun ConfScore and the softrun Nuclear
against NumPy on softmax([0, z]); `--normalization taylor` is refused with one line; every
bounded score stays within its bounds; `score --emit-state` on row ranges then `merge` equals
one `score` for every method; and a family (`calibrate`) offers no Taylor variant.
Run: /usr/bin/python3 tests/cli/test_binary.py path/to/mano"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish, rel  # noqa: E402

MANO = sys.argv[1]
N = 3000


def run(*args):
    return subprocess.run([MANO, *map(str, args)], capture_output=True, text=True, timeout=300)


def score_json(*args):
    proc = run("score", "--json", "--quiet", *args)
    check(proc.returncode == 0, f"score {args}: {proc.stderr.strip()}")
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def binary_logits(rng, n, kind):
    """Class 1's logit z of n rows with labels y: 'usual' (a fair model, criterion below eta),
    'confident' (|z| = 40 on every row) or 'extreme' (|z| up to 800)."""
    y = rng.integers(0, 2, n)
    sign = 2 * y - 1
    if kind == "usual":
        z = sign * rng.gamma(2, 1.5, n) + rng.normal(0, 1.5, n)
    elif kind == "confident":
        z = sign * 40.0 + 0 * rng.normal(size=n)
    else:
        z = sign * rng.uniform(20, 800, n)
    return z, y


def as_input(z, layout):
    """The file and options for class 1's logits z in one layout."""
    if layout == "binary-logit":
        return z[:, None], ["--input", "binary-logit"]
    if layout == "binary-probability":
        return (0.5 * (1 + np.tanh(z / 2)))[:, None], ["--input", "binary-probability"]
    return np.stack([np.zeros_like(z), z], 1), []


def softmax_reference(z, p=4.0):
    """MaNo, ConfScore and Nuclear on softmax([0, z]) in float64, from the definitions."""
    p1 = 0.5 * (1 + np.tanh(z / 2))  # sigmoid(z), accurate for large |z|
    probs = np.stack([1 - p1, p1], 1)
    singular = np.linalg.svd(probs, compute_uv=False)
    return {"mano": float(np.mean(probs ** p) ** (1 / p)), "confscore": float(probs.max(1).mean()),
            "nuclear": float(singular.sum() / np.sqrt(len(z) * 2))}


def test_softrun_is_softmax(tmp):
    rng = np.random.default_rng(52)
    z, _ = binary_logits(rng, N, "usual")
    want = softmax_reference(z.astype(np.float32).astype(np.float64))
    for layout in ("binary-logit", "two columns"):
        x, extra = as_input(z, layout)
        np.save(tmp / "q.npy", x.astype(np.float32))
        for fixed in ([], ["--criterion", "1"]):
            r = score_json(tmp / "q.npy", *extra, *fixed)
            if r is None:
                continue
            m = r["methods"]
            what = f"{layout} {' '.join(fixed)}"
            check(m["mano"]["criterion"] < 5, f"{what}: a usual binary model's criterion is below eta: {m['mano']['criterion']}")
            check(m["mano"]["normalization"] == "softmax", f"{what}: softrun takes softmax at K = 2: {m['mano']}")
            check(rel(m["mano"]["score"], want["mano"]) < 1e-6, f"{what}: MaNo {m['mano']['score']} vs NumPy {want['mano']}")
            check(rel(m["confscore_softrun"]["score"], want["confscore"]) < 1e-6,
                  f"{what}: softrun ConfScore {m['confscore_softrun']['score']} vs NumPy {want['confscore']}")
            check(rel(m["nuclear_softrun"]["score"], want["nuclear"]) < 1e-6,
                  f"{what}: softrun Nuclear {m['nuclear_softrun']['score']} vs NumPy {want['nuclear']}")
            if not fixed:
                check(set(m["mano"]["variants"]) == {"softmax"}, f"{what}: no Taylor variant at K = 2: {m['mano']['variants']}")


def test_taylor_refused(tmp):
    z, _ = binary_logits(np.random.default_rng(3), 200, "usual")
    for layout in ("binary-logit", "two columns"):
        x, extra = as_input(z, layout)
        np.save(tmp / "q.npy", x.astype(np.float32))
        proc = run("score", tmp / "q.npy", *extra, "--normalization", "taylor", "--quiet")
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and "q.npy" in lines[0] and "not defined for 2 classes" in lines[0]
              and "normalization softmax" in lines[0] and "mano" in lines[0], f"{layout}: taylor at K = 2: {proc.stderr!r}")
        # a method that does not read MaNo's branch scores as it would with any normalization
        r = score_json(tmp / "q.npy", *extra, "--normalization", "taylor", "--methods", "confscore")
        check(r is not None and set(r["methods"]) == {"confscore"}, f"{layout}: taylor with confscore alone: {r}")


def methods_of(r):
    return {name: v.get("score", v.get("accuracy")) for name, v in r["methods"].items()}


def check_bounds(r, what):
    """The bounds every definition gives at K = 2: MaNo in [1/2, 2^(-1/p)], ConfScores in
    [1/2, 1], the nuclear norms and every accuracy in [0, 1], Entropy in [0, log 2]."""
    p = r["methods"]["mano"]["p"]
    bounds = {"mano": (0.5, 2 ** (-1 / p)), "confscore": (0.5, 1), "confscore_softrun": (0.5, 1),
              "entropy": (0, np.log(2)), "nuclear": (0, 1), "nuclear_softrun": (0, 1)}
    for name, value in methods_of(r).items():
        lo, hi = bounds.get(name, (0, 1) if "accuracy" in r["methods"][name] else (-np.inf, np.inf))
        check(value is not None and lo <= value <= hi, f"{what}: {name} = {value!r} outside [{lo}, {hi}]")


def same_result(got, want, what):
    """Every number within 1e-9 (relative, floor 1: sums in another order), the rest equal."""
    def walk(g, w, path):
        if isinstance(w, dict):
            check(isinstance(g, dict) and set(g) == set(w), f"{what}: {path}: keys {g} vs {w}")
            for key in w if isinstance(g, dict) else ():
                walk(g.get(key), w[key], f"{path}.{key}")
        elif isinstance(w, float):
            check(isinstance(g, float) and abs(g - w) <= 1e-9 * max(1, abs(w)), f"{what}: {path}: {g} vs one pass {w}")
        else:
            check(g == w, f"{what}: {path}: {g!r} vs one pass {w!r}")
    walk(got["methods"], want["methods"], "methods")
    check(got["n"] == want["n"] and got["k"] == want["k"] == 2, f"{what}: n, k")


def test_states_merge_to_one_pass(tmp):
    methods = [m["name"] for m in json.loads(run("methods", "--json").stdout)["methods"]]
    rng = np.random.default_rng(7)
    np.save(tmp / "f.npy", rng.normal(0, 1, (N, 4)).astype(np.float32))
    np.save(tmp / "fs.npy", rng.normal(0.3, 1, (2000, 4)).astype(np.float32))
    for kind in ("usual", "confident", "extreme"):
        z, y = binary_logits(rng, N, kind)
        zs, ys = binary_logits(rng, 2000, "usual")
        np.save(tmp / "sy.npy", ys.astype(np.int64))
        for layout in ("binary-logit", "binary-probability", "two columns"):
            x, extra = as_input(z, layout)
            np.save(tmp / "q.npy", x.astype(np.float32))
            np.save(tmp / "q2.npy", as_input(z + rng.normal(0, 1, N), layout)[0].astype(np.float32))
            np.save(tmp / "s.npy", as_input(zs, layout)[0].astype(np.float32))
            inputs = ["--source-logits", tmp / "s.npy", "--source-labels", tmp / "sy.npy", "--second-logits", tmp / "q2.npy",
                      "--features", tmp / "f.npy", "--source-features", tmp / "fs.npy", *extra]
            for mode in ([], ["--batch-size", "128"], ["--temperature", "fit"]):
                what = f"{kind} {layout} {' '.join(mode)}"
                args = ["--methods", ",".join(methods), *inputs, *mode]
                whole = score_json(tmp / "q.npy", *args)
                if whole is None:
                    continue
                check_bounds(whole, what)
                states = []
                for first, end in ((0, 640), (640, 1920), (1920, N)):
                    states.append(tmp / f"state{first}.json")
                    score_json(tmp / "q.npy", "--rows", f"{first}:{end}", "--emit-state", states[-1], *args)
                proc = run("merge", *states, "--json")
                check(proc.returncode == 0, f"{what}: merge: {proc.stderr.strip()}")
                if proc.returncode == 0:
                    same_result(json.loads(proc.stdout), whole, what)


def test_family_has_no_taylor_variant(tmp):
    """calibrate over binary sets: softmax is the only MaNo variant, whatever --taylor-orders."""
    rng = np.random.default_rng(11)
    sets = []
    for i in range(6):
        y = rng.integers(0, 2, 800)
        z = (2 * y - 1) * (0.3 + 0.5 * i) + rng.normal(0, 1.5, 800)
        np.save(tmp / f"b{i}.npy", z[:, None].astype(np.float32))
        np.save(tmp / f"b{i}_y.npy", y.astype(np.int64))
        sets.append({"name": f"b{i}", "logits": f"b{i}.npy", "labels": f"b{i}_y.npy", "group": f"g{i % 3}"})
    manifest = tmp / "binary.json"
    manifest.write_text(json.dumps({"sets": sets}))
    cal = tmp / "binary_cal.json"
    proc = run("calibrate", manifest, "--input", "binary-logit", "-o", cal, "--taylor-orders", "2,3", "--quiet")
    check(proc.returncode == 0 and "Taylor" not in proc.stderr, f"calibrate binary sets: {proc.stderr.strip()}")
    if proc.returncode != 0:
        return
    c = json.loads(cal.read_text())
    choice = c["normalization"]
    check(choice["variant"] == "softmax" and set(choice.get("errors", {})) <= {"softmax"},
          f"only softmax is offered and chosen at K = 2: {choice}")
    check(c["options"]["normalization"] == "softmax", f"the options record softmax: {c['options']}")
    line = c["methods"]["mano"]
    check(abs(line["slope"]) < 100, f"MaNo's line is fitted on scores that vary: {line}")


with tempfile.TemporaryDirectory() as d:
    tmp = pathlib.Path(d)
    test_softrun_is_softmax(tmp)
    test_taylor_refused(tmp)
    test_states_merge_to_one_pass(tmp)
    test_family_has_no_taylor_variant(tmp)
finish()

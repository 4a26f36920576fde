"""Label shift toward one dominant class (docs/cli.md, "Regimes"): `mano predict` on the committed
Fashion-MNIST-C logits of bench/fashion_mnist_c/data/lenet, calibrated on half of the corruption
types as bench/trust_report.py does, estimates clean sets resampled to 65%, 80% and 95% of one
class by their label-shift regime with the true accuracy inside the interval (before, a fixed cut
on the largest prior sent them to the general regime: 0.689 [0.489, 0.884] for a truth of 0.950);
a set whose priors sit at the simplex's edge gets both regimes' intervals and says why; a set of
one class alone gets priors on the simplex (each in [0, 1], summing to 1).
Run: /usr/bin/python3 tests/cli/test_dominant_class.py path/to/mano"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

MANO = sys.argv[1]
DATA = pathlib.Path(__file__).resolve().parents[2] / "bench" / "fashion_mnist_c" / "data" / "lenet"


def run(*args):
    return subprocess.run([MANO, *map(str, args)], capture_output=True, text=True)


manifest = json.loads((DATA / "manifest.json").read_text())
types = [g for g in dict.fromkeys(s["group"] for s in manifest["sets"]) if g not in ("clean", "label_shift", "mixed")]
logits, labels = np.load(DATA / "clean_logits.npy"), np.load(DATA / "test_labels.npy")
rng = np.random.default_rng(52)
with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    cal = tmp / "cal.json"
    proc = run("calibrate", DATA / "manifest.json", *[a for g in types[0::2] for a in ("--group", g)], "-o", cal, "--quiet")
    check(proc.returncode == 0, f"calibrate: {proc.stderr.strip()}")
    for dominant, share in [(0, 0.65), (7, 0.8), (1, 0.95)]:
        counts = np.round(np.where(np.arange(10) == dominant, share, (1 - share) / 9) * 2000).astype(int)
        rows = np.concatenate([rng.choice(np.flatnonzero(labels == c), n, replace=True) for c, n in enumerate(counts)])
        truth = float(np.mean(logits[rows].argmax(1) == labels[rows]))
        np.save(tmp / "set.npy", logits[rows])
        proc = run("predict", "--calibration", cal, tmp / "set.npy", "--json", "--quiet")
        if proc.returncode != 0:
            check(False, f"predict {share:.0%} of class {dominant}: {proc.stderr.strip()}")
            continue
        s = json.loads(proc.stdout.splitlines()[0])
        lo, hi = s["estimate"]["interval"]
        routed = s["estimate"]["regime"] == "label_shift" or bool(s["label_shift"].get("reason"))
        check(routed and lo <= truth <= hi and abs(s["estimate"]["accuracy"] - truth) <= 0.03,
              f"{share:.0%} of class {dominant}: truth {truth:.3f}, estimate {s['estimate']} check {s['label_shift']}")
    # one class alone: the priors at the simplex's edge, on it exactly; predict joins both regimes
    # and says why, in the JSON and on stdout
    rows = np.flatnonzero((labels == 1) & (logits.argmax(1) == 1))
    np.save(tmp / "one.npy", logits[rows])
    source = ["--source-logits", DATA / "source_logits.npy", "--source-labels", DATA / "source_labels.npy"]
    proc = run("score", tmp / "one.npy", *source, "--methods", "mlls", "--json", "--quiet")
    priors = np.array(json.loads(proc.stdout)["methods"]["mlls"]["priors"]) if proc.returncode == 0 else np.array([2.0])
    check(proc.returncode == 0 and np.all((priors >= 0) & (priors <= 1)) and abs(priors.sum() - 1) <= 1e-12,
          f"one class alone: the priors {priors.tolist()} lie on the simplex ({proc.stderr.strip()})")
    proc = run("predict", "--calibration", cal, tmp / "one.npy", "--json", "--quiet")
    s = json.loads(proc.stdout.splitlines()[0]) if proc.returncode == 0 else {}
    reason = s.get("label_shift", {}).get("reason", "")
    lo, hi = s.get("estimate", {}).get("interval", [1, 0])
    # the history's largest prediction allows a reason of 400 characters (tests/cli/monitor_support.py)
    check("edge" in reason and len(reason) < 400 and lo <= 1.0 <= hi, f"one class alone: the check {s.get('label_shift')} estimate "
                                                f"{s.get('estimate')} ({proc.stderr.strip()})")
    proc = run("predict", "--calibration", cal, tmp / "one.npy", "--quiet")
    check(proc.returncode == 0 and "edge" in proc.stdout, f"one class alone: the table's note {proc.stdout!r}")
finish()

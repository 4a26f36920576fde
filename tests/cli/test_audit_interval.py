"""The audited interval holds near accuracy 1 (docs/audit.md, "The interval"): seeded audits of
100 labels, drawn as `mano audit` draws them and read as `mano predict --audit` reads them (the
core's calls through the Python package, as bench/audit_report.py does), of sets simulated at
accuracies 0.95, 0.99 and 0.999 from a calibration's own kind of rows, with a correctness model
that sees the errors ("good": the set's wrong rows) and one that cannot ("poor": confident rows
labeled wrong at random, f about the same for every row). Each (model, accuracy) must hold the
set's accuracy in at least 88% of the draws at the 90% level; the PPI interval alone, with its
variance estimated ~0 on an audit without errors, held 74.8% here at 0.99 on the poor model
(87.0-87.2% at 0.95).

  PYTHONPATH=build/release/python build/venv/bin/python tests/cli/test_audit_interval.py build/release/native/mano"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
import audit_reference  # noqa: E402
from harness import check, finish  # noqa: E402

MANO = sys.argv[1]
try:
    from mano import _core
except ImportError:  # the build tree's package, next to the CLI: build/<preset>/python
    sys.path.insert(0, str(pathlib.Path(MANO).resolve().parents[1] / "python"))
    from mano import _core

K, ROWS, N, DRAWS, LEVEL, FLOOR = 10, 4000, 100, 400, 0.9, 0.88
ACCURACIES = (0.95, 0.99, 0.999)


def pool(rng, rows, margin):
    """Labeled logits whose true class gets `margin` more: some rows wrong, most right."""
    labels = rng.integers(0, K, rows)
    q = rng.standard_normal((rows, K)) * 1.5
    q[np.arange(rows), labels] += margin
    return q.astype(np.float32), labels


def simulated(rng, q, labels, accuracy, quality):
    """ROWS rows at this accuracy: "good" from the pool's right and wrong rows; "poor" from its right
    rows of confidence >= 0.99, (1 - accuracy) of them labeled with another class at random."""
    pred = q.argmax(1)
    right = round(accuracy * ROWS)
    if quality == "good":
        chosen = np.concatenate([rng.choice(np.flatnonzero(pred == labels), right),
                                 rng.choice(np.flatnonzero(pred != labels), ROWS - right)])
        return q[chosen], labels[chosen]
    p = np.exp(q.astype(np.float64) - q.max(1, keepdims=True))
    sure = np.flatnonzero((pred == labels) & (1 / p.sum(1) >= 0.99))
    chosen = rng.choice(sure, ROWS)
    made = pred[chosen].copy()
    wrong = rng.choice(ROWS, ROWS - right, replace=False)
    made[wrong] = (made[wrong] + 1) % K
    return q[chosen], made


def coverage(calibration, q, labels):
    options = _core.scoring_options(calibration, *q.shape)["options"]
    whole = _core.score(q, options, None, None, None, 0)
    truth = float(np.mean(q.argmax(1) == labels))
    held = 0
    for seed in range(DRAWS):
        rows = np.array(_core.audit_sample(len(q), N, seed)["rows"], dtype=np.int64)
        audited = _core.score(q[rows], options, labels[rows].astype(np.int64), None, None, 1)
        a = _core.predict_audited(calibration, whole, audited, LEVEL, [])["audit"]
        held += a["interval"][0] <= truth <= a["interval"][1]
    return truth, held / DRAWS


def main():
    rng = np.random.default_rng(50)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        audit_reference.make_sets(tmp, rng, K, 900)
        cal = tmp / "cal.json"
        subprocess.run([MANO, "calibrate", tmp / "manifest.json", "-o", cal, "--quiet", "--methods", "confscore"],
                       check=True, capture_output=True)
        cal_text = cal.read_text()
    check("correctness" in json.loads(cal_text), "the calibration has a correctness model")
    q, labels = pool(rng, 20000, 3.0)
    for quality in ("good", "poor"):
        for accuracy in ACCURACIES:
            truth, held = coverage(json.loads(cal_text), *simulated(rng, q, labels, accuracy, quality))
            check(abs(truth - accuracy) < 1e-9, f"{quality} {accuracy}: a set of accuracy {truth}")
            check(held >= FLOOR, f"{quality} model, accuracy {accuracy}, n = {N}: the 90% interval held the set's "
                                 f"accuracy in {100 * held:.1f}% of {DRAWS} audits (at least {100 * FLOOR:.0f}%)")
            print(f"{quality} model, accuracy {accuracy}: {100 * held:.1f}% of {DRAWS} audits", flush=True)
    finish("audit_interval: ")


if __name__ == "__main__":
    main()

"""What the monitoring-history suites share (test_monitor.py, test_monitor_reliability.py): a
calibration fitted on labeled shifted sets, batches that look like its sets or are degraded, and
the calls to `mano monitor` and `mano predict` they compare."""
import json
import sqlite3

import numpy as np

from harness import check
from workflow_support import MANO, make_shifted_sets, run  # noqa: F401  (MANO for the suites)

K = 10


def make_calibration(tmp, rng, name="cal.json", count=8):
    """A calibration (mano calibrate) of sets of increasing difficulty, as tmp/name."""
    sets = make_shifted_sets(tmp, rng, count)
    manifest = tmp / f"{name}.manifest.json"
    manifest.write_text(json.dumps({"sets": sets}))
    proc = run("calibrate", manifest, "-o", tmp / name, "--quiet")
    check(proc.returncode == 0, f"calibrate: {proc.stderr.strip()}")
    return tmp / name


def make_batch(path, rng, signal, n=2000):
    """A batch of unlabeled logits whose accuracy grows with `signal` (as make_shifted_sets')."""
    labels = rng.integers(0, K, n)
    q = rng.standard_normal((n, K)) * 1.5
    q[np.arange(n), labels] += signal
    np.save(path, q.astype(np.float32))
    return path


def add(history, *args, env=None):
    import os
    import subprocess
    return subprocess.run([MANO, "monitor", "add", str(history), *map(str, args), "--quiet"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


def report(history, *args):
    """(exit status, the report's JSON or None, stderr)"""
    proc = run("monitor", "report", history, "--json", *args)
    try:
        body = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        body = None
    return proc.returncode, body, proc.stderr


def predict(calibration, path):
    """What mano predict --json gives for one file."""
    proc = run("predict", "--calibration", calibration, path, "--json", "--quiet")
    check(proc.returncode == 0, f"predict {path}: {proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[0])


def point_count(history):
    with sqlite3.connect(f"file:{history}?mode=ro", uri=True) as db:
        return db.execute("SELECT count(*) FROM points").fetchone()[0]


def integrity(history):
    with sqlite3.connect(f"file:{history}?mode=ro", uri=True) as db:
        return db.execute("PRAGMA integrity_check").fetchone()[0]


def one_error_line(proc, *words):
    """Exit 2 and one stderr line that names each of `words`; no crash."""
    lines = proc.stderr.strip().splitlines()
    return (proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("mano: error:") and
            all(w in lines[0] for w in words))

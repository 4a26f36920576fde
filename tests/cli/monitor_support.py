"""What the monitoring-history suites share (test_monitor.py, test_monitor_reliability.py,
test_monitor_untrusted.py): a calibration fitted on labeled shifted sets, batches that look like its
sets or are degraded, the calls to `mano monitor` and `mano predict` they compare, and histories
edited against the readers' limits (src/mano/schema/history_limits.json)."""
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import threading

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


SCHEMA = pathlib.Path(__file__).resolve().parents[2] / "src/mano/schema"


def limits():
    """The readers' limits (src/mano/schema/history_limits.json)."""
    return json.loads((SCHEMA / "history_limits.json").read_text())


def with_column(tmp, good, name, value, column="prediction"):
    """tmp/name: a copy of the history `good` whose last point's `column` is `value`; (path, point id)."""
    path = tmp / name
    shutil.copy(good, path)
    db = sqlite3.connect(path)
    with db:
        pid = db.execute("SELECT max(id) FROM points").fetchone()[0]
        db.execute(f"UPDATE points SET {column} = ? WHERE id = ?", (value, pid))
    db.close()
    return path, pid


def with_huge_array(tmp, good, name, count, table="points"):
    """tmp/name: a copy of `good` whose last point's prediction (or, table="calibrations", every
    calibration) leads with "extra": [0, ... count zeros]; (path, point id). Made in a child process,
    so that this one stays small: a child's peak RSS counts the memory of the process it was forked
    from."""
    path, pid = tmp / name, None
    shutil.copy(good, path)
    with sqlite3.connect(path) as db:
        pid = db.execute("SELECT max(id) FROM points").fetchone()[0]
    db.close()
    column, where = ("prediction", f"id = {pid}") if table == "points" else ("calibration", "1")
    script = ("import sqlite3, sys\n"
              "db = sqlite3.connect(sys.argv[1])\n"
              f"db.execute(\"UPDATE {table} SET {column} = '{{\\\"extra\\\":[' || "
              f"substr(replace(hex(zeroblob({count})), '00', '0,'), 1, {2 * count - 1}) || '],' || substr({column}, 2) "
              f"WHERE {where}\")\n"
              "db.commit()\n")
    subprocess.run([sys.executable, "-c", script, str(path)], check=True)
    return path, pid


def last_prediction(history):
    with sqlite3.connect(f"file:{history}?mode=ro", uri=True) as db:
        return json.loads(db.execute("SELECT prediction FROM points ORDER BY id DESC LIMIT 1").fetchone()[0])


LONGEST_REASON = 400  # characters: the longest reason check_label_shift writes is under 300


def largest_prediction(method_names):
    """The longest prediction an add can write, from its shape (prediction.schema.json's Prediction
    less the keys history_limits.json says an add never writes): every key, every method, each number
    at its longest (17 digits and an exponent), each name and enum at its longest."""
    defs = {}
    for f in SCHEMA.glob("*.schema.json"):
        defs.update(json.loads(f.read_text())["$defs"])
    shape = limits()["prediction"]
    root = json.loads(json.dumps(defs[shape["shape"]]))
    for key in shape["not_written"]:
        root["properties"].pop(key)

    def longest(s):
        if "$ref" in s:
            name = s["$ref"].rsplit("/", 1)[1]
            return max(method_names, key=len) if name == "MethodName" else longest(defs[name])
        if "enum" in s:
            return max(s["enum"], key=lambda e: len(json.dumps(e)))
        kind = s["type"]
        if kind == "object" and "propertyNames" in s:
            return {m: longest(s["additionalProperties"]) for m in method_names}
        if kind == "object":
            return {k: longest(v) for k, v in s["properties"].items()}
        if kind == "array":
            return [longest(x) for x in s["prefixItems"]]
        if kind == "string":  # label_shift.reason, a sentence of fixed words and a few numbers
            return "\u00e9" * LONGEST_REASON  # (src/mano/prediction/label_shift_check.cpp)
        return {"number": -2.2250738585072014e-308, "integer": 2 ** 64 - 1, "boolean": False}[kind]
    return json.dumps(longest(root), separators=(",", ":"))


def peak_report(history, *args):
    """(exit status, stderr, peak RSS in MB) of mano monitor report HISTORY ARGS, stdout discarded;
    killed after 120 s (a hang fails)."""
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen([MANO, "monitor", "report", str(history), *map(str, args)], stdout=sink, stderr=subprocess.PIPE)
    timer = threading.Timer(120, child.kill)
    timer.start()
    err = child.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(child.pid, 0)
    timer.cancel()
    child.stderr.close()
    return os.waitstatus_to_exitcode(status), err, usage.ru_maxrss / 1024

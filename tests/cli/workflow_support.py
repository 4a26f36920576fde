"""What the CLI workflow suites share (test_workflow.py, test_workflow_errors.py): the `mano`
they run (the first argument), and labeled sets of increasing difficulty."""
import json
import subprocess
import sys

import numpy as np

from harness import check

MANO = sys.argv[1]


def run(*args):
    return subprocess.run([MANO, *map(str, args)], capture_output=True, text=True, timeout=300)


def score_json(*args):
    proc = run("score", "--json", "--quiet", *args)
    if proc.returncode != 0:
        check(False, f"score {args}: {proc.stderr.strip()}")
        return []
    return [json.loads(line) for line in proc.stdout.strip().splitlines()]


def make_shifted_sets(tmp, rng, count, n=400, k=10):
    """Sets of increasing difficulty: accuracy falls as the signal weakens."""
    sets = []
    for i in range(count):
        labels = rng.integers(0, k, n)
        signal = 0.5 + 4.0 * i / max(count - 1, 1) + rng.normal(0, 0.2)
        q = rng.standard_normal((n, k)) * 1.5
        q[np.arange(n), labels] += signal
        np.save(tmp / f"set{i}.npy", q.astype(np.float32))
        np.save(tmp / f"set{i}_labels.npy", labels.astype(np.int64))
        sets.append({"name": f"set{i}", "logits": f"set{i}.npy", "labels": f"set{i}_labels.npy",
                     "group": "even" if i % 2 == 0 else "odd"})
    return sets

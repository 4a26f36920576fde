"""What the tests of the mano package's core API share (test_score.py, test_sets.py,
test_accumulator_api.py, test_bad_input.py, test_leaks.py, test_methods_api.py): the fixtures'
paths, the CLI they are compared with, comparisons to 1e-12 and the module-scoped fixtures.

The CLI is $MANO_BIN (default <repo>/build/release/native/mano); tests that need it are skipped
when it is missing.
"""
import copy
import gc
import json
import math
import multiprocessing
import os
import pathlib
import pickle
import subprocess
import sys
import threading
import time
import tracemalloc
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import mano

try:
    import resource
except ImportError:  # not on Windows
    resource = None

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "tests" / "data" / "example"
GOLDEN = REPO / "tests" / "data" / "golden"
MANIFEST = EXAMPLE / "manifest.json"
MANO_BIN = pathlib.Path(os.environ.get("MANO_BIN") or REPO / "build" / "release" / "native" / "mano")

needs_cli = pytest.mark.skipif(not (MANO_BIN.is_file() and os.access(MANO_BIN, os.X_OK)),
                               reason=f"the mano CLI is not at {MANO_BIN} (set MANO_BIN)")

REL = 1e-12  # relative tolerance, with the same absolute floor for values near 0
ABS = 1e-12

EXAMPLE_LOGITS = sorted(EXAMPLE.glob("*_logits.npy"))
# every golden fixture that holds logits: features_* are penultimate features, not logits
GOLDEN_LOGITS = sorted(p for p in GOLDEN.glob("*.npy") if not p.name.startswith("features_"))
SOURCE_LOGITS, SOURCE_LABELS = EXAMPLE / "source_logits.npy", EXAMPLE / "source_labels.npy"
TARGET = EXAMPLE / "contrast_0_logits.npy"
TARGET_LABELS = EXAMPLE / "contrast_0_labels.npy"

# every method that needs nothing but the logits
LOGIT_METHODS = ["mano", "confscore", "entropy", "nuclear", "mde", "cot", "confscore_softrun", "nuclear_softrun"]


# --- helpers ------------------------------------------------------------------------------------

def assert_same(got, want, path="result", rel=REL, abs_tol=ABS):
    """The same JSON-like value: dicts with the same keys, lists of the same length, numbers within
    rel (relative, absolute floor abs_tol), everything else equal."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{path}: {type(got).__name__} where a dict was expected"
        assert set(got) == set(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_same(got[k], want[k], f"{path}.{k}", rel, abs_tol)
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), f"{path}: {type(got).__name__} where a list was expected"
        assert len(got) == len(want), f"{path}: {len(got)} items != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]", rel, abs_tol)
    elif isinstance(want, bool) or isinstance(got, bool):
        assert got is want, f"{path}: {got!r} != {want!r}"
    elif isinstance(want, (int, float)):
        assert isinstance(got, (int, float)), f"{path}: {got!r} is not a number ({want!r} expected)"
        assert math.isclose(got, want, rel_tol=rel, abs_tol=abs_tol), \
            f"{path}: {got!r} != {want!r} (difference {abs(got - want):.3g})"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def cli(*args):
    proc = subprocess.run([str(MANO_BIN), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"mano {' '.join(map(str, args))} failed ({proc.returncode}): {proc.stderr}"
    return proc


def cli_score(path, *args):
    """`mano score PATH --json ARGS` as a dict, without its "file"."""
    lines = cli("score", path, "--json", "--quiet", *args).stdout.splitlines()
    assert len(lines) == 1, lines
    result = json.loads(lines[0])
    assert result.pop("file") == str(path)
    return result


def cli_json(*args):
    return json.loads(cli(*args).stdout)


def random_logits(n, k, seed, dtype=np.float32, scale=3.0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, k)) * scale
    q[np.arange(n), rng.integers(0, k, n)] += 2.5  # confident rows, as a trained model's
    return q.astype(dtype)


@pytest.fixture(scope="module")
def target():
    return np.load(TARGET)


@pytest.fixture(scope="module")
def target_labels():
    return np.load(TARGET_LABELS)


@pytest.fixture(scope="module")
def source():
    return np.load(SOURCE_LOGITS), np.load(SOURCE_LABELS)


@pytest.fixture(scope="module")
def calibration_file(tmp_path_factory):
    """The CLI's calibration of the example manifest, without label-shifted copies: the frame and
    plot tests fit its lines again from the sets alone (test_sets.py checks the copies)."""
    if not MANO_BIN.is_file():
        pytest.skip(f"the mano CLI is not at {MANO_BIN}")
    out = tmp_path_factory.mktemp("calibration") / "cal.json"
    cli("calibrate", MANIFEST, "-o", out, "--quiet", "--label-shift-copies", "0")
    return out


def example_sets():
    """The example manifest's sets as in-memory arrays, and its source."""
    manifest = json.loads(MANIFEST.read_text())
    sets = [{"name": s["name"], "group": s["group"], "logits": np.load(EXAMPLE / s["logits"]),
             "labels": np.load(EXAMPLE / s["labels"])} for s in manifest["sets"]]
    return sets, (np.load(SOURCE_LOGITS), np.load(SOURCE_LABELS))

# A small good input, which the bad-input and leak tests change one thing of.
X = random_logits(20, 5, 8)
Y = np.random.default_rng(9).integers(0, 5, 20)


def with_value(value, row, col):
    """X with one value replaced."""
    x = X.copy()
    x[row, col] = value
    return x


def line_at(fit, x):
    """A calibration line's value at score x on its link's scale (docs/cli.md, "Links"), and that
    value as an accuracy: the identity, or probit with scores held within [0.001, 0.999]."""
    from scipy import stats  # noqa: PLC0415
    probit = fit.get("link") == "probit"
    xl = stats.norm.ppf(min(max(x, 1e-3), 1 - 1e-3)) if probit else x
    value = fit["slope"] * xl + fit["intercept"]
    return value, float(stats.norm.cdf(value)) if probit else value


def link_scale(fit, values):
    """Scores on a calibration line's link scale."""
    import numpy as np  # noqa: PLC0415
    from scipy import stats  # noqa: PLC0415
    values = np.asarray(values, float)
    return stats.norm.ppf(np.clip(values, 1e-3, 1 - 1e-3)) if fit.get("link") == "probit" else values

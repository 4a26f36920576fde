"""The mano package's core API (mano.score, Accumulator, evaluate/calibrate/predict, methods)
against the `mano` CLI and against itself:

1. mano.score equals `mano score --json` to 1e-12 on every logits fixture (tests/data/example,
   tests/data/golden) and with every option; every dtype and memory layout of an array gives
   the result of its C-contiguous copy.
2. mano.evaluate / calibrate / predict equal `mano eval`, `mano calibrate`, `mano predict`, from a
   manifest and from in-memory sets.
3. Accumulator: chunks, merges, pickling (across processes too), states, copies.
4. Bad input raises mano.InputError (a ValueError) with a clear message, never a crash.
5. No reference or memory leaks over 10^4 calls, good or failing.
6. mano.methods() / default_methods() equal the CLI's.
7. The GIL is released while scoring.

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
    """The CLI's calibration of the example manifest."""
    if not MANO_BIN.is_file():
        pytest.skip(f"the mano CLI is not at {MANO_BIN}")
    out = tmp_path_factory.mktemp("calibration") / "cal.json"
    cli("calibrate", MANIFEST, "-o", out, "--quiet")
    return out


def example_sets():
    """The example manifest's sets as in-memory arrays, and its source."""
    manifest = json.loads(MANIFEST.read_text())
    sets = [{"name": s["name"], "group": s["group"], "logits": np.load(EXAMPLE / s["logits"]),
             "labels": np.load(EXAMPLE / s["labels"])} for s in manifest["sets"]]
    return sets, (np.load(SOURCE_LOGITS), np.load(SOURCE_LABELS))


def test_fixtures_are_there():
    assert len(EXAMPLE_LOGITS) == 13 and len(GOLDEN_LOGITS) >= 30
    assert all(np.load(p).ndim == 2 for p in GOLDEN_LOGITS)


# --- 1. mano.score equals `mano score` ----------------------------------------------------------

@needs_cli
@pytest.mark.parametrize("path", EXAMPLE_LOGITS + GOLDEN_LOGITS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_score_equals_cli_on_every_fixture(path):
    want = cli_score(path)
    assert_same(mano.score(path), want)
    assert_same(mano.score(str(path)), want)
    assert_same(mano.score(np.load(path)), want)


def _source_cli(ctx):
    return ["--source-logits", SOURCE_LOGITS, "--source-labels", SOURCE_LABELS]


def _marginal_file(ctx):
    path = ctx["tmp"] / "marginal.json"
    path.write_text(json.dumps(list(ctx["marginal"])))
    return path


# (id, kwargs of mano.score, arguments of `mano score`); both may be functions of the context
OPTION_CASES = [
    ("methods-str", {"methods": "mano"}, ["--methods", "mano"]),
    ("methods-comma-str", {"methods": "mano, entropy,cot"}, ["--methods", "mano,entropy,cot"]),
    ("methods-list", {"methods": ["nuclear", "mde", "confscore"]}, ["--methods", "nuclear,mde,confscore"]),
    ("methods-tuple-all", {"methods": tuple(LOGIT_METHODS)}, ["--methods", ",".join(LOGIT_METHODS)]),
    ("p", {"p": 2.5}, ["--p", "2.5"]),
    ("p-int", {"p": 7}, ["--p", "7"]),
    ("eta-low", {"eta": 1.0}, ["--eta", "1"]),
    ("eta-high", {"eta": 50.0}, ["--eta", "50"]),
    ("taylor-order", {"taylor_order": 4}, ["--taylor-order", "4"]),
    ("softmax", {"normalization": "softmax"}, ["--normalization", "softmax"]),
    ("taylor", {"normalization": "taylor", "taylor_order": 3}, ["--normalization", "taylor", "--taylor-order", "3"]),
    ("softrun", {"normalization": "softrun"}, ["--normalization", "softrun"]),
    ("batch-size", {"batch_size": 128}, ["--batch-size", "128"]),
    ("batch-size-odd", {"batch_size": 7, "methods": "mano"}, ["--batch-size", "7", "--methods", "mano"]),
    ("criterion", {"criterion": 3.0}, ["--criterion", "3"]),
    ("batch-size-criterion", {"batch_size": 500, "criterion": 9.0}, ["--batch-size", "500", "--criterion", "9"]),
    ("temperature", {"temperature": 1.7}, ["--temperature", "1.7"]),
    ("temperature-small", {"temperature": 0.25, "methods": "confscore,entropy,cot"},
     ["--temperature", "0.25", "--methods", "confscore,entropy,cot"]),
    ("label-marginal-uniform", {"label_marginal": "uniform", "methods": "cot"},
     ["--label-marginal", "uniform", "--methods", "cot"]),
    ("label-marginal-list", lambda c: {"label_marginal": c["marginal"], "methods": "cot"},
     lambda c: ["--label-marginal", _marginal_file(c), "--methods", "cot"]),
    ("label-marginal-array", lambda c: {"label_marginal": np.asarray(c["marginal"]), "methods": "cot,mano"},
     lambda c: ["--label-marginal", _marginal_file(c), "--methods", "cot,mano"]),
    ("source-arrays", lambda c: {"source": c["source"]}, _source_cli),
    ("source-paths", {"source": (SOURCE_LOGITS, SOURCE_LABELS)}, _source_cli),
    ("source-str-paths", {"source": (str(SOURCE_LOGITS), str(SOURCE_LABELS))}, _source_cli),
    ("source-dict", lambda c: {"source": {"logits": c["source"][0], "labels": c["source"][1]}}, _source_cli),
    ("source-float64", lambda c: {"source": (c["source"][0].astype(np.float64), c["source"][1].astype(np.int32))},
     _source_cli),
    ("source-methods", lambda c: {"source": c["source"], "methods": "atc_mc,atc_ne,doc,cott"},
     lambda c: _source_cli(c) + ["--methods", "atc_mc,atc_ne,doc,cott"]),
    ("temperature-fit", lambda c: {"source": c["source"], "temperature": "fit"},
     lambda c: _source_cli(c) + ["--temperature", "fit"]),
    ("label-marginal-source", lambda c: {"source": c["source"], "label_marginal": "source", "methods": "cot,cott"},
     lambda c: _source_cli(c) + ["--label-marginal", "source", "--methods", "cot,cott"]),
    ("everything", lambda c: {"source": c["source"], "temperature": "fit", "p": 3.0, "eta": 6.0, "taylor_order": 3,
                              "batch_size": 300, "label_marginal": "source"},
     lambda c: _source_cli(c) + ["--temperature", "fit", "--p", "3", "--eta", "6", "--taylor-order", "3",
                                 "--batch-size", "300", "--label-marginal", "source"]),
]


def _resolve(value, ctx):
    return value(ctx) if callable(value) else value


@needs_cli
@pytest.mark.parametrize("case", OPTION_CASES, ids=[c[0] for c in OPTION_CASES])
def test_score_options_equal_cli(case, target, source, tmp_path):
    _, kwargs, args = case
    ctx = {"source": source, "tmp": tmp_path, "marginal": np.linspace(1.0, 2.0, 10) / np.linspace(1.0, 2.0, 10).sum()}
    kwargs, args = _resolve(kwargs, ctx), _resolve(args, ctx)
    want = cli_score(TARGET, *args)
    assert_same(mano.score(TARGET, **kwargs), want)
    assert_same(mano.score(target, **kwargs), want)


@needs_cli
@pytest.mark.parametrize("name", ["k2.npy", "k100.npy", "k1000.npy", "float16.npy", "phi_above_eta.npy"])
@pytest.mark.parametrize("kwargs,args", [
    ({"p": 1.5, "normalization": "taylor", "taylor_order": 1},
     ["--p", "1.5", "--normalization", "taylor", "--taylor-order", "1"]),
    ({"eta": 0.5, "batch_size": 16}, ["--eta", "0.5", "--batch-size", "16"]),
    ({"temperature": 3.0, "methods": ["confscore", "entropy", "mde", "cot"]},
     ["--temperature", "3", "--methods", "confscore,entropy,mde,cot"]),
], ids=["p-taylor1", "eta-batch", "temperature-methods"])
def test_score_options_equal_cli_on_other_shapes(name, kwargs, args):
    path = GOLDEN / name
    want = cli_score(path, *args)
    assert_same(mano.score(path, **kwargs), want)
    assert_same(mano.score(np.load(path), **kwargs), want)


@needs_cli
def test_second_and_features_equal_cli(tmp_path):
    features = GOLDEN / "features_d16_target.npy"
    source_features = GOLDEN / "features_d16_source.npy"
    n = np.load(features).shape[0]
    logits, second = random_logits(n, 10, 1), random_logits(n, 10, 2)
    lp, sp = tmp_path / "logits.npy", tmp_path / "second.npy"
    np.save(lp, logits)
    np.save(sp, second)
    want = cli_score(lp, "--second-logits", sp, "--features", features, "--source-features", source_features)
    assert {"agreement", "dispersion", "frechet"} <= set(want["methods"])
    got = mano.score(logits, second=second, features=np.load(features), source_features=np.load(source_features))
    assert_same(got, want)
    assert_same(mano.score(lp, second=sp, features=features, source_features=source_features), want)
    want = cli_score(lp, "--second-logits", sp, "--methods", "agreement,mano")
    assert_same(mano.score(logits, "agreement,mano", second=second), want)


@pytest.fixture(scope="module")
def cli_eval_softrun():
    """`mano eval --normalization softrun`: each set scored as `mano score` does, with its labels."""
    if not MANO_BIN.is_file():
        pytest.skip(f"the mano CLI is not at {MANO_BIN}")
    return cli_json("eval", MANIFEST, "--json", "--quiet", "--normalization", "softrun")


@needs_cli
def test_labels_give_the_true_accuracy_as_the_cli(cli_eval_softrun):
    """`mano score` has no --labels (it reads a CSV's label column but reports no accuracy); `mano
    eval` reports each set's result with its true accuracy: mano.score(labels=) equals it."""
    manifest = json.loads(MANIFEST.read_text())
    assert len(cli_eval_softrun["sets"]) == len(manifest["sets"])
    for entry, want in zip(manifest["sets"], cli_eval_softrun["sets"]):
        assert want["name"] == entry["name"]
        want = {k: v for k, v in want.items() if k not in ("name", "group")}
        logits, labels = EXAMPLE / entry["logits"], EXAMPLE / entry["labels"]
        got = mano.score(logits, labels=labels, source=(SOURCE_LOGITS, SOURCE_LABELS))
        assert got.pop("confidence") == got["methods"]["confscore"]["score"]
        assert sum(got.pop("predicted")) == got["n"]
        assert_same(got, want)
        x, y = np.load(logits), np.load(labels)
        assert got["accuracy"] == np.mean(np.argmax(x, axis=1) == y)


@pytest.mark.parametrize("label_dtype", [np.int64, np.int32, np.uint8, np.int16, np.uint64, ">i8"])
def test_labels_of_every_integer_type(label_dtype, target, target_labels):
    want = mano.score(target, labels=TARGET_LABELS)
    labels = target_labels.astype(label_dtype)
    assert_same(mano.score(target, labels=labels), want)
    assert_same(mano.score(target, labels=labels[:, None]), want)  # N x 1
    assert_same(mano.score(target, labels=np.repeat(labels, 2)[::2]), want)  # strided
    assert_same(mano.score(target, labels=list(map(int, labels))), want)
    assert want["accuracy"] == np.mean(np.argmax(target, axis=1) == target_labels)


@needs_cli
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_dtypes_equal_cli(dtype, tmp_path):
    x = random_logits(700, 12, 3, dtype=dtype)
    path = tmp_path / f"logits_{np.dtype(dtype).name}.npy"
    np.save(path, x)
    want = cli_score(path)
    assert_same(mano.score(x), want)
    assert_same(mano.score(path), want)
    assert mano.read(path).dtype == np.dtype(dtype)
    np.testing.assert_array_equal(mano.read(path), x)


@needs_cli
def test_read_and_other_formats_equal_cli(tmp_path):
    x = random_logits(300, 6, 15)
    npz = tmp_path / "two.npz"
    np.savez(npz, logits=x, other=x[::-1].copy())
    raw = tmp_path / "logits.bin"
    x.tofile(raw)
    np.testing.assert_array_equal(mano.read(npz), x)
    np.testing.assert_array_equal(mano.read(npz, key="other"), x[::-1])
    np.testing.assert_array_equal(mano.read(raw, shape=(300, 6)), x)
    assert_same(mano.score(npz, key="other"), cli_score(npz, "--key", "other"))
    assert_same(mano.score(mano.read(raw, shape=(300, 6))), cli_score(raw, "--shape", "300,6"))
    labels = np.random.default_rng(16).integers(0, 6, 300)
    np.save(tmp_path / "labels.npy", labels)
    np.testing.assert_array_equal(mano.read_labels(tmp_path / "labels.npy", rows=300), labels)
    assert mano.read_labels(tmp_path / "labels.npy").dtype == np.int64


def _misaligned(x):
    """x's values in a buffer that starts one byte past an element boundary."""
    buf = bytearray(x.nbytes + 1)
    out = np.frombuffer(buf, dtype=x.dtype, count=x.size, offset=1).reshape(x.shape)
    out[...] = x
    return out


def _odd_row_stride(x):
    """x's values in rows whose stride is not a multiple of the element size."""
    n, k = x.shape
    stride = k * x.itemsize + 3
    buf = np.zeros(n * stride + x.itemsize, dtype=np.uint8)
    out = np.ndarray((n, k), dtype=x.dtype, buffer=buf, strides=(stride, x.itemsize))
    out[...] = x
    return out


def _wide(x, left=3, right=5):
    wide = np.zeros((x.shape[0], left + x.shape[1] + right), dtype=x.dtype)
    wide[:, left:left + x.shape[1]] = x
    return wide


# (id, function of a C-contiguous array: (a view or copy with another layout, the rows it holds in order))
LAYOUTS = [
    ("fortran", lambda x: (np.asfortranarray(x), x)),
    ("column-slice-row-stride", lambda x: (_wide(x)[:, 3:3 + x.shape[1]:1], x)),
    ("every-other-row", lambda x: (x[::2], x[::2])),
    ("reversed-rows", lambda x: (x[::-1], x[::-1])),
    ("every-third-row-reversed", lambda x: (x[::-3], x[::-3])),
    ("every-other-column", lambda x: (np.repeat(x, 2, axis=1)[:, ::2], x)),
    ("reversed-columns", lambda x: (x[:, ::-1], x[:, ::-1])),
    ("transposed-twice", lambda x: (np.ascontiguousarray(x.T).T, x)),
    ("misaligned", lambda x: (_misaligned(x), x)),
    ("odd-row-stride", lambda x: (_odd_row_stride(x), x)),
    ("read-only", lambda x: (np.frombuffer(x.tobytes(), dtype=x.dtype).reshape(x.shape), x)),
    ("broadcast-row", lambda x: (np.broadcast_to(x[5], x.shape), np.tile(x[5], (x.shape[0], 1)))),
    ("big-endian", lambda x: (x.astype(x.dtype.newbyteorder(">")), x)),
]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("layout", LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_layouts_equal_c_contiguous(layout, dtype):
    x = random_logits(301, 11, 4, dtype=dtype)
    view, rows = layout[1](x)
    rows = np.ascontiguousarray(rows)
    assert not (view.flags.c_contiguous and view.ctypes.data == rows.ctypes.data)
    labels = np.random.default_rng(5).integers(0, 11, len(rows))
    want = mano.score(rows, LOGIT_METHODS, labels=labels, threads=1)
    assert mano.score(view, LOGIT_METHODS, labels=labels, threads=1) == want  # the same rows in the same order
    assert_same(mano.score(view, LOGIT_METHODS, labels=labels, threads=0), want)
    acc = mano.Accumulator(11, LOGIT_METHODS).push(view, labels)
    assert_same(acc.result(), want)


def test_memory_map_and_large_copied_layouts(tmp_path):
    """Arrays larger than one copied chunk (4 MiB), read by several threads."""
    x = random_logits(120_000, 10, 6)
    path = tmp_path / "big.npy"
    np.save(path, x)
    want = mano.score(x, "mano,confscore,entropy,nuclear", threads=1)
    for other in (np.load(path, mmap_mode="r"), np.asfortranarray(x), x[::-1][::-1], _wide(x)[:, 3:13]):
        for threads in (1, 2, 3):
            assert_same(mano.score(other, "mano,confscore,entropy,nuclear", threads=threads), want)
    assert_same(mano.score(x[::-1], "mano,confscore,entropy,nuclear", threads=2),
                mano.score(np.ascontiguousarray(x[::-1]), "mano,confscore,entropy,nuclear", threads=1))


def test_array_likes():
    x = random_logits(40, 4, 7, dtype=np.float64)
    want = mano.score(x)
    assert_same(mano.score(x.tolist()), want)
    assert_same(mano.score(memoryview(x)), want)
    assert_same(mano.score(tuple(map(tuple, x))), want)


def test_threads_do_not_change_results(target):
    want = mano.score(target, threads=1)
    for threads in (0, 2, 5):
        assert_same(mano.score(target, threads=threads), want)


def test_concurrent_scores_from_threads():
    from concurrent.futures import ThreadPoolExecutor
    arrays = [random_logits(5_000, 10 + i, 20 + i, dtype=[np.float16, np.float32, np.float64][i % 3]) for i in range(6)]
    want = [mano.score(a, threads=1) for a in arrays]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda a: mano.score(a, threads=2), arrays + arrays))
    for g, w in zip(got, want + want):
        assert_same(g, w)


# --- 2. evaluate / calibrate / predict equal the CLI --------------------------------------------

@needs_cli
def test_evaluate_equals_cli():
    want = cli_json("eval", MANIFEST, "--json", "--quiet")
    assert_same(mano.evaluate(MANIFEST), want)
    assert_same(mano.evaluate(str(MANIFEST)), want)
    assert_same(mano.evaluate(mano.read_manifest(MANIFEST)), want)


@needs_cli
@pytest.mark.parametrize("kwargs,args", [
    ({"normalization": "softrun"}, ["--normalization", "softrun"]),
    ({"normalization": "softmax", "methods": "mano,confscore,atc_mc"},
     ["--normalization", "softmax", "--methods", "mano,confscore,atc_mc"]),
    ({"groups": ["blend"], "p": 3.0, "taylor_order": 3}, ["--group", "blend", "--p", "3", "--taylor-order", "3"]),
    ({"temperature": "fit", "batch_size": 250}, ["--temperature", "fit", "--batch-size", "250"]),
], ids=["softrun", "softmax-methods", "group-p-order", "fit-batch"])
def test_evaluate_options_equal_cli(kwargs, args):
    assert_same(mano.evaluate(MANIFEST, **kwargs), cli_json("eval", MANIFEST, "--json", "--quiet", *args))


@needs_cli
def test_calibrate_equals_cli(calibration_file, tmp_path):
    want = json.loads(calibration_file.read_text())
    notes = []
    got = mano.calibrate(MANIFEST, notes=notes)
    assert_same(got, want)
    assert isinstance(notes, list)
    assert_same(mano.read_calibration(calibration_file), want)
    out = tmp_path / "softrun.json"
    cli("calibrate", MANIFEST, "-o", out, "--quiet", "--normalization", "softrun", "--group", "contrast")
    assert_same(mano.calibrate(MANIFEST, normalization="softrun", groups=["contrast"]), json.loads(out.read_text()))
    out = tmp_path / "order3.json"
    cli("calibrate", MANIFEST, "-o", out, "--quiet", "--taylor-order", "3", "--methods", "mano,nuclear,atc_ne")
    assert_same(mano.calibrate(MANIFEST, "mano,nuclear,atc_ne", taylor_order=3), json.loads(out.read_text()))


@needs_cli
def test_taylor_orders_equal_cli(tmp_path):
    """The family workflow (src/mano/workflow.hpp) with extra Taylor orders, as mano eval/calibrate."""
    want = cli_json("eval", MANIFEST, "--json", "--quiet", "--taylor-orders", "1,3")
    got = mano.evaluate(MANIFEST, taylor_orders=[1, 3])
    assert sorted(got["normalization"]["errors"]) == ["softmax", "taylor1", "taylor2", "taylor3"]
    assert_same(got, want)
    out = tmp_path / "orders.json"
    cli("calibrate", MANIFEST, "-o", out, "--quiet", "--taylor-orders", "1,3")
    assert_same(mano.calibrate(MANIFEST, taylor_orders=[1, 3]), json.loads(out.read_text()))


def test_family_of_results_moves_each_set_onto_the_branch():
    """Sets given as results cannot be scored again: MaNo takes each one's variant of the branch
    chosen for all, and the softrun baselines leave when a set was on the other branch."""
    manifest = mano.read_manifest(MANIFEST)
    base = MANIFEST.parent
    sets = [{"name": s["name"], "group": s["group"],
             "result": mano.score(base / s["logits"], "mano,confscore_softrun", labels=base / s["labels"])}
            for s in manifest["sets"]]
    notes = []
    cal = mano.calibrate(sets, notes=notes)
    variant = cal["normalization"]["variant"]
    branches = {s["result"]["methods"]["mano"]["normalization"] for s in sets}
    # the example's sets are on softmax one by one, and the family takes the Taylor branch
    assert branches == {"softmax"} and variant != "softmax"
    assert "confscore_softrun" not in cal["methods"] and any("confscore_softrun" in n for n in notes)
    with pytest.warns(UserWarning, match="confscore_softrun, nuclear_softrun: not calibrated"):
        report = mano.evaluate(sets)
    for s, row in zip(sets, report["sets"]):
        assert row["methods"]["mano"]["score"] == s["result"]["methods"]["mano"]["variants"][variant]


@needs_cli
def test_predict_equals_cli(calibration_file):
    want = cli_json("predict", "--calibration", calibration_file, "--manifest", MANIFEST, "--json", "--quiet")
    got = mano.predict(calibration_file, MANIFEST)
    # the CLI prints each set's prediction with its name and group, then the coverage of all sets
    assert_same([{"name": s["name"], "group": s["group"], **s["prediction"]} for s in got], want["sets"])
    cal = json.loads(calibration_file.read_text())
    assert_same(mano.predict(cal, str(MANIFEST)), got)
    for name in ("blend_0", "contrast_5"):
        path = EXAMPLE / f"{name}_logits.npy"
        lines = cli("predict", "--calibration", calibration_file, path, "--json", "--quiet").stdout.splitlines()
        one = json.loads(lines[0])
        assert one.pop("file") == str(path)
        assert_same(mano.predict(calibration_file, path), one)
        assert_same(mano.predict(cal, np.load(path)), one)
        scored = mano.score(path, **_calibration_kwargs(cal))
        assert_same(mano.predict(cal, scored), one)
        # predict_scores: the same accuracy for the same score
        mano_score = one["methods"]["mano"]["score"]
        [point] = mano.predict_scores(cal, "mano", [mano_score])
        assert math.isclose(point["accuracy"], one["methods"]["mano"]["accuracy"], rel_tol=REL, abs_tol=ABS)
    lines = cli("predict", "--calibration", calibration_file, "--level", "0.5", EXAMPLE / "blend_3_logits.npy",
                "--json", "--quiet").stdout.splitlines()
    one = json.loads(lines[0])
    one.pop("file")
    assert_same(mano.predict(cal, EXAMPLE / "blend_3_logits.npy", level=0.5), one)


def _calibration_kwargs(cal):
    """mano.score's keywords for the options a calibration was made with (its source model is
    fitted again from the example's source set)."""
    o = cal["options"]
    return {"methods": o["methods"], "p": o["p"], "eta": o["eta"], "taylor_order": o["taylor_order"],
            "normalization": o["normalization"], "batch_size": o["batch_size"], "temperature": o["temperature"],
            "source": (SOURCE_LOGITS, SOURCE_LABELS)}


def test_in_memory_sets_equal_the_manifest():
    sets, src = example_sets()
    assert_same(mano.evaluate(sets, source=src), mano.evaluate(MANIFEST))
    assert_same(mano.evaluate(sets, source={"logits": src[0], "labels": src[1]}, normalization="softrun",
                              groups=["blend", "contrast"]),
                mano.evaluate(MANIFEST, normalization="softrun"))
    cal = mano.calibrate(sets, source=src)
    assert_same(cal, mano.calibrate(MANIFEST))
    assert_same(mano.predict(cal, sets), mano.predict(cal, MANIFEST))
    # a manifest dict with arrays, and sets given as scored results
    assert_same(mano.evaluate({"source": {"logits": src[0], "labels": src[1]}, "sets": sets}),
                mano.evaluate(MANIFEST))
    options = _calibration_kwargs(cal)
    results = [{"name": s["name"], "group": s["group"],
                "result": mano.score(s["logits"], labels=s["labels"], **options)} for s in sets]
    assert_same(mano.evaluate(results, normalization="taylor"), mano.evaluate(sets, source=src, normalization="taylor"))
    # sets without labels predict; predicting a set needs no labels
    unlabeled = [{"name": s["name"], "logits": s["logits"]} for s in sets[:2]]
    got = mano.predict(cal, unlabeled)
    assert [g["name"] for g in got] == ["contrast_0", "contrast_1"]
    assert "accuracy" not in got[0]["prediction"]


def test_evaluate_refuses_sets_without_what_it_needs():
    sets, src = example_sets()
    with pytest.raises(mano.InputError, match="labels"):
        mano.evaluate([{k: v for k, v in s.items() if k != "labels"} for s in sets])
    with pytest.raises(mano.InputError, match="at least 3"):
        mano.evaluate(sets[:2])
    with pytest.raises(mano.InputError, match="group"):
        mano.evaluate(sets, groups=["nope"])
    with pytest.raises(mano.InputError, match="source"):
        mano.evaluate(MANIFEST, source=src)
    with pytest.raises(mano.InputError, match="contrast_1"):
        bad = [dict(s) for s in sets]
        bad[1]["labels"] = bad[1]["labels"][:10]
        mano.evaluate(bad)


# --- 3. Accumulator ----------------------------------------------------------------------------

def test_accumulator_chunks_and_merges_equal_one_pass(target, target_labels, source):
    methods = LOGIT_METHODS + ["atc_mc", "atc_ne", "doc", "cott"]
    kwargs = {"source": source, "temperature": "fit", "p": 3.0}
    whole = mano.Accumulator(10, methods, **kwargs).push(target, target_labels)
    a = mano.Accumulator(10, methods, **kwargs)
    a.push(target[:700], target_labels[:700]).push(target[700:701], target_labels[700:701])
    a.push(target[701:1300], target_labels[701:1300])
    b = mano.Accumulator(10, methods, **kwargs)
    b.push(target[1300:1900], target_labels[1300:1900])
    c = mano.Accumulator(10, methods, **kwargs)
    c.push(target[1900:], target_labels[1900:]).push(target[:0], target_labels[:0])
    b.merge(c)
    assert a.merge(b) is a
    assert a.rows == whole.rows == 2000 and a.k == 10
    assert len(a.shards) == 3 and len(whole.shards) == 1
    want = mano.score(target, methods, labels=target_labels, **kwargs)
    assert_same(whole.result(), want)
    assert_same(a.result(), want)
    assert sorted(a.options["methods"]) == sorted(methods) and a.options["p"] == 3.0


def test_accumulator_defaults(target):
    acc = mano.Accumulator(10)
    assert acc.options["methods"] == mano.default_methods(10)
    assert "cot" not in acc.options["methods"]  # COT keeps every row: only when named
    acc.push(target)
    assert_same(acc.result(), mano.score(target, mano.default_methods(10)))
    assert repr(acc).startswith("<mano.Accumulator k=10 rows=2000")
    assert acc.architecture in mano.architectures()
    assert mano.Accumulator(np.int64(3)).k == 3


def test_accumulator_push_is_all_or_nothing(target):
    acc = mano.Accumulator(10, LOGIT_METHODS).push(target[:100])
    before = acc.state()
    bad = target[100:200].copy()
    bad[37, 4] = np.nan
    with pytest.raises(mano.InputError, match=r"row 137, column 4.*NaN"):
        acc.push(bad)
    with pytest.raises(mano.InputError, match="labels"):
        acc.push(target[100:200], np.zeros(99, dtype=np.int64))
    assert acc.rows == 100 and acc.state() == before


def test_accumulator_pickles(target):
    acc = mano.Accumulator(10, LOGIT_METHODS, p=5.0).push(target[:1200])
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(acc, protocol=protocol))
        assert back.state() == acc.state() and back.rows == 1200
        assert_same(back.result(), acc.result())
    back.push(target[1200:])
    assert_same(back.result(), mano.score(target, LOGIT_METHODS, p=5.0))
    assert acc.rows == 1200


def test_accumulator_pickles_across_processes(target):
    """Two worker processes score four chunks of rows; the parent merges their states."""
    methods = LOGIT_METHODS
    parts = np.array_split(target, 4)
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        futures = [pool.submit(mano.Accumulator.push, mano.Accumulator(10, methods), part) for part in parts]
        partial = [f.result(timeout=120) for f in futures]
    assert [p.rows for p in partial] == [len(p) for p in parts]
    total = mano.Accumulator(10, methods)
    for p in partial:
        total.merge(p)
    assert total.rows == len(target) and len(total.shards) == 4
    assert_same(total.result(), mano.score(target, methods))
    with pytest.raises(mano.InputError, match="twice"):
        total.merge(partial[2])


def test_accumulator_merge_refuses_the_same_state_twice(target):
    a = mano.Accumulator(10, LOGIT_METHODS).push(target[:1000])
    b = mano.Accumulator(10, LOGIT_METHODS).push(target[1000:])
    a.merge(b)
    before = a.state()
    for again in (b, b.copy(), pickle.loads(pickle.dumps(b)), mano.Accumulator.from_state(b.state())):
        with pytest.raises(mano.InputError, match="twice"):
            a.merge(again)
    with pytest.raises(mano.InputError, match="itself"):
        a.merge(a)
    assert a.state() == before and a.rows == 2000
    # an accumulator that holds a shard already merged in
    c = mano.Accumulator(10, LOGIT_METHODS).merge(b)
    with pytest.raises(mano.InputError, match="twice"):
        a.merge(c)


def test_accumulator_own_rows_cannot_be_renamed_away(target):
    """a.merge(b); b.merge(a) would count b's rows twice, as would a's own state merged back in."""
    a = mano.Accumulator(10, LOGIT_METHODS).push(target[:1000])
    b = mano.Accumulator(10, LOGIT_METHODS).push(target[1000:])
    a.merge(b)
    with pytest.raises(mano.InputError, match="twice"):
        b.merge(a)
    assert b.rows == len(target) - 1000
    c = mano.Accumulator(10, LOGIT_METHODS).push(target[:1000])
    s = c.state()
    c.merge(mano.Accumulator(10, LOGIT_METHODS).push(target[1000:]))
    with pytest.raises(mano.InputError, match="twice"):
        c.merge(mano.Accumulator.from_state(s))
    assert c.rows == len(target)
    assert_same(c.result(), mano.score(target, LOGIT_METHODS))


@needs_cli
def test_accumulator_from_state(target, tmp_path):
    path = tmp_path / "state.json"
    want = cli_score(TARGET, "--emit-state", path)
    from_file = mano.Accumulator.from_state(path)
    assert from_file.rows == 2000 and from_file.k == 10
    assert_same(from_file.result(), want)
    assert_same(mano.Accumulator.from_state(str(path)).result(), want)
    state = from_file.state()
    assert state["format"] == "mano-accumulator"
    assert_same(mano.Accumulator.from_state(state).result(), want)
    assert_same(mano.Accumulator.from_state(json.dumps(state)).result(), want)
    assert_same(mano.Accumulator.from_state(json.dumps(state, indent=1)).result(), want)
    assert_same(mano.Accumulator.from_state(json.dumps(state).encode()).result(), want)
    assert_same(mano.Accumulator.from_state(path.read_text()).result(), want)
    # the CLI's state equals the package's for the same rows and options (but for the shard's
    # name, a hash of the sums' bits)
    cli_score(TARGET, "--emit-state", path, "--threads", "1")
    mine = mano.Accumulator(10, from_file.options["methods"]).push(target).state()
    theirs = json.loads(path.read_text())
    assert len(mine.pop("shards")) == len(theirs.pop("shards")) == 1
    assert_same(mine, theirs)


def test_accumulator_shared_by_threads():
    """The core releases the GIL while it pushes and merges: threads that push into (and merge
    into) one accumulator at once must each have their rows counted, once."""
    x = random_logits(50_000, 20, 14)
    methods = "mano,entropy,confscore,nuclear"
    shards = [mano.Accumulator(20, methods).push(x[i::5]) for i in range(5)]
    for _ in range(3):
        acc = mano.Accumulator(20, methods)

        def pusher():
            for _ in range(6):
                acc.push(x)

        def merger():
            for shard in shards:
                acc.merge(shard)

        threads = [threading.Thread(target=pusher), threading.Thread(target=pusher), threading.Thread(target=merger)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            acc.result() if acc.rows else None  # reads while the others write
            acc.state()
        for t in threads:
            t.join()
        assert acc.rows == 13 * len(x)
        assert_same(acc.result(), mano.score(np.concatenate([x] * 13), methods), rel=1e-9, abs_tol=1e-12)


def test_accumulator_copies(target):
    acc = mano.Accumulator(10, LOGIT_METHODS).push(target[:500])
    for other in (acc.copy(), copy.copy(acc), copy.deepcopy(acc), copy.deepcopy([acc])[0]):
        assert other is not acc and other.state() == acc.state()
        other.push(target[500:])
        assert other.rows == 2000 and acc.rows == 500
        assert_same(other.result(), mano.score(target, LOGIT_METHODS))
    assert_same(acc.result(), mano.score(target[:500], LOGIT_METHODS))


# --- 4. bad input -------------------------------------------------------------------------------

X = random_logits(20, 5, 8)
Y = np.random.default_rng(9).integers(0, 5, 20)


def _with(value, row, col):
    x = X.copy()
    x[row, col] = value
    return x


def _bad_file(tmp, name, data):
    path = tmp / name
    path.write_bytes(data)
    return path


def _truncated(tmp):
    path = tmp / "full.npy"
    np.save(path, X)
    return _bad_file(tmp, "truncated.npy", path.read_bytes()[:-7])


# (id, function of tmp_path that must raise InputError, regex its message must match)
BAD_INPUTS = [
    ("1-d", lambda t: mano.score(X[0]), r"logits: expected a 2-D array .*shape \(5,\)"),
    ("3-d", lambda t: mano.score(X[None]), r"logits: expected a 2-D array .*shape \(1, 20, 5\)"),
    ("0-d", lambda t: mano.score(np.float32(1.0)), r"logits: expected a 2-D array"),
    ("int-dtype", lambda t: mano.score(X.astype(np.int32)), r"dtype int32 .*float16, float32 or float64"),
    ("int64-dtype", lambda t: mano.score(X.astype(np.int64)), r"dtype int64"),
    ("bool-dtype", lambda t: mano.score(X > 0), r"dtype bool"),
    ("complex-dtype", lambda t: mano.score(X.astype(np.complex128)), r"dtype complex128"),
    ("object-dtype", lambda t: mano.score(X.astype(object)), r"dtype object"),
    ("string-dtype", lambda t: mano.score(X.astype(str)), r"dtype <U"),
    ("longdouble", lambda t: mano.score(X.astype(np.longdouble)), r"dtype float128|dtype longdouble"),
    ("ragged-list", lambda t: mano.score([[1.0, 2.0], [3.0]]), r"logits: cannot be read as an array"),
    ("empty-k", lambda t: mano.score(np.zeros((5, 0), np.float32)), r"0 columns .*\(5, 0\)"),
    ("one-class", lambda t: mano.score(np.zeros((5, 1), np.float32)), r"at least 2 columns"),
    ("no-rows", lambda t: mano.score(np.zeros((0, 5), np.float32)), r"no rows"),
    ("nan", lambda t: mano.score(_with(np.nan, 7, 2)), r"row 7, column 2: logit is NaN"),
    ("nan-one-thread", lambda t: mano.score(_with(np.nan, 19, 4), threads=1), r"row 19, column 4: logit is NaN"),
    ("inf", lambda t: mano.score(_with(np.inf, 3, 1)), r"row 3, column 1: logit is \+Inf"),
    ("minus-inf", lambda t: mano.score(_with(-np.inf, 0, 0).astype(np.float64)), r"row 0, column 0: logit is -Inf"),
    ("nan-float16", lambda t: mano.score(_with(np.nan, 11, 3).astype(np.float16)), r"row 11, column 3: logit is NaN"),
    ("nan-fortran", lambda t: mano.score(np.asfortranarray(_with(np.nan, 12, 0))), r"row 12, column 0"),
    ("nan-reversed", lambda t: mano.score(_with(np.nan, 2, 0)[::-1]), r"row 17, column 0"),
    ("float16-inf", lambda t: mano.score(np.full((3, 3), np.inf, np.float16)), r"row 0, column 0: logit is \+Inf"),
    ("labels-short", lambda t: mano.score(X, labels=Y[:5]), r"labels: 5 labels for 20 rows"),
    ("labels-long", lambda t: mano.score(X, labels=np.zeros(21, np.int64)), r"labels: 21 labels for 20 rows"),
    ("labels-float", lambda t: mano.score(X, labels=Y.astype(float)), r"labels: dtype float64 is not an integer"),
    ("labels-bool", lambda t: mano.score(X, labels=Y > 2), r"labels: dtype bool is not an integer"),
    ("labels-2d", lambda t: mano.score(X, labels=np.zeros((20, 2), np.int64)), r"labels: expected a 1-D array"),
    ("labels-out-of-range", lambda t: mano.score(X, labels=np.where(np.arange(20) == 6, 5, 0)),
     r"row 6: label 5 is outside \[0, 5\)"),
    ("labels-negative", lambda t: mano.score(X, labels=np.full(20, -1)), r"label -1 is outside \[0, 5\)"),
    ("labels-missing-file", lambda t: mano.score(X, labels=t / "nope.npy"), r"nope\.npy: cannot open"),
    ("unknown-method", lambda t: mano.score(X, methods="mano,nope"), r"unknown method 'nope'.*known methods: mano"),
    ("method-not-a-name", lambda t: mano.score(X, methods=["mano", 3]), r"methods: 3 is not a method name"),
    ("method-needs-source", lambda t: mano.score(X, methods="atc_mc"), r"atc_mc needs source"),
    ("method-needs-second", lambda t: mano.score(X, methods="agreement"), r"agreement needs second"),
    ("method-needs-features", lambda t: mano.score(X, methods="dispersion"), r"dispersion needs features"),
    ("p-1", lambda t: mano.score(X, p=1), r"p must be a finite number greater than 1 \(got 1\)"),
    ("p-0.5", lambda t: mano.score(X, p=0.5), r"p must be .* greater than 1"),
    ("p-nan", lambda t: mano.score(X, p=float("nan")), r"\bp\b.*nan"),
    ("p-inf", lambda t: mano.score(X, p=math.inf), r"\bp\b.*inf"),
    ("p-string", lambda t: mano.score(X, p="4"), r"\bp\b must be a number.*'4'"),
    ("p-bool", lambda t: mano.score(X, p=True), r"\bp\b must be a number.*True"),
    ("eta-string", lambda t: mano.score(X, eta="5"), r"\beta\b must be a number"),
    ("criterion-nan", lambda t: mano.score(X, criterion=float("nan")), r"criterion.*nan"),
    ("batch-size-negative", lambda t: mano.score(X, batch_size=-1), r"batch_size must be 0 .* \(got -1\)"),
    ("batch-size-fraction", lambda t: mano.score(X, batch_size=1.5), r"batch_size.*whole number.*1\.5"),
    ("taylor-order-0", lambda t: mano.score(X, taylor_order=0), r"taylor_order.*\(got 0\)"),
    ("taylor-order-171", lambda t: mano.score(X, taylor_order=171), r"taylor_order\" must be a whole number from 1 to 170"),
    ("normalization-foo", lambda t: mano.score(X, normalization="foo"), r"normalization 'foo' is not one of softrun"),
    ("normalization-family", lambda t: mano.score(X, normalization="family"), r"normalization 'family'"),
    ("temperature-abc", lambda t: mano.score(X, temperature="abc"), r"temperature must be a number > 0 or 'fit'.*abc"),
    ("temperature-0", lambda t: mano.score(X, temperature=0), r"temperature must be a finite number greater than 0"),
    ("temperature-negative", lambda t: mano.score(X, temperature=-1.0), r"temperature must be"),
    ("temperature-fit-no-source", lambda t: mano.score(X, temperature="fit"), r"temperature 'fit' needs .*source"),
    ("label-marginal-foo", lambda t: mano.score(X, label_marginal="foo"), r"label_marginal must be 'uniform'.*foo"),
    ("label-marginal-length", lambda t: mano.score(X, "cot", label_marginal=[0.5, 0.5]),
     r"label marginal has 2 entries but the logits have 5 classes"),
    ("label-marginal-sum", lambda t: mano.score(X, "cot", label_marginal=[1, 1, 1, 1, 1]), r"must sum to 1"),
    ("label-marginal-negative", lambda t: mano.score(X, "cot", label_marginal=[-1, 1, 0, 0, 1]), r"non-negative"),
    ("label-marginal-nan", lambda t: mano.score(X, "cot", label_marginal=[np.nan, 1, 0, 0, 0]),
     r"label.marginal.*(finite|nan)"),
    ("label-marginal-source-no-source", lambda t: mano.score(X, "cot", label_marginal="source"),
     r"label_marginal 'source' needs source"),
    ("source-class-count", lambda t: mano.score(X, source=(random_logits(30, 4, 1), np.zeros(30, np.int64))),
     r"source logits have 4 classes but the target logits have 5"),
    ("source-label-count", lambda t: mano.score(X, source=(random_logits(30, 5, 1), np.zeros(29, np.int64))),
     r"source labels: 29 labels for 30 rows"),
    ("source-label-range", lambda t: mano.score(X, source=(random_logits(30, 5, 1), np.full(30, 7))),
     r"source row 0: label 7 is outside \[0, 5\)"),
    ("source-nan", lambda t: mano.score(X, source=(_with(np.nan, 4, 0), Y)), r"source row 4, column 0: logit is NaN"),
    ("source-one-item", lambda t: mano.score(X, source=(X,)), r"source must be \(logits, labels\)"),
    ("source-no-labels", lambda t: mano.score(X, source={"logits": X}), r"source needs both its logits and its labels"),
    ("source-int", lambda t: mano.score(X, source=(X.astype(int), Y)), r"source logits: dtype int64"),
    ("second-shape", lambda t: mano.score(X, second=X[:, :4]), r"second: shape \(20, 4\) differs"),
    ("second-nan", lambda t: mano.score(X, second=_with(np.nan, 4, 0)), r"second: row 4, column 0: logit is NaN"),
    ("features-rows", lambda t: mano.score(X, features=X[:5]), r"features: 5 rows for 20 rows"),
    ("features-nan", lambda t: mano.score(X, features=_with(np.nan, 4, 0)), r"features: row 4, column 0"),
    ("missing-file", lambda t: mano.score(t / "missing.npy"), r"missing\.npy: cannot open"),
    ("not-npy", lambda t: mano.score(_bad_file(t, "text.npy", b"hello, world\n")), r"text\.npy: is not a \.npy file"),
    ("unknown-format", lambda t: mano.score(_bad_file(t, "text.txt", b"hello, world\n")), r"text\.txt: unknown format"),
    ("truncated-npy", lambda t: mano.score(_truncated(t)), r"truncated\.npy: is truncated"),
    ("directory", lambda t: mano.score(t), r"cannot open|not a|directory"),
    ("threads-negative", lambda t: mano.score(X, threads=-1), r"threads must be a whole number >= 0.*-1"),
    ("threads-fraction", lambda t: mano.score(X, threads=1.5), r"threads must be a whole number"),
    ("threads-bool", lambda t: mano.score(X, threads=True), r"threads must be a whole number"),
    ("accumulator-0", lambda t: mano.Accumulator(0), r"k \(the number of classes\) must be a whole number >= 1, got 0"),
    ("accumulator-negative", lambda t: mano.Accumulator(-3), r"k .* got -3"),
    ("accumulator-float", lambda t: mano.Accumulator(5.0), r"k .* got 5\.0"),
    ("accumulator-huge", lambda t: mano.Accumulator(2**64), r"k .* got 18446744073709551616"),
    ("threads-huge", lambda t: mano.score(X, threads=2**40), r"threads must be a whole number"),
    ("accumulator-bad-option", lambda t: mano.Accumulator(5, p=0.5), r"p must be"),
    ("accumulator-unknown-method", lambda t: mano.Accumulator(5, "nope"), r"unknown method 'nope'"),
    ("push-wrong-k", lambda t: mano.Accumulator(4).push(X), r"logits: 5 columns, but the accumulator has 4 classes"),
    ("push-int", lambda t: mano.Accumulator(5).push(X.astype(np.int16)), r"dtype int16"),
    ("push-1-d", lambda t: mano.Accumulator(5).push(X[0]), r"expected a 2-D array"),
    ("push-nan", lambda t: mano.Accumulator(5).push(_with(np.nan, 8, 1)), r"row 8, column 1: logit is NaN"),
    ("push-labels", lambda t: mano.Accumulator(5).push(X, Y[:3]), r"labels: 3 labels for 20 rows"),
    ("push-labels-range", lambda t: mano.Accumulator(5).push(X, Y + 5), r"label \d+ is outside \[0, 5\)"),
    ("merge-options", lambda t: mano.Accumulator(5, p=3).merge(mano.Accumulator(5)), r"different p"),
    ("merge-methods", lambda t: mano.Accumulator(5, "mano").merge(mano.Accumulator(5, "entropy")),
     r"different methods"),
    ("merge-k", lambda t: mano.Accumulator(5).merge(mano.Accumulator(4)), r"different numbers of columns"),
    ("merge-not-accumulator", lambda t: mano.Accumulator(5).merge({"k": 5}), r"merge takes an Accumulator, got dict"),
    ("result-no-rows", lambda t: mano.Accumulator(5).result(), r"no rows"),
    ("state-garbage-json", lambda t: mano.Accumulator.from_state("{garbage"), r"accumulator state: .*not valid JSON"),
    ("state-garbage-bytes", lambda t: mano.Accumulator.from_state(b"{\xff"), r"accumulator state|utf-8|decode"),
    ("state-not-a-state", lambda t: mano.Accumulator.from_state('{"a": 1}'), r"not a mano accumulator state"),
    ("state-empty-dict", lambda t: mano.Accumulator.from_state({}), r"not a mano accumulator state"),
    ("state-list", lambda t: mano.Accumulator.from_state("[1, 2]"), r"^accumulator state: "),
    ("state-deep", lambda t: mano.Accumulator.from_state("[" * 5000 + "]" * 5000), r"nests deeper than"),
    ("state-int", lambda t: mano.Accumulator.from_state(3), r"state must be a dict, JSON text or a file path, got int"),
    ("state-missing-file", lambda t: mano.Accumulator.from_state(t / "nope.json"), r"nope\.json: cannot open"),
    ("state-garbage-file", lambda t: mano.Accumulator.from_state(_bad_file(t, "s.json", b"not json")),
     r"s\.json|accumulator state"),
    ("state-truncated-section", lambda t: mano.Accumulator.from_state(
        {**mano.Accumulator(5, "nuclear").push(X).state(), "predicted": [1, 2]}), r"predicted"),
    ("default-methods-k-0", lambda t: mano.default_methods(0), r"\bk\b"),
    ("default-methods-n-negative", lambda t: mano.default_methods(10, -1), r"\bn\b"),
    ("default-methods-input", lambda t: mano.default_methods(10, 5, ["foo"]), r"'\"foo\"' is not one of source"),
    ("predict-level", lambda t: mano.predict({}, X, level=1.5), r"level must lie strictly between 0 and 1"),
    ("predict-not-a-calibration", lambda t: mano.predict({"format": "x"}, X), r"not a mano calibration"),
    ("read-calibration-missing", lambda t: mano.read_calibration(t / "cal.json"), r"cal\.json: cannot open"),
    ("evaluate-not-sets", lambda t: mano.evaluate(3), r"sets must be a manifest path"),
    ("evaluate-missing-manifest", lambda t: mano.evaluate(t / "m.json"), r"m\.json: cannot open"),
    ("evaluate-set-without-name", lambda t: mano.evaluate([{"logits": X, "labels": Y}] * 3), r"set 0 must be a dict"),
    ("read-shape-negative", lambda t: mano.read(_bad_file(t, "raw.bin", X.tobytes()), shape=(-1, 5)), r"shape must be"),
    ("read-shape-3-d", lambda t: mano.read(_bad_file(t, "raw.bin", X.tobytes()), shape=(1, 4, 5)), r"shape must be"),
    ("read-shape-text", lambda t: mano.read(_bad_file(t, "raw.bin", X.tobytes()), shape="20,5"), r"shape must be"),
    ("read-shape-size", lambda t: mano.read(_bad_file(t, "raw.bin", X.tobytes()), shape=(21, 5)),
     r"raw\.bin: is 400 bytes, but raw float32 logits of shape 21 x 5 take exactly 420 bytes"),
    ("read-labels-rows-negative", lambda t: mano.read_labels(TARGET_LABELS, rows=-5), r"rows must be a whole number"),
    ("read-labels-rows", lambda t: mano.read_labels(TARGET_LABELS, rows=5), r"holds 2000 labels but 5 are needed"),
    ("read-int-npy", lambda t: mano.score(_npy(t, X.astype(np.int32))), r"has dtype '<i4'"),
    ("read-3-d-npy", lambda t: mano.score(_npy(t, X[None])), r"has shape \(1, 20, 5\)"),
    ("npz-key", lambda t: mano.score(_npz(t), key="nope"), r"has no array 'nope'; it holds 'logits', 'other'"),
    ("labels-file-rows", lambda t: mano.score(_npy(t, X), labels=_npy(t, Y[:5], "labels.npy")),
     r"holds 5 labels but 20 are needed"),
    ("labels-file-range", lambda t: mano.score(_npy(t, X), labels=_npy(t, Y + 5, "labels.npy")),
     r"label \d+ is outside"),
    ("manifest-outside",
     lambda t: mano.evaluate(_bad_file(t, "m.json", b'{"sets": [{"name": "a", "logits": "../x.npy"}]}')),
     r"leaves the manifest's folder"),
]


def _npy(tmp, array, name="logits.npy"):
    path = tmp / name
    np.save(path, array)
    return path


def _npz(tmp):
    path = tmp / "logits.npz"
    np.savez(path, logits=X, other=X)
    return path


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_raises_input_error(case, tmp_path):
    _, call, message = case
    with pytest.raises(mano.InputError, match=message) as info:
        call(tmp_path)
    text = str(info.value)
    assert text and "\n" not in text and "Traceback" not in text and "json.exception" not in text, text
    assert len(text) < 600, f"a message of {len(text)} characters: {text[:200]}..."


@pytest.fixture(scope="module")
def calibration():
    return mano.calibrate(MANIFEST)


def test_calibration_misuse_raises_input_error(calibration, tmp_path):
    cli_like = "the logits have 4 classes but the calibration was fitted on logits with 10"
    with pytest.raises(mano.InputError, match=cli_like):
        mano.predict(calibration, random_logits(50, 4, 17))
    with pytest.raises(mano.InputError, match=cli_like):
        mano.predict(calibration, mano.score(random_logits(50, 4, 17)))
    path = tmp_path / "k4.npy"
    np.save(path, random_logits(50, 4, 17))
    with pytest.raises(mano.InputError, match=f"k4\\.npy: {cli_like}"):
        mano.predict(calibration, path)
    with pytest.raises(mano.InputError, match=r"row 3, column 1: logit is NaN"):
        mano.predict(calibration, np.hstack([_with(np.nan, 3, 1), X]))
    for bad in (float("nan"), math.inf, "0.5", None):
        with pytest.raises(mano.InputError, match="scores must be finite numbers"):
            mano.predict_scores(calibration, "mano", [0.3, bad])
    with pytest.raises(mano.InputError, match="no method 'agreement'"):
        mano.predict_scores(calibration, "agreement", [0.3])
    with pytest.raises(mano.InputError, match="unknown method 'nope'"):
        mano.predict_scores(calibration, "nope", [0.3])
    with pytest.raises(mano.InputError, match="its result is not one of mano.score"):
        mano.evaluate([{"name": str(i), "result": {"n": 3}} for i in range(3)])
    with pytest.raises(mano.InputError, match=r"result: .*\"k\""):
        mano.predict(calibration, {"methods": {}, "n": 3})
    with pytest.raises(mano.InputError, match=r"level must lie strictly between 0 and 1"):
        mano.predict(calibration, EXAMPLE / "blend_0_logits.npy", level=math.nan)


def test_input_error_is_a_value_error():
    assert issubclass(mano.InputError, ValueError)
    assert mano.InputError is mano._core.InputError
    with pytest.raises(ValueError):
        mano.score(X.astype(int))


def test_python_argument_errors_are_type_errors():
    with pytest.raises(TypeError):
        mano.score(X, "mano", None)  # labels is keyword-only
    with pytest.raises(TypeError):
        mano.score(X, bogus=1)
    with pytest.raises(TypeError):
        mano.score()
    with pytest.raises(TypeError):
        mano.Accumulator(5, "mano", 3.0)
    with pytest.raises(TypeError):
        mano.Accumulator(5, p_norm=3.0)
    with pytest.raises(TypeError):
        mano.evaluate(MANIFEST, "mano", ["blend"])
    with pytest.raises(TypeError):
        mano.calibrate(MANIFEST, colour="blue")
    with pytest.raises(TypeError):
        mano.predict({}, X, 0.9)


def test_numpy_scalars_as_options(target):
    want = mano.score(target, ["mano", "cot"], p=3.0, eta=4.0, taylor_order=3, batch_size=500, temperature=2.0)
    got = mano.score(target, np.array(["mano", "cot"]), p=np.float32(3.0), eta=np.float64(4.0),
                     taylor_order=np.int32(3), batch_size=np.int64(500), temperature=np.float16(2.0))
    assert_same(got, want)
    acc = mano.Accumulator(np.int64(10), ["mano", "cot"], p=np.float32(3.0), eta=np.float64(4.0),
                           taylor_order=np.int32(3), batch_size=np.int64(500), temperature=np.float16(2.0))
    assert_same(acc.push(target).result(), want)
    assert_same(mano.score(target, threads=np.int64(1)), mano.score(target, threads=1))


def test_architecture_option(target):
    """Every kernel this CPU runs, chosen by name; kernels agree within 1e-6 (their float32 exp differs)."""
    want = mano.score(target, "mano,nuclear", threads=1)
    for arch in mano.architectures():
        assert_same(mano.score(target, "mano,nuclear", architecture=arch, threads=1), want, rel=1e-6, abs_tol=1e-12)
        assert mano.Accumulator(10, architecture=arch).architecture == arch


def test_unknown_architecture_is_an_input_error():
    with pytest.raises(mano.InputError, match="architecture"):
        mano.score(X, architecture="avx9000")


def test_huge_unsigned_label_is_reported_as_given():
    with pytest.raises(mano.InputError, match="9223372036854775809"):
        mano.score(X, labels=np.full(20, 2**63 + 1, dtype=np.uint64))


# --- 5. no leaks --------------------------------------------------------------------------------

def _rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None


def test_no_reference_or_memory_leaks_over_many_calls():
    x = random_logits(64, 10, 10)
    labels = np.random.default_rng(11).integers(0, 10, 64)
    for _ in range(200):  # warm up caches, interned strings, allocator pools
        mano.score(x, methods="mano", labels=labels, threads=1)
    gc.collect()
    refs_x, refs_labels = sys.getrefcount(x), sys.getrefcount(labels)
    objects = len(gc.get_objects())
    rss = _rss_bytes()
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if resource else 0  # KiB on Linux
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        for _ in range(10_000):
            mano.score(x, methods="mano", labels=labels, threads=1)
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(x) == refs_x and sys.getrefcount(labels) == refs_labels
    assert len(gc.get_objects()) - objects < 100
    assert current - start < 64 * 1024, f"Python memory grew by {current - start} bytes over 10^4 calls"
    assert peak - start < 1024 * 1024
    if resource:
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_rss < 16 * 1024
    if rss is not None:
        assert _rss_bytes() - rss < 16 * 1024 * 1024


def test_no_leaks_over_many_failing_calls():
    bad, nan, short = X.astype(np.int32), _with(np.nan, 3, 3), Y[:3].copy()
    calls = [lambda: mano.score(bad, methods="mano", threads=1),  # refused before the core runs
             lambda: mano.score(nan, methods="mano", threads=1),  # refused while scanning
             lambda: mano.score(X, methods="mano", labels=short, threads=1)]  # refused reading labels
    for _ in range(100):
        for call in calls:
            with pytest.raises(mano.InputError):
                call()
    gc.collect()
    refs = sys.getrefcount(bad), sys.getrefcount(nan), sys.getrefcount(short)
    objects = len(gc.get_objects())
    rss = _rss_bytes()
    for i in range(10_000):
        try:
            calls[i % 3]()
        except mano.InputError:
            pass
        else:
            raise AssertionError("no InputError")
    gc.collect()
    assert (sys.getrefcount(bad), sys.getrefcount(nan), sys.getrefcount(short)) == refs
    assert len(gc.get_objects()) - objects < 100
    if rss is not None:
        assert _rss_bytes() - rss < 16 * 1024 * 1024


def test_accumulator_does_not_leak():
    x = random_logits(64, 10, 12)
    acc = mano.Accumulator(10, "mano,entropy")
    for _ in range(100):
        mano.Accumulator.from_state(acc.copy().push(x).state()).result()
    gc.collect()
    refs = sys.getrefcount(x)
    objects = len(gc.get_objects())
    rss = _rss_bytes()
    for _ in range(2_000):
        a = acc.copy().push(x)
        b = pickle.loads(pickle.dumps(a))
        b.result()
    gc.collect()
    assert sys.getrefcount(x) == refs
    assert len(gc.get_objects()) - objects < 100
    if rss is not None:
        assert _rss_bytes() - rss < 16 * 1024 * 1024


# --- 6. methods and default methods -------------------------------------------------------------

@needs_cli
def test_methods_equal_cli():
    want = cli_json("methods", "--json")["methods"]
    assert mano.methods() == want
    names = [m["name"] for m in want]
    assert "mano" in names and len(names) == len(set(names))


@needs_cli
@pytest.mark.parametrize("n,k", [(1, 2), (5, 2), (200, 10), (40, 100), (30, 101), (12, 1000), (3, 4000)])
def test_default_methods_equal_the_cli_score(n, k, tmp_path):
    path = tmp_path / "logits.npy"
    np.save(path, random_logits(n, k, n * k))
    result = cli_score(path)
    assert sorted(mano.default_methods(k, n)) == sorted(result["methods"])
    assert sorted(mano.score(path)["methods"]) == sorted(result["methods"])
    # no n: the methods for an unknown number of rows (an accumulator's defaults)
    assert mano.default_methods(k) == mano.Accumulator(k).options["methods"]


@needs_cli
def test_default_methods_with_inputs_equal_the_cli_score(tmp_path):
    path, second = tmp_path / "logits.npy", tmp_path / "second.npy"
    np.save(path, random_logits(200, 10, 1))
    np.save(second, random_logits(200, 10, 2))
    result = cli_score(path, "--second-logits", second, "--source-logits", SOURCE_LOGITS,
                       "--source-labels", SOURCE_LABELS)
    assert sorted(mano.default_methods(10, 200, ["second", "source"])) == sorted(result["methods"])


# --- 7. the GIL ---------------------------------------------------------------------------------

def test_the_gil_is_released_while_scoring():
    block = random_logits(1000, 100, 13)
    x = np.tile(block, (400, 1))  # 400000 x 100 float32
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        # the counter's own pace while this thread waits without the GIL
        c0, t0 = count[0], time.perf_counter()
        time.sleep(0.15)
        rate = (count[0] - c0) / (time.perf_counter() - t0)
        during = spent = 0.0
        calls = 0
        while spent < 0.5 and calls < 20:
            c0, t0 = count[0], time.perf_counter()
            mano.score(x, methods="mano", threads=1)
            spent += time.perf_counter() - t0
            during += count[0] - c0
            calls += 1
    finally:
        stop.set()
        thread.join()
    assert rate > 0
    # holding the GIL, the counter would run only between calls (a switch interval, 5 ms, each)
    assert during >= 0.25 * rate * spent, (
        f"the other thread advanced {during:.0f} times in {spent:.2f} s of scoring; "
        f"it runs {rate:.0f} times a second when the GIL is free")


# --- bounds and honest intervals (the second adversarial pass) ---------------------------------

def test_accumulator_of_too_many_classes_is_an_input_error():
    with pytest.raises(mano.InputError, match="more than the 1048576 an accumulator takes"):
        mano.Accumulator(2 ** 40, "cot")


def test_predict_checks_the_class_count_before_reading_rows(tmp_path):
    """An 11-class file against a 10-class calibration is refused from its header: the process
    does not grow by the file's 220 MB (it once read the whole file to name K)."""
    import zipfile
    path = tmp_path / "eleven.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, z.open("arr_0.npy", "w", force_zip64=True) as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (5_000_000, 11)})
        block = bytes(4 * 11 * 100_000)
        for _ in range(50):
            f.write(block)
    script = ("import resource, sys, mano\n"
              "cal = mano.calibrate(sys.argv[2])\n"
              "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
              "try:\n    mano.predict(cal, sys.argv[1])\nexcept mano.InputError as e:\n    print(e)\n"
              "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(path), str(EXAMPLE / "manifest.json")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    message, grown_kb = proc.stdout.strip().splitlines()
    assert message == f"{path}: the logits have 11 classes but the calibration was fitted on logits with 10", proc.stderr
    assert int(grown_kb) < 64 * 1024


def test_predict_leaves_out_cot_where_it_would_keep_too_many_rows(tmp_path):
    cal = mano.calibrate(EXAMPLE / "manifest.json")
    assert "cot" in cal["options"]["methods"]
    big = np.zeros((250_000, 10), np.float32)
    with pytest.warns(UserWarning, match="cot left out of this prediction"):
        out = mano.predict(cal, big)
    assert "cot" not in out["methods"] and "mano" in out["methods"]
    small = mano.predict(cal, np.load(EXAMPLE / "blend_0_logits.npy"))
    assert "cot" in small["methods"]


def test_an_interval_outside_zero_one_keeps_its_width():
    """Uniform logits score far below every calibration set: the estimate is clipped to 0 and
    says so, and its 90% interval is not the single point [0, 0]."""
    cal = mano.calibrate(EXAMPLE / "manifest.json", methods="mano")
    out = mano.predict(cal, np.zeros((2000, 10), np.float32))
    est = out["estimate"]
    assert est["accuracy"] == 0.0 and est["out_of_range"] == "below"
    assert est["interval"][0] == 0.0 and est["interval"][1] > 0.05
    [huge] = mano.predict_scores(cal, "mano", [1e308])
    assert huge["interval"] == [0.0, 1.0] and huge["out_of_range"] == "above"
    [inside] = mano.predict_scores(cal, "mano", [cal["methods"]["mano"]["score_mean"]])
    assert "out_of_range" not in inside

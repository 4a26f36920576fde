"""mano.score equals `mano score --json` to 1e-12 on every logits fixture (tests/data/example,
tests/data/golden) and with every option; every dtype and memory layout of an array gives the
result of its C-contiguous copy; threads change nothing, and the GIL is released while scoring."""
import json

import numpy as np
import pytest

import mano

try:
    import resource
except ImportError:  # not on Windows
    resource = None

from api_support import *  # noqa: F401,F403 (the shared constants, helpers and fixtures)


def test_fixtures_are_there():
    assert len(EXAMPLE_LOGITS) == 13 and len(GOLDEN_LOGITS) >= 30
    assert all(np.load(p).ndim == 2 for p in GOLDEN_LOGITS)


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
    if name == "k2.npy" and kwargs.get("normalization") == "taylor":  # one-hot Taylor rows (docs/methods.md#mano)
        with pytest.raises(mano.InputError, match="not defined for 2 classes"):
            mano.score(path, **kwargs)
        return
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

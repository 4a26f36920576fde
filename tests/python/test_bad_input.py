"""Bad input raises mano.InputError (a ValueError) with a clear message, never a crash."""
import math
import warnings

import numpy as np
import pytest

import mano

try:
    import resource
except ImportError:  # not on Windows
    resource = None

from api_support import *  # noqa: F401,F403 (the shared constants, helpers and fixtures)




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
    ("nan", lambda t: mano.score(with_value(np.nan, 7, 2)), r"row 7, column 2: logit is NaN"),
    ("nan-one-thread", lambda t: mano.score(with_value(np.nan, 19, 4), threads=1), r"row 19, column 4: logit is NaN"),
    ("inf", lambda t: mano.score(with_value(np.inf, 3, 1)), r"row 3, column 1: logit is \+Inf"),
    ("minus-inf", lambda t: mano.score(with_value(-np.inf, 0, 0).astype(np.float64)), r"row 0, column 0: logit is -Inf"),
    ("nan-float16", lambda t: mano.score(with_value(np.nan, 11, 3).astype(np.float16)), r"row 11, column 3: logit is NaN"),
    ("nan-fortran", lambda t: mano.score(np.asfortranarray(with_value(np.nan, 12, 0))), r"row 12, column 0"),
    ("nan-reversed", lambda t: mano.score(with_value(np.nan, 2, 0)[::-1]), r"row 17, column 0"),
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
    ("temperature-abc", lambda t: mano.score(X, temperature="abc"), r"temperature must be 'fit' or a number.*abc"),
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
    ("source-nan", lambda t: mano.score(X, source=(with_value(np.nan, 4, 0), Y)), r"source row 4, column 0: logit is NaN"),
    ("source-one-item", lambda t: mano.score(X, source=(X,)), r"source must be \(logits, labels\)"),
    ("source-no-labels", lambda t: mano.score(X, source={"logits": X}), r"source needs both its logits and its labels"),
    ("source-int", lambda t: mano.score(X, source=(X.astype(int), Y)), r"source logits: dtype int64"),
    ("second-shape", lambda t: mano.score(X, second=X[:, :4]), r"second: shape \(20, 4\) differs"),
    ("second-nan", lambda t: mano.score(X, second=with_value(np.nan, 4, 0)), r"second: row 4, column 0: logit is NaN"),
    ("features-rows", lambda t: mano.score(X, features=X[:5]), r"features: 5 rows for 20 rows"),
    ("features-nan", lambda t: mano.score(X, features=with_value(np.nan, 4, 0)), r"features: row 4, column 0"),
    ("missing-file", lambda t: mano.score(t / "missing.npy"), r"missing\.npy: cannot open"),
    ("not-npy", lambda t: mano.score(_bad_file(t, "text.npy", b"hello, world\n")), r"text\.npy: is not a \.npy file"),
    ("unknown-format", lambda t: mano.score(_bad_file(t, "text.txt", b"hello, world\n")), r"text\.txt: unknown format"),
    ("truncated-npy", lambda t: mano.score(_truncated(t)), r"truncated\.npy: is truncated"),
    ("directory", lambda t: mano.score(t), r"cannot open|not a|directory"),
    ("threads-negative", lambda t: mano.score(X, threads=-1), r"threads must be a whole number >= 0.*-1"),
    ("threads-fraction", lambda t: mano.score(X, threads=1.5), r"threads must be a whole number"),
    ("threads-bool", lambda t: mano.score(X, threads=True), r"threads must be a whole number"),
    ("accumulator-0", lambda t: mano.Accumulator(0), r"k \(the number of classes\) must be a whole number >= 1 \(got 0\)"),
    ("accumulator-negative", lambda t: mano.Accumulator(-3), r"k .* \(got -3\)"),
    ("accumulator-float", lambda t: mano.Accumulator(5.0), r"k .* \(got 5\.0\)"),
    ("accumulator-huge", lambda t: mano.Accumulator(2**64), r"k .* \(got a number of 20 digits\)"),
    ("threads-huge", lambda t: mano.score(X, threads=2**40), r"threads must be a whole number"),
    ("accumulator-bad-option", lambda t: mano.Accumulator(5, p=0.5), r"p must be"),
    ("accumulator-unknown-method", lambda t: mano.Accumulator(5, "nope"), r"unknown method 'nope'"),
    ("push-wrong-k", lambda t: mano.Accumulator(4).push(X), r"logits: 5 columns, but the accumulator has 4 classes"),
    ("push-int", lambda t: mano.Accumulator(5).push(X.astype(np.int16)), r"dtype int16"),
    ("push-1-d", lambda t: mano.Accumulator(5).push(X[0]), r"expected a 2-D array"),
    ("push-nan", lambda t: mano.Accumulator(5).push(with_value(np.nan, 8, 1)), r"row 8, column 1: logit is NaN"),
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
    ("predict-level", lambda t: mano.predict({}, X, level=1.5), r"level must be in \(0, 0.999999\]"),
    # 0.5 + level / 2 rounds to 1: before, an internal "student_t_quantile: ... (got 1)"
    ("predict-level-next-to-1", lambda t: mano.predict({}, X, level=0.9999999999999999), r"level must be in \(0, 0.999999\]"),
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
    # a file of 0 rows: the one error, no size warning about the methods that keep rows before it
    np.save(tmp_path / "empty.npy", np.zeros((0, 10), np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(mano.InputError, match=r"empty\.npy: no rows to score"):
            mano.predict(calibration, tmp_path / "empty.npy")
    with pytest.raises(mano.InputError, match=r"row 3, column 1: logit is NaN"):
        mano.predict(calibration, np.hstack([with_value(np.nan, 3, 1), X]))
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
    with pytest.raises(mano.InputError, match=r"level must be in \(0, 0.999999\]"):
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

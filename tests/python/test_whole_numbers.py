"""Whole numbers and the messages of issue 43's item 13: NumPy integers are whole numbers wherever
the package takes one (mano/_whole.py), a number too long to print is said by its digits, an empty
audit and a set of one row say what an audit needs (2 labeled rows), and a bfloat16 tensor is
scored as the float32 numbers it holds. References: the same call with Python ints, and NumPy."""
import json
import subprocess

import numpy as np
import pytest

import mano
import mano.monitor
from api_support import MANO_BIN, TARGET, assert_same, needs_cli

X = np.load(TARGET)


@pytest.mark.parametrize("kind", [np.int64, np.int32, np.uint16])
def test_numpy_integers_are_whole_numbers(kind, calibration, tmp_path):
    assert_same(mano.score(X, "confscore", threads=kind(1)), mano.score(X, "confscore", threads=1))
    assert mano.Accumulator(kind(X.shape[1]), "confscore").push(X).result() == mano.score(X, "confscore")
    assert mano.audit(X, kind(5), seed=kind(7)) == mano.audit(X, 5, seed=7)
    assert mano.audit(kind(1500), 5, seed=1) == mano.audit(1500, 5, seed=1)
    assert mano.default_methods(kind(10), kind(100)) == mano.default_methods(10, 100)
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps(calibration))
    np.save(tmp_path / "x.npy", X[:300])
    added = mano.monitor.add(tmp_path / "h.db", [tmp_path / "x.npy"], calibration=cal, at="2026-01-01",
                             chunk_size=kind(100), threads=kind(1))
    assert len(added["names"]) == 3
    assert len(mano.monitor.report(tmp_path / "h.db", reference=kind(2))["points"]) == 3


def test_numpy_integers_split_every():
    dask = pytest.importorskip("dask.array")
    import mano.dask
    data = dask.from_array(X, chunks=(500, X.shape[1]))
    assert_same(mano.dask.score(data, "confscore", split_every=np.int64(2)), mano.score(X, "confscore"))


def test_whole_number_messages():
    with pytest.raises(mano.InputError) as info:
        mano.audit(2**70, 5)
    assert str(info.value) == "x (the number of rows) must be a whole number >= 0 (got a number of 22 digits)"
    with pytest.raises(mano.InputError, match=r"chunk_size must be a whole number >= 1 \(got 0\)"):
        mano.monitor.add("unused.db", [str(TARGET)], calibration="unused.json", chunk_size=np.int64(0))
    with pytest.raises(mano.InputError, match=r"seed must be a whole number from 0 to 9007199254740991 .*\(got '7'\)"):
        mano.audit(X, 5, seed="7")


def test_an_empty_audit_says_what_an_audit_needs(calibration):
    for empty in (([], []), {"rows": np.array([], dtype=np.int64), "labels": np.array([], dtype=np.int64)}):
        with pytest.raises(mano.InputError) as info:
            mano.predict(calibration, X, audit=empty)
        assert str(info.value) == ("audit: 0 labeled rows; an audit needs at least 2: label every row mano audit drew "
                                   "(draw 2 or more)")


def test_a_set_of_one_row_asks_for_no_audit(calibration):
    # an audit needs 2 labeled rows: a one-row set's wide interval gets no labels advice (this
    # row's interval is wider than 0.25, where a larger set gets one)
    one = mano.predict(calibration, X[1:2] * 0.2)
    assert one["n"] == 1 and one["estimate"]["interval"][1] - one["estimate"]["interval"][0] > 0.25
    assert "labels_for_width" not in one


@needs_cli
def test_a_set_of_one_row_asks_for_no_audit_on_the_command_line(calibration, tmp_path):
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps(calibration))
    np.save(tmp_path / "one.npy", X[1:2] * 0.2)
    out = subprocess.run([str(MANO_BIN), "predict", "--calibration", str(cal), str(tmp_path / "one.npy"), "--json"],
                         capture_output=True, text=True, check=True)
    assert "labels_for_width" not in json.loads(out.stdout)
    text = subprocess.run([str(MANO_BIN), "predict", "--calibration", str(cal), str(tmp_path / "one.npy")],
                          capture_output=True, text=True, check=True)
    assert "mano audit" not in text.stdout + text.stderr


def test_a_bfloat16_tensor_is_scored_as_its_float32_values():
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(X[:400].astype(np.float32)).to(torch.bfloat16)
    want = mano.score(t.float().numpy(), "mano,confscore")
    assert_same(mano.score(t, "mano,confscore"), want)
    assert_same(mano.Accumulator(X.shape[1], "mano,confscore").push(t).result(), want)

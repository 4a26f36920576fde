"""What the Python package reads as logits (issue 43, items 11 and 12): a CSV's columns that are not
classes (pandas' index, ids, labels) are left out with a warning, and ``input=`` reads
probabilities and a binary classifier's one column as logits in every call that scores, with the
calibration's kind enforced. Every number against NumPy (tests/reference/inputs_reference.py)."""
import json
import pathlib
import sys
import warnings

import numpy as np
import pytest

import mano
import mano.monitor

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from inputs_reference import probability_sets, write  # noqa: E402

TOL = 1e-6  # the kernel's float lanes


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    return d, write(d)


def same(got, want):
    assert got["methods"]["mano"]["score"] == pytest.approx(want["mano"], rel=TOL)
    assert got["methods"]["mano"]["normalization"] == want["normalization"]
    assert got["methods"]["confscore"]["score"] == pytest.approx(want["confscore"], rel=TOL)


def notes(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = call()
    return value, [str(w.message) for w in caught]


def test_a_pandas_csv_is_scored_without_its_index(files):
    d, want = files
    got, said = notes(lambda: mano.score(d / "pandas.csv", "mano,confscore"))
    same(got, want["csv"])
    assert got["k"] == want["k"]
    assert said == [f"{d / 'pandas.csv'}: column 1 ('') is pandas' index column, not a class: left out of the logits"]
    array, said = notes(lambda: mano.read(d / "pandas.csv"))
    assert array.shape == (want["n"], want["k"]) and len(said) == 1


def test_a_label_column_gives_labels_and_is_no_class(files):
    d, want = files
    got, said = notes(lambda: mano.score(d / "pandas_labeled.csv", "mano,confscore"))
    same(got, want["csv"])
    assert got["accuracy"] == pytest.approx(want["csv"]["accuracy"], abs=1e-15)
    assert any("column 12 ('label') holds labels, not a class: it is the label column" in s for s in said)
    assert (mano.read_labels(d / "pandas_labeled.csv") == np.load(d / "csv_labels.npy")).all()
    same(mano.score(d / "ids.csv", "mano,confscore"), want["csv"])
    with pytest.raises(mano.InputError, match=r"two_labels\.csv: has 2 columns named as labels \('label', 'y'\): say which "
                                              r"one holds the labels with label_column"):
        mano.score(d / "two_labels.csv")
    same(mano.score(np.asarray(mano.read(d / "two_labels.csv", label_column="y")), "mano,confscore"), want["csv"])


@pytest.mark.parametrize("name,note", [("named_index.csv", "column 1 ('row') holds ids"),
                                       ("frame_index.csv", "column 1 ('frame') is pandas' index column"),
                                       ("sample_id.csv", "column 1 ('sample_id') holds ids")])
def test_ids_and_a_named_index_are_no_classes(files, name, note):
    # issue 50: df.to_csv() with a named index, or a sample_id column, scored the ids as a class
    d, want = files
    got, said = notes(lambda: mano.score(d / name, "mano,confscore"))
    same(got, want["csv"])
    assert got["k"] == want["k"]
    assert said == [f"{d / name}: {note}, not a class: left out of the logits"]
    array, said = notes(lambda: mano.read(d / name))
    assert array.shape == (want["n"], want["k"]) and len(said) == 1


def test_an_index_of_its_own_name_is_refused(files):
    d, _ = files
    fix = r"holds an index or ids, not a class's logits: its first 100 rows count 0, 1, 2, \.\.\.; drop the column"
    for call in (mano.score, mano.read):
        with pytest.raises(mano.InputError, match=r"frame_named\.csv: column 1 \('frame'\) " + fix):
            call(d / "frame_named.csv")


def test_a_dataframe_s_columns_are_read_as_a_csv_header(files):
    # issue 50: mano.score(DataFrame) scored a label column as a class (k = 11); the frame's names
    # now go through the CSV header's rule, and its label column gives the labels
    pd = pytest.importorskip("pandas")
    d, want = files
    labeled = pd.read_csv(d / "pandas_labeled.csv", index_col=0)
    got, said = notes(lambda: mano.score(labeled, "mano,confscore"))
    same(got, want["csv"])
    assert got["k"] == want["k"] and got["accuracy"] == pytest.approx(want["csv"]["accuracy"], abs=1e-15)
    assert said == ["logits: column 11 ('label') holds labels, not a class: it is the label column, left out of the logits"]
    given, _ = notes(lambda: mano.score(labeled, "confscore", labels=np.zeros(want["n"], np.int64)))
    assert given["accuracy"] == pytest.approx(float(np.mean(labeled.to_numpy()[:, :-1].argmax(1) == 0)), abs=1e-15)
    ids, said = notes(lambda: mano.score(pd.read_csv(d / "sample_id.csv"), "mano,confscore"))
    same(ids, want["csv"])
    assert said == ["logits: column 1 ('sample_id') holds ids, not a class: left out of the logits"]
    named = pd.read_csv(d / "named_index.csv", index_col=0)  # the index is the frame's, not a column
    same(mano.score(named, "mano,confscore"), want["csv"])
    with pytest.raises(mano.InputError, match=r"logits: column 1 \('frame'\) holds an index or ids"):
        mano.score(pd.read_csv(d / "frame_named.csv"))
    acc = mano.Accumulator(want["k"], "mano,confscore")
    for chunk in (labeled.iloc[:100], labeled.iloc[100:]):
        notes(lambda: acc.push(chunk))
    pushed = acc.result()
    same(pushed, want["csv"])
    assert pushed["accuracy"] == pytest.approx(want["csv"]["accuracy"], abs=1e-15)


@pytest.mark.parametrize("name,kind", [("p.npy", "probabilities"), ("z.npy", "binary-logit"), ("pz.npy", "binary-probability")])
def test_input_kinds_as_arrays_files_and_accumulators(files, name, kind):
    d, want = files
    expected = want[kind.replace("-", "_")]
    x = np.load(d / name)
    same(mano.score(x, "mano,confscore", input=kind), expected)
    same(mano.score(d / name, "mano,confscore", input=kind), expected)
    k = 2 if kind.startswith("binary") else want["k"]
    acc = mano.Accumulator(k, "mano,confscore", input=kind)
    acc.push(x[:100]).push(x[100:])
    got = acc.result()
    same(got, expected)
    assert got["input"] == kind and got["k"] == k
    if kind.startswith("binary"):  # one column may be a 1-D array
        same(mano.score(x[:, 0], "mano,confscore", input=kind), expected)


def test_probabilities_read_as_logits_are_a_warning(files):
    d, _ = files
    got, said = notes(lambda: mano.score(np.load(d / "p.npy"), "confscore"))
    assert got["looks_like_probabilities"] is True
    assert said == ["logits: every row lies in [0, 1] and sums to 1: these look like probabilities, not logits; give "
                    "input='probabilities' (read as logits, they give estimates on another scale)"]
    got, said = notes(lambda: mano.score(np.load(d / "p.npy"), "confscore", input="probabilities"))
    assert "looks_like_probabilities" not in got and said == []


def test_bad_shapes_and_values_name_the_input(files):
    d, _ = files
    with pytest.raises(mano.InputError, match=r"got 1 \(a binary classifier's one column: give input binary-logit or binary-probability\)"):
        mano.score(np.load(d / "z.npy"))
    with pytest.raises(mano.InputError, match=r"input binary-logit takes one column per row .* but the rows have 10"):
        mano.score(np.load(d / "p.npy"), input="binary-logit")
    bad = np.load(d / "p.npy").astype(np.float64)
    bad[4, 2] = -0.25
    with pytest.raises(mano.InputError, match=r"row 4, column 2: -0\.25 is not a probability"):
        mano.score(bad, input="probabilities")
    with pytest.raises(mano.InputError, match=r"input 'probs' is not one of logits, probabilities"):
        mano.score(bad, input="probs")
    with pytest.raises(mano.InputError, match=r"input must be"):
        mano.score(bad, input=3)


def test_the_calibration_records_the_input(tmp_path):
    sets = [{"name": f"s{i}", "logits": p, "labels": y} for i, (p, y) in enumerate(probability_sets(11, n=500))]
    cal = mano.calibrate(sets, "confscore,mano", input="probabilities")
    assert cal["options"]["input"] == "probabilities"
    report = mano.evaluate(sets, "confscore,mano", input="probabilities")
    assert len(report["sets"]) == 4
    x = sets[0]["logits"]
    with pytest.raises(mano.InputError, match="the set is read as input logits but the calibration was fitted on input probabilities"):
        mano.predict(cal, x)
    got = mano.predict(cal, x, input="probabilities")
    assert got["estimate"]["accuracy"] == mano.predict(cal, mano.score(x, cal["options"]["methods"], input="probabilities"))["estimate"]["accuracy"]
    with pytest.raises(mano.InputError, match="fitted on input probabilities"):
        mano.predict(cal, mano.score(x))
    # an audit of the set: its rows read as the set is
    draw = mano.audit(x, 20, seed=3, input="probabilities")
    audited = mano.predict(cal, x, input="probabilities", audit=(draw["rows"], sets[0]["labels"][draw["rows"]]))
    assert audited["audit"]["n"] == 20
    # monitor.add: the calibration's kind
    (tmp_path / "cal.json").write_text(json.dumps(cal))
    np.save(tmp_path / "x.npy", x)
    with pytest.raises(mano.InputError, match="fitted on input probabilities"):
        mano.monitor.add(tmp_path / "h.db", [tmp_path / "x.npy"], calibration=tmp_path / "cal.json", at="2026-01-01")
    added = mano.monitor.add(tmp_path / "h.db", [tmp_path / "x.npy"], calibration=tmp_path / "cal.json", at="2026-01-01",
                             input="probabilities")
    assert len(added["names"]) == 1


def test_a_binary_audit_names_two_classes(files, tmp_path):
    d, _ = files
    mano.audit(d / "z.npy", 5, seed=1, path=tmp_path / "rows.csv", input="binary-logit")
    assert "each row's true class (0 to 1)" in (tmp_path / "rows.csv").read_text().splitlines()[0]

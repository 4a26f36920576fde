"""Audit mode in the Python package (docs/audit.md, docs/python.md): mano.audit draws the rows the
CLI's `mano audit` draws and writes its file byte for byte; mano.predict(audit=...) gives the
audit block of `mano predict --audit --json`, and the PPI and Wilson intervals of an independent
NumPy/SciPy reference (tests/reference/audit_reference.py); labels_for_width and the audit
show in mano.frame; every bad audit is one mano.InputError."""
import json
import os
import pathlib
import sys

import numpy as np
import pytest
from scipy.special import expit, log_softmax

import mano
from api_support import assert_same, cli, cli_json, needs_cli

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
import audit_reference  # noqa: E402

pytestmark = needs_cli

K, N = 5, 900
LEVEL = 0.9
EDGES = np.array([-4 + 0.75 * i for i in range(19)])  # docs/audit.md: 20 bins in logit(confidence)


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    """Labeled sets of falling accuracy in 4 groups (a scale per group, so intervals are wide),
    a hard target set, and the CLI's calibration of the sets (with its correctness model)."""
    tmp = tmp_path_factory.mktemp("audit")
    rng = np.random.default_rng(20240531)
    audit_reference.make_sets(tmp, rng, K, N)
    cal = tmp / "cal.json"
    cli("calibrate", tmp / "manifest.json", "-o", cal, "--quiet", "--methods", "confscore,nuclear,mde")
    bare = json.loads(cal.read_text())
    del bare["correctness"]
    (tmp / "bare.json").write_text(json.dumps(bare))
    return tmp


# --- the independent reference (docs/audit.md) ---------------------------------------------------

def reference_audit(model, q, labels, rows):
    """PPI (theta = mean_all(f) + mean_audit(c - f), Student t, pseudo-rows in s^2) with f the
    correctness model at each row's cell (bin of logit(confidence), predicted class) and that cell's
    mean confidence in the set; and the audited rows' Wilson interval."""
    conf = np.exp(log_softmax(q.astype(np.float64), axis=1)).max(1)
    bins, pred = np.searchsorted(expit(EDGES), conf, side="right"), q.argmax(1)
    f = np.empty(len(q))
    for b, c in set(zip(bins.tolist(), pred.tolist())):
        m = (bins == b) & (pred == c)
        mean = min(conf[m].mean(), 1 - 1e-12)
        f[m] = expit(model["intercept"] + model["slope"] * np.log(mean / (1 - mean)) + model["class_effects"][c])
    correct = (pred == labels).astype(float)
    estimate, interval = audit_reference.ppi(f, correct, rows, LEVEL)
    return estimate, interval, audit_reference.wilson(correct[rows].sum(), len(rows), LEVEL)


def cli_rows(path):
    return [int(line.split(",")[0]) for line in path.read_text().splitlines()[2:]]


def labeled(tmp, rows, labels, name="labeled.csv"):
    path = tmp / name
    path.write_text("row,weight,label\n" + "".join(f"{r},1,{labels[r]}\n" for r in rows))
    return path


def cli_predict(cal, logits, audit=None):
    out = cli_json("predict", "--calibration", cal, logits, "--json", "--quiet", *(["--audit", audit] if audit else []))
    assert out.pop("file") == str(logits)
    return out


# --- the sample ------------------------------------------------------------------------------

@pytest.mark.parametrize("budget,seed", [(60, 11), (2, 0), (1500, 3), (300, 2**53 - 1)])
def test_rows_are_the_cli_draw(family, budget, seed, tmp_path):
    target = family / "target.npy"
    out = tmp_path / "rows.csv"
    cli("audit", target, "--budget", budget, "--seed", seed, "-o", out, "--quiet")
    want = audit_reference.sample(1500, budget, seed)
    assert cli_rows(out) == want
    for x in (target, str(target), np.load(target), 1500):
        got = mano.audit(x, budget, seed=seed)
        assert got == {"rows": want, "n_rows": 1500, "seed": seed}


def test_the_file_is_the_cli_file(family, tmp_path):
    target = str(family / "target.npy")
    want, got = tmp_path / "cli.csv", tmp_path / "python.csv"
    cli("audit", target, "--budget", 100, "--seed", 7, "-o", want, "--quiet")
    got.write_text("an older file, replaced whole\n")
    mano.audit(target, 100, seed=7, path=got)
    assert got.read_bytes() == want.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cli.csv", "python.csv"]  # no temporary file left
    mano.audit(np.load(target), 100, seed=7, path=got)
    assert got.read_text().splitlines()[0].startswith("# mano audit: 100 of the 1500 rows of an array drawn")
    assert got.read_text().splitlines()[1:] == want.read_text().splitlines()[1:]


def test_a_seed_is_drawn_and_recorded(family, tmp_path):
    out = tmp_path / "rows.csv"
    drawn = mano.audit(family / "target.npy", 40, path=out)
    assert 0 <= drawn["seed"] <= 2**53 - 1
    assert f"with seed {drawn['seed']} " in out.read_text().splitlines()[0]
    assert mano.audit(1500, 40, seed=drawn["seed"])["rows"] == drawn["rows"] == cli_rows(out)


# --- predict with an audit --------------------------------------------------------------------

@pytest.mark.parametrize("budget,seed", [(80, 3), (200, 4)])
def test_predict_audit_is_the_cli_and_the_reference(family, budget, seed):
    target, cal = family / "target.npy", family / "cal.json"
    q, y = np.load(target), np.load(family / "target_labels.npy")
    rows = mano.audit(target, budget, seed=seed)["rows"]
    path = labeled(family, rows, y, f"labeled_{seed}.csv")
    want = cli_predict(cal, target, path)
    got = mano.predict(cal, target, audit=path)
    assert_same(got, want, rel=1e-9, abs_tol=1e-9)
    a = got["audit"]
    assert a["n"] == budget and a["method"] == "ppi"
    estimate, interval, wilson = reference_audit(json.loads(cal.read_text())["correctness"], q, y, rows)
    assert abs(a["accuracy"] - estimate) < 1e-5 and np.allclose(a["interval"], interval, atol=1e-5)
    assert np.allclose(a["wilson"], wilson, atol=1e-12)
    # the same labels given as arrays, over the logits as an array (rows in any order)
    order = np.random.default_rng(seed).permutation(len(rows))
    given = np.asarray(rows)[order], y[rows][order]
    for audit in (given, {"rows": given[0].tolist(), "labels": given[1].tolist()}):
        assert_same(mano.predict(cal, q, audit=audit)["audit"], want["audit"], rel=1e-9, abs_tol=1e-9)


def test_an_audit_belongs_to_its_set(family, tmp_path):
    """As mano predict --audit: drawn from a set of another size, refused; from a file of another
    name, a warning (and audit["warnings"], as the CLI's JSON has it); from an array, no name check."""
    target, cal = family / "target.npy", family / "cal.json"
    q, y = np.load(target), np.load(family / "target_labels.npy")
    rows_file = tmp_path / "rows.csv"
    rows = mano.audit(target, 40, seed=5, path=rows_file)["rows"]
    path = tmp_path / "belongs.csv"
    lines = rows_file.read_text().splitlines()
    path.write_text(lines[0] + "\nrow,weight,label\n" + "".join(f"{r},1,{y[r]}\n" for r in rows))
    np.save(tmp_path / "smaller.npy", q[:1000])
    with pytest.raises(mano.InputError, match=f"^{path}, line 1: this audit was drawn from the 1500 rows of {target}, but "
                                              "the set has 1000 rows"):
        mano.predict(cal, tmp_path / "smaller.npy", audit=path)
    np.save(tmp_path / "renamed.npy", q)
    with pytest.warns(UserWarning, match="was drawn from .*target.npy, not from .*renamed.npy"):
        got = mano.predict(cal, tmp_path / "renamed.npy", audit=path)
    want = cli_predict(cal, tmp_path / "renamed.npy", path)
    assert got["audit"]["warnings"] == want["audit"]["warnings"] and len(want["audit"]["warnings"]) == 1
    assert "warnings" not in mano.predict(cal, q, audit=path)["audit"]  # an array has no name to compare


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_predict_audit_other_types_and_npz_as_the_cli(family, tmp_path, dtype):
    cal = family / "cal.json"
    q, y = np.load(family / "target.npy").astype(dtype), np.load(family / "target_labels.npy")
    rows = mano.audit(len(q), 120, seed=5)["rows"]
    path = labeled(tmp_path, rows, y)
    plain, packed = tmp_path / "plain.npy", tmp_path / "packed.npz"
    np.save(plain, q)
    np.savez_compressed(packed, logits=q)  # a deflated member: its rows are read in order
    for logits in (plain, packed):
        want = cli_predict(cal, logits, path)
        assert_same(mano.predict(cal, logits, audit=path)["audit"], want["audit"], rel=1e-9, abs_tol=1e-9)
    assert_same(mano.predict(cal, q, audit=path)["audit"], want["audit"], rel=1e-9, abs_tol=1e-9)


def test_without_a_correctness_model_labels_alone(family):
    target, y = family / "target.npy", np.load(family / "target_labels.npy")
    rows = mano.audit(target, 100, seed=9)["rows"]
    got = mano.predict(family / "bare.json", target, audit=(rows, y[rows]))["audit"]
    share = np.mean(np.load(target)[rows].argmax(1) == y[rows])
    assert got["method"] == "wilson" and got["interval"] == got["wilson"] and abs(got["accuracy"] - share) < 1e-12
    assert_same(got, cli_predict(family / "bare.json", target, labeled(family, rows, y, "bare.csv"))["audit"])


def test_under_10_labels_wilson_on_the_labels_alone(family):
    """Under 10 labels the audit is Wilson on the labels alone even with a correctness model, says
    why (audit["reason"], the frame's audit_reason), and is the CLI's."""
    target, cal, y = family / "target.npy", family / "cal.json", np.load(family / "target_labels.npy")
    rows = mano.audit(target, 9, seed=8)["rows"]
    got = mano.predict(cal, target, audit=(rows, y[rows]))
    a = got["audit"]
    right = int(np.sum(np.load(target)[rows].argmax(1) == y[rows]))
    assert a["method"] == "wilson" and a["reason"] == "n < 10 labels: Wilson on the labels alone"
    assert a["interval"] == a["wilson"] and np.allclose(a["interval"], audit_reference.wilson(right, 9, LEVEL), atol=1e-12)
    assert_same(a, cli_predict(cal, target, labeled(family, rows, y, "nine.csv"))["audit"])
    assert mano.frame(got).loc[0, "audit_reason"] == "n < 10 labels: Wilson on the labels alone"
    rows = mano.audit(target, 10, seed=8)["rows"]
    ten = mano.predict(cal, target, audit=(rows, y[rows]))
    assert ten["audit"]["method"] == "ppi" and "reason" not in ten["audit"] and mano.frame(ten).loc[0, "audit_reason"] == ""


def test_labels_for_width_and_the_frame(family):
    target, cal, y = family / "target.npy", family / "cal.json", np.load(family / "target_labels.npy")
    got, want = mano.predict(cal, target), cli_predict(cal, target)
    assert want["labels_for_width"]["method"] == "ppi"  # the target's interval is wider than 0.25
    assert got["labels_for_width"] == want["labels_for_width"]
    table = mano.frame(got)
    assert table.loc[0, "labels_needed"] == want["labels_for_width"]["n"]
    assert table.loc[0, "labels_needed_width"] == 0.25 and table.loc[0, "labels_needed_method"] == "ppi"
    assert "audit_accuracy" not in table
    rows = mano.audit(target, 100, seed=1)["rows"]
    audited = mano.predict(cal, target, audit={"rows": rows, "labels": y[rows]})
    table = mano.frame(audited)
    a = audited["audit"]
    assert table.loc[0, ["audit_n", "audit_accuracy", "audit_method", "audit_low", "audit_high", "audit_wilson_low",
                         "audit_wilson_high"]].tolist() == [a["n"], a["accuracy"], "ppi", *a["interval"], *a["wilson"]]
    assert "audit_accuracy" in audited._repr_html_()


def test_one_set_of_a_manifest(family, tmp_path):
    y = np.load(family / "set2_labels.npy")
    rows = mano.audit(N, 50, seed=2)["rows"]
    one = {"name": "set2", "group": "g2", "logits": str(family / "set2.npy"), "labels": str(family / "set2_labels.npy")}
    (family / "one.json").write_text(json.dumps({"sets": [one]}))
    want = cli_json("predict", "--calibration", family / "cal.json", "--manifest", family / "one.json", "--audit",
                    labeled(tmp_path, rows, y), "--json", "--quiet")["sets"][0]
    got = mano.predict(family / "cal.json", [one], audit=(rows, y[rows]))
    assert [s["name"] for s in got] == ["set2"]
    assert_same(got[0]["prediction"]["audit"], want["audit"], rel=1e-9, abs_tol=1e-9)
    assert mano.frame(got).loc[0, "audit_n"] == 50


# --- the draw, checked ------------------------------------------------------------------------

def test_the_rows_are_the_draw_the_file_or_the_seed_records(family, tmp_path):
    """The rows of a labeled audit are the draw recorded with them (recomputed by the core): the
    red team's file, its wrongly classified rows swapped for correct ones, is refused; so is
    mano.audit's dict with its rows changed; labels written as floats (3.0) are the same audit."""
    target, cal = family / "target.npy", family / "cal.json"
    q, y = np.load(target), np.load(family / "target_labels.npy")
    drawn = mano.audit(target, 30, seed=5, path=tmp_path / "rows.csv")
    record = (tmp_path / "rows.csv").read_text().splitlines()[0]

    def written(name, rows, label=lambda r: y[r]):
        path = tmp_path / name
        path.write_text(record + "\nrow,weight,label\n" + "".join(f"{r},1,{label(r)}\n" for r in rows))
        return path

    want = mano.predict(cal, target, audit=written("honest.csv", drawn["rows"]))["audit"]
    assert_same(want, cli_predict(cal, target, tmp_path / "honest.csv")["audit"], rel=1e-9, abs_tol=1e-9)
    wrong = [r for r in drawn["rows"] if q[r].argmax() != y[r]]
    right = [r for r in range(len(q)) if r not in drawn["rows"] and q[r].argmax() == y[r]]
    swap = dict(zip(wrong, right))
    swapped = [swap.get(r, r) for r in drawn["rows"]]
    first = next(i for i, r in enumerate(drawn["rows"]) if r in swap)
    path = written("swapped.csv", swapped)
    with pytest.raises(mano.InputError, match=f"^{path}, line {3 + first}, column 1 \\(row\\): row {swapped[first]} is not in the "
                                              r"draw of seed 5 \(30 of the 1500 rows\) that line 1 records: the rows or line 1"):
        mano.predict(cal, target, audit=path)
    # mano.audit's dict with the labels added: its seed and n_rows are checked too
    got = mano.predict(cal, q, audit={**drawn, "labels": y[drawn["rows"]]})["audit"]
    assert_same(got, want, rel=1e-9, abs_tol=1e-9)
    with pytest.raises(mano.InputError, match=f"^audit: rows\\[{first}\\]: row {swapped[first]} is not in the draw of seed 5 "
                                              r"\(30 of the 1500 rows\): the rows or the seed were changed"):
        mano.predict(cal, q, audit={**drawn, "rows": swapped, "labels": y[swapped]})
    with pytest.raises(mano.InputError, match=r"^audit: the rows were drawn from a set of 1500 rows \(n_rows\), but the set has "
                                              "1000 rows"):
        mano.predict(cal, q[:1000], audit={**drawn, "labels": y[drawn["rows"]]})
    assert_same(mano.predict(cal, q, audit=(swapped, y[swapped]))["audit"]["n"], 30)  # no seed given: nothing to check
    # labels as floats, as pandas writes a column that held a NaN: the same audit; 3.5 is refused
    floats = written("floats.csv", drawn["rows"], lambda r: float(y[r]))
    assert ",0.0\n" in floats.read_text() or ",1.0\n" in floats.read_text()
    assert_same(mano.predict(cal, target, audit=floats)["audit"], want, rel=1e-9, abs_tol=1e-9)
    halves = written("halves.csv", drawn["rows"], lambda r: y[r] + 0.5)
    with pytest.raises(mano.InputError, match=f"^{halves}, line 3, column 3 \\(label\\): \"{y[drawn['rows'][0]] + 0.5}\" is not a "
                                              "class index"):
        mano.predict(cal, target, audit=halves)


def test_the_least_budget_is_the_least_audit(family):
    """What mano.audit draws at least, mano.predict takes back: one constant of the core."""
    target, cal, y = family / "target.npy", family / "cal.json", np.load(family / "target_labels.npy")
    assert mano._core.audit_min_rows == 2
    with pytest.raises(mano.InputError, match="budget must be a whole number from 2"):
        mano.audit(target, 1, seed=3)
    drawn = mano.audit(target, 2, seed=3)
    assert mano.predict(cal, target, audit={**drawn, "labels": y[drawn["rows"]]})["audit"]["n"] == 2
    with pytest.raises(mano.InputError, match="audit: 1 labeled row; an audit needs at least 2"):
        mano.predict(cal, target, audit=(drawn["rows"][:1], y[drawn["rows"][:1]]))


# --- bad input --------------------------------------------------------------------------------

HEADER = "row,weight,label\n"
BAD_FILES = [
    ("out_of_range", HEADER + "5,1,0\n1500,1,2\n", r"line 3, column 1 \(row\): row 1500 is outside the set's rows 0 to 1499"),
    ("twice", HEADER + "5,1,0\n7,1,1\n5,1,0\n", r"line 4, column 1 \(row\): row 5 is listed twice"),
    ("label_outside", HEADER + "5,1,5\n", r"line 2, column 3 \(label\): label 5 is outside the classes 0 to 4"),
    ("no_label_column", "row,weight\n5,1\n", r"line 1: the header \(row,weight\) has no column label"),
    ("weight", HEADER + "5,2,0\n", "only the uniform design is implemented"),
    ("header_only", HEADER, "no audited rows after the header"),
    ("one_row", HEADER + "5,1,0\n", "an audit needs at least 2"),
]


@pytest.mark.parametrize("name,text,message", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_bad_audit_files(family, tmp_path, name, text, message):
    path = tmp_path / f"{name}.csv"
    path.write_text(text)
    with pytest.raises(mano.InputError, match=message) as info:
        mano.predict(family / "cal.json", family / "target.npy", audit=path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def bad_calls(family, tmp_path):
    target, cal = family / "target.npy", family / "cal.json"
    q = np.load(target)
    two = [3, 9]
    return [
        ("missing_file", lambda: mano.predict(cal, target, audit=tmp_path / "none.csv"), "none.csv: cannot open this audit file"),
        ("folder", lambda: mano.predict(cal, target, audit=tmp_path), "cannot open this audit file"),
        ("row_out_of_range", lambda: mano.predict(cal, q, audit=([3, 1500], [0, 1])),
         r"^audit: rows\[1\] is 1500, outside the set's rows 0 to 1499; give the rows mano audit drew"),
        ("row_negative", lambda: mano.predict(cal, q, audit=([-1, 3], [0, 1])), r"rows\[0\] is -1, outside"),
        ("row_twice", lambda: mano.predict(cal, q, audit=([3, 7, 3], [0, 1, 0])),
         r"audit: row 3 is listed twice \(rows\[0\] and rows\[2\]\)"),
        ("label_outside", lambda: mano.predict(cal, q, audit=(two, [0, 5])), r"labels\[1\] is 5, outside the classes 0 to 4"),
        ("lengths", lambda: mano.predict(cal, q, audit=(two, [0, 1, 2])), "2 rows but 3 labels"),
        ("float_rows", lambda: mano.predict(cal, q, audit=([3.0, 9.0], [0, 1])), "rows must be a 1-D list of whole numbers"),
        ("text_labels", lambda: mano.predict(cal, q, audit=(two, ["a", "b"])), "labels must be a 1-D list of whole numbers"),
        ("2d_rows", lambda: mano.predict(cal, q, audit=([[3, 9]], [0, 1])), r"rows must be a 1-D list .*shape \(1, 2\)"),
        ("missing_key", lambda: mano.predict(cal, q, audit={"row": two, "labels": [0, 1]}), "needs the keys 'rows' and 'labels'"),
        ("wrong_type", lambda: mano.predict(cal, q, audit=7), "audit must be a labeled audit file"),
        ("one_row", lambda: mano.predict(cal, q, audit=([3], [0])), "an audit needs at least 2"),
        ("a_result", lambda: mano.predict(cal, mano.score(q, "confscore"), audit=(two, [0, 1])), "not a result"),
        ("sets", lambda: mano.predict(cal, family / "manifest.json", audit=(two, [0, 1])),
         r"audit labels rows of one set.*\(8 sets given\)"),
        ("budget_zero", lambda: mano.audit(target, 0), "budget must be a whole number from 2"),
        ("budget_one", lambda: mano.audit(target, 1), "budget must be a whole number from 2"),
        ("budget_negative", lambda: mano.audit(q, -3), "budget must be a whole number from 2"),
        ("seed_not_whole", lambda: mano.predict(cal, q, audit={"rows": two, "labels": [0, 1], "seed": 1.5}),
         r"audit: seed must be a whole number >= 0"),
        ("budget_float", lambda: mano.audit(q, 2.5), "budget must be a whole number"),
        ("budget_bool", lambda: mano.audit(q, True), "budget must be a whole number"),
        ("budget_over_rows", lambda: mano.audit(target, 1501, seed=1),
         r"target\.npy: a budget of 1501 rows is more than the set's 1500 rows"),
        ("budget_over_rows_array", lambda: mano.audit(q, 1501, seed=1), "a budget of 1501 rows is more than the set's 1500"),
        ("seed_too_big", lambda: mano.audit(q, 5, seed=2**53), r"seed must be a whole number from 0 to 9007199254740991"),
        ("seed_negative", lambda: mano.audit(q, 5, seed=-1), "seed must be a whole number"),
        ("seed_text", lambda: mano.audit(q, 5, seed="7"), "seed must be a whole number"),
        ("rows_negative", lambda: mano.audit(-5, 2), r"x \(the number of rows\) must be a whole number >= 0"),
        ("logits_1d", lambda: mano.audit(q[0], 2), r"x: the logits must be N x K"),
        ("missing_logits", lambda: mano.audit(tmp_path / "none.npy", 2), "none.npy"),
        ("path_over_input", lambda: mano.audit(target, 5, seed=1, path=target), r"path .*target\.npy: this is an input file"),
        ("path_needs_k", lambda: mano.audit(1500, 5, seed=1, path=tmp_path / "rows.csv"), "path: the file names the classes"),
        ("path_in_no_folder", lambda: mano.audit(q, 5, seed=1, path=tmp_path / "no" / "rows.csv"), "cannot write the file"),
    ]


def test_bad_audits_raise_one_input_error(family, tmp_path):
    for name, call, message in bad_calls(family, tmp_path):
        with pytest.raises(mano.InputError, match=message) as info:
            call()
        assert "\n" not in str(info.value), name
    assert np.load(family / "target.npy").shape == (1500, K)  # never written over
    assert not os.path.exists(tmp_path / "rows.csv")

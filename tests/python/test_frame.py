"""mano.frame: every kind of result as a DataFrame, checked against NumPy/pandas computed from the
fixtures themselves (labels, softmax, least squares), and `import mano` without pandas or matplotlib."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import mano
from api_support import EXAMPLE, MANIFEST, MANO_BIN, line_at, link_scale, needs_cli

REL = 1e-9


def softmax(q):
    e = np.exp(q - q.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def example_truth():
    """name -> (true accuracy, ConfScore) from the example's .npy files, by NumPy."""
    out = {}
    for s in json.loads(MANIFEST.read_text())["sets"]:
        q, y = np.load(EXAMPLE / s["logits"]).astype(np.float64), np.load(EXAMPLE / s["labels"])
        out[s["name"]] = (float(np.mean(q.argmax(axis=1) == y)), float(softmax(q).max(axis=1).mean()))
    return out


@pytest.fixture(scope="module")
def truth():
    return example_truth()


def test_import_mano_loads_neither_pandas_nor_matplotlib_nor_torch():
    where = os.path.dirname(os.path.dirname(mano.__file__))
    code = ("import sys, mano; print([m for m in ('pandas', 'matplotlib', 'torch', 'dask') if m in sys.modules]); "
            "mano.frame; mano.plot")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([where, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_score_result_is_one_row_with_the_true_accuracy_and_every_method(truth):
    q, y = np.load(EXAMPLE / "blend_0_logits.npy"), np.load(EXAMPLE / "blend_0_labels.npy")
    r = mano.score(q, "mano,confscore,cot", labels=y)
    f = mano.frame(r)
    assert isinstance(f, pd.DataFrame) and len(f) == 1
    row = f.iloc[0]
    assert row["n"] == q.shape[0] and row["k"] == q.shape[1]
    assert math.isclose(row["accuracy"], truth["blend_0"][0], rel_tol=REL)
    assert math.isclose(row["confscore_score"], truth["blend_0"][1], rel_tol=1e-6)
    assert {"mano_score", "mano_se", "confscore_se", "cot_accuracy"} <= set(f.columns)
    assert "cot_se" not in f.columns  # COT has no standard error


def test_a_list_of_chunk_results_is_one_row_per_chunk():
    q = np.load(EXAMPLE / "blend_1_logits.npy")
    chunks = np.array_split(q, 3)
    f = mano.frame([mano.score(c, "confscore") for c in chunks])
    assert list(f["n"]) == [len(c) for c in chunks]
    want = [softmax(c.astype(np.float64)).max(axis=1).mean() for c in chunks]
    np.testing.assert_allclose(f["confscore_score"], want, rtol=1e-6)
    assert f["accuracy"].isna().all()  # no labels: NaN, not a made-up value


def test_evaluate_report_is_one_row_per_set(report, truth):
    f = mano.frame(report)
    names = [s["name"] for s in json.loads(MANIFEST.read_text())["sets"]]
    assert list(f["name"]) == names
    assert set(f["group"]) == {"contrast", "blend"}
    np.testing.assert_allclose(f["accuracy"], [truth[n][0] for n in names], rtol=REL)
    np.testing.assert_allclose(f["confscore_score"], [truth[n][1] for n in names], rtol=1e-6)
    assert {"mano_score", "atc_mc_accuracy", "nuclear_score"} <= set(f.columns)


def test_calibration_is_one_row_per_method_with_the_least_squares_line(calibration, report):
    f = mano.frame(calibration)
    sets = mano.frame(report)
    assert set(f.index) == set(calibration["methods"])
    for method in f.index:
        column = f"{method}_score" if f"{method}_score" in sets else f"{method}_accuracy"
        fit = calibration["methods"][method]
        x, y = link_scale(fit, sets[column]), link_scale(fit, sets["accuracy"])
        slope, intercept = np.polyfit(x, y, 1)  # the independent fit, on the line's link scale
        assert math.isclose(f.loc[method, "slope"], slope, rel_tol=1e-7), method
        assert math.isclose(f.loc[method, "intercept"], intercept, rel_tol=1e-7, abs_tol=1e-9), method
        assert f.loc[method, "n"] == len(sets)
        assert math.isclose(f.loc[method, "score_min"], x.min(), rel_tol=REL)
        assert math.isclose(f.loc[method, "score_max"], x.max(), rel_tol=REL)
    assert list(f["rank"]) == list(range(1, len(f) + 1))  # sorted by the held-out error
    assert (np.diff(f["logo_mae"]) >= -1e-12).all()  # ties (ConfScore and DoC) within rounding
    assert f.index[0] == calibration["recommended"] and bool(f.loc[calibration["recommended"], "recommended"])
    assert f["recommended"].sum() == 1


def test_prediction_is_one_row_with_the_estimate_on_the_line(calibration, truth):
    q, y = np.load(EXAMPLE / "blend_2_logits.npy"), np.load(EXAMPLE / "blend_2_labels.npy")
    p = mano.predict(calibration, q, labels=y)
    f = mano.frame(p)
    assert len(f) == 1
    row = f.iloc[0]
    assert math.isclose(row["accuracy"], truth["blend_2"][0], rel_tol=REL)
    method = calibration["recommended"]
    assert row["method"] == method
    fit = calibration["methods"][method]
    _, line = line_at(fit, p["methods"][method]["score"])
    assert math.isclose(row["estimate"], min(max(line, 0.0), 1.0), rel_tol=1e-9)
    assert row["low"] <= row["estimate"] <= row["high"]
    for m in calibration["methods"]:
        fm = calibration["methods"][m]
        want = min(max(line_at(fm, p["methods"][m]["score"])[1], 0.0), 1.0)
        assert math.isclose(row[f"{m}_estimate"], want, rel_tol=1e-9, abs_tol=1e-12), m
        assert row[f"{m}_low"] <= row[f"{m}_estimate"] <= row[f"{m}_high"]
    assert math.isclose(row["shift_distance"], p["shift"]["distance"], rel_tol=REL)


def test_predictions_for_sets_are_one_row_per_set(calibration, truth):
    ps = mano.predict(calibration, MANIFEST, threads=1)
    f = mano.frame(ps)
    assert list(f["name"]) == [p["name"] for p in ps]
    np.testing.assert_allclose(f["accuracy"], [truth[n][0] for n in f["name"]], rtol=REL)
    assert (f["low"] <= f["estimate"]).all() and (f["estimate"] <= f["high"]).all()
    # the regime's method: the recommended one, or MLLS on sets that passed the label-shift check
    assert ((f["method"] == calibration["recommended"]) | (f["regime"] == "label_shift")).all()
    assert (f.loc[f["regime"] == "label_shift", "method"] == "mlls").all()
    # a list of single predictions gives the same rows, less the names
    single = mano.frame([p["prediction"] for p in ps])
    pd.testing.assert_frame_equal(single, f.drop(columns=["name", "group"]))


def monitor_report():
    """A report in the shape of `mano monitor report --json`."""
    def point(time, name, estimate, interval, alert, regime="calibrated"):
        return {"time": time, "name": name, "n": 500, "alert": alert, "rows": 500,
                "estimate": None if estimate is None else
                {"method": "mano", "accuracy": estimate, "interval": interval, "regime": regime}}
    return {"threshold": {"value": 0.7, "reference": 3, "mean": 0.85, "sd": 0.05},
            "points": [point("2026-01-01T00:00:00Z", "day1", 0.86, [0.8, 0.92], False),
                       point("2026-01-02T00:00:00Z", "day2", 0.84, [0.78, 0.9], False),
                       point("2026-01-03T00:00:00Z", "day3", 0.85, [0.79, 0.91], False),
                       point("2026-01-04T00:00:00Z", "day4", 0.62, [0.55, 0.69], True, "extrapolated"),
                       point("2026-01-05T00:00:00Z", "day5", None, None, False)]}


def mano_monitor_report(tmp_path, calibration):
    """A real report: the example's six blend sets added a day apart to a history by mano.monitor
    (the CLI's `mano monitor`), the first three as the reference period."""
    import mano.monitor

    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps(calibration))
    for i in range(6):
        mano.monitor.add(tmp_path / "history.db", EXAMPLE / f"blend_{i}_logits.npy", calibration=cal,
                         at=f"2026-11-0{i + 1}")
    return mano.monitor.report(tmp_path / "history.db", reference=3)


@needs_cli
def test_a_report_of_mano_monitor_is_one_row_per_point_with_numpys_alert_line(tmp_path, monkeypatch, calibration):
    monkeypatch.setenv("MANO_BIN", str(MANO_BIN))
    f = mano.frame(mano_monitor_report(tmp_path, calibration))
    assert len(f) == 6 and list(f["time"].dt.day) == [1, 2, 3, 4, 5, 6]
    for i, row in f.iterrows():
        want = mano.predict(calibration, np.load(EXAMPLE / f"blend_{i}_logits.npy"))
        assert math.isclose(row["estimate"], want["estimate"]["accuracy"], rel_tol=1e-9)
        assert (row["low"], row["high"]) == pytest.approx(want["estimate"]["interval"], rel=1e-9)
        assert row["method"] == want["estimate"]["method"]
    line = f["estimate"][:3].mean() - 3 * f["estimate"][:3].std(ddof=1)  # the reference period's mean - 3 sd
    assert math.isclose(f.attrs["threshold"], line, rel_tol=1e-9)
    assert list(f["alert"]) == [False] * 3 + [bool(e < line) for e in f["estimate"][3:]]
    assert list(f["reference"]) == [True] * 3 + [False] * 3


def test_monitor_report_is_one_row_per_point():
    report = monitor_report()
    f = mano.frame(report)
    assert list(f["name"]) == ["day1", "day2", "day3", "day4", "day5"]
    assert list(f["time"]) == list(pd.to_datetime([p["time"] for p in report["points"]], utc=True))
    np.testing.assert_allclose(f["estimate"], [0.86, 0.84, 0.85, 0.62, np.nan])
    np.testing.assert_allclose(f["low"], [0.8, 0.78, 0.79, 0.55, np.nan])
    np.testing.assert_allclose(f["high"], [0.92, 0.9, 0.91, 0.69, np.nan])
    assert list(f["alert"]) == [False, False, False, True, False]
    assert list(f["regime"])[:4] == ["calibrated"] * 3 + ["extrapolated"]
    assert list(f["rows"]) == [500] * 5
    assert f.attrs["threshold"] == 0.7
    assert mano.frame(dict(report, threshold=0.65)).attrs["threshold"] == 0.65


@pytest.mark.parametrize("bad, says", [({}, "a dict with the keys []"), ([], "an empty list"), (42, "int"),
                                       ({"sets": [1]}, "a dict with the keys ['sets']"),
                                       ([{"n": 1, "methods": {}}, {"x": 1}], "a list of dict")])
def test_anything_else_is_one_clear_error(bad, says):
    with pytest.raises(mano.InputError) as e:
        mano.frame(bad)
    message = str(e.value)
    assert "mano.score, evaluate, calibrate or predict" in message and says in message and "\n" not in message


def test_results_show_as_the_table_in_a_notebook_and_stay_plain_json(calibration, report):
    import copy
    import pickle

    q = np.load(EXAMPLE / "blend_0_logits.npy")
    score = mano.score(q, "mano,confscore")
    prediction = mano.predict(calibration, q)
    for result, column in ((score, "mano_score"), (report, "confscore_score"), (calibration, "logo_mae"),
                           (prediction, "estimate"), (mano.predict(calibration, MANIFEST, threads=1), "name")):
        html = result._repr_html_()
        assert "<table" in html and f">{column}<" in html
        assert html == mano.frame(result)._repr_html_()
        plain = json.loads(json.dumps(result))
        for back in (pickle.loads(pickle.dumps(result)), copy.deepcopy(result)):
            assert type(back) in (dict, list) and back == plain  # pickles as the plain dict or list
    acc = mano.Accumulator(10, "confscore").push(q)
    assert acc.result()._repr_html_() == mano.frame(acc.result())._repr_html_()


def test_a_set_too_small_to_judge_says_so(calibration):
    """Below 10 rows (src/mano/prediction/own_accuracy.hpp): the core's too_small, and the row's flag."""
    q = np.load(EXAMPLE / "blend_2_logits.npy")
    tiny, enough = mano.predict(calibration, q[:5]), mano.predict(calibration, q[:40])
    assert tiny["too_small"] == {"rows": 5, "minimum_rows": 10} and "too_small" not in enough
    assert bool(mano.frame(tiny).iloc[0]["too_small"]) and not bool(mano.frame(enough).iloc[0]["too_small"])
    # the interval of 5 rows' own accuracy is on the grid of 5 rows where the binomials decide it
    low, high = tiny["estimate"]["interval"]
    assert high - low >= 0.4

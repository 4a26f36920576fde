"""mano.plot: the figures' data (lines, bands, points), not their pixels, against NumPy: the
calibration's line and its jackknife+ band recomputed from the calibration's folds, the sets'
true accuracy from their labels, and the timeline's estimates, intervals and alerts."""
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import mano  # noqa: E402
from api_support import EXAMPLE, MANIFEST, MANO_BIN, line_at, link_scale, needs_cli  # noqa: E402
from test_frame import mano_monitor_report, monitor_report  # noqa: E402


def true_accuracy():
    out = {}
    for s in json.loads(MANIFEST.read_text())["sets"]:
        q, y = np.load(EXAMPLE / s["logits"]), np.load(EXAMPLE / s["labels"])
        out[s["name"]] = (s["group"], float(np.mean(q.argmax(axis=1) == y)))
    return out


def jackknife_plus(fit, x, level=0.9):
    """The jackknife+ interval (Barber et al. 2021) of the calibration's held-out-group folds at
    score x, clipped to [0, 1]: the reference the band is held to."""
    from scipy import stats  # noqa: PLC0415
    back = stats.norm.cdf if fit.get("link") == "probit" else (lambda v: v)
    xl = link_scale(fit, [x])[0]
    fitted = line_at(fit, x)[1]
    low = sorted(back(f["slope"] * xl + f["intercept"]) - abs(r) for f in fit["folds"] for r in f["residuals"])
    high = sorted(back(f["slope"] * xl + f["intercept"]) + abs(r) for f in fit["folds"] for r in f["residuals"])
    m = len(low)
    lower = low[math.floor((1 - level) * (m + 1) + 1e-9) - 1]
    upper = high[math.ceil(level * (m + 1) - 1e-9) - 1]
    return float(np.clip(min(lower, fitted), 0, 1)), float(np.clip(max(upper, fitted), 0, 1))


def labelled(ax, label, kind):
    found = [a for a in getattr(ax, kind) if a.get_label() == label]
    assert len(found) == 1, f"{label}: {[a.get_label() for a in getattr(ax, kind)]}"
    return found[0]


def band(collection):
    """x -> (lowest y, highest y) of a fill_between polygon."""
    out = {}
    for x, y in collection.get_paths()[0].vertices:
        lo, hi = out.get(x, (y, y))
        out[x] = (min(lo, y), max(hi, y))
    return out


def test_calibration_plot_draws_the_fitted_line_its_band_and_every_labeled_set(calibration, report):
    fig = mano.plot(calibration, sets=report)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    method = calibration["recommended"]
    fit = calibration["methods"][method]
    line = labelled(ax, "fit", "lines")
    x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
    assert len(x) == 101 and np.all(np.diff(x) > 0)
    # the fitted range on the score's own scale (a probit fit keeps it on the Φ⁻¹ scale)
    from scipy import stats  # noqa: PLC0415
    raw = stats.norm.cdf if fit.get("link") == "probit" else (lambda v: v)
    assert x[0] < raw(fit["score_min"]) and x[-1] > raw(fit["score_max"])
    points = np.concatenate([c.get_offsets() for c in ax.collections if c.get_label() in ("contrast", "blend")])
    assert x[0] <= points[:, 0].min() and x[-1] >= points[:, 0].max(), "the line spans the points"
    probit = fit.get("link") == "probit"
    assert ax.get_title().startswith(f"{method}: accuracy = {'Φ(' if probit else ''}"), ax.get_title()
    np.testing.assert_allclose(y, np.clip([line_at(fit, xi)[1] for xi in x], 0, 1), rtol=1e-12, atol=1e-12)
    edges = band(labelled(ax, "90% band", "collections"))
    for xi in x:
        np.testing.assert_allclose(edges[xi], jackknife_plus(fit, xi), rtol=1e-9, atol=1e-12)
    truth = true_accuracy()
    sets = mano.frame(report)
    for group in ("contrast", "blend"):
        offsets = labelled(ax, group, "collections").get_offsets()
        mine = sets[sets["group"] == group]
        np.testing.assert_allclose(offsets[:, 0], mine[f"{method}_score"], rtol=1e-12)
        np.testing.assert_allclose(offsets[:, 1], [truth[n][1] for n in mine["name"]], rtol=1e-12)
    assert ax.get_xlabel() == f"{method} score"


def test_calibration_plot_of_another_method_and_level_from_predictions_for_sets(calibration):
    predictions = mano.predict(calibration, MANIFEST, threads=1)
    fig = mano.plot(calibration, sets=predictions, method="cot", level=0.8)
    ax = fig.axes[0]
    fit = calibration["methods"]["cot"]
    edges = band(labelled(ax, "80% band", "collections"))
    for xi in list(edges)[::10]:
        np.testing.assert_allclose(edges[xi], jackknife_plus(fit, xi, 0.8), rtol=1e-9, atol=1e-12)
    points = np.concatenate([labelled(ax, g, "collections").get_offsets() for g in ("contrast", "blend")])
    truth = true_accuracy()
    np.testing.assert_allclose(points[:, 1], [truth[p["name"]][1] for p in predictions], rtol=1e-12)
    np.testing.assert_allclose(points[:, 0], [p["prediction"]["methods"]["cot"]["score"] for p in predictions])


def test_calibration_plot_without_sets_is_the_line_and_band_alone(calibration):
    ax = Figure().add_subplot()
    fig = mano.plot(calibration, ax=ax)
    assert fig is ax.figure
    assert [a.get_label() for a in ax.lines] == ["fit"]
    assert [a.get_label() for a in ax.collections] == ["90% band"]


def test_timeline_of_predictions_for_sets(calibration):
    predictions = mano.predict(calibration, MANIFEST, threads=1)
    table = mano.frame(predictions)
    ax = mano.plot(predictions).axes[0]
    estimate = labelled(ax, "estimate", "lines")
    np.testing.assert_array_equal(estimate.get_xdata(), np.arange(len(predictions)))
    np.testing.assert_allclose(estimate.get_ydata(), table["estimate"], rtol=1e-12)
    edges = band(labelled(ax, "interval", "collections"))
    np.testing.assert_allclose([edges[i] for i in range(len(table))], table[["low", "high"]].to_numpy(), rtol=1e-12)
    truth = true_accuracy()
    np.testing.assert_allclose(labelled(ax, "true accuracy", "lines").get_ydata(),
                               [truth[p["name"]][1] for p in predictions], rtol=1e-12)
    assert [t.get_text() for t in ax.get_xticklabels()] == [p["name"] for p in predictions]
    assert not [a for a in ax.lines if a.get_label() == "alert line"]


def test_timeline_of_a_monitoring_report_draws_the_alert_line_and_the_alerts():
    report = monitor_report()
    ax = mano.plot(report).axes[0]
    times = mdates.date2num(pd.to_datetime([p["time"] for p in report["points"]], utc=True))
    estimate = labelled(ax, "estimate", "lines")
    np.testing.assert_allclose(mdates.date2num(estimate.get_xdata()), times)
    np.testing.assert_allclose(estimate.get_ydata(), [0.86, 0.84, 0.85, 0.62, np.nan])
    assert list(labelled(ax, "alert line", "lines").get_ydata()) == [0.7, 0.7]
    np.testing.assert_allclose(labelled(ax, "alert", "collections").get_offsets(), [[times[3], 0.62]])
    edges = band(labelled(ax, "interval", "collections"))
    np.testing.assert_allclose(edges[times[3]], (0.55, 0.69))
    assert not [a for a in ax.lines if a.get_label() == "true accuracy"]


@needs_cli
def test_timeline_of_a_mano_monitor_report(tmp_path, monkeypatch, calibration):
    monkeypatch.setenv("MANO_BIN", str(MANO_BIN))
    report = mano_monitor_report(tmp_path, calibration)
    table = mano.frame(report)
    ax = mano.plot(report).axes[0]
    np.testing.assert_allclose(labelled(ax, "estimate", "lines").get_ydata(), table["estimate"], rtol=1e-12)
    assert list(labelled(ax, "alert line", "lines").get_ydata()) == [report["threshold"]["value"]] * 2
    alerts = table[table["alert"]]
    assert list(alerts.index) == report["alerts"] and len(alerts) >= 1
    np.testing.assert_allclose(labelled(ax, "alert", "collections").get_offsets()[:, 1], alerts["estimate"], rtol=1e-12)


def test_timeline_of_score_results_or_a_calibration_is_refused(calibration):
    score = mano.score(np.load(EXAMPLE / "blend_0_logits.npy"), "confscore")
    with pytest.raises(mano.InputError, match="draws predictions or a monitoring report, not a score result"):
        mano.plot(score)
    with pytest.raises(mano.InputError, match="not a calibration result"):
        mano.plot(calibration, kind="timeline")


@pytest.mark.parametrize("kwargs, says", [
    (dict(kind="pie"), "kind must be 'calibration' or 'timeline' (got 'pie')"),
    (dict(method="nope"), "'nope' is not calibrated here"),
    (dict(sets=[{"n": 3, "k": 2, "methods": {}}]), "sets must be mano.evaluate's report"),
])
def test_bad_plot_arguments_are_one_clear_error(calibration, kwargs, says):
    with pytest.raises(mano.InputError) as e:
        mano.plot(calibration, **kwargs)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_sets_without_labels_cannot_be_placed_on_the_accuracy_axis(calibration):
    sets = [{"name": "a", "logits": np.load(EXAMPLE / "blend_0_logits.npy")}]
    with pytest.raises(mano.InputError, match=f"has both a {calibration['recommended']} score and a true accuracy"):
        mano.plot(calibration, sets=mano.predict(calibration, sets))
    with pytest.raises(mano.InputError, match="kind='calibration'. draws a calibration"):
        mano.plot(mano.evaluate(MANIFEST, threads=1), kind="calibration")


def test_the_stubs_of_frame_and_plot_match_the_functions():
    import importlib

    from test_stubs import runtime_parameters, stub_functions, stub_parameters

    for name, functions in (("mano.frame", ("frame", "result_kind")), ("mano.plot", ("plot",))):
        module, stubs = importlib.import_module(name), stub_functions(importlib.import_module(name))
        for f in functions:
            assert stub_parameters(stubs[f]) == runtime_parameters(getattr(module, f)), f"{name}.{f}"


def test_a_calibration_file_is_taken_as_its_dict(calibration, report, tmp_path):
    """mano.plot and mano.frame take the file mano calibrate writes, as mano.predict does."""
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(calibration))
    from_file, from_dict = mano.plot(str(path), sets=report).axes[0], mano.plot(calibration, sets=report).axes[0]
    assert from_file.get_title() == from_dict.get_title()
    np.testing.assert_array_equal(labelled(from_file, "fit", "lines").get_ydata(), labelled(from_dict, "fit", "lines").get_ydata())
    assert mano.frame(path).equals(mano.frame(calibration))
    with pytest.raises(mano.InputError):
        mano.plot(tmp_path / "missing.json")

"""mano.plot: matplotlib figures of the package's results (matplotlib is imported on call, never by
``import mano``).

- ``kind="calibration"`` (a calibration from :func:`mano.calibrate`): one method's score against
  the true accuracy of the labeled sets given as ``sets`` (a report of :func:`mano.evaluate`, or
  the list :func:`mano.predict` gives for labeled sets), one colour per group, with the
  calibration's line and its prediction band at ``level``, both computed by the core
  (:func:`mano.predict_scores`).
- ``kind="timeline"`` (a monitoring report, a prediction or a list of them, or the list
  :func:`mano.predict` gives for sets): the estimate of each point in order (by time when the
  points have one) with its interval as a band, the true accuracy where it is known, the alert
  line and the points that alert.

The artists carry labels ("fit", "band", the group names; "estimate", "interval", "true accuracy",
"alert line", "alert") so that what is drawn can be read back from the figure.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Optional

from . import _core
from ._core import InputError
from .frame import frame, loaded, result_kind, threshold_value

__all__ = ["plot"]

_GRID = 101  # points along the fitted line and its band


def plot(result: Any, kind: Optional[str] = None, *, sets: Any = None, method: Optional[str] = None,
         level: float = 0.9, ax: Any = None) -> "matplotlib.figure.Figure":  # noqa: F821
    """Draws ``result`` and returns the Figure (in a notebook it shows as the cell's output; in a
    script, ``fig.savefig("plot.png")``). ``kind``: "calibration" or "timeline" (default: by
    the result). ``ax``: a matplotlib Axes to draw into (its figure is returned); else a new
    Figure that pyplot does not manage."""
    result = loaded(result)  # a calibration file's path, as mano.predict takes it
    found = result_kind(result)
    if kind is None:
        kind = "calibration" if found == "calibration" else "timeline"
    if kind == "calibration":
        if found != "calibration":
            raise InputError("mano.plot(kind='calibration') draws a calibration (mano.calibrate); pass the labeled "
                             "sets' scores as sets= (mano.evaluate's report or mano.predict's list for the sets)")
        return _calibration(result, sets, method, level, _axes(ax))
    if kind == "timeline":
        if found not in ("monitor", "predict", "predict_sets"):
            raise InputError(f"mano.plot(kind='timeline') draws predictions or a monitoring report, not a {found} result")
        return _timeline(result, found, _axes(ax))
    raise InputError(f"mano.plot: kind must be 'calibration' or 'timeline' (got {kind!r})")


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=(6.4, 4.2), layout="constrained").add_subplot()


def _points(sets: Any, method: str) -> list:
    """(group, score, true accuracy) of every set with a score of `method` and a true accuracy."""
    if sets is None:
        return []
    kind = result_kind(sets)
    if kind == "evaluate":
        items = [(s.get("group", ""), s) for s in sets["sets"]]
    elif kind == "predict_sets":
        items = [(s.get("group", ""), s["prediction"]) for s in sets]
    else:
        raise InputError(f"mano.plot: sets must be mano.evaluate's report or mano.predict's list for sets (got a {kind} result)")
    out = []
    for group, r in items:
        m = r.get("methods", {}).get(method)
        if m is None or r.get("accuracy") is None:
            continue
        value = m.get("score", m.get("accuracy"))
        if value is not None:
            out.append((group, float(value), float(r["accuracy"])))
    if not out:
        raise InputError(f"mano.plot: no set in sets has both a {method} score and a true accuracy (labels)")
    return out


def _calibration(cal: Mapping, sets: Any, method: Optional[str], level: float, ax: Any) -> Any:
    from ._sets import predict_scores

    method = method or cal.get("recommended")
    if method not in cal["methods"]:
        raise InputError(f"mano.plot: {method!r} is not calibrated here; the calibration has {sorted(cal['methods'])}")
    fit = _core.fit_of(cal, method)  # its link, equation and score range on the score's own scale
    points = _points(sets, method)
    xs = list(fit["score_range"]) + [p[1] for p in points]
    low, high = min(xs), max(xs)
    pad = 0.05 * (high - low) or 0.05 * max(abs(low), 1.0)
    grid = [low - pad + (high - low + 2 * pad) * i / (_GRID - 1) for i in range(_GRID)]
    predicted = predict_scores(cal, method, grid, level=level)
    ax.fill_between(grid, [p["interval"][0] for p in predicted], [p["interval"][1] for p in predicted],
                    color="tab:blue", alpha=0.15, linewidth=0, label=f"{round(level * 100)}% band")
    ax.plot(grid, [p["accuracy"] for p in predicted], color="tab:blue", label="fit")
    for group in dict.fromkeys(p[0] for p in points):
        mine = [p for p in points if p[0] == group]
        ax.scatter([p[1] for p in mine], [p[2] for p in mine], s=18, label=group or "sets", zorder=3)
    ax.set_xlabel(f"{method} score")
    ax.set_ylabel("true accuracy")
    ax.set_title(f"{method}: {fit['equation']}, {round(level * 100)}% band")
    ax.legend(fontsize="small", loc="best")
    return ax.figure


def _timeline(result: Any, found: str, ax: Any) -> Any:
    table = frame(result)
    if found == "monitor":
        x = list(table["time"])
        threshold = table.attrs.get("threshold", math.nan)
        ax.set_xlabel("time")
    else:
        x = list(range(len(table)))
        threshold = math.nan
        if "name" in table:
            ax.set_xticks(x, list(table["name"]), rotation=60, ha="right", fontsize="small")
        else:
            ax.set_xlabel("chunk")
    ax.fill_between(x, list(table["low"]), list(table["high"]), color="tab:blue", alpha=0.2, linewidth=0,
                    label="interval")
    ax.plot(x, list(table["estimate"]), marker="o", markersize=3, color="tab:blue", label="estimate")
    if "accuracy" in table and table["accuracy"].notna().any():
        ax.plot(x, list(table["accuracy"]), linestyle="none", marker="x", color="black", label="true accuracy")
    if not math.isnan(threshold):
        ax.axhline(threshold, color="tab:red", linestyle="--", linewidth=1, label="alert line")
    alerts = [i for i, alert in enumerate(table["alert"]) if alert] if "alert" in table else []
    if alerts:
        ax.scatter([x[i] for i in alerts], [table["estimate"].iloc[i] for i in alerts], color="tab:red", s=40,
                   zorder=3, label="alert")
    ax.set_ylabel("estimated accuracy")
    ax.legend(fontsize="small", loc="best")
    return ax.figure


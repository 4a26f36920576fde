"""mano.frame: any result of the package as a pandas DataFrame, the table a notebook shows for a
result (``_repr_html_`` of the results, mano/_shown.py).

pandas is imported when frame() is first called, never by ``import mano``. The kinds of result,
told apart by their keys, and their rows:

- :func:`mano.score` (or a list of them, e.g. one per chunk): one row per result; columns ``n``,
  ``k``, ``accuracy`` (the true accuracy, NaN without labels), ``confidence`` (when the result has
  it), and per method ``<method>_score`` (``<method>_accuracy`` for the methods that return an
  accuracy) and, for those with one, its standard error ``<method>_se``.
- :func:`mano.evaluate`: one row per set: ``name``, ``group``, then the score columns.
- :func:`mano.calibrate`: one row per calibrated method (index ``method``): ``slope``,
  ``intercept``, ``residual_se``, ``logo_mae``, ``n``, ``score_min``, ``score_max``, ``rank``
  (1 = the lowest held-out error), ``recommended``.
- :func:`mano.predict` (one result, a list of them, or the list it gives for sets): one row per
  set: ``name``, ``group`` (for sets), ``n``, ``accuracy`` (true, NaN without labels), the
  ``method`` of its estimate, the ``estimate``, interval ``low`` and ``high``, ``extrapolated``,
  ``regime`` (``label_shift`` or ``general``), ``shift_distance``, ``shift_outside``, and per method ``<method>_estimate``,
  ``<method>_low``, ``<method>_high``. A prediction with an audit (``mano.predict(...,
  audit=...)``) adds ``audit_n``, ``audit_accuracy``, ``audit_method`` (``ppi`` or ``wilson``),
  ``audit_reason`` (why ``wilson``: "n < 10 labels: Wilson on the labels alone", or no correctness model),
  ``audit_low``, ``audit_high`` and the labels-alone ``audit_wilson_low``, ``audit_wilson_high``;
  one whose interval is wider than 0.25 adds ``labels_needed`` (the uniformly audited labels that
  would bring it to ``labels_needed_width``) and ``labels_needed_method``.
- a monitoring report (``mano monitor report --json``, :func:`mano.monitor.report`): one row per
  point: ``time`` (datetime), ``name``, the prediction's columns as above, ``alert``, and the
  point's other plain values (``reference``, ``file``, ...); the alert line is in
  ``frame.attrs["threshold"]``.
"""
from __future__ import annotations

import math
import os
from typing import Any, Mapping

from ._core import InputError

__all__ = ["frame", "result_kind"]

_KINDS = "a result of mano.score, evaluate, calibrate or predict (or a list of them), or a monitoring report"


def loaded(result: Any) -> Any:
    """A path where a result is taken names a calibration file (what mano calibrate writes): read
    it, as mano.predict does; any other value as it is."""
    if isinstance(result, (str, os.PathLike)):
        from ._files import read_calibration

        return read_calibration(result)
    return result


def result_kind(result: Any) -> str:
    """'score', 'evaluate', 'calibration', 'predict', 'predict_sets' or 'monitor', by the keys of
    ``result``; InputError for anything else."""
    if isinstance(result, Mapping):
        if result.get("format") == "mano-calibration":
            return "calibration"
        if isinstance(result.get("points"), list):
            return "monitor"
        if "summary" in result and isinstance(result.get("sets"), list):
            return "evaluate"
        if "estimate" in result and "methods" in result:
            return "predict"
        if "methods" in result and "n" in result:
            return "score"
    elif isinstance(result, (list, tuple)) and result:
        kinds = {("predict_sets" if isinstance(r, Mapping) and "prediction" in r else _item_kind(r)) for r in result}
        if len(kinds) == 1 and kinds <= {"score", "predict", "predict_sets"}:
            return "predict" if kinds == {"predict"} else kinds.pop()
    raise InputError(f"mano.frame/plot: expected {_KINDS}; got {_describe(result)}")


def _item_kind(item: Any) -> str:
    try:
        return result_kind(item)
    except InputError:
        return "?"


def _describe(x: Any) -> str:
    if isinstance(x, Mapping):
        return f"a dict with the keys {sorted(map(str, x))[:8]}"
    if isinstance(x, (list, tuple)):
        return "an empty list" if not x else f"a list of {type(x[0]).__name__}"
    return type(x).__name__


def frame(result: Any) -> "pandas.DataFrame":  # noqa: F821 - pandas is imported on call
    """``result`` as a DataFrame, one row per set, chunk or point (per method for a calibration):
    see the module's docstring for the columns of each kind."""
    import pandas as pd

    result = loaded(result)
    kind = result_kind(result)
    if kind == "calibration":
        return _calibration(result, pd)
    if kind == "monitor":
        return _monitor(result, pd)
    if kind == "evaluate":
        rows = [dict(name=s.get("name"), group=s.get("group", ""), **_score_row(s)) for s in result["sets"]]
    elif kind == "predict_sets":
        rows = [dict(name=s.get("name"), group=s.get("group", ""), **_predict_row(s["prediction"])) for s in result]
    elif kind == "predict":
        rows = [_predict_row(r) for r in ([result] if isinstance(result, Mapping) else result)]
    else:
        rows = [_score_row(r) for r in ([result] if isinstance(result, Mapping) else result)]
    return pd.DataFrame(rows)


def _number(x: Any) -> float:
    return math.nan if x is None else float(x)


def _score_row(r: Mapping) -> dict:
    row = {"n": r.get("n"), "k": r.get("k"), "accuracy": _number(r.get("accuracy"))}
    if "confidence" in r:
        row["confidence"] = _number(r["confidence"])
    for name, m in sorted(r.get("methods", {}).items()):
        key = "score" if "score" in m else "accuracy"
        row[f"{name}_{key}"] = _number(m.get(key))
        if "se" in m:
            row[f"{name}_se"] = _number(m["se"])
    return row


def _interval(x: Any) -> tuple:
    if isinstance(x, (list, tuple)) and len(x) == 2:
        return _number(x[0]), _number(x[1])
    return math.nan, math.nan


def _predict_row(p: Mapping) -> dict:
    estimate = p.get("estimate") or {}
    low, high = _interval(estimate.get("interval"))
    shift = p.get("shift") or {}
    row = {"n": p.get("n"), "accuracy": _number(p.get("accuracy")), "method": estimate.get("method"),
           "estimate": _number(estimate.get("accuracy")), "low": low, "high": high,
           "extrapolated": bool(estimate.get("extrapolated", False)), "regime": estimate.get("regime"),
           "shift_distance": _number(shift.get("distance")), "shift_outside": bool(shift.get("outside", False)),
           "too_small": "too_small" in p}
    audit = p.get("audit")
    if isinstance(audit, Mapping):
        row.update(audit_n=audit.get("n"), audit_accuracy=_number(audit.get("accuracy")),
                   audit_method=audit.get("method"), audit_reason=audit.get("reason", ""))
        row["audit_low"], row["audit_high"] = _interval(audit.get("interval"))
        row["audit_wilson_low"], row["audit_wilson_high"] = _interval(audit.get("wilson"))
    need = p.get("labels_for_width")
    if isinstance(need, Mapping):
        row.update(labels_needed=need.get("n"), labels_needed_width=_number(need.get("width")),
                   labels_needed_method=need.get("method"))
    for name, m in sorted(p.get("methods", {}).items()):
        row[f"{name}_estimate"] = _number(m.get("accuracy"))
        row[f"{name}_low"], row[f"{name}_high"] = _interval(m.get("interval"))
    return row


def _calibration(cal: Mapping, pd: Any) -> "pandas.DataFrame":  # noqa: F821
    ranks = {r["method"]: i + 1 for i, r in enumerate(cal.get("ranking", []))}
    rows = []
    for name, m in cal["methods"].items():
        rows.append({"method": name, **{key: _number(m.get(key)) for key in
                                        ("slope", "intercept", "residual_se", "logo_mae", "n", "score_min", "score_max")},
                     "rank": ranks.get(name), "recommended": name == cal.get("recommended")})
    out = pd.DataFrame(rows).set_index("method")
    out["n"] = out["n"].astype("int64")
    return out.sort_values("rank", na_position="last")


def _monitor(report: Mapping, pd: Any) -> "pandas.DataFrame":  # noqa: F821
    rows = []
    for point in report["points"]:
        row = {"time": point.get("time"), "name": point.get("name"), **_predict_row(point),
               "alert": bool(point.get("alert", False))}
        if "regime" in (point.get("estimate") or {}):
            row["regime"] = point["estimate"]["regime"]
        row.update({k: v for k, v in point.items() if k not in row and _plain(v)})
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["time"] = pd.to_datetime(out["time"], utc=True)
    out.attrs["threshold"] = threshold_value(report)
    return out


def threshold_value(report: Mapping) -> float:
    """The alert line of a monitoring report: its "threshold" as a number or {"value": ...}."""
    t = report.get("threshold")
    if isinstance(t, Mapping):
        t = t.get("value")
    return _number(t) if isinstance(t, (int, float)) or t is None else math.nan


def _plain(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


"""Sets of labeled logits (mano.evaluate, calibrate, predict, predict_scores): the package reads
the sets and the core's family workflow (src/mano/workflow/family.hpp) scores and calibrates them."""
from __future__ import annotations

import math
import os
import warnings
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from . import _audit, _core
from ._core import InputError

PathLike = Union[str, "os.PathLike[str]"]

from ._files import read_calibration, read_labels, read_manifest
from ._scoring import _input_name, _is_path, _labels, _logits, _prepare, _rows_of, _score, _score_any, _threads
from ._shown import shown


def _sets(sets: Any, groups: Optional[Sequence[str]], allow_outside_paths: bool, need_labels: bool):
    """(source, [{"name", "group", "logits", "labels"?, "result"?}]) from a manifest path, a
    manifest dict or a list of sets."""
    source = None
    if _is_path(sets):
        m = read_manifest(sets, allow_outside_paths=allow_outside_paths)
        source = m.get("source")
        items = m["sets"]
        where = os.fspath(sets)
    elif isinstance(sets, Mapping) and "sets" in sets:
        items, source, where = sets["sets"], sets.get("source"), "manifest"
    else:
        try:
            items = list(sets)
        except TypeError:
            raise InputError("sets must be a manifest path, a manifest dict or a list of sets") from None
        where = "sets"
    out = []
    for i, s in enumerate(items):
        if not isinstance(s, Mapping) or "name" not in s:
            raise InputError(f"{where}: set {i} must be a dict with a name and logits (or a result)")
        if "result" not in s and "logits" not in s:
            raise InputError(f"{where}: set \"{s['name']}\" has neither logits nor a result")
        if "logits" not in s and not (isinstance(s["result"], Mapping) and
                                      all(key in s["result"] for key in ("n", "k", "methods"))):
            raise InputError(f"{where}: set \"{s['name']}\": its result is not one of mano.score "
                             "(a dict with \"n\", \"k\" and \"methods\")")
        if need_labels and "result" not in s and s.get("labels") is None:
            raise InputError(f"{where}: set \"{s['name']}\" has no \"labels\"; every set needs them here")
        out.append(dict(s))
    if groups:
        kept = _check_options({}, groups=[str(g) for g in groups], set_groups=[str(s.get("group", "")) for s in out],
                              where=where)["kept"]
        out = [out[i] for i in kept]
    return source, out


def _core_value(v: Any) -> Any:
    """A value as the options table's JSON takes it: non-finite numbers as "NaN", "Infinity", "-Infinity"."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return v if np.isfinite(v) else ("NaN" if v != v else "Infinity" if v > 0 else "-Infinity")
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_core_value(x) for x in v]
    return v if isinstance(v, (str, type(None))) else repr(v)


def _check_options(values: dict, groups: Optional[list] = None, set_groups: Optional[list] = None,
                   where: str = "sets") -> dict:
    """Checks values against the core's options table (src/mano/scan/options_table.hpp), its errors
    in Python's spelling; with set_groups, "kept" holds the indices of the sets the groups select."""
    request = {"front_end": "python", "values": {k: _core_value(v) for k, v in values.items()}}
    if set_groups is not None:
        request.update(groups=groups or [], set_groups=set_groups, where=where)
    return _core.options_table(request)


_SCORING = ("methods", "source", "source_features", "p", "eta", "taylor_order", "batch_size", "criterion",
            "temperature", "label_marginal", "architecture", "input")


def _taylor_orders(orders: Any) -> tuple:
    """normalization 'family': the Taylor orders weighed beside taylor_order (the CLI's --taylor-orders)."""
    try:
        values = list(orders) if not isinstance(orders, (str, bytes)) else orders
    except TypeError:
        values = orders
    _check_options({"taylor_orders": values})
    return tuple(int(o) for o in values)


# The keys of a pass (src/mano/workflow/family.hpp pass::to_json) that are not options.
_PASS_ONLY = ("pass", "labels", "rows", "copy")


def _copy_rows(logits: Any, rows: np.ndarray) -> np.ndarray:
    """Rows of a set's logits (an array, or a file: only those rows are read), in the order
    given, repeats included, as a scan reads them (float64 as float64, other types as float32)."""
    if _is_path(logits):
        distinct, at = np.unique(rows, return_inverse=True)
        return _core.read_rows(os.fspath(logits), distinct.tolist())[at]
    picked = _logits(logits)[rows]
    if picked.ndim == 1:  # a binary classifier's one column (input='binary-...')
        picked = picked.reshape(-1, 1)
    return picked.astype(np.float64 if picked.dtype == np.float64 else np.float32)


def _scored(sets: Any, groups: Any, allow_outside_paths: bool, normalization: Optional[str], threads: int,
            kwargs: dict, taylor_orders: tuple = (2,), copies: Optional[dict] = None) -> dict:
    """Scores every set as ``mano eval`` and ``mano calibrate`` do, by the core's family workflow
    (src/mano/workflow/family.hpp): with normalization 'family', a first pass with softrun, MaNo alone at
    the other Taylor orders, one branch chosen for all the sets and every set scored again on it.
    This function only reads the sets; the source set (a manifest's, or source=) is fitted once.
    With ``copies`` (calibrate's {"copies", "seed"}), each set's label-shifted copies are scored
    too (src/mano/calibration/label_shift_copies.hpp). Returns the scored family (a dict) for
    _core.evaluate_family and _core.calibrate_family."""
    source, items = _sets(sets, groups, allow_outside_paths, True)
    if source is not None:
        if kwargs.get("source") is not None:
            raise InputError("the manifest has a \"source\" and source= was given too; keep one")
        kwargs = dict(kwargs, source=(source["logits"], source["labels"]))
    family = normalization in (None, "family")
    _check_options({"normalization": "family" if family else normalization, "criterion": kwargs.get("criterion")})
    options = _prepare(**kwargs, normalization="softrun" if family else normalization)

    loaded = {}  # a set's labels as an array, once a pass needs them (copies are drawn by class)

    def labels_of(s: dict) -> np.ndarray:
        if s["name"] not in loaded:
            given = s["labels"]
            loaded[s["name"]] = np.asarray(read_labels(given) if _is_path(given) else _labels(given), dtype=np.int64)
        return loaded[s["name"]]

    def score(index: int, step: dict):
        s = items[index]
        given = "logits" not in s
        if given and step["pass"] != "first":
            return None  # a result cannot be scored again
        scoring = dict(options, **{k: v for k, v in step.items() if k not in _PASS_ONLY})
        try:
            if given:
                result = s["result"]
            elif step["pass"] == "copy":  # a label-shifted copy: the drawn rows, in order, with their labels
                rows = np.asarray(step["rows"], dtype=np.int64)
                result = _score(_copy_rows(s["logits"], rows), scoring, labels_of(s)[rows], threads=threads)
            else:
                result = _score_any(s["logits"], scoring, s.get("labels") if step["pass"] != "variant" else None, threads)
        except InputError as e:
            raise InputError(f"{e} (set \"{s['name']}\")") from None
        columns = _core.columns_of(options.get("input", "logits"), int(result["k"]))
        used = _core.resolve_options(scoring, int(result["n"]), columns, False, False)
        labels = labels_of(s).tolist() if step.get("labels") and not given else None
        return result, used, labels

    names = [{"name": s["name"], "group": s.get("group", "")} for s in items]
    family_json = {"family": family, "taylor_orders": list(taylor_orders)}
    if copies is not None:
        family_json["label_shift_copies"] = copies
    scored, warnings_ = _core.score_family(names, family_json, score)
    for w in warnings_:
        warnings.warn(w, stacklevel=3)
    return scored


def _whole(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise InputError(f"{name} must be a whole number from {low} to {high}, got {value!r}")
    return int(value)


def _scoring_kwargs(values: dict) -> dict:
    return {k: values[k] for k in _SCORING if values.get(k) is not None}


def evaluate(sets: Any, methods: Union[None, str, Iterable[str]] = None, *, groups: Optional[Sequence[str]] = None,
             normalization: Optional[str] = "family", taylor_orders: Sequence[int] = (2,), source: Any = None,
             source_features: Any = None, p: Optional[float] = None, eta: Optional[float] = None, taylor_order: Optional[int] = None,
             batch_size: Optional[int] = None, criterion: Optional[float] = None,
             temperature: Union[None, float, str] = None, label_marginal: Any = None,
             architecture: Optional[str] = None, threads: int = 0, allow_outside_paths: bool = False,
             input: Optional[str] = None) -> dict:
    """The paper's protocol over labeled shifted sets (``mano eval --json``): per method R², Pearson,
    Spearman, Kendall and the leave-one-out error of a linear fit, over all sets and per group.

    sets: a manifest path (``mano eval``'s), a manifest dict, or a list of dicts with a name, an
    optional group, and logits (an array or a path) with labels, or a ``result`` of :func:`score`
    made with labels. normalization 'family' (the default) chooses MaNo's branch once for all
    sets, among softmax and the Taylor orders taylor_order and ``taylor_orders`` (the CLI's
    --taylor-orders); 'softrun', 'softmax' or 'taylor' score each set as :func:`score` does.
    input: what the sets' values are, as :func:`score` takes it.
    """
    scored = _scored(sets, groups, allow_outside_paths, normalization, _threads(threads), _scoring_kwargs(locals()),
                     _taylor_orders(taylor_orders))
    out = _core.evaluate_family(scored)
    for note in out["notes"]:
        warnings.warn(note, stacklevel=2)
    return shown(out["report"])


def calibrate(sets: Any, methods: Union[None, str, Iterable[str]] = None, *, groups: Optional[Sequence[str]] = None,
              normalization: Optional[str] = "family", taylor_orders: Sequence[int] = (2,), source: Any = None,
              source_features: Any = None, p: Optional[float] = None, eta: Optional[float] = None, taylor_order: Optional[int] = None,
              batch_size: Optional[int] = None, criterion: Optional[float] = None,
              temperature: Union[None, float, str] = None, label_marginal: Any = None,
              architecture: Optional[str] = None, threads: int = 0, allow_outside_paths: bool = False,
              label_shift_copies: Optional[int] = None, label_shift_seed: Optional[int] = None,
              notes: Optional[list] = None, input: Optional[str] = None) -> dict:
    """Fits accuracy ~ a * score + b per method on labeled shifted sets (``mano calibrate``), with
    the recommended method and the shift reference. The dict is the file the CLI writes (save it
    with ``json.dump``; :func:`predict` and ``mano predict`` read it). Sets as in :func:`evaluate`.
    label_shift_copies: label-shifted copies of each set given with its logits, added to the intervals
    (``--label-shift-copies``; default 6, 0 for none), drawn from ``label_shift_seed`` (default 0).
    Why a method was left out is appended to ``notes`` when a list is given. The calibration
    records ``input`` (what the sets' values are): :func:`predict` refuses a set of another."""
    copies = {}
    if label_shift_copies is not None:
        copies["copies"] = _whole("label_shift_copies", label_shift_copies, 0, _core.label_shift_max_copies)
    if label_shift_seed is not None:
        copies["seed"] = _whole("label_shift_seed", label_shift_seed, 0, _core.label_shift_max_seed)
    scored = _scored(sets, groups, allow_outside_paths, normalization, _threads(threads), _scoring_kwargs(locals()),
                     _taylor_orders(taylor_orders), copies)
    out = _core.calibrate_family(scored)
    if notes is not None:
        notes.extend(out["notes"])
    return shown(out["calibration"])


def _scored_for_prediction(cal: dict, logits: Any, lab: Any, input: Optional[str], audit: Any, threads: int) -> tuple:
    """(result, options, logits as read: an array or the path, the audit's labeled rows)"""
    # the calibration's options for this size, checked (and K with them) before any row is
    # scored: a file's shape comes from its header alone
    if _is_path(logits):
        rows, cols, _ = _core.matrix_shape(os.fspath(logits), "", None, "", None)  # the scan warns of its notes
    else:
        logits = _rows_of(_logits(logits), input)
        rows, cols = logits.shape if logits.ndim == 2 else (0, 0)
    try:
        scoring = _core.scoring_options(cal, rows, cols, _input_name(input))
    except InputError as e:
        if _is_path(logits):
            raise InputError(f"{os.fspath(logits)}: {e}") from None
        raise
    # a set of 0 rows is refused by the scan ("no rows to score"); its size leaves nothing out
    for name in scoring["left_out"] if rows else []:
        warnings.warn(f"{name} left out of this prediction: it keeps every row, which a prediction does only up to "
                      f"{_core.keeps_rows_max_logits} logits and {_core.keeps_rows_max_k} classes (these: {rows} x "
                      f"{cols}); score with methods='{name}' and predict from that result to run it anyway",
                      stacklevel=4)
    # checked before any row is scored
    classes = _core.classes_of(_input_name(input), cols)
    marks = None if audit is None else _audit.labeled_rows(audit, rows, classes, os.fspath(logits) if _is_path(logits) else "")
    options = scoring["options"]
    return _score_any(logits, options, lab, threads), options, logits, marks


def _predicted(cal: dict, level: float, logits: Any, lab: Any, input: Optional[str], audit: Any, threads: int) -> dict:
    """The prediction for one set's logits, with its audit when one is given."""
    result, options, logits, marks = _scored_for_prediction(cal, logits, lab, input, audit, threads)
    if marks is None:
        return shown(_core.predict(cal, result, float(level)))
    # the audited rows scored again with their labels and the set's options, as the CLI does
    audited = _audit.score_audited(logits, marks, options)
    for note in marks.get("warnings", []):
        warnings.warn(note, stacklevel=4)
    try:
        return shown(_core.predict_audited(cal, result, audited, float(level), marks.get("warnings", [])))
    except InputError as e:
        where = f"{os.fspath(logits)}: " if _is_path(logits) else ""
        given = f" (audit file {os.fspath(audit)})" if _is_path(audit) else ""
        raise InputError(f"{where}{e}{given}") from None


def _is_sets(x: Any) -> bool:
    """Whether predict's x is sets (a manifest path or dict, a list of sets), not one set."""
    return _is_path(x) and str(x).endswith(".json") or (isinstance(x, Mapping) and "sets" in x) or \
        (isinstance(x, (list, tuple)) and bool(x) and isinstance(x[0], Mapping))


def predict(calibration: Union[Mapping, PathLike], x: Any, *, level: float = 0.9, labels: Any = None,
            groups: Optional[Sequence[str]] = None, threads: int = 0, allow_outside_paths: bool = False,
            audit: Any = None, input: Optional[str] = None) -> Any:
    """Estimated accuracy with a prediction interval (``mano predict``), for every calibrated
    method and the calibration's recommended estimate.

    x: a result of :func:`score` (scored with the calibration's options), logits (an array or a
    file: scored here with the calibration's options; ``labels`` then add the true accuracy), or
    sets (a manifest path or dict, a list of sets): then a list of {"name", "group", "prediction"}.

    audit: labels of a uniform sample of the set's rows (``mano predict --audit``, docs/audit.md):
    the file :func:`mano.audit` (or ``mano audit``) wrote with a column ``label`` added,
    ``{"rows": [...], "labels": [...]}`` or ``(rows, labels)``. The prediction then has "audit":
    the set's accuracy from those rows, by PPI with the calibration's correctness model (else
    labels alone, Wilson). It needs the set's logits (not a result), and one set: sets with
    exactly one (after ``groups``).

    input: what the logits' values are, as :func:`score` takes it: the calibration's input kind
    (it is recorded in the calibration; a set read as another is refused).
    """
    cal = read_calibration(calibration) if _is_path(calibration) else dict(calibration)
    _check_options({"level": level})
    threads = _threads(threads)
    if isinstance(x, Mapping) and "methods" in x and "n" in x:
        if audit is not None:
            raise InputError("audit: the audited rows are scored from the set's logits; give x as the logits (an array "
                             "or a file), not a result")
        return shown(_core.predict(cal, dict(x), float(level)))
    if not _is_sets(x):
        return _predicted(cal, level, x, labels, input, audit, threads)
    _, items = _sets(x, groups, allow_outside_paths, False)
    if audit is not None and len(items) != 1:
        raise InputError(f"audit labels rows of one set; predict that set alone, or select it with groups "
                         f"({len(items)} sets given)")
    out = []
    for s in items:
        if "result" in s and "logits" not in s:
            if audit is not None:
                raise InputError(f"audit: set \"{s['name']}\" is given as a result; its audited rows are scored "
                                 "from its logits")
            prediction = shown(_core.predict(cal, s["result"], float(level)))
        else:
            prediction = _predicted(cal, level, s["logits"], s.get("labels"), input, audit, threads)
        out.append({"name": s["name"], "group": s.get("group", ""), "prediction": prediction})
    return shown(out)


def predict_scores(calibration: Union[Mapping, PathLike], method: str, scores: Iterable[float], *,
                   level: float = 0.9) -> list:
    """The accuracy a calibration implies for each score of one method, with the calibration's
    own interval (e.g. to draw its prediction band): [{"accuracy", "interval", "extrapolated"}]."""
    _check_options({"level": level})
    cal = read_calibration(calibration) if _is_path(calibration) else dict(calibration)
    values = []
    for s in scores:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, np.integer, np.floating)) or \
                not math.isfinite(s):
            raise InputError(f"scores must be finite numbers, got {s!r}")
        values.append(float(s))
    return _core.predict_scores(cal, str(method), values, float(level))

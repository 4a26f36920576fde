"""mano: how accurate is a classifier on data that has no labels?

MaNo (Xie et al., NeurIPS 2024) and the estimators it is compared against, computed from a
model's logits by mano's C++ core, the same one the ``mano`` command and the npm package run.

    import mano
    result = mano.score(logits)            # an N x K array (NumPy, or anything NumPy reads)
    result["methods"]["mano"]["score"]

Results, states and calibrations are the JSON the CLI writes, as Python dicts. Bad input raises
:class:`InputError` (a ``ValueError``) with the CLI's message. ``mano.dask`` scores arrays and
files on a Dask cluster.
"""
from __future__ import annotations

import json
import math
import os
import warnings
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from . import _core
from ._core import InputError

__version__: str = _core.version
__all__ = [
    "InputError", "Accumulator", "score", "evaluate", "calibrate", "predict", "predict_scores", "methods",
    "default_methods", "architectures", "read", "read_labels", "read_manifest", "read_calibration", "__version__",
]

PathLike = Union[str, "os.PathLike[str]"]

def _is_path(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))


def _array(x: Any, what: str) -> np.ndarray:
    """x as a NumPy array without a copy where NumPy allows it (arrays, buffers, CPU tensors).
    The core copies numbers in the other byte order (e.g. '>f4') into native ones."""
    if not isinstance(x, np.ndarray):
        try:
            x = np.asarray(x)
        except Exception as e:  # noqa: BLE001 - whatever NumPy refuses, say what it was
            raise InputError(f"{what}: cannot be read as an array ({type(x).__name__}: {e})") from None
    return x


def _logits(x: Any, what: str = "logits", **read_options: Any) -> np.ndarray:
    if _is_path(x):
        return read(x, **read_options)
    return _array(x, what)


def _methods_list(methods: Union[None, str, Iterable[str]]) -> list:
    if methods is None:
        return []
    if isinstance(methods, str):
        return [m.strip() for m in methods.split(",") if m.strip()]
    names = list(methods)
    for m in names:
        if not isinstance(m, str):
            raise InputError(f"methods: {m!r} is not a method name (see mano.methods())")
    return names


def _prepare(methods: Any = None, *, source: Any = None, source_features: Any = None, p: Any = None, eta: Any = None,
             taylor_order: Any = None, normalization: Any = None, batch_size: Any = None, criterion: Any = None,
             temperature: Any = None, label_marginal: Any = None, architecture: Any = None) -> str:
    """The full options JSON (the CLI's option set) with what the source set teaches: the fitted
    temperature, the source model of ATC/DoC/COTT, the source feature moments."""
    partial: dict = {"methods": _methods_list(methods)}
    for key, value in (("p", p), ("eta", eta), ("taylor_order", taylor_order), ("batch_size", batch_size),
                       ("criterion", criterion)):
        if value is not None:
            partial[key] = _number(key, value)
    for key, value in (("normalization", normalization), ("architecture", architecture)):
        if value is not None:
            partial[key] = value
    fit = isinstance(temperature, str)
    if fit and temperature != "fit":
        raise InputError(f"temperature must be a number > 0 or 'fit' (got {temperature!r})")
    if not fit and temperature is not None:
        partial["temperature"] = _number("temperature", temperature)
    if isinstance(label_marginal, str):
        if label_marginal == "source":
            partial["label_marginal"] = "source"
        elif label_marginal != "uniform":
            raise InputError(f"label_marginal must be 'uniform', 'source' or K probabilities (got {label_marginal!r})")
    elif label_marginal is not None:
        marginal = _array(label_marginal, "label_marginal")
        if marginal.dtype.kind not in "fiu":
            raise InputError(f"label_marginal must be 'uniform', 'source' or K probabilities (got {label_marginal!r})")
        partial["label_marginal"] = [float(v) for v in marginal.ravel()]
        if not all(map(math.isfinite, partial["label_marginal"])):
            raise InputError("label_marginal: its entries must be finite and non-negative")
    src_logits = src_labels = None
    if source is not None:
        if isinstance(source, Mapping):
            src_logits, src_labels = source.get("logits"), source.get("labels")
        else:
            try:
                src_logits, src_labels = source
            except (TypeError, ValueError):
                raise InputError("source must be (logits, labels) or {'logits': ..., 'labels': ...}") from None
        if src_logits is None or src_labels is None:
            raise InputError("source needs both its logits and its labels")
        src_logits = _logits(src_logits, "source logits")
        src_labels = _labels(src_labels, "source labels")
    feats = None if source_features is None else _logits(source_features, "source features")
    try:
        text = json.dumps(partial, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise InputError(f"options: {e}") from None
    return _core.prepare_options(text, src_logits, src_labels, fit, feats)


def _number(key: str, value: Any) -> Union[int, float]:
    """A numeric option as JSON takes it (NumPy scalars too), checked for what JSON cannot say."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{key} must be a number (got {value!r})")
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{key} must be a finite number (got {value!r})")
    return value


def _labels(x: Any, what: str = "labels") -> Optional[np.ndarray]:
    if x is None:
        return None
    return read_labels(x) if _is_path(x) else _array(x, what)


def _threads(threads: Any) -> int:
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 0 <= threads < 2**32:
        raise InputError(f"threads must be a whole number >= 0 (0 = every core), got {threads!r}")
    return int(threads)


def score(logits: Any, methods: Union[None, str, Iterable[str]] = None, *, labels: Any = None, second: Any = None,
          features: Any = None, source: Any = None, source_features: Any = None, p: Optional[float] = None,
          eta: Optional[float] = None, taylor_order: Optional[int] = None, normalization: Optional[str] = None,
          batch_size: Optional[int] = None, criterion: Optional[float] = None,
          temperature: Union[None, float, str] = None, label_marginal: Any = None,
          architecture: Optional[str] = None, threads: int = 0, key: Optional[str] = None) -> dict:
    """Scores N x K logits (float16/32/64, any layout; or a file path mano reads) as ``mano score``
    does: every method that applies by default for this shape and these inputs, or ``methods``.

    labels: the true classes (the result then has the true "accuracy"); second: a second model's
    logits (AgreeScore); features: penultimate features (Dispersion, Frechet); source: labeled
    source logits ``(logits, labels)`` for ATC, DoC, COTT, temperature 'fit' and label_marginal
    'source'; source_features: the source's features (Frechet). threads: 0 = every core.
    Returns the CLI's JSON result as a dict: {"n", "k", "methods": {name: {...}}, ...}.
    """
    opts = _prepare(methods, source=source, source_features=source_features, p=p, eta=eta, taylor_order=taylor_order,
                    normalization=normalization, batch_size=batch_size, criterion=criterion, temperature=temperature,
                    label_marginal=label_marginal, architecture=architecture)
    if _is_path(logits) and second is None and features is None and (labels is None or _is_path(labels)):
        # the CLI's own path: the native reader streams the file (no copy of it in memory)
        acc = _core.scan_file(os.fspath(logits), opts, key or "", None, "", None,
                              "" if labels is None else os.fspath(labels), _threads(threads))
        return json.loads(acc.result())
    return _score(_logits(logits, key=key), opts, labels, second, features, _threads(threads))


def _score_any(logits: Any, options_json: str, labels: Any, threads: int) -> dict:
    """Logits given as an array or a file (streamed by the native reader), with prepared options."""
    if _is_path(logits) and (labels is None or _is_path(labels)):
        acc = _core.scan_file(os.fspath(logits), options_json, "", None, "", None,
                              "" if labels is None else os.fspath(labels), threads)
        return json.loads(acc.result())
    return _score(_logits(logits), options_json, labels, threads=threads)


def _score(logits: np.ndarray, options_json: str, labels: Any = None, second: Any = None, features: Any = None,
           threads: int = 0) -> dict:
    sec = None if second is None else _logits(second, "second")
    fea = None if features is None else _logits(features, "features")
    return json.loads(_core.score(logits, options_json, _labels(labels), sec, fea, threads))


class Accumulator:
    """Streaming scores: push row chunks in order, merge accumulators from other threads,
    processes or machines (``merge``), and read the result of all rows. Pickles through its state
    (the JSON of ``mano score --state``), so it crosses process boundaries; merging the same
    state twice is refused rather than counted twice.

    ``methods`` and the options are those of :func:`score`; with no methods, the defaults for K
    classes (COT, which keeps every row, only when asked for by name).
    """

    # Threads may share one: the core releases the GIL while it works, and each call on an
    # accumulator holds the accumulator's own lock (bindings/python/module.cpp).
    __slots__ = ("_acc",)

    def __init__(self, k: int, methods: Union[None, str, Iterable[str]] = None, *, source: Any = None,
                 source_features: Any = None, p: Optional[float] = None, eta: Optional[float] = None,
                 taylor_order: Optional[int] = None, normalization: Optional[str] = None,
                 batch_size: Optional[int] = None, criterion: Optional[float] = None,
                 temperature: Union[None, float, str] = None, label_marginal: Any = None,
                 architecture: Optional[str] = None) -> None:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < 2**63:
            raise InputError(f"k (the number of classes) must be a whole number >= 1, got {k!r}")
        opts = _prepare(methods, source=source, source_features=source_features, p=p, eta=eta,
                        taylor_order=taylor_order, normalization=normalization, batch_size=batch_size,
                        criterion=criterion, temperature=temperature, label_marginal=label_marginal,
                        architecture=architecture)
        self._acc = _core.Accumulator(int(k), opts)

    @classmethod
    def _wrap(cls, core_acc: "_core.Accumulator") -> "Accumulator":
        obj = cls.__new__(cls)
        obj._acc = core_acc
        return obj

    @classmethod
    def from_state(cls, state: Union[Mapping, str, bytes, PathLike]) -> "Accumulator":
        """An accumulator from a state: a dict (``state()``), its JSON text, or a state file."""
        if isinstance(state, Mapping):
            text = json.dumps(state)
        elif isinstance(state, bytes):
            try:
                text = state.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"accumulator state: its JSON is not UTF-8 text ({e})") from None
        elif isinstance(state, str) and state.lstrip()[:1] in ("{", "["):
            text = state
        elif _is_path(state):
            text = _core.read_state(os.fspath(state))
        else:
            raise InputError(f"state must be a dict, JSON text or a file path, got {type(state).__name__}")
        return cls._wrap(_core.Accumulator.from_state(text))

    def push(self, logits: Any, labels: Any = None, second: Any = None, features: Any = None) -> "Accumulator":
        """Adds rows (an M x K array); all or nothing: on an error nothing is added."""
        arrays = (_array(logits, "logits"), None if labels is None else _array(labels, "labels"),
                  None if second is None else _array(second, "second"),
                  None if features is None else _array(features, "features"))
        self._acc.push(*arrays)
        return self

    def merge(self, other: "Accumulator") -> "Accumulator":
        """Adds another accumulator's rows (same K and options) as a shard of their own."""
        if not isinstance(other, Accumulator):
            raise InputError(f"merge takes an Accumulator, got {type(other).__name__}")
        self._acc.merge(other._acc, True)
        return self

    def result(self) -> dict:
        return json.loads(self._acc.result())

    def state(self) -> dict:
        return json.loads(self._acc.state())

    @property
    def options(self) -> dict:
        return json.loads(self._acc.options())

    @property
    def rows(self) -> int:
        return self._acc.rows

    @property
    def k(self) -> int:
        return self._acc.cols

    @property
    def architecture(self) -> str:
        return self._acc.architecture

    @property
    def shards(self) -> list:
        return self._acc.shards()

    def copy(self) -> "Accumulator":
        return Accumulator._wrap(self._acc.copy())

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> "Accumulator":
        return self.copy()

    def __getstate__(self) -> str:
        return self._acc.state()

    def __setstate__(self, state: str) -> None:
        self._acc = _core.Accumulator.from_state(state)

    def __repr__(self) -> str:
        return f"<mano.Accumulator k={self.k} rows={self.rows} methods={self.options['methods']}>"


def methods() -> list:
    """The estimator table (``mano methods --json``): name, returns, needs, default, cost, summary."""
    return json.loads(_core.methods())["methods"]


def default_methods(k: int, n: int = 0, inputs: Sequence[str] = ()) -> list:
    """The methods computed when none are named, for n rows (0: not known) of k classes."""
    for name, value, low in (("k", k, 1), ("n", n, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value < 2**63:
            raise InputError(f"{name} must be a whole number >= {low}, got {value!r}")
    return json.loads(_core.default_methods(int(k), int(n), json.dumps(list(inputs))))


def architectures() -> list:
    """The kernel architectures this build has that this CPU runs, best first."""
    return list(_core.architectures())


def read(path: PathLike, *, key: Optional[str] = None, shape: Optional[Sequence[int]] = None,
         label_column: Union[None, str, int] = None, header: Optional[bool] = None) -> np.ndarray:
    """A logits (or features) file as the CLI reads it: .npy, .npz, .csv/.tsv, .safetensors or raw
    float32 (give its ``shape``), with the readers' limits; bfloat16 comes back as float32."""
    if shape is not None:
        dims = list(shape) if not isinstance(shape, (str, bytes)) and isinstance(shape, Iterable) else [shape]
        if len(dims) != 2 or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and 0 <= d < 2**63
                                     for d in dims):
            raise InputError(f"shape must be (N, K), two whole numbers >= 0, got {shape!r}")
        shape = (int(dims[0]), int(dims[1]))
    return _core.read_matrix(os.fspath(path), key or "", shape, "" if label_column is None else str(label_column),
                             header)


def read_labels(path: PathLike, *, key: Optional[str] = None, label_column: Union[None, str, int] = None,
                header: Optional[bool] = None, rows: Optional[int] = None) -> np.ndarray:
    """Integer class labels from a file (int64); ``rows``: how many the caller needs."""
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, (int, np.integer))
                             or not 0 <= rows < 2**63):
        raise InputError(f"rows must be a whole number >= 0, got {rows!r}")
    return _core.read_labels(os.fspath(path), key or "", "" if label_column is None else str(label_column), header, rows)


def read_manifest(path: PathLike, *, allow_outside_paths: bool = False) -> dict:
    """A manifest (``mano eval``'s), its paths resolved against its folder."""
    return json.loads(_core.read_manifest(os.fspath(path), bool(allow_outside_paths)))


def read_calibration(path: PathLike) -> dict:
    """A calibration file written by ``mano calibrate`` (or saved from :func:`calibrate`)."""
    return json.loads(_core.read_calibration(os.fspath(path)))


# --- sets of labeled logits: evaluate, calibrate, predict ---------------------------------------

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
        wanted = list(groups)
        for g in wanted:
            if not any(s.get("group", "") == g for s in out):
                raise InputError(f"{where}: no set has the group \"{g}\"")
        out = [s for s in out if s.get("group", "") in wanted]
    return source, out


_SCORING = ("methods", "source", "source_features", "p", "eta", "taylor_order", "batch_size", "criterion",
            "temperature", "label_marginal", "architecture")


def _taylor_orders(orders: Any) -> tuple:
    """normalization 'family': the Taylor orders weighed beside taylor_order (the CLI's --taylor-orders)."""
    try:
        values = tuple(orders)
    except TypeError:
        raise InputError(f"taylor_orders must be a list of whole numbers from 1 to 170, got {orders!r}") from None
    for o in values:
        if isinstance(o, bool) or not isinstance(o, (int, np.integer)) or not 1 <= o <= 170:
            raise InputError(f"taylor_orders must be whole numbers from 1 to 170, got {o!r}")
    return tuple(int(o) for o in values)


def _scored(sets: Any, groups: Any, allow_outside_paths: bool, normalization: Optional[str], threads: int,
            kwargs: dict, taylor_orders: tuple = (2,)) -> str:
    """Scores every set as ``mano eval`` and ``mano calibrate`` do, by the core's family workflow
    (src/mano/workflow.hpp): with normalization 'family', a first pass with softrun, MaNo alone at
    the other Taylor orders, one branch chosen for all the sets and every set scored again on it.
    This function only reads the sets; the source set (a manifest's, or source=) is fitted once.
    Returns the scored family as JSON for _core.evaluate_family and _core.calibrate_family."""
    source, items = _sets(sets, groups, allow_outside_paths, True)
    if source is not None:
        if kwargs.get("source") is not None:
            raise InputError("the manifest has a \"source\" and source= was given too; keep one")
        kwargs = dict(kwargs, source=(source["logits"], source["labels"]))
    family = normalization in (None, "family")
    if family and kwargs.get("criterion") is not None:
        raise InputError("criterion fixes the softrun branch; give it with normalization='softrun', not 'family'")
    options = json.loads(_prepare(**kwargs, normalization="softrun" if family else normalization))

    def score(index: int, pass_json: str):
        s, step = items[index], json.loads(pass_json)
        given = "logits" not in s
        if given and step["pass"] != "first":
            return None  # a result cannot be scored again
        scoring = json.dumps(dict(options, **{k: v for k, v in step.items() if k != "pass"}))
        if given:
            result = s["result"]
        else:
            try:
                result = _score_any(s["logits"], scoring, s.get("labels") if step["pass"] != "variant" else None, threads)
            except InputError as e:
                raise InputError(f"{e} (set \"{s['name']}\")") from None
        used = _core.resolve_options(scoring, int(result["n"]), int(result["k"]), False, False)
        return json.dumps(result), used

    names = json.dumps([{"name": s["name"], "group": s.get("group", "")} for s in items])
    scored, warnings_ = _core.score_family(names, json.dumps({"family": family, "taylor_orders": list(taylor_orders)}), score)
    for w in warnings_:
        warnings.warn(w, stacklevel=3)
    return scored


def _scoring_kwargs(values: dict) -> dict:
    return {k: values[k] for k in _SCORING if values.get(k) is not None}


def evaluate(sets: Any, methods: Union[None, str, Iterable[str]] = None, *, groups: Optional[Sequence[str]] = None,
             normalization: Optional[str] = "family", taylor_orders: Sequence[int] = (2,), source: Any = None,
             source_features: Any = None, p: Optional[float] = None, eta: Optional[float] = None, taylor_order: Optional[int] = None,
             batch_size: Optional[int] = None, criterion: Optional[float] = None,
             temperature: Union[None, float, str] = None, label_marginal: Any = None,
             architecture: Optional[str] = None, threads: int = 0, allow_outside_paths: bool = False) -> dict:
    """The paper's protocol over labeled shifted sets (``mano eval --json``): per method R², Pearson,
    Spearman, Kendall and the leave-one-out error of a linear fit, over all sets and per group.

    sets: a manifest path (``mano eval``'s), a manifest dict, or a list of dicts with a name, an
    optional group, and logits (an array or a path) with labels, or a ``result`` of :func:`score`
    made with labels. normalization 'family' (the default) chooses MaNo's branch once for all
    sets, among softmax and the Taylor orders taylor_order and ``taylor_orders`` (the CLI's
    --taylor-orders); 'softrun', 'softmax' or 'taylor' score each set as :func:`score` does.
    """
    scored = _scored(sets, groups, allow_outside_paths, normalization, _threads(threads), _scoring_kwargs(locals()),
                     _taylor_orders(taylor_orders))
    out = json.loads(_core.evaluate_family(scored))
    for note in out["notes"]:
        warnings.warn(note, stacklevel=2)
    return out["report"]


def calibrate(sets: Any, methods: Union[None, str, Iterable[str]] = None, *, groups: Optional[Sequence[str]] = None,
              normalization: Optional[str] = "family", taylor_orders: Sequence[int] = (2,), source: Any = None,
              source_features: Any = None, p: Optional[float] = None, eta: Optional[float] = None, taylor_order: Optional[int] = None,
              batch_size: Optional[int] = None, criterion: Optional[float] = None,
              temperature: Union[None, float, str] = None, label_marginal: Any = None,
              architecture: Optional[str] = None, threads: int = 0, allow_outside_paths: bool = False,
              notes: Optional[list] = None) -> dict:
    """Fits accuracy ~ a * score + b per method on labeled shifted sets (``mano calibrate``), with
    the recommended method and the shift reference. The dict is the file the CLI writes (save it
    with ``json.dump``; :func:`predict` and ``mano predict`` read it). Sets as in :func:`evaluate`.
    Why a method was left out is appended to ``notes`` when a list is given."""
    scored = _scored(sets, groups, allow_outside_paths, normalization, _threads(threads), _scoring_kwargs(locals()),
                     _taylor_orders(taylor_orders))
    out = json.loads(_core.calibrate_family(scored))
    if notes is not None:
        notes.extend(out["notes"])
    return out["calibration"]


def predict(calibration: Union[Mapping, PathLike], x: Any, *, level: float = 0.9, labels: Any = None,
            groups: Optional[Sequence[str]] = None, threads: int = 0, allow_outside_paths: bool = False) -> Any:
    """Estimated accuracy with a prediction interval (``mano predict``), for every calibrated
    method and the calibration's recommended estimate.

    x: a result of :func:`score` (scored with the calibration's options), logits (an array or a
    file: scored here with the calibration's options; ``labels`` then add the true accuracy), or
    sets (a manifest path or dict, a list of sets): then a list of {"name", "group", "prediction"}.
    """
    cal = read_calibration(calibration) if _is_path(calibration) else dict(calibration)
    cal_text = json.dumps(cal)
    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise InputError(f"level must lie strictly between 0 and 1, e.g. 0.9 (got {level!r})")

    def one(result: Mapping) -> dict:
        return json.loads(_core.predict(cal_text, json.dumps(result), float(level)))

    def scored(logits: Any, lab: Any) -> dict:
        # the calibration's options for this size, checked (and K with them) before any row is
        # scored: a file's shape comes from its header alone
        if _is_path(logits):
            rows, cols = _core.matrix_shape(os.fspath(logits), "", None, "", None)
        else:
            logits = _logits(logits)
            rows, cols = logits.shape if logits.ndim == 2 else (0, 0)
        try:
            scoring = json.loads(_core.scoring_options(cal_text, rows, cols))
        except InputError as e:
            if _is_path(logits) and str(e).startswith("the logits have"):
                raise InputError(f"{os.fspath(logits)}: {e}") from None
            raise
        for name in scoring["left_out"]:
            warnings.warn(f"{name} left out of this prediction: it keeps every row, which a prediction does only up to "
                          f"{_core.keeps_rows_max_logits} logits and {_core.keeps_rows_max_k} classes (these: {rows} x "
                          f"{cols}); score with methods='{name}' and predict from that result to run it anyway",
                          stacklevel=3)
        return _score_any(logits, json.dumps(scoring["options"]), lab, _threads(threads))

    if isinstance(x, Mapping) and "methods" in x and "n" in x:
        return one(x)
    if _is_path(x) and str(x).endswith(".json") or (isinstance(x, Mapping) and "sets" in x) or \
            (isinstance(x, (list, tuple)) and x and isinstance(x[0], Mapping)):
        _, items = _sets(x, groups, allow_outside_paths, False)
        out = []
        for s in items:
            r = s["result"] if "result" in s and "logits" not in s else scored(s["logits"], s.get("labels"))
            out.append({"name": s["name"], "group": s.get("group", ""), "prediction": one(r)})
        return out
    return one(scored(x, labels))


def predict_scores(calibration: Union[Mapping, PathLike], method: str, scores: Iterable[float], *,
                   level: float = 0.9) -> list:
    """The accuracy a calibration implies for each score of one method, with the calibration's
    own interval (e.g. to draw its prediction band): [{"accuracy", "interval", "extrapolated"}]."""
    cal = read_calibration(calibration) if _is_path(calibration) else dict(calibration)
    values = []
    for s in scores:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, np.integer, np.floating)) or \
                not math.isfinite(s):
            raise InputError(f"scores must be finite numbers, got {s!r}")
        values.append(float(s))
    return json.loads(_core.predict_scores(json.dumps(cal), str(method), json.dumps(values), float(level)))

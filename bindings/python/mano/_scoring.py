"""Scoring logits (mano.score, mano.Accumulator) and the option and input checks every call
shares: arrays in any layout or dtype, or paths read by the native readers."""
from __future__ import annotations

import math
import os
import warnings
from typing import Any, Iterable, Mapping, Optional, Union

import numpy as np

from . import _core
from ._core import InputError
from ._files import read, read_labels
from ._shown import shown
from ._whole import whole

PathLike = Union[str, "os.PathLike[str]"]


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))


def _array(x: Any, what: str) -> np.ndarray:
    """x as a NumPy array without a copy where NumPy allows it (arrays, buffers, CPU tensors).
    The core copies numbers in the other byte order (e.g. '>f4') into native ones."""
    if not isinstance(x, np.ndarray):
        if type(x).__module__ == "torch" and str(getattr(x, "dtype", "")) == "torch.bfloat16":
            # NumPy has no bfloat16 ("unsupported ScalarType BFloat16"): float32 holds every
            # bfloat16 exactly, as the native readers widen a bfloat16 file
            x = x.detach().float()
        try:
            x = np.asarray(x)
        except Exception as e:  # noqa: BLE001 - whatever NumPy refuses, say what it was
            raise InputError(f"{what}: cannot be read as an array ({type(x).__name__}: {e})") from None
    return x


def _is_frame(x: Any) -> bool:
    """A pandas DataFrame (told without importing pandas)."""
    return type(x).__module__.split(".")[0] == "pandas" and hasattr(x, "columns") and getattr(x, "ndim", 0) == 2


def _frame(x: Any, what: str, stacklevel: int) -> tuple:
    """A DataFrame's logit columns and its label column's values (None without one): its column
    names read as a CSV header's are (native/io/csv_columns.hpp), so ids, pandas' index and the
    label column are left out of the logits, each said in a warning, and an index under another
    name is refused, as the CSV readers do."""
    names = [str(c) for c in x.columns]
    label, dropped, notes = _core.table_columns(what, names)
    left_out = set(dropped) | ({label} if label is not None else set())
    logits = _array(x.iloc[:, [j for j in range(len(names)) if j not in left_out]], what)
    if logits.dtype.kind in "fiub":  # other columns are refused as the core scores them
        _core.check_index_column(what, names, logits[:_core.csv_index_rows].astype(np.float64))
    for note in notes:
        warnings.warn(note, stacklevel=stacklevel + 1)
    return logits, None if label is None else _array(x.iloc[:, label], "labels")


def _logits(x: Any, what: str = "logits", **read_options: Any) -> np.ndarray:
    if _is_path(x):
        return read(x, **read_options)
    return _frame(x, what, 3)[0] if _is_frame(x) else _array(x, what)


def _logits_labels(x: Any, labels: Any, what: str, stacklevel: int) -> tuple:
    """Logits not in a file, and their labels: those given, else a DataFrame's label column."""
    if not _is_frame(x):
        return _array(x, what), labels
    logits, column = _frame(x, what, stacklevel + 1)
    return logits, column if labels is None else labels


def _input_name(input: Any) -> str:
    """input= as the core takes it: logits (None), probabilities, binary-logit or binary-probability
    (the core checks the name)."""
    if input is None:
        return "logits"
    if not isinstance(input, str):
        raise InputError(f"input must be 'logits', 'probabilities', 'binary-logit' or 'binary-probability' (got {input!r})")
    return input


def _rows_of(x: np.ndarray, input: Any) -> np.ndarray:
    """A binary classifier's outputs as one column: a 1-D array of N values is N x 1."""
    return x.reshape(-1, 1) if x.ndim == 1 and _core.columns_of(_input_name(input), 2) == 1 else x


def _warn_probabilities(result: Mapping, where: str, stacklevel: int) -> None:
    """Rows that all looked like probabilities, scored as logits: say so, naming input=."""
    if result.get("looks_like_probabilities"):
        warnings.warn(_core.probabilities_warning(where, "input='probabilities'"), stacklevel=stacklevel + 1)


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
             temperature: Any = None, label_marginal: Any = None, architecture: Any = None,
             correctness_histogram: bool = False, input: Any = None, threads: Any = 0) -> dict:
    """The full options (a dict; the CLI's option set) with what the source set teaches: the fitted
    temperature, the source model of ATC/DoC/COTT, the source feature moments (the fits' passes
    over the source rows on `threads` threads, 0 = every core)."""
    partial: dict = {"methods": _methods_list(methods)}
    if input is not None:
        partial["input"] = _input_name(input)
    if not isinstance(correctness_histogram, (bool, np.bool_)):
        raise InputError(f"correctness_histogram must be True or False (got {correctness_histogram!r})")
    if correctness_histogram:
        partial["correctness_histogram"] = True
    for key, value in (("p", p), ("eta", eta), ("taylor_order", taylor_order), ("batch_size", batch_size),
                       ("criterion", criterion)):
        if value is not None:
            partial[key] = _number(key, value)
    for key, value in (("normalization", normalization), ("architecture", architecture)):
        if value is not None:
            partial[key] = value
    fit = isinstance(temperature, str)
    if fit and temperature != "fit":
        raise InputError(f"temperature must be 'fit' or a number (got {temperature!r})")
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
        src_logits = _rows_of(_logits(src_logits, "source logits"), input)
        src_labels = _labels(src_labels, "source labels")
    feats = None if source_features is None else _logits(source_features, "source features")
    # what JSON cannot hold (NaN, a NumPy array) the core refuses, naming the options
    return _core.prepare_options(partial, src_logits, src_labels, fit, feats, _threads(threads))


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
    return whole(threads, "threads", 0, 2**32 - 1, bounds=">= 0 (0 = every core)")


def score(logits: Any, methods: Union[None, str, Iterable[str]] = None, *, labels: Any = None, second: Any = None,
          features: Any = None, source: Any = None, source_features: Any = None, p: Optional[float] = None,
          eta: Optional[float] = None, taylor_order: Optional[int] = None, normalization: Optional[str] = None,
          batch_size: Optional[int] = None, criterion: Optional[float] = None,
          temperature: Union[None, float, str] = None, label_marginal: Any = None,
          architecture: Optional[str] = None, threads: int = 0, key: Optional[str] = None,
          correctness_histogram: bool = False, input: Optional[str] = None) -> dict:
    """Scores N x K logits (float16/32/64, any layout; a file path mano reads; or a pandas
    DataFrame, its column names read as a CSV header's: ids, pandas' index and a label column are
    no classes, docs/python.md) as ``mano score`` does: every method that applies by default for
    this shape and these inputs, or ``methods``.

    labels: the true classes (the result then has the true "accuracy"); second: a second model's
    logits (AgreeScore); features: penultimate features (Dispersion, Frechet); source: labeled
    source logits ``(logits, labels)`` for ATC, DoC, COTT, temperature 'fit' and label_marginal
    'source'; source_features: the source's features (Frechet). threads: for the scan and the
    source's fits, 0 = every core.
    correctness_histogram: also give the rows by confidence bin and predicted class (docs/audit.md).
    input: what the values are: 'logits' (default), 'probabilities' (a softmax, taken through the
    log, zeros floored at 1.2e-38), 'binary-logit' (one column, class 1's logit z: the classes
    [0, z]) or 'binary-probability' (one column, class 1's probability p: [1 - p, p]); a binary
    column may be a 1-D array. Logits whose rows all look like probabilities are a warning.
    Returns the CLI's JSON result as a dict: {"n", "k", "methods": {name: {...}}, ...}.
    """
    opts = _prepare(methods, source=source, source_features=source_features, p=p, eta=eta, taylor_order=taylor_order,
                    normalization=normalization, batch_size=batch_size, criterion=criterion, temperature=temperature,
                    label_marginal=label_marginal, architecture=architecture,
                    correctness_histogram=correctness_histogram, input=input, threads=threads)
    if _is_path(logits) and second is None and features is None and (labels is None or _is_path(labels)):
        # the CLI's own path: the native reader streams the file (no copy of it in memory)
        result = _scan_file(logits, opts, key, labels, _threads(threads)).result()
    else:
        if not _is_path(logits):
            logits, labels = _logits_labels(logits, labels, "logits", 2)
        result = _score(_rows_of(_logits(logits, key=key), input), opts, labels,
                        None if second is None else _rows_of(_logits(second, "second"), input), features, _threads(threads))
    _warn_probabilities(result, os.fspath(logits) if _is_path(logits) else "logits", 2)
    return shown(result)


def _scan_file(path: PathLike, options: dict, key: Optional[str], labels: Any, threads: int) -> "_core.Accumulator":
    """A logits file streamed by the native reader (labels from their file, or a CSV's label
    column); what the reader left out of a CSV or took as its labels is a warning."""
    acc, notes = _core.scan_file(os.fspath(path), options, key or "", None, "", None,
                                 "" if labels is None else os.fspath(labels), threads)
    for note in notes:
        warnings.warn(note, stacklevel=3)
    return acc


def _score_any(logits: Any, options: dict, labels: Any, threads: int) -> dict:
    """Logits given as an array or a file (streamed by the native reader), with prepared options;
    rows that look like probabilities are a warning."""
    if _is_path(logits) and (labels is None or _is_path(labels)):
        scan = _scan_file(logits, options, None, labels, threads)
        try:
            result = scan.result()
        except InputError as e:  # what the rows gave ("no rows to score"), named by their file as the CLI does
            path = os.fspath(logits)
            raise InputError(str(e) if str(e).startswith(path) else f"{path}: {e}") from None
    else:
        result = _score(_rows_of(_logits(logits), options.get("input")), options, labels, threads=threads)
    _warn_probabilities(result, os.fspath(logits) if _is_path(logits) else "logits", 3)
    return result


def _score(logits: np.ndarray, options: dict, labels: Any = None, second: Any = None, features: Any = None,
           threads: int = 0) -> dict:
    sec = None if second is None else _logits(second, "second")
    fea = None if features is None else _logits(features, "features")
    return _core.score(logits, options, _labels(labels), sec, fea, threads)


class Accumulator:
    """Streaming scores: push row chunks in order, merge accumulators from other threads,
    processes or machines (``merge``), and read the result of all rows. Pickles through its state
    (the JSON of ``mano score --state``), so it crosses process boundaries; merging the same
    state twice is refused rather than counted twice.

    ``methods`` and the options are those of :func:`score`; with no methods, the defaults for K
    classes (COT, which keeps every row, only when asked for by name). With a binary ``input``, K
    is 2 and a pushed row is one value.
    """

    # Threads may share one: the core releases the GIL while it works, and each call on an
    # accumulator holds the accumulator's own lock (bindings/python/module.cpp).
    __slots__ = ("_acc",)

    def __init__(self, k: int, methods: Union[None, str, Iterable[str]] = None, *, source: Any = None,
                 source_features: Any = None, p: Optional[float] = None, eta: Optional[float] = None,
                 taylor_order: Optional[int] = None, normalization: Optional[str] = None,
                 batch_size: Optional[int] = None, criterion: Optional[float] = None,
                 temperature: Union[None, float, str] = None, label_marginal: Any = None,
                 architecture: Optional[str] = None, input: Optional[str] = None) -> None:
        k = whole(k, "k (the number of classes)", 1)
        opts = _prepare(methods, source=source, source_features=source_features, p=p, eta=eta,
                        taylor_order=taylor_order, normalization=normalization, batch_size=batch_size,
                        criterion=criterion, temperature=temperature, label_marginal=label_marginal,
                        architecture=architecture, input=input)
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
            text = dict(state)
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
        """Adds rows (an M x K array, or a DataFrame read as :func:`score` reads one, its label
        column the labels; M x 1 or M values for a binary input); all or nothing: on an
        error nothing is added."""
        input = self.options.get("input")
        logits, labels = _logits_labels(logits, labels, "logits", 2)
        arrays = (_rows_of(logits, input), None if labels is None else _array(labels, "labels"),
                  None if second is None else _rows_of(_array(second, "second"), input),
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
        result = self._acc.result()
        _warn_probabilities(result, "logits", 2)
        return shown(result)

    def state(self) -> dict:
        return self._acc.state()

    @property
    def options(self) -> dict:
        return self._acc.options()

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

    def __getstate__(self) -> dict:
        return self._acc.state()

    def __setstate__(self, state: dict) -> None:
        self._acc = _core.Accumulator.from_state(state)

    def __repr__(self) -> str:
        return f"<mano.Accumulator k={self.k} rows={self.rows} methods={self.options['methods']}>"

"""Audit mode (docs/audit.md) in Python: mano.audit draws the rows of a set to label (and writes
the file ``mano audit`` writes), and what mano.predict(audit=...) needs besides the set's own
scoring: the labeled rows, from that file or as arrays, and the audited rows scored with their
labels as ``mano predict --audit`` scores them. The draw, the file's rules and the interval are the
core's (src/mano/audit/audit_sample.hpp, audit.hpp)."""
from __future__ import annotations

import os
import secrets
import warnings
from typing import Any, Mapping, Optional, Union

import numpy as np

from . import _core
from ._core import InputError
from ._files import write_file
from ._scoring import _array, _input_name, _is_path, _rows_of
from ._whole import whole

PathLike = Union[str, "os.PathLike[str]"]



def audit(x: Any, budget: int, *, seed: Optional[int] = None, path: Optional[PathLike] = None,
          input: Optional[str] = None) -> dict:
    """The rows of a set to label by hand: ``budget`` of its rows drawn uniformly without
    replacement, ascending; the same rows as ``mano audit --seed`` draws, on every platform.

    x: the set's logits (an array, or a file mano reads) or its number of rows. seed: a whole
    number from 0 to 2**53 - 1; None draws one (returned, and recorded in the file). path: also
    write the CSV ``mano audit -o`` writes (a comment line recording the draw, then ``row,weight``),
    atomically and never over the logits file; add a column ``label`` with each row's true class
    and give it to :func:`mano.predict` as ``audit=``. input: what the logits' values are, as
    :func:`mano.score` takes it (a binary column's file names the classes 0 and 1). Returns
    {"rows", "n_rows", "seed"}.
    """
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        rows, k, source = whole(x, "x (the number of rows)"), None, None
    elif _is_path(x):
        source = os.fspath(x)
        rows, k, notes = _core.matrix_shape(source, "", None, "", None)
        for note in notes:  # a CSV's columns that are not classes
            warnings.warn(note, stacklevel=2)
        k = _core.classes_of(_input_name(input), k)
    else:
        logits = _rows_of(_array(x, "x"), input)
        if logits.ndim != 2:
            raise InputError(f"x: the logits must be N x K (2-D), got shape {logits.shape}; or give a file or a number of rows")
        (rows, k), source = logits.shape, None
        k = _core.classes_of(_input_name(input), k)
    n = whole(budget, "budget", _core.audit_min_rows, _core.audit_max_rows, " (how many rows to label)")
    if seed is None:
        seed = secrets.randbits(53)
    s = whole(seed, "seed", 0, _core.audit_max_seed, " (2**53 - 1, the largest every front end carries exactly)")
    if path is not None and k is None:
        raise InputError("path: the file names the classes to label (0 to K - 1); give x as the logits (an array or a "
                         "file), not a number of rows")
    try:
        drawn = _core.audit_sample(rows, n, s)
    except InputError as e:
        raise InputError(f"{source}: {e}" if source else str(e)) from None
    if path is not None:
        write_file(path, _core.audit_file(rows, k, n, s, source or _core.audit_array_source), [source] if source else [], "path")
    return drawn


def _whole_numbers(name: str, values: Any) -> np.ndarray:
    a = _array(values, f"audit {name}")
    if a.ndim == 1 and a.size == 0:  # [] is float64 to NumPy: no rows, said as such below
        return a.astype(np.int64)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        what = f"shape {a.shape}" if a.ndim != 1 else f"dtype {a.dtype}"
        raise InputError(f"audit: {name} must be a 1-D list of whole numbers, got {what}")
    return a.astype(np.int64) if a.dtype != np.uint64 else a


def labeled_rows(given: Any, n_rows: int, k: int, set_name: str = "") -> dict:
    """{"rows": ascending, "labels", "warnings"?} of an audit of a set of n_rows x k logits (read
    from the file `set_name`, "" for an array): a labeled audit file, {"rows": ..., "labels": ...}
    (with "seed" and "n_rows" when it is mano.audit's result with labels added: then the rows must
    be that draw) or (rows, labels). The core reads both, with its rules and messages: a draw from
    a set of another size is refused, rows that are not the draw a file records (or the seed
    given) are refused, a file drawn from a file of another name is a warning."""
    if _is_path(given):
        name = os.fspath(given)
        try:
            size = os.stat(name).st_size if os.path.isfile(name) else None
        except OSError:
            size = None
        if size is None:
            raise InputError(f"{name}: cannot open this audit file (not a readable regular file)")
        if size > _core.audit_max_bytes:
            raise InputError(f"{name}: {size} bytes, over the {_core.audit_max_bytes >> 20} MiB an audit file may have; "
                             f"an audit lists at most {_core.audit_max_rows} rows")
        try:
            with open(name, "rb") as f:
                text = f.read()
        except OSError as e:
            raise InputError(f"{name}: cannot read this audit file ({e.strerror})") from None
        return _core.parse_audit(text, name, n_rows, k, set_name)
    drawn = {}
    if isinstance(given, Mapping):
        if "rows" not in given or "labels" not in given:
            raise InputError(f"audit: a dict of labeled rows needs the keys 'rows' and 'labels' (it has "
                             f"{sorted(map(str, given))[:6]})")
        rows, labels = given["rows"], given["labels"]
        for key in ("seed", "n_rows"):  # mano.audit's record of the draw, checked by the core
            if given.get(key) is not None:
                drawn[key] = whole(given[key], f"audit: {key}", 0, hint=" (as mano.audit gave it)")
    elif isinstance(given, (tuple, list)) and len(given) == 2:
        rows, labels = given
    else:
        raise InputError("audit must be a labeled audit file (mano.audit's CSV with a column label), "
                         f"{{'rows': [...], 'labels': [...]}} or (rows, labels); got {type(given).__name__}")
    rows, labels = _whole_numbers("rows", rows), _whole_numbers("labels", labels)
    if len(rows) != len(labels):
        raise InputError(f"audit: {len(rows)} rows but {len(labels)} labels; give one label per audited row")
    if len(rows) > _core.audit_max_rows:
        raise InputError(f"audit: {len(rows)} rows, more than the {_core.audit_max_rows} an audit may have")
    labeled = {"rows": rows.tolist(), "labels": labels.tolist(), **drawn}
    return _core.audit_rows(labeled, "audit", n_rows, k)


def score_audited(logits: Any, marks: Mapping, options: dict) -> dict:
    """The audited rows of the set (an array, or a file: only those rows are read), scored with
    their labels and the options the set was scored with, as ``mano predict --audit`` scores them:
    float64 logits as float64, every other type as float32, in one block."""
    if _is_path(logits):
        rows = _core.read_rows(os.fspath(logits), marks["rows"])
    else:
        rows = _rows_of(np.asarray(logits), options.get("input"))[np.asarray(marks["rows"], dtype=np.int64)]
        rows = rows.astype(np.float64 if rows.dtype.kind == "f" and rows.dtype.itemsize == 8 else np.float32)
    labels = np.asarray(marks["labels"], dtype=np.int64)
    return _core.score(rows, options, labels, None, None, 1)

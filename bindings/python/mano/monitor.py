"""A monitoring history (docs/monitor.md) from Python: ``add`` appends batches' estimates to an
SQLite history, ``report`` reads its timeline with the alert line.

Both run in this process, through the same native code as ``mano monitor add`` and ``mano monitor
report --json`` (native/host/monitor.hpp): the history, the scoring (exactly ``mano predict``'s)
and the alert rules (the core's, in src/mano/workflow/monitoring.hpp) have one implementation, and
no ``mano`` command is needed.

    import mano.monitor
    mano.monitor.add("history.db", ["day1.npy"], calibration="cal.json", at="2026-11-27")
    timeline = mano.monitor.report("history.db")
    if timeline["latest"]["alert"]: ...
"""
from __future__ import annotations

import datetime
import json
import os
import tempfile
import warnings
from typing import Any, Mapping, Optional, Sequence, Union

from . import _core
from ._core import InputError
from ._scoring import _input_name
from ._whole import whole

__all__ = ["add", "report"]

PathLike = Union[str, "os.PathLike[str]"]


def _native(name: str):
    call = getattr(_core, name, None)
    if call is None:
        raise RuntimeError("this mano was built without the monitoring history (MANO_WITH_MONITOR=OFF); build it with "
                           "libsqlite3-dev and libssl-dev installed")
    return call


def _time(value: Any, what: str) -> str:
    """An ISO 8601 text as the history takes it; a naive datetime is UTC."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, str):
        return value
    raise InputError(f"{what} must be an ISO 8601 text, a datetime or a date (got {value!r})")


def add(db: PathLike, files: Union[PathLike, Sequence[PathLike]], *, calibration: Union[PathLike, Mapping],
        at: Any = None,
        name: Optional[str] = None, chunk_size: Optional[int] = None, threads: Optional[int] = None,
        input: Optional[str] = None) -> dict:
    """Scores each file (or each chunk of ``chunk_size`` rows) as ``mano predict`` does and appends
    one point per file or chunk to the history ``db`` (created when absent), in one transaction.
    ``at``: the batch's time (ISO 8601 text, datetime, date; default now). Returns ``{"add": its
    id, "time": UTC, "names": the points' names}``; methods left out for a file's size are
    warnings. ``input``: what the files' values are, as :func:`mano.score` takes it (the
    calibration's kind: another is refused). ``calibration``: the file mano calibrate wrote, or the
    dict :func:`mano.calibrate` returned (the history keeps its text either way). Raises
    mano.InputError for a bad file, option or history, naming it."""
    if isinstance(calibration, Mapping):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "calibration.json")
            with open(path, "w", encoding="utf-8") as out:
                json.dump(dict(calibration), out, indent=2)
            return add(db, files, calibration=path, at=at, name=name, chunk_size=chunk_size, threads=threads, input=input)
    if isinstance(files, (str, bytes, os.PathLike)):
        files = [files]
    files = [os.fsencode(f) for f in files]
    if not files:
        raise InputError("files: give at least one logits file")
    added = _native("monitor_add")(
        os.fsencode(db), files, os.fsencode(calibration), "" if at is None else _time(at, "at"),
        "" if name is None else str(name).encode("utf-8", "surrogateescape"),
        0 if chunk_size is None else whole(chunk_size, "chunk_size", 1),
        0 if threads is None else whole(threads, "threads", 1), _input_name(input))
    for note in added.pop("notes"):
        warnings.warn(note, stacklevel=2)
    return added


def report(db: PathLike, *, reference: Optional[int] = None, reference_until: Any = None, since: Any = None) -> dict:
    """The history's timeline as ``mano monitor report --json`` gives it: ``points`` (each with its
    ``estimate``, ``alert``, ``reference`` and ``calibration_changed``), ``threshold`` (the
    reference period's mean - 3 sd), ``alerts``, ``noise`` (the too-small warning, when it applies)
    and ``latest`` (``latest["alert"]``: what makes the command exit 3); ``waiting`` is True while
    every point is in the reference period (not enough points yet; ``threshold`` has no
    ``value`` before the period has 2 estimates). The reference period is
    the first add's points, or the first ``reference`` points, or those up to ``reference_until``."""
    if reference is not None and reference_until is not None:
        raise InputError("give reference or reference_until, not both")
    return json.loads(_native("monitor_report")(
        os.fsencode(db), 0 if reference is None else whole(reference, "reference", 1),
        "" if reference_until is None else _time(reference_until, "reference_until"),
        "" if since is None else _time(since, "since")))

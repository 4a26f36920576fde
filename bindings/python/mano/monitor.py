"""A monitoring history (docs/monitor.md) from Python: ``add`` appends batches' estimates to an
SQLite history, ``report`` reads its timeline with the alert line.

Both run the ``mano`` command (``mano monitor add`` / ``mano monitor report --json``), so that the
history, the scoring (exactly ``mano predict``'s) and the alert rules (the core's, in
src/mano/workflow/monitoring.hpp) have one implementation. The command is ``$MANO_BIN`` when set, else the
build tree's (``native/mano`` beside this package's ``python/`` folder), else ``mano`` on PATH.

    import mano.monitor
    mano.monitor.add("history.db", ["day1.npy"], calibration="cal.json", at="2026-11-27")
    timeline = mano.monitor.report("history.db")
    if timeline["latest"]["alert"]: ...
"""
from __future__ import annotations

import datetime
import json
import os
import pathlib
import shutil
import subprocess
from typing import Any, Optional, Sequence, Union

from ._core import InputError

__all__ = ["add", "report"]

PathLike = Union[str, "os.PathLike[str]"]

# `mano monitor report`'s exit status when the latest point alerts: not an error here, the
# report says it (report["latest"]["alert"]).
ALERT_STATUS = 3


def _command() -> str:
    given = os.environ.get("MANO_BIN")
    if given:
        return given
    beside = pathlib.Path(__file__).resolve().parents[2] / "native" / "mano"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("mano")
    if found:
        return found
    raise RuntimeError("mano.monitor runs the mano command: set MANO_BIN to it, or put it on PATH")


def _time(value: Any, what: str) -> str:
    """An ISO 8601 text as the CLI takes it; a naive datetime is UTC."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, str):
        return value
    raise InputError(f"{what} must be an ISO 8601 text, a datetime or a date (got {value!r})")


def _whole(value: Any, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{what} must be a whole number >= 1 (got {value!r})")
    return str(value)


def _run(args: Sequence[str], allowed: Sequence[int] = (0,)) -> subprocess.CompletedProcess:
    command = _command()
    try:
        proc = subprocess.run([command, "monitor", *args], capture_output=True, text=True)
    except OSError as e:
        raise RuntimeError(f"mano.monitor runs the mano command, and {command} does not run ({e.strerror}); "
                           "set MANO_BIN to the mano command") from None
    if proc.returncode not in allowed:
        message = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit status {proc.returncode}"
        message = message.removeprefix("mano: error: ")
        raise (InputError if proc.returncode == 2 else RuntimeError)(message)
    return proc


def add(db: PathLike, files: Union[PathLike, Sequence[PathLike]], *, calibration: PathLike, at: Any = None,
        name: Optional[str] = None, chunk_size: Optional[int] = None, threads: Optional[int] = None) -> None:
    """Scores each file (or each chunk of ``chunk_size`` rows) as ``mano predict`` does and appends
    one point per file or chunk to the history ``db`` (created when absent), in one transaction.
    ``at``: the batch's time (ISO 8601 text, datetime, date; default now). Raises mano.InputError
    for a bad file, option or history, naming it."""
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    files = [os.fspath(f) for f in files]
    if not files:
        raise InputError("files: give at least one logits file")
    args = ["add", "--calibration", os.fspath(calibration), "--quiet"]
    if at is not None:
        args += ["--at", _time(at, "at")]
    if name is not None:
        args += ["--name", str(name)]
    if chunk_size is not None:
        args += ["--chunk-size", _whole(chunk_size, "chunk_size")]
    if threads is not None:
        args += ["--threads", _whole(threads, "threads")]
    _run([*args, "--", os.fspath(db), *files])  # after "--": a path that starts with "-" is a path


def report(db: PathLike, *, reference: Optional[int] = None, reference_until: Any = None, since: Any = None) -> dict:
    """The history's timeline as ``mano monitor report --json`` gives it: ``points`` (each with its
    ``estimate``, ``alert``, ``reference`` and ``calibration_changed``), ``threshold`` (the
    reference period's mean - 3 sd), ``alerts``, ``noise`` (the too-small warning, when it applies)
    and ``latest`` (``latest["alert"]``: what makes the command exit 3). The reference period is
    the first add's points, or the first ``reference`` points, or those up to ``reference_until``."""
    args = ["report", "--json"]
    if reference is not None and reference_until is not None:
        raise InputError("give reference or reference_until, not both")
    if reference is not None:
        args += ["--reference", _whole(reference, "reference")]
    if reference_until is not None:
        args += ["--reference-until", _time(reference_until, "reference_until")]
    if since is not None:
        args += ["--since", _time(since, "since")]
    return json.loads(_run([*args, "--", os.fspath(db)], allowed=(0, ALERT_STATUS)).stdout)

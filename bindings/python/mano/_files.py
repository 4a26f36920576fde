"""The native readers (mano.read, read_labels, read_manifest, read_calibration): files read as the
``mano`` command reads them, with its limits and messages; and the package's one writer of files
(write_file), which writes them as the CLI does."""
from __future__ import annotations

import os
import tempfile
import warnings
from typing import Iterable, Optional, Sequence, Union

import numpy as np

from . import _core
from ._core import InputError
from ._whole import whole

PathLike = Union[str, "os.PathLike[str]"]


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
    array, notes = _core.read_matrix(os.fspath(path), key or "", shape,
                                     "" if label_column is None else str(label_column), header)
    for note in notes:  # a CSV's columns that are not classes: left out, or its labels
        warnings.warn(note, stacklevel=2)
    return array


def read_labels(path: PathLike, *, key: Optional[str] = None, label_column: Union[None, str, int] = None,
                header: Optional[bool] = None, rows: Optional[int] = None) -> np.ndarray:
    """Integer class labels from a file (int64); ``rows``: how many the caller needs."""
    if rows is not None:
        rows = whole(rows, "rows")
    return _core.read_labels(os.fspath(path), key or "", "" if label_column is None else str(label_column), header, rows)


def read_manifest(path: PathLike, *, allow_outside_paths: bool = False) -> dict:
    """A manifest (``mano eval``'s), its paths resolved against its folder."""
    return _core.read_manifest(os.fspath(path), bool(allow_outside_paths))


def read_calibration(path: PathLike) -> dict:
    """A calibration file written by ``mano calibrate`` (or saved from :func:`calibrate`)."""
    return _core.read_calibration(os.fspath(path))


def write_file(path: PathLike, data: bytes, inputs: Iterable[str], what: str) -> None:
    """Writes ``data`` to ``path`` as the CLI writes its outputs: a temporary file beside it, on
    disk, then renamed over it, so a reader or a crash sees the old file or the new one; never over
    one of ``inputs`` (``what`` names the argument) or a monitoring history."""
    target = os.fspath(path)
    if os.path.exists(target):
        for source in inputs:
            try:
                same = os.path.samefile(target, source)
            except OSError:
                same = False
            if same:
                raise InputError(f"{what} {target}: this is an input file ({source}); write the output to another path")
        try:
            with open(target, "rb") as f:
                head = f.read(16)
        except OSError:
            head = b""
        if head == b"SQLite format 3\0":
            raise InputError(f"{target}: an SQLite database (a mano monitoring history?) is there; mano writes no other "
                             "output over one: choose another path")
    folder = os.path.dirname(target) or "."
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.tmp-", dir=folder)
    except OSError as e:
        raise InputError(f"{target}: cannot write the file (creating a temporary file in its folder: {e.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if hasattr(os, "fchmod"):  # mkstemp makes the file 0600; give it what a plain create would
                mask = os.umask(0)
                os.umask(mask)
                os.fchmod(f.fileno(), 0o666 & ~mask)
            os.fsync(f.fileno())
        os.replace(temporary, target)
    except OSError as e:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise InputError(f"{target}: cannot write the file ({e.strerror})") from None
    try:  # the rename itself on disk, where the folder can be opened (not on Windows)
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)

"""The native readers (mano.read, read_labels, read_manifest, read_calibration): files read as the
``mano`` command reads them, with its limits and messages."""
from __future__ import annotations

import json
import os
from typing import Iterable, Optional, Sequence, Union

import numpy as np

from . import _core
from ._core import InputError

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

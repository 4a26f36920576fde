"""Scoring on a Dask cluster: each partition is scored where it lives into an accumulator state,
the states merge in a tree, and the result is that of the whole set, equal to single-process
:func:`mano.score` (to rounding: the sums are added in another order).

    from dask.distributed import Client
    import dask.array as da, mano.dask
    client = Client()                                   # or Client("scheduler:8786")
    logits = da.from_npy_stack("logits/")               # N x K, chunked along rows
    result = mano.dask.score(logits)                    # the dict mano.score returns
    mano.predict(calibration, result)                   # the whole set's estimate

Inputs: a 2-D ``dask.array`` (chunked along rows; chunks along classes are joined), a list of
logit files (one partition per file, read by the native reader on the worker that runs it), a
``dask.dataframe`` column whose elements are the K logits of a row, or a dask DataFrame of K
numeric columns. Partitions may be uneven or empty.

Exactness: every partition's state names its rows as a shard (by their content and the
partition's place, so partitions of identical rows are distinct shards), and a merge refuses a
shard it already holds, so a partition that is recomputed (a lost worker: Dask reruns its tasks)
is never counted twice; a partition whose tasks keep failing raises :class:`PartitionError`
rather than giving a partial result.
"""
from __future__ import annotations

import os
import warnings
from typing import Any, Iterable, List, Optional, Union

import numpy as np

import mano
from . import _core
from ._core import InputError
from ._scoring import _input_name, _prepare
from ._whole import whole

__all__ = ["score", "accumulate", "predict", "PartitionError"]


class PartitionError(RuntimeError):
    """A partition could not be scored (its worker died too often, or its task failed): no result."""


# --- the tasks (module-level functions: workers import mano.dask to run them) ------------------

# A partition's state names its rows as a shard by their content and the partition's place
# (`partition`, its index in the collection): a recomputed partition is the shard already held,
# and two partitions of identical rows (constant outputs, duplicated chunks) are two shards.
def _state_of(acc: Any, partition: int) -> str:
    acc.set_shard_label(f"partition {partition}")
    return acc.state()


def _accumulator(k: int, options: dict) -> "_core.Accumulator":
    """An accumulator of rows of k values (a binary input's one column: 2 classes)."""
    return _core.Accumulator(_core.classes_of(options.get("input", "logits"), k), options)


def _state_of_block(block: Any, k: int, scan_options: dict, first_row: int, labels: Any = None,
                    partition: int = 0) -> Optional[dict]:
    """One partition's accumulator state (a dict); None for an empty partition."""
    block = np.asarray(block)
    if block.ndim == 2 and block.shape[0] == 0:
        return None
    acc = _accumulator(k, scan_options)
    acc.push(block, None if labels is None else np.asarray(labels), None, None, first_row)
    return _state_of(acc, partition)


def _state_of_file(path: str, scan_options: dict, labels: Optional[str], key: str, partition: int) -> Optional[dict]:
    acc, _ = _core.scan_file(path, scan_options, key, None, "", None, labels or "", 1)  # notes: _inputs warned of them
    return None if acc.rows == 0 else _state_of(acc, partition)


def _state_of_frame(part: Any, k: int, scan_options: dict, rows_in_elements: bool, partition: int) -> Optional[dict]:
    """A dask.dataframe partition: a column whose elements are K-element rows, or K numeric columns."""
    if rows_in_elements:
        values = list(part)
        if not values:
            return None
        block = np.stack([np.asarray(v) for v in values])
    else:
        block = part.to_numpy()
    if block.ndim != 2 or block.shape[1] != k:
        raise InputError(f"a partition's rows have shape {block.shape[1:]} where {k} logits per row were expected")
    return _state_of_block(block, k, scan_options, 0, None, partition)


def _merge_states(*states: Optional[dict]) -> Optional[dict]:
    """The merge of partition states, each as a shard of its own (a shard seen twice is refused)."""
    present = [s for s in states if s is not None]
    if not present:
        return None
    acc = _core.Accumulator.from_state(present[0])
    for s in present[1:]:
        acc.merge(_core.Accumulator.from_state(s), True)
    return acc.state()


# --- building and running the graph -----------------------------------------------------------

def _tree(states: List[Any], split_every: int) -> Any:
    from dask import delayed

    merge = delayed(_merge_states, pure=False)
    level = list(states)
    while len(level) > 1:
        level = [merge(*level[i:i + split_every]) for i in range(0, len(level), split_every)]
    return level[0] if level else delayed(lambda: None)()


def _compute(graph: Any, client: Any) -> Optional[dict]:
    try:
        if client is not None:
            return client.compute(graph).result()
        return graph.compute()
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - name the Dask failure, never return part of the sum
        name = type(e).__name__
        if name == "KilledWorker":
            raise PartitionError(f"a partition's worker died too often to finish it ({e}); no result was computed "
                                 "(raise distributed.scheduler.allowed-failures, or give workers more memory)") from e
        raise


def _class_columns(data: Any) -> Any:
    """A dask DataFrame's class columns: ids, pandas' index and a label column left out, each said
    in a warning, and an index under another name refused (from the first rows), as mano.score
    does for a pandas DataFrame (native/io/csv_columns.hpp)."""
    names = [str(c) for c in data.columns]
    label, dropped, notes = _core.table_columns("logits", names)
    left_out = set(dropped) | ({label} if label is not None else set())
    data = data.iloc[:, [j for j in range(len(names)) if j not in left_out]] if left_out else data
    first = np.asarray(data.head(_core.csv_index_rows, npartitions=-1).to_numpy())
    if first.dtype.kind in "fiub":  # other columns are refused as the partitions are scored
        _core.check_index_column("logits", names, first.astype(np.float64).reshape(-1, len(data.columns)))
    for note in notes:
        warnings.warn(note, stacklevel=5)
    return data


def _inputs(data: Any, labels: Any, key: Optional[str], column: Optional[str]):
    """(kind, rows, k, partitions) with partitions as the tasks' arguments."""
    import dask.array as da

    if isinstance(data, (list, tuple)) and all(isinstance(p, (str, os.PathLike)) for p in data):
        if not data:
            raise InputError("files: the list is empty")
        paths = [os.fspath(p) for p in data]
        shapes = [_core.matrix_shape(p, key or "", None, "", None) for p in paths]
        for note in (n for _, _, notes in shapes for n in notes):  # a CSV's columns that are not classes
            warnings.warn(note, stacklevel=4)
        ks = {c for _, c, _ in shapes}
        if len(ks) != 1:
            detail = ", ".join(f"{p}: {c}" for p, (_, c, _) in zip(paths, shapes))
            raise InputError(f"files: the files have different class counts ({detail})")
        if labels is not None:
            if not (isinstance(labels, (list, tuple)) and len(labels) == len(paths)):
                raise InputError(f"labels: give one label file per logits file ({len(paths)})")
            labels = [os.fspath(p) for p in labels]
        return "files", sum(r for r, _, _ in shapes), ks.pop(), list(zip(paths, labels or [None] * len(paths)))
    if isinstance(data, da.Array):
        if data.ndim != 2:
            raise InputError(f"logits: expected a 2-D dask array (rows x classes), got {data.ndim} dimensions")
        if data.dtype.kind != "f" or data.dtype.itemsize not in (2, 4, 8):
            raise InputError(f"logits: dtype {data.dtype} is not one mano reads (float16, float32 or float64)")
        if any(np.isnan(c) for c in data.chunks[0]):
            data = data.compute_chunk_sizes()  # e.g. after boolean indexing: the row offsets are needed
        if len(data.chunks[1]) > 1:
            data = data.rechunk({1: -1})
        blocks = data.to_delayed().ravel().tolist()
        firsts = np.concatenate([[0], np.cumsum(data.chunks[0])[:-1]]).astype(int).tolist()
        lab_blocks: List[Any] = [None] * len(blocks)
        if labels is not None:
            if not isinstance(labels, da.Array):
                labels = da.from_array(np.asarray(labels), chunks=(data.chunks[0],))
            if labels.shape[0] != data.shape[0]:
                raise InputError(f"labels: {labels.shape[0]} labels for {data.shape[0]} rows")
            labels = labels.rechunk((data.chunks[0],) + labels.chunks[1:])
            lab_blocks = labels.to_delayed().ravel().tolist()
        return "array", int(data.shape[0]), int(data.shape[1]), list(zip(blocks, firsts, lab_blocks))
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - dask.dataframe needs pandas
        dd = None
    if dd is not None and isinstance(data, (dd.DataFrame, dd.Series)):
        if labels is not None:
            raise InputError("labels: with a dask.dataframe, score the logits alone (or give a dask array)")
        if isinstance(data, dd.DataFrame) and column is not None:
            data = data[column]
        if isinstance(data, dd.Series):  # a column whose elements are the K logits of a row
            first = data.head(1, npartitions=-1)
            if len(first) == 0:
                raise InputError("logits: the dataframe column is empty")
            k, rows_in_elements = int(np.asarray(first.iloc[0]).shape[0]), True
        else:  # K numeric columns, their names read as a CSV header's (mano/_scoring.py, _frame)
            data, rows_in_elements = _class_columns(data), False
            k = len(data.columns)
        rows = int(data.shape[0].compute()) if isinstance(data, dd.DataFrame) else int(data.size.compute())
        return "frame", rows, k, [(part, rows_in_elements) for part in data.to_delayed()]
    raise InputError("data must be a 2-D dask.array, a list of logit files, or a dask.dataframe column of logits "
                     f"(got {type(data).__name__})")


def _merged(kind: str, k: int, parts: list, scan_options: dict, key: Optional[str], client: Any,
            split_every: int) -> Optional[dict]:
    """The state of every partition scored with `scan_options` and merged in a tree (None: no rows).
    The tasks are impure to Dask: a file's path says nothing of its content, so no call reuses a
    result an earlier one left on the cluster."""
    from dask import delayed

    split_every = whole(split_every, "split_every", 2)
    if kind == "files":
        states = [delayed(_state_of_file, pure=False)(p, scan_options, lab, key or "", i)
                  for i, (p, lab) in enumerate(parts)]
    elif kind == "array":
        states = [delayed(_state_of_block, pure=False)(b, k, scan_options, first, lab, i)
                  for i, (b, first, lab) in enumerate(parts)]
    else:
        states = [delayed(_state_of_frame, pure=False)(p, k, scan_options, in_elements, i)
                  for i, (p, in_elements) in enumerate(parts)]
    return _compute(_tree(states, split_every), client)


def accumulate(data: Any, methods: Union[None, str, Iterable[str]] = None, *, client: Any = None, labels: Any = None,
               column: Optional[str] = None, key: Optional[str] = None, split_every: int = 8,
               **options: Any) -> "mano.Accumulator":
    """The merged accumulator of every partition (see the module's help for ``data``); options as
    :func:`mano.score` takes them (source= is fitted once, here). ``client``: a
    ``dask.distributed.Client`` (default: Dask's current scheduler)."""
    kind, rows, k, parts = _inputs(data, labels, key, column)
    # the methods of the whole set (mano.score's defaults for N x K), resolved once for every partition
    scan_options = _core.resolve_options(_prepare(methods, **options), rows, k, False, False)
    final = _merged(kind, k, parts, scan_options, key, client, split_every)
    if final is None:
        return mano.Accumulator._wrap(_accumulator(k, scan_options))
    return mano.Accumulator._wrap(_core.Accumulator.from_state(final))


def score(data: Any, methods: Union[None, str, Iterable[str]] = None, *, client: Any = None, labels: Any = None,
          column: Optional[str] = None, key: Optional[str] = None, split_every: int = 8, **options: Any) -> dict:
    """:func:`mano.score` of the whole set, computed partition by partition on Dask."""
    return accumulate(data, methods, client=client, labels=labels, column=column, key=key,
                      split_every=split_every, **options).result()


def predict(calibration: Any, data: Any, *, client: Any = None, labels: Any = None, column: Optional[str] = None,
            key: Optional[str] = None, level: float = 0.9, split_every: int = 8, input: Optional[str] = None) -> dict:
    """:func:`mano.predict` of the whole set: scored on Dask with the calibration's options
    (``input``: the calibration's input kind, as :func:`mano.predict` takes it)."""
    cal = mano.read_calibration(calibration) if isinstance(calibration, (str, os.PathLike)) else dict(calibration)
    kind, rows, k, parts = _inputs(data, labels, key, column)
    # the calibration's options for the whole set's size (checked, K included, before any work)
    scan_options = _core.scoring_options(cal, rows, k, _input_name(input))["options"]
    final = _merged(kind, k, parts, scan_options, key, client, split_every)
    acc = _accumulator(k, scan_options) if final is None else _core.Accumulator.from_state(final)
    return mano.predict(cal, acc.result(), level=level)

# Type stubs of the mano package (bindings/python/mano/__init__.py).
import os
from typing import Any, Iterable, Literal, Mapping, Optional, Sequence, Union

import matplotlib.figure
import numpy as np
import numpy.typing as npt
import pandas

__version__: str

PathLike = Union[str, os.PathLike[str]]
ArrayLike = npt.ArrayLike
Methods = Union[None, str, Iterable[str]]
Normalization = Literal["softrun", "softmax", "taylor"]
Source = Union[tuple[Union[ArrayLike, PathLike], Union[ArrayLike, PathLike]], Mapping[str, Any]]
# what the values are (src/mano/scan/input_kind.hpp): logits, a softmax, or a binary classifier's one column
InputKind = Literal["logits", "probabilities", "binary-logit", "binary-probability"]

class InputError(ValueError):
    """Bad input (logits, labels, options, files, states): the message says what and where."""

# The JSON shapes (a result, a calibration, a prediction), generated from their one description
# (src/mano/schema/shapes.schema.json) by bindings/make_types.py.
from mano._shapes import AuditSample, Calibration, ManoMethodResult, Prediction, Result
from mano._shapes import AccuracyResult, MethodInfo, ScoreResult
from mano import monitor as monitor

MethodResult = Union[ManoMethodResult, ScoreResult, AccuracyResult]

def score(logits: Union[ArrayLike, PathLike], methods: Methods = None, *, labels: Union[None, ArrayLike, PathLike] = None,
          second: Union[None, ArrayLike, PathLike] = None, features: Union[None, ArrayLike, PathLike] = None,
          source: Optional[Source] = None, source_features: Union[None, ArrayLike, PathLike] = None,
          p: Optional[float] = None, eta: Optional[float] = None, taylor_order: Optional[int] = None,
          normalization: Optional[Normalization] = None, batch_size: Optional[int] = None,
          criterion: Optional[float] = None, temperature: Union[None, float, Literal["fit"]] = None,
          label_marginal: Union[None, Literal["uniform", "source"], Sequence[float]] = None,
          architecture: Optional[str] = None, threads: int = 0, key: Optional[str] = None,
          correctness_histogram: bool = False, input: Optional[InputKind] = None) -> Result: ...

class Accumulator:
    def __init__(self, k: int, methods: Methods = None, *, source: Optional[Source] = None,
                 source_features: Union[None, ArrayLike, PathLike] = None, p: Optional[float] = None,
                 eta: Optional[float] = None, taylor_order: Optional[int] = None,
                 normalization: Optional[Normalization] = None, batch_size: Optional[int] = None,
                 criterion: Optional[float] = None, temperature: Union[None, float, Literal["fit"]] = None,
                 label_marginal: Union[None, Literal["uniform", "source"], Sequence[float]] = None,
                 architecture: Optional[str] = None, input: Optional[InputKind] = None) -> None: ...
    @classmethod
    def from_state(cls, state: Union[Mapping[str, Any], str, bytes, PathLike]) -> Accumulator: ...
    def push(self, logits: ArrayLike, labels: Optional[ArrayLike] = None, second: Optional[ArrayLike] = None,
             features: Optional[ArrayLike] = None) -> Accumulator: ...
    def merge(self, other: Accumulator) -> Accumulator: ...
    def result(self) -> Result: ...
    def state(self) -> dict[str, Any]: ...
    @property
    def options(self) -> dict[str, Any]: ...
    @property
    def rows(self) -> int: ...
    @property
    def k(self) -> int: ...
    @property
    def architecture(self) -> str: ...
    @property
    def shards(self) -> list[str]: ...
    def copy(self) -> Accumulator: ...
    def __copy__(self) -> Accumulator: ...
    def __deepcopy__(self, memo: dict[int, Any]) -> Accumulator: ...

Sets = Union[PathLike, Mapping[str, Any], Iterable[Mapping[str, Any]]]
# labeled audit rows: mano.audit's file with a column label, {"rows": [...], "labels": [...]} or (rows, labels)
AuditGiven = Union[PathLike, Mapping[str, ArrayLike], tuple[ArrayLike, ArrayLike]]

def evaluate(sets: Sets, methods: Methods = None, *, groups: Optional[Sequence[str]] = None,
             normalization: Optional[Literal["family", "softrun", "softmax", "taylor"]] = "family",
             taylor_orders: Sequence[int] = (2,), source: Optional[Source] = None, source_features: Union[None, ArrayLike, PathLike] = None,
             p: Optional[float] = None, eta: Optional[float] = None, taylor_order: Optional[int] = None,
             batch_size: Optional[int] = None, criterion: Optional[float] = None,
             temperature: Union[None, float, Literal["fit"]] = None,
             label_marginal: Union[None, Literal["uniform", "source"], Sequence[float]] = None,
             architecture: Optional[str] = None, threads: int = 0, allow_outside_paths: bool = False,
             input: Optional[InputKind] = None) -> dict[str, Any]: ...
def calibrate(sets: Sets, methods: Methods = None, *, groups: Optional[Sequence[str]] = None,
              normalization: Optional[Literal["family", "softrun", "softmax", "taylor"]] = "family",
              taylor_orders: Sequence[int] = (2,), source: Optional[Source] = None, source_features: Union[None, ArrayLike, PathLike] = None,
              p: Optional[float] = None, eta: Optional[float] = None, taylor_order: Optional[int] = None,
              batch_size: Optional[int] = None, criterion: Optional[float] = None,
              temperature: Union[None, float, Literal["fit"]] = None,
              label_marginal: Union[None, Literal["uniform", "source"], Sequence[float]] = None,
              architecture: Optional[str] = None, threads: int = 0, allow_outside_paths: bool = False,
              label_shift_copies: Optional[int] = None, label_shift_seed: Optional[int] = None,
              notes: Optional[list[str]] = None, input: Optional[InputKind] = None) -> Calibration: ...
def predict(calibration: Union[Mapping[str, Any], PathLike], x: Any, *, level: float = 0.9,
            labels: Union[None, ArrayLike, PathLike] = None, groups: Optional[Sequence[str]] = None, threads: int = 0,
            allow_outside_paths: bool = False, audit: Optional[AuditGiven] = None, input: Optional[InputKind] = None) -> Any: ...
def audit(x: Union[ArrayLike, PathLike, int], budget: int, *, seed: Optional[int] = None,
          path: Optional[PathLike] = None, input: Optional[InputKind] = None) -> AuditSample: ...
def predict_scores(calibration: Union[Mapping[str, Any], PathLike], method: str, scores: Iterable[float], *,
                   level: float = 0.9) -> list[dict[str, Any]]: ...
def methods() -> list[MethodInfo]: ...
def default_methods(k: int, n: int = 0, inputs: Sequence[str] = ()) -> list[str]: ...
def architectures() -> list[str]: ...
def frame(result: Any) -> pandas.DataFrame: ...
def plot(result: Any, kind: Optional[Literal["calibration", "timeline"]] = None, *, sets: Any = None,
         method: Optional[str] = None, level: float = 0.9, ax: Any = None) -> matplotlib.figure.Figure: ...
def read(path: PathLike, *, key: Optional[str] = None, shape: Optional[Sequence[int]] = None,
         label_column: Union[None, str, int] = None, header: Optional[bool] = None) -> np.ndarray: ...
def read_labels(path: PathLike, *, key: Optional[str] = None, label_column: Union[None, str, int] = None,
                header: Optional[bool] = None, rows: Optional[int] = None) -> npt.NDArray[np.int64]: ...
def read_manifest(path: PathLike, *, allow_outside_paths: bool = False) -> dict[str, Any]: ...
def read_calibration(path: PathLike) -> Calibration: ...

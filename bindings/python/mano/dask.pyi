# Type stubs of mano.dask (bindings/python/mano/dask.py).
import os
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from . import Accumulator, Result

class PartitionError(RuntimeError): ...

Data = Any  # a 2-D dask.array, a list of logit file paths, or a dask.dataframe column / frame

def accumulate(data: Data, methods: Union[None, str, Iterable[str]] = None, *, client: Any = None, labels: Any = None,
               column: Optional[str] = None, key: Optional[str] = None, split_every: int = 8,
               **options: Any) -> Accumulator: ...
def score(data: Data, methods: Union[None, str, Iterable[str]] = None, *, client: Any = None, labels: Any = None,
          column: Optional[str] = None, key: Optional[str] = None, split_every: int = 8, **options: Any) -> Result: ...
def predict(calibration: Union[Mapping[str, Any], str, os.PathLike[str]], data: Data, *, client: Any = None,
            labels: Any = None, column: Optional[str] = None, key: Optional[str] = None, level: float = 0.9,
            split_every: int = 8, input: Optional[str] = None) -> dict[str, Any]: ...

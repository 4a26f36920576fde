# Type stubs of mano.monitor (bindings/python/mano/monitor.py).
import os
from typing import Any, Mapping, Optional, Sequence, Union

PathLike = Union[str, os.PathLike[str]]

def add(db: PathLike, files: Union[PathLike, Sequence[PathLike]], *, calibration: Union[PathLike, Mapping[str, Any]], at: Any = None,
        name: Optional[str] = None, chunk_size: Optional[int] = None, threads: Optional[int] = None,
        input: Optional[str] = None) -> dict[str, Any]: ...
def report(db: PathLike, *, reference: Optional[int] = None, reference_until: Any = None, since: Any = None) -> dict[str, Any]: ...

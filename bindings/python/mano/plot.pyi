# Type stubs of mano.plot (bindings/python/mano/plot.py).
from typing import Any, Literal, Optional

import matplotlib.figure

def plot(result: Any, kind: Optional[Literal["calibration", "timeline"]] = None, *, sets: Any = None,
         method: Optional[str] = None, level: float = 0.9, ax: Any = None) -> matplotlib.figure.Figure: ...

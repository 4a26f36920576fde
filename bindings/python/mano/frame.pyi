# Type stubs of mano.frame (bindings/python/mano/frame.py).
from typing import Any, Literal

import pandas

def frame(result: Any) -> pandas.DataFrame: ...
def result_kind(result: Any) -> Literal["score", "evaluate", "calibration", "predict", "predict_sets", "monitor"]: ...

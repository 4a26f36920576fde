"""The one check of a whole-number argument (chunk_size, threads, budget, seed, reference, ...):
Python ints and NumPy integers alike, never a bool, within bounds, and a message that shows the
value as a user would type it (np.int64(1000) is "1000", a number beyond 2**63 only its digits'
count)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ._core import InputError


def _shown(value: Any) -> str:
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        digits = len(str(abs(int(value))))
        if digits > 19:
            return f"a number of {digits} digits"
        return str(int(value))
    text = repr(value)
    return text if len(text) <= 40 else f"a {type(value).__name__}"


def whole(value: Any, what: str, low: int = 0, high: Optional[int] = None, hint: str = "",
          bounds: Optional[str] = None) -> int:
    """``value`` as an int when it is a whole number in [low, high] (high None: below 2**63);
    otherwise mano.InputError "WHAT must be a whole number BOUNDS (got VALUE)", BOUNDS ">= LOW"
    or "from LOW to HIGH" unless given."""
    top = 2**63 - 1 if high is None else high
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not low <= value <= top:
        if bounds is None:
            bounds = f">= {low}" if high is None else f"from {low} to {high}"
        raise InputError(f"{what} must be a whole number {bounds}{hint} (got {_shown(value)})")
    return int(value)

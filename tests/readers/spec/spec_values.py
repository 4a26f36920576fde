"""How the reader fixtures spell numbers in JSON, shared by make_spec.py and
web/test/make_loader_fixtures.py: float values as float64 numbers, with "nan", "inf", "-inf" and
"-0" as strings, because JSON has no spelling for them."""
import numpy as np


def floats(a):
    out = []
    for x in np.asarray(a).astype(np.float64).ravel(order="C"):
        if np.isnan(x):
            out.append("nan")
        elif np.isinf(x):
            out.append("inf" if x > 0 else "-inf")
        elif x == 0 and np.signbit(x):
            out.append("-0")
        else:
            out.append(float(x))
    return out

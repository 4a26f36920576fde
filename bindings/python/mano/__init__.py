"""mano: how accurate is a classifier on data that has no labels?

MaNo (Xie et al., NeurIPS 2024) and the estimators it is compared against, computed from a
model's logits by mano's C++ core, the same one the ``mano`` command and the npm package run.

    import mano
    result = mano.score(logits)            # an N x K array (NumPy, or anything NumPy reads)
    result["methods"]["mano"]["score"]

Results, states and calibrations are the JSON the CLI writes, as Python dicts. Bad input raises
:class:`InputError` (a ``ValueError``) with the CLI's message. ``mano.frame(result)`` gives any
result as a pandas DataFrame (the table a notebook shows for a result) and ``mano.plot(result)``
draws it with matplotlib; neither is imported before it is called. ``mano.audit`` draws rows of a
set to label, and ``mano.predict(..., audit=...)`` turns their labels into the set's accuracy. ``mano.dask`` scores arrays
and files on a Dask cluster, ``mano.torch`` a PyTorch model's outputs over a DataLoader.
"""
from __future__ import annotations

from . import _core
from ._audit import audit
from ._core import InputError
from ._files import read, read_calibration, read_labels, read_manifest
from ._scoring import Accumulator, score
from ._sets import calibrate, evaluate, predict, predict_scores
from . import monitor  # noqa: F401 - light: mano.monitor.add/report after import mano
from .frame import frame
from .plot import plot

__version__: str = _core.version
__all__ = [
    "InputError", "Accumulator", "score", "evaluate", "calibrate", "predict", "predict_scores", "audit", "methods",
    "default_methods", "architectures", "read", "read_labels", "read_manifest", "read_calibration", "frame", "plot", "__version__",
]

# The public objects say they are mano's (repr, pickles and help() name mano.X).
for _public in (Accumulator, score, evaluate, calibrate, predict, predict_scores, audit, read, read_labels, read_manifest,
                read_calibration, frame, plot):
    _public.__module__ = __name__
del _public


def methods() -> list:
    """The estimator table (``mano methods --json``): name, returns, needs, default, cost, summary."""
    return _core.methods()["methods"]


def default_methods(k: int, n: int = 0, inputs: "Sequence[str]" = ()) -> list:
    """The methods computed when none are named, for n rows (0: not known) of k classes."""
    from ._whole import whole

    k, n = whole(k, "k", 1), whole(n, "n")
    return _core.default_methods(k, n, list(inputs))


def architectures() -> list:
    """The kernel architectures this build has that this CPU runs, best first."""
    return list(_core.architectures())


# The namespace holds the API: the names of the modules it was built from go (import mano._sets
# still works), as do the helpers imported above.
del annotations, _audit, _files, _scoring, _sets, _shown, _whole

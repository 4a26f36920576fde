"""pytest setup for the mano Python package's tests (tests/python).

The package is imported from the build tree when it is not installed: $MANO_PYTHONPATH, else
<repo>/build/release/python (where `cmake --build build/release` puts it). Tests that compare
with the CLI find it through $MANO_BIN (default <repo>/build/release/native/mano).
"""
import importlib.util
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

if importlib.util.find_spec("mano") is None:
    _build = os.environ.get("MANO_PYTHONPATH") or str(REPO / "build" / "release" / "python")
    if os.path.isdir(_build):
        sys.path.insert(0, _build)


# The example manifest evaluated and calibrated once per test module (test_frame.py, test_plot.py).


@pytest.fixture(scope="module")
def report():
    import mano
    from api_support import MANIFEST
    return mano.evaluate(MANIFEST, threads=1)


@pytest.fixture(scope="module")
def calibration():
    import mano
    from api_support import MANIFEST
    return mano.calibrate(MANIFEST, threads=1, label_shift_copies=0)  # its lines are fitted again from the sets alone

"""The GIL is released while mano scores: another thread keeps its pace."""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import mano

try:
    import resource
except ImportError:  # not on Windows
    resource = None

from api_support import *  # noqa: F401,F403 (the shared constants, helpers and fixtures)


def test_the_gil_is_released_while_scoring():
    block = random_logits(1000, 100, 13)
    x = np.tile(block, (400, 1))  # 400000 x 100 float32
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        # the counter's own pace while this thread waits without the GIL
        c0, t0 = count[0], time.perf_counter()
        time.sleep(0.15)
        rate = (count[0] - c0) / (time.perf_counter() - t0)
        during = spent = 0.0
        calls = 0
        while spent < 0.5 and calls < 20:
            c0, t0 = count[0], time.perf_counter()
            mano.score(x, methods="mano", threads=1)
            spent += time.perf_counter() - t0
            during += count[0] - c0
            calls += 1
    finally:
        stop.set()
        thread.join()
    assert rate > 0
    # holding the GIL, the counter would run only between calls (a switch interval, 5 ms, each)
    assert during >= 0.25 * rate * spent, (
        f"the other thread advanced {during:.0f} times in {spent:.2f} s of scoring; "
        f"it runs {rate:.0f} times a second when the GIL is free")


# --- bounds and honest intervals (the second adversarial pass) ---------------------------------

def test_accumulator_of_too_many_classes_is_an_input_error():
    with pytest.raises(mano.InputError, match="more than the 1048576 an accumulator takes"):
        mano.Accumulator(2 ** 40, "cot")


def test_predict_checks_the_class_count_before_reading_rows(tmp_path):
    """An 11-class file against a 10-class calibration is refused from its header: the process
    does not grow by the file's 220 MB (it once read the whole file to name K)."""
    import zipfile
    path = tmp_path / "eleven.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, z.open("arr_0.npy", "w", force_zip64=True) as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (5_000_000, 11)})
        block = bytes(4 * 11 * 100_000)
        for _ in range(50):
            f.write(block)
    script = ("import resource, sys, mano\n"
              "cal = mano.calibrate(sys.argv[2])\n"
              "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
              "try:\n    mano.predict(cal, sys.argv[1])\nexcept mano.InputError as e:\n    print(e)\n"
              "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(path), str(EXAMPLE / "manifest.json")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    message, grown_kb = proc.stdout.strip().splitlines()
    assert message == f"{path}: the logits have 11 classes but the calibration was fitted on logits with 10", proc.stderr
    assert int(grown_kb) < 64 * 1024


def test_predict_leaves_out_cot_where_it_would_keep_too_many_rows(tmp_path):
    cal = mano.calibrate(EXAMPLE / "manifest.json")
    assert "cot" in cal["options"]["methods"]
    big = np.zeros((250_000, 10), np.float32)
    with pytest.warns(UserWarning, match="cot left out of this prediction"):
        out = mano.predict(cal, big)
    assert "cot" not in out["methods"] and "mano" in out["methods"]
    small = mano.predict(cal, np.load(EXAMPLE / "blend_0_logits.npy"))
    assert "cot" in small["methods"]


def test_an_interval_outside_zero_one_keeps_its_width():
    """Uniform logits score far below every calibration set: the estimate is clipped to 0 and
    says so, and its 90% interval is not the single point [0, 0]."""
    cal = mano.calibrate(EXAMPLE / "manifest.json", methods="mano")
    out = mano.predict(cal, np.zeros((2000, 10), np.float32))
    est = out["estimate"]
    if cal["methods"]["mano"].get("link") == "probit":
        # the probit line bends toward 0: no clipping, and still no single point
        assert est["accuracy"] < 1e-3 and "out_of_range" not in est and est["interval"][1] - est["interval"][0] > 1e-3
        return
    assert est["accuracy"] == 0.0 and est["out_of_range"] == "below"
    assert est["interval"][0] == 0.0 and est["interval"][1] > 0.05
    [huge] = mano.predict_scores(cal, "mano", [1e308])
    assert huge["interval"] == [0.0, 1.0] and huge["out_of_range"] == "above"
    [inside] = mano.predict_scores(cal, "mano", [cal["methods"]["mano"]["score_mean"]])
    assert "out_of_range" not in inside

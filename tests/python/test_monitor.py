"""mano.monitor (bindings/python/mano/monitor.py, docs/monitor.md): add and report over one
history, in this process (no mano command: one test runs them with none on PATH and no MANO_BIN);
each point's estimate equals mano.predict on the same file to 1e-9, the alert line is NumPy's mean
- 3 sd of the reference period, the degraded batch alerts, a history written by mano.monitor is
what the CLI reports, and a bad history or option raises mano.InputError naming it."""
import datetime
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mano
import mano.monitor
from api_support import EXAMPLE, MANIFEST, MANO_BIN, needs_cli


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    path = tmp_path_factory.mktemp("monitor") / "cal.json"
    path.write_text(json.dumps(mano.calibrate(str(MANIFEST))))
    return path


def test_add_report_against_predict(tmp_path, calibration):
    history = tmp_path / "history.db"
    reference = [EXAMPLE / f"contrast_{i}_logits.npy" for i in (0, 1, 2)]
    mano.monitor.add(history, reference, calibration=calibration, at=datetime.date(2026, 11, 1))
    # a report after the first add (a cron job's first run): not enough points yet, the line known
    first = mano.monitor.report(history)
    assert first["waiting"] is True and first["alerts"] == [] and first["threshold"]["reference"] == 3
    later = EXAMPLE / "blend_5_logits.npy"
    mano.monitor.add(history, later, calibration=str(calibration), at=datetime.datetime(2026, 11, 2, 6, 30), name="day 2")
    timeline = mano.monitor.report(history)
    points = timeline["points"]
    assert [p["time"] for p in points] == ["2026-11-01T00:00:00Z"] * 3 + ["2026-11-02T06:30:00Z"]
    assert [p["name"] for p in points] == [str(f) for f in reference] + ["day 2"]
    cal = json.loads(calibration.read_text())
    for p, f in zip(points, reference + [later]):
        want = mano.predict(cal, np.load(f))
        got = p["estimate"]
        assert got["method"] == want["estimate"]["method"]
        assert abs(got["accuracy"] - want["estimate"]["accuracy"]) <= 1e-9
        assert np.allclose(got["interval"], want["estimate"]["interval"], rtol=0, atol=1e-9)
        for m, v in want["methods"].items():
            assert abs(p["methods"][m]["accuracy"] - v["accuracy"]) <= 1e-9
    ref = np.array([p["estimate"]["accuracy"] for p in points[:3]])
    line = ref.mean() - 3 * ref.std(ddof=1)
    assert abs(timeline["threshold"]["value"] - line) < 1e-12
    assert timeline["latest"]["alert"] == (points[3]["estimate"]["accuracy"] < line)
    assert timeline["alerts"] == ([3] if timeline["latest"]["alert"] else [])
    # other reference periods and --since, as the CLI takes them
    assert mano.monitor.report(history, reference=2)["threshold"]["reference"] == 2
    assert mano.monitor.report(history, reference_until="2026-11-01T23:59:59Z")["threshold"]["reference"] == 3
    assert [p["index"] for p in mano.monitor.report(history, since="2026-11-02")["points"]] == [3]
    # the report as a table (mano.frame): one row per point, the alert line in attrs
    pytest.importorskip("pandas")
    table = mano.frame(timeline)
    assert list(table["name"]) == [p["name"] for p in points] and list(table["alert"]) == [p["alert"] for p in points]
    assert np.array_equal(table["estimate"].to_numpy(), [p["estimate"]["accuracy"] for p in points])
    assert table.attrs["threshold"] == timeline["threshold"]["value"]


def test_chunks(tmp_path, calibration):
    history = tmp_path / "chunks.db"
    mano.monitor.add(history, EXAMPLE / "blend_0_logits.npy", calibration=calibration, chunk_size=200, threads=1)
    rows = np.load(EXAMPLE / "blend_0_logits.npy")
    timeline = mano.monitor.report(history, reference=2)
    cal = json.loads(calibration.read_text())
    for p in timeline["points"]:
        want = mano.predict(cal, rows[p["first_row"]:p["first_row"] + p["n"]])
        assert abs(p["estimate"]["accuracy"] - want["estimate"]["accuracy"]) <= 1e-9


def test_bad_input(tmp_path, calibration):
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    with pytest.raises(mano.InputError, match="notes.txt.*not a mano history"):
        mano.monitor.report(text)
    with pytest.raises(mano.InputError, match="notes.txt.*not a mano history"):
        mano.monitor.add(text, EXAMPLE / "blend_0_logits.npy", calibration=calibration)
    with pytest.raises(mano.InputError, match="^at 'someday': not an ISO 8601"):
        mano.monitor.add(tmp_path / "h.db", EXAMPLE / "blend_0_logits.npy", calibration=calibration, at="someday")
    with pytest.raises(mano.InputError, match="chunk_size"):
        mano.monitor.add(tmp_path / "h.db", EXAMPLE / "blend_0_logits.npy", calibration=calibration, chunk_size=0)
    with pytest.raises(mano.InputError, match="reference"):
        mano.monitor.report(tmp_path / "h.db", reference=2, reference_until="2026-01-01")
    with pytest.raises(mano.InputError, match="^since '2026-13-01': a field is out of range"):
        mano.monitor.report(text, since="2026-13-01")
    assert not (tmp_path / "h.db").exists()


def test_no_command_needed(tmp_path, calibration):
    """add and report in a process whose PATH has no mano and which has no MANO_BIN."""
    script = f"""
import mano.monitor, shutil
assert shutil.which("mano") is None
added = mano.monitor.add({str(tmp_path / "h.db")!r}, [{str(EXAMPLE / "contrast_0_logits.npy")!r},
                         {str(EXAMPLE / "contrast_1_logits.npy")!r}], calibration={str(calibration)!r}, at="2026-11-01")
mano.monitor.add({str(tmp_path / "h.db")!r}, {str(EXAMPLE / "blend_5_logits.npy")!r}, calibration={str(calibration)!r},
                 at="2026-11-02")
timeline = mano.monitor.report({str(tmp_path / "h.db")!r})
print(added["add"], len(added["names"]), len(timeline["points"]))
"""
    env = {k: v for k, v in os.environ.items() if k not in ("MANO_BIN", "PATH")}
    env["PATH"] = str(tmp_path)  # nothing on it
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "2", "3"]


@needs_cli
def test_the_cli_reads_what_python_wrote(tmp_path, calibration):
    history = tmp_path / "h.db"
    mano.monitor.add(history, [EXAMPLE / f"contrast_{i}_logits.npy" for i in (0, 1)], calibration=calibration, at="2026-11-01")
    mano.monitor.add(history, EXAMPLE / "blend_5_logits.npy", calibration=calibration, at="2026-11-02")
    proc = subprocess.run([str(MANO_BIN), "monitor", "report", "--json", str(history)], capture_output=True, text=True)
    assert proc.returncode in (0, 3), proc.stderr
    assert json.loads(proc.stdout) == mano.monitor.report(history)


def test_stubs():
    from test_stubs import public, runtime_parameters, stub_functions, stub_parameters
    stubs = stub_functions(mano.monitor)
    for name, obj in public(mano.monitor):
        assert stub_parameters(stubs[name]) == runtime_parameters(obj), name
    assert sorted(dict(public(mano.monitor))) == ["add", "report"]


def test_add_takes_the_calibration_dict_as_predict_does(tmp_path, calibration):
    """mano.monitor.add(..., calibration=mano.calibrate(...)) as mano.predict takes it: the same
    point as from the file."""
    cal = json.loads(calibration.read_text())
    batch = EXAMPLE / "blend_2_logits.npy"
    mano.monitor.add(tmp_path / "from_file.db", batch, calibration=calibration, at="2026-11-01")
    mano.monitor.add(tmp_path / "from_dict.db", batch, calibration=cal, at="2026-11-01")
    file_point, = mano.monitor.report(tmp_path / "from_file.db")["points"]
    dict_point, = mano.monitor.report(tmp_path / "from_dict.db")["points"]
    assert dict_point["estimate"] == file_point["estimate"]
    assert dict_point["estimate"]["accuracy"] == pytest.approx(mano.predict(cal, batch)["estimate"]["accuracy"], rel=1e-9)

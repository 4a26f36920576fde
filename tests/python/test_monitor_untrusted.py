"""mano.monitor over a history that is untrusted input (docs/monitor.md, "What a history may hold"),
as the CLI's tests/cli/test_monitor_untrusted.py: a planted view or trigger is refused with
mano.InputError before anything runs, a damaged point is named, a Latin-1 name keeps the report
whole, times sort as times for the years 1 to 9999, an empty reference period is refused, a
history on read-only media is reported, a FIFO is refused, a point stores no per-row state, and
a value over its column's limit or a key that mano does not write is refused before the value is
parsed (src/mano/schema/history_limits.json)."""
import json
import os
import pathlib
import resource
import shutil
import sqlite3
import subprocess
import sys

import pytest

import mano
import mano.monitor
from api_support import EXAMPLE, MANIFEST

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
import history_edit  # noqa: E402
from history_edit import RECURSIVE  # noqa: E402



@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    path = tmp_path_factory.mktemp("untrusted") / "cal.json"
    path.write_text(json.dumps(mano.calibrate(str(MANIFEST))))
    return path


@pytest.fixture(scope="module")
def history(tmp_path_factory, calibration):
    path = tmp_path_factory.mktemp("untrusted") / "history.db"
    mano.monitor.add(path, [EXAMPLE / f"contrast_{i}_logits.npy" for i in (0, 1, 2)], calibration=calibration, at="2026-11-01")
    mano.monitor.add(path, EXAMPLE / "blend_5_logits.npy", calibration=calibration, at="2026-11-02")
    return path


def edited(tmp_path, good, *statements):
    return history_edit.edited(tmp_path, good, "edited.db", *statements)


def test_empty_reference(history):
    with pytest.raises(mano.InputError, match="reference period .* holds no point: the first is at 2026-11-01T00:00:00Z"):
        mano.monitor.report(history, reference_until="2025-01-01")


def test_latin1_name(tmp_path, calibration):
    path = tmp_path / "h.db"
    latin = os.fsencode(str(tmp_path)) + b"/d\xe9j\xe0.npy"
    shutil.copy(EXAMPLE / "blend_5_logits.npy", os.fsdecode(latin))
    mano.monitor.add(path, [EXAMPLE / f"contrast_{i}_logits.npy" for i in (0, 1)], calibration=calibration, at="2026-11-01")
    mano.monitor.add(path, os.fsdecode(latin), calibration=calibration, at="2026-11-02")
    point = mano.monitor.report(path)["points"][2]
    assert bytes.fromhex(point["file_bytes"]) == latin and bytes.fromhex(point["name_bytes"]) == latin
    assert point["name"].endswith("/d\ufffdj\ufffd.npy")


@pytest.mark.parametrize("value", ["0.5", None, 1e300])
def test_damaged_point(tmp_path, history, value):
    with sqlite3.connect(history) as db:
        pid, text = db.execute("SELECT id, prediction FROM points ORDER BY time, id LIMIT 1 OFFSET 3").fetchone()
    db.close()
    prediction = json.loads(text)
    prediction["estimate"]["accuracy"] = value
    path = edited(tmp_path, history, f"UPDATE points SET prediction = '{json.dumps(prediction)}' WHERE id = {pid}")
    with pytest.raises(mano.InputError, match=f"edited.db: the history is damaged \\(point {pid}: its estimated accuracy"):
        mano.monitor.report(path)


@pytest.mark.parametrize("statements", [
    [f"CREATE VIEW forever AS {RECURSIVE}"],
    ["ALTER TABLE points RENAME TO kept", f"CREATE VIEW points AS SELECT * FROM kept, ({RECURSIVE})"],
    ["CREATE TRIGGER eat AFTER INSERT ON points BEGIN DELETE FROM points WHERE id < NEW.id; END"],
], ids=["view", "points_view", "trigger"])
def test_planted_schema(tmp_path, history, calibration, statements):
    path = edited(tmp_path, history, *statements)
    before = path.read_bytes()
    with pytest.raises(mano.InputError, match="edited.db: refused: its schema has (a|another definition of the) .* that mano does not write"):
        mano.monitor.report(path)
    with pytest.raises(mano.InputError, match="edited.db: refused: its schema has"):
        mano.monitor.add(path, EXAMPLE / "blend_5_logits.npy", calibration=calibration, at="2026-11-03")
    assert path.read_bytes() == before


def test_times(tmp_path, calibration):
    path = tmp_path / "h.db"
    with pytest.raises(mano.InputError, match="^at '9999-12-31T23:30-01:00': in UTC it falls outside the years 1 to 9999"):
        mano.monitor.add(path, EXAMPLE / "blend_5_logits.npy", calibration=calibration, at="9999-12-31T23:30-01:00")
    for at in ("2026-11-01", "9999-12-31T22:30-01:00", "0100-02-28T23:00-02:00"):
        mano.monitor.add(path, EXAMPLE / "blend_5_logits.npy", calibration=calibration, at=at)
    times = [p["time"] for p in mano.monitor.report(path, reference=2)["points"]]
    assert times == ["0100-03-01T01:00:00Z", "2026-11-01T00:00:00Z", "9999-12-31T23:30:00Z"]


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0,
                    reason="needs root and unshare (util-linux) to mount a read-only file system")
def test_read_only_media(tmp_path, history, calibration):
    source = tmp_path / "source.db"
    shutil.copy(history, source)
    expected = mano.monitor.report(source)
    keep = sqlite3.connect(source)  # the add's log stays beside the file
    keep.execute("SELECT count(*) FROM points").fetchone()
    mano.monitor.add(source, EXAMPLE / "blend_5_logits.npy", calibration=calibration, at="2026-11-03")
    media = tmp_path / "media"
    media.mkdir()
    shutil.copy(source, media / "h.db")
    shutil.copy(f"{source}-wal", media / "h.db-wal")
    keep.close()
    script = ("import json, mano.monitor\n"
              f"print(json.dumps(mano.monitor.report({str(media / 'h.db')!r})['points']))\n")
    shell = (f'mount --bind "{media}" "{media}" && mount -o remount,bind,ro "{media}" && '
             f'"{sys.executable}" -c "$0"')
    proc = subprocess.run(["unshare", "-m", "sh", "-c", shell, script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == expected["points"]


def test_fifo(tmp_path, calibration):
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    with pytest.raises(mano.InputError, match="fifo.db: not a regular file \\(a FIFO\\)"):
        mano.monitor.report(fifo)
    with pytest.raises(mano.InputError, match="fifo.db: not a regular file \\(a FIFO\\)"):
        mano.monitor.add(fifo, EXAMPLE / "blend_5_logits.npy", calibration=calibration)


def test_no_row_state(history):
    keeps_rows = {m["name"] for m in mano.methods() if m["cost"] == "keeps_rows"}
    with sqlite3.connect(history) as db:
        states = [json.loads(s) for (s,) in db.execute("SELECT state FROM points")]
    db.close()
    assert keeps_rows and all(not keeps_rows & set(s["methods"]) for s in states)
    assert all(not keeps_rows & set(s["options"]["methods"]) for s in states)


def limits():
    return json.loads((pathlib.Path(__file__).resolve().parents[2] / "src/mano/schema/history_limits.json").read_text())


def last_point(history):
    with sqlite3.connect(history) as db:
        pid, text = db.execute("SELECT id, prediction FROM points ORDER BY id DESC LIMIT 1").fetchone()
    db.close()
    return pid, json.loads(text)


def test_huge_prediction(tmp_path, history):
    """Issue 50, finding 4: a point whose prediction carries a 24 MB extra array is refused naming the
    point and the limit, before it is parsed (before: 450 MB more of this process's memory)."""
    path = tmp_path / "huge.db"
    shutil.copy(history, path)
    pid, prediction = last_point(history)
    # made in a child, so that this process's peak memory stays what the report takes
    script = ("import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\n"
              "db.execute('UPDATE points SET prediction = ? WHERE id = ?', "
              "('{\"extra\":[' + '0,' * 11999999 + '0],' + sys.argv[3][1:], int(sys.argv[2])))\ndb.commit()\n")
    subprocess.run([sys.executable, "-c", script, str(path), str(pid), json.dumps(prediction)], check=True)
    limit = limits()["columns"]["points"]["prediction"]["max_bytes"]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(mano.InputError, match=f"huge.db: the history is damaged \\(point {pid}: its prediction is \\d+ bytes, "
                                              f"over the {limit}-byte limit of points.prediction"):
        mano.monitor.report(path)
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024 < 64


@pytest.mark.parametrize("where", ["top", "method_key", "method"])
def test_unknown_key(tmp_path, history, where):
    """Issue 50, finding 4: a key that mano does not write is refused naming the point and the key."""
    pid, prediction = last_point(history)
    if where == "top":
        prediction["extra"], key, inside = [1, 2, 3], "extra", ""
    elif where == "method_key":
        prediction["methods"]["mano"]["extra"], key, inside = 1, "extra", " in methods.mano"
    else:
        prediction["methods"]["zzz"], key, inside = prediction["methods"]["mano"], "zzz", " in methods"
    path = edited(tmp_path, history, f"UPDATE points SET prediction = '{json.dumps(prediction)}' WHERE id = {pid}")
    with pytest.raises(mano.InputError, match=f"edited.db: the history is damaged \\(point {pid}: its prediction holds the key "
                                              f"\"{key}\"{inside}, which mano does not write\\)"):
        mano.monitor.report(path)


def test_name_limit(tmp_path, calibration):
    """An add never writes a name that a report would refuse."""
    limit = limits()["columns"]["points"]["name"]["max_bytes"]
    path = tmp_path / "h.db"
    with pytest.raises(mano.InputError, match=f"^name: the points' names would be {limit + 1} bytes, over the {limit} bytes"):
        mano.monitor.add(path, EXAMPLE / "blend_5_logits.npy", calibration=calibration, name="n" * (limit + 1))
    assert not path.exists()

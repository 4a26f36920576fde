"""The monitoring history under stress (docs/monitor.md, "Reliability"): concurrent writers lose
no point, kill -9 inside an add's transaction leaves the previous history whole, and a file that
is damaged, of a newer schema, another SQLite database, a text file or a folder gives one error
line naming it and exit 2, never a crash; add never writes over one of its inputs.
Run: /usr/bin/python3 tests/cli/test_monitor_reliability.py path/to/mano"""
import json
import os
import pathlib
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

from monitor_support import MANO, add, integrity, make_batch, make_calibration, one_error_line, point_count, report  # noqa: E402
from workflow_support import run  # noqa: E402


def test_concurrent_writers(tmp, rng, cal):
    """4 processes x 5 adds each on one new history: 20 points, each add whole."""
    history = tmp / "concurrent.db"
    batches = [make_batch(tmp / f"c{i}.npy", rng, 3.0, n=200) for i in range(4)]
    script = ("import subprocess, sys\n"
              "for j in range(5):\n"
              "    p = subprocess.run([sys.argv[1], 'monitor', 'add', sys.argv[2], sys.argv[3], '--calibration', sys.argv[4],\n"
              "                        '--name', f'writer {sys.argv[5]} add {j}', '--quiet', '--threads', '1'],\n"
              "                       capture_output=True, text=True)\n"
              "    if p.returncode: sys.exit(p.stderr)\n")
    writers = [subprocess.Popen([sys.executable, "-c", script, MANO, str(history), str(b), str(cal), str(i)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i, b in enumerate(batches)]
    outcomes = [w.communicate(timeout=600) for w in writers]
    check(all(w.returncode == 0 for w in writers), f"every writer succeeded: {[o[1].strip() for o in outcomes]}")
    check(point_count(history) == 20 and integrity(history) == "ok", f"20 points ({point_count(history)}), integrity ok")
    with sqlite3.connect(history) as db:
        names = sorted(r[0] for r in db.execute("SELECT name FROM points"))
        adds = db.execute("SELECT count(*) FROM adds").fetchone()[0]
    check(names == sorted(f"writer {i} add {j}" for i in range(4) for j in range(5)) and adds == 20,
          "each writer's five points, twenty adds")
    status, body, err = report(history, "--reference", 10)
    check(status in (0, 3) and body is not None and len(body["points"]) == 20, f"the report reads them: {err.strip()}")


def test_kill_during_add(tmp, rng, cal):
    """kill -9 inside the transaction (the test hook MANO_MONITOR_TEST_PAUSE_MS pauses there after
    the first point), 20 times: the history keeps its previous points, integrity ok, report works."""
    history = tmp / "killed.db"
    first = [make_batch(tmp / f"k{i}.npy", rng, 3.0, n=200) for i in range(3)]
    proc = add(history, *first, "--calibration", cal, "--at", "2026-11-01")
    proc2 = add(history, first[0], "--calibration", cal, "--at", "2026-11-02")
    check(proc.returncode == 0 and proc2.returncode == 0, f"the history before the kills: {proc.stderr.strip()}")
    before = point_count(history)
    _, body_before, _ = report(history)
    whole = 0
    for trial in range(20):
        writer = subprocess.Popen([MANO, "monitor", "add", str(history), *map(str, first), "--calibration", str(cal),
                                   "--quiet"], stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "MANO_MONITOR_TEST_PAUSE_MS": "60000"})
        line = "-"
        while line and "inside the add's transaction" not in line:  # warnings may come first
            line = writer.stderr.readline()
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=60)
        writer.stderr.close()
        status, body, err = report(history)
        ok = ("inside the add's transaction" in line and writer.returncode == -signal.SIGKILL and
              integrity(history) == "ok" and point_count(history) == before and status in (0, 3) and body == body_before)
        whole += ok
        if not ok:
            check(False, f"trial {trial}: {line.strip()!r}, exit {writer.returncode}, report {status} {err.strip()}")
    check(whole == 20, f"20 kills inside an add: the history whole each time ({whole})")
    proc = add(history, first[1], "--calibration", cal, "--at", "2026-11-03")
    check(proc.returncode == 0 and point_count(history) == before + 1, "an add after the kills writes its point")


def test_bad_files(tmp, rng, cal):
    """Each bad history: one line naming it, exit 2, the file unchanged."""
    good = tmp / "good.db"
    batch = make_batch(tmp / "b.npy", rng, 3.0, n=200)
    add(good, batch, batch, "--calibration", cal, "--at", "2026-11-01")
    add(good, batch, "--calibration", cal, "--at", "2026-11-02")
    data = good.read_bytes()

    damaged = tmp / "damaged.db"
    damaged.write_bytes(data[:100] + bytes(rng.integers(0, 256, 3996, dtype=np.uint8)) + data[4096:])
    truncated = tmp / "truncated.db"
    truncated.write_bytes(data[:len(data) // 2])
    text = tmp / "notes.txt"
    text.write_text("time,accuracy\n2026-11-01,0.9\n" * 200)
    foreign = tmp / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE readings (time TEXT, value REAL)")
        db.execute("INSERT INTO readings VALUES ('2026-11-01', 1.0)")
    db.close()
    newer = tmp / "newer.db"
    shutil.copy(good, newer)
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 3")
    db.close()
    renamed = tmp / "renamed.db"
    shutil.copy(good, renamed)
    with sqlite3.connect(renamed) as db:
        db.execute("UPDATE meta SET value = 'something else' WHERE key = 'format'")
    db.close()
    empty_db = tmp / "empty.db"
    sqlite3.connect(empty_db).close()
    folder = tmp / "folder.db"
    folder.mkdir()

    cases = [(damaged, ["damaged"]), (truncated, []), (text, ["not a mano history"]), (foreign, ["not a mano history"]),
             (newer, ["schema version 3", "newer"]), (renamed, ["not a mano history"]), (folder, ["folder"])]
    for path, words in cases:
        before = path.read_bytes() if path.is_file() else None
        for args in (["report", path], ["report", path, "--json"], ["add", path, batch, "--calibration", cal]):
            proc = run("monitor", *args)
            check(one_error_line(proc, str(path), *words), f"monitor {args[0]} {path.name}: exit {proc.returncode}, "
                                                          f"{proc.stderr.strip()!r}")
        if before is not None:
            check(path.read_bytes() == before, f"{path.name} unchanged")
    proc = run("monitor", "report", empty_db)
    check(one_error_line(proc, str(empty_db), "empty"), f"report of an empty SQLite file: {proc.stderr.strip()!r}")
    proc = add(empty_db, batch, "--calibration", cal)
    check(proc.returncode == 0 and point_count(empty_db) == 1, "add to an empty SQLite file makes it a history")

    # add never writes over an input: the history named as a logits file, or the calibration
    logits_copy = tmp / "logits_copy.npy"
    shutil.copy(batch, logits_copy)
    for target, inputs in ((logits_copy, [logits_copy]), (cal, [batch])):
        before = target.read_bytes()
        proc = run("monitor", "add", target, *inputs, "--calibration", cal)
        check(one_error_line(proc, str(target), "input") and target.read_bytes() == before,
              f"add {target.name}: refused, unchanged ({proc.stderr.strip()!r})")
    # no other command's output replaces a history (an SQLite file), even one that is not its input
    other = tmp / "other.db"
    shutil.copy(good, other)
    for args in (["score", batch, "--emit-state", other, "--quiet"], ["monitor", "report", good, "--json", "-o", other]):
        proc = run(*args)
        check(one_error_line(proc, str(other), "SQLite") and other.read_bytes() == data,
              f"{' '.join(map(str, args[:2]))} -> {other.name}: refused, unchanged ({proc.stderr.strip()!r})")
    # the history given after the files: the first file is taken as the history and refused
    proc = run("monitor", "add", batch, good, "--calibration", cal)
    check(proc.returncode == 2 and good.read_bytes() == data, f"add with the history last: refused ({proc.stderr.strip()!r})")


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        rng = np.random.default_rng(33)
        cal = make_calibration(tmp, rng)
        test_concurrent_writers(tmp, rng, cal)
        test_kill_during_add(tmp, rng, cal)
        test_bad_files(tmp, rng, cal)
    finish("monitor reliability: ")


if __name__ == "__main__":
    main()

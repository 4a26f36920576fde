"""A monitoring history is untrusted input (docs/monitor.md, "What a history may hold"): a planted
VIEW or TRIGGER is refused in one line before anything runs, damaged points are named, names
reach no terminal raw and no JSON broken, times sort as times for the years 1 to 9999, an empty
reference period is refused, a history on read-only media is reported, a FIFO is refused, a
report's memory does not grow with the points, and a value over its column's limit or a key that
mano does not write is refused in one line before the value is parsed (history_limits.json).
Run: /usr/bin/python3 tests/cli/test_monitor_untrusted.py path/to/mano"""
import json
import os
import pathlib
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
import numpy as np  # noqa: E402
from harness import check, finish  # noqa: E402
from history_edit import RECURSIVE, edited  # noqa: E402

from monitor_support import (MANO, add, largest_prediction, last_prediction, limits, make_batch, make_calibration,  # noqa: E402
                             one_error_line, peak_report, point_count, report, with_column, with_huge_array)
from workflow_support import run  # noqa: E402


def mano(*args, timeout=120):
    """The command with bytes arguments allowed (a Latin-1 name), and a timeout: a hang fails."""
    try:
        return subprocess.run([MANO, *(a if isinstance(a, bytes) else str(a) for a in args)], capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, -1, b"", b"timed out")


def text_of(proc):
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


def make_history(tmp, rng, cal, name="good.db"):
    """Three reference points on 2026-11-01, one on 2026-11-02 and one on 2026-11-03."""
    history = tmp / name
    batches = [make_batch(tmp / f"{name}.{i}.npy", rng, 3.0, n=300) for i in range(5)]
    for files, at in ((batches[:3], "2026-11-01"), (batches[3:4], "2026-11-02"), (batches[4:], "2026-11-03")):
        proc = add(history, *files, "--calibration", cal, "--at", at)
        check(proc.returncode == 0, f"add: {proc.stderr.strip()}")
    return history


def test_empty_reference(tmp, history):
    """Item 1: a reference period before every point is refused in every output, never an all-clear."""
    for extra in ([], ["--json"], ["--markdown"]):
        proc = run("monitor", "report", history, "--reference-until", "2025-01-01", *extra)
        check(one_error_line(proc, str(history), "holds no point", "2026-11-01T00:00:00Z", "--reference-until"),
              f"empty reference {extra}: exit {proc.returncode}, {proc.stderr.strip()!r}")


def test_names(tmp, rng, cal):
    """Items 2 and 3: a Latin-1 name and file keep the JSON whole (U+FFFD, the bytes in hex); terminal
    escapes and a newline in a name reach the text and Markdown reports escaped."""
    history = tmp / "names.db"
    latin = os.fsencode(str(tmp)) + b"/d\xe9j\xe0.npy"
    shutil.copy(make_batch(tmp / "latin_src.npy", rng, 3.0, n=300), os.fsdecode(latin))
    batches = [make_batch(tmp / f"n{i}.npy", rng, 3.0, n=300) for i in range(3)]
    check(mano("monitor", "add", history, *batches, "--calibration", cal, "--at", "2026-11-01", "--quiet").returncode == 0,
          "add the reference")
    proc = mano("monitor", "add", history, latin, "--calibration", cal, "--at", "2026-11-02", "--quiet")
    check(proc.returncode == 0, f"add a Latin-1 file: {proc.stderr!r}")
    forged = "\x1b]0;owned\x07\x1b[2Jday 3\nlatest point: ok\u202e"
    bad = make_batch(tmp / "worse.npy", rng, 0.3, n=300)
    proc = mano("monitor", "add", history, bad, "--calibration", cal, "--at", "2026-11-03", "--name", forged, "--quiet")
    check(proc.returncode == 0, f"add a forged name: {proc.stderr!r}")
    proc = mano("monitor", "report", history, "--json")
    body = json.loads(proc.stdout) if proc.returncode in (0, 3) else None
    check(body is not None, f"report --json with a Latin-1 name: exit {proc.returncode}, {proc.stderr!r}")
    if body is not None:
        p = body["points"][3]
        check(p["file"] == os.fsdecode(latin).encode("utf-8", "surrogateescape").decode("utf-8", "replace") and
              bytes.fromhex(p["file_bytes"]) == latin and bytes.fromhex(p["name_bytes"]) == latin and "\ufffd" in p["name"],
              f"the Latin-1 name marked (U+FFFD) and kept in hex: {p['name']!r}, {p.get('name_bytes')!r}")
        check("name_bytes" not in body["points"][0] and body["points"][4]["name"] == forged,
              "a UTF-8 name is given as it is, with no _bytes")
    for extra in ([], ["--markdown"]):
        proc = mano("monitor", "report", history, *extra)
        out = proc.stdout.decode("utf-8", "replace")
        check(proc.returncode == 3 and b"\x1b" not in proc.stdout and b"\x07" not in proc.stdout and
              "\u202e" not in out and not any(line.startswith("latest point: ok") for line in out.splitlines()) and
              "\\x1b]0;owned" in out and "\\xe9" in out,
              f"report {extra}: names escaped, no forged line (exit {proc.returncode}): {out[-400:]!r}")


def test_damaged_points(tmp, good):
    """Item 4: a point the report cannot read as mano wrote it is named, 'the history is damaged', exit 2."""
    def prediction_set(value):
        with sqlite3.connect(good) as db:
            pid, text = db.execute("SELECT id, prediction FROM points ORDER BY time, id LIMIT 1 OFFSET 3").fetchone()
        db.close()
        p = json.loads(text)
        p["estimate"]["accuracy"] = value
        return pid, json.dumps(p)

    cases = []
    for label, value in (("string", "0.5"), ("null", None), ("huge", 1e300)):
        pid, text = prediction_set(value)
        cases.append((label, pid, [f"UPDATE points SET prediction = '{text}' WHERE id = {pid}"]))
    cases.append(("time", 4, ["UPDATE points SET time = '10000-01-01T00:30:00Z' WHERE id = 4"]))
    cases.append(("n", 4, ["UPDATE points SET n = 'many' WHERE id = 4"]))
    cases.append(("json", 4, ["UPDATE points SET prediction = '{\"estimate\": ' WHERE id = 4"]))
    for label, pid, statements in cases:
        path = edited(tmp, good, f"damaged_{label}.db", *statements)
        for extra in ([], ["--json"], ["--markdown"]):
            proc = run("monitor", "report", path, *extra)
            check(one_error_line(proc, str(path), "the history is damaged", f"point {pid}"),
                  f"damaged {label} {extra}: exit {proc.returncode}, {proc.stderr.strip()!r}")


def test_planted_schema(tmp, good, batch, cal):
    """Item 5: a view or trigger (or any table or index mano does not write) is refused in one line
    by report and add, before anything runs: no hang, no memory blow-up, no point deleted."""
    count = point_count(good)
    cases = {
        "view": [f"CREATE VIEW forever AS {RECURSIVE}"],
        "zeroblob": ["CREATE VIEW big AS SELECT zeroblob(1000000000) AS b"],
        "points_view": ["ALTER TABLE points RENAME TO points_kept",
                        f"CREATE VIEW points AS SELECT * FROM points_kept, ({RECURSIVE})"],
        "trigger": ["CREATE TRIGGER eat AFTER INSERT ON points BEGIN DELETE FROM points WHERE id < NEW.id; END"],
        "index": ["CREATE INDEX mine ON points (name)"],
    }
    for label, statements in cases.items():
        path = edited(tmp, good, f"planted_{label}.db", *statements)
        before = path.read_bytes()
        for args in (["report", path], ["report", path, "--json"], ["add", path, batch, "--calibration", cal]):
            proc = text_of(mano("monitor", *args, timeout=60))
            check(one_error_line(proc, str(path), "refused", "mano does not write"),
                  f"{label}: monitor {args[0]}: exit {proc.returncode}, {proc.stderr.strip()!r}")
        check(path.read_bytes() == before, f"{label}: the file is unchanged")
    check(point_count(good) == count, "the good history is untouched")


def test_times(tmp, rng, cal):
    """Item 6: times as sortable UTC for the years 1 to 9999; an offset past 9999 is refused."""
    history = tmp / "times.db"
    batch = make_batch(tmp / "t.npy", rng, 3.0, n=300)
    proc = text_of(mano("monitor", "add", history, batch, "--calibration", cal, "--at", "9999-12-31T23:30-01:00"))
    check(one_error_line(proc, "--at", "9999-12-31T23:30-01:00", "years 1 to 9999") and not history.exists(),
          f"--at past 9999 in UTC: {proc.stderr.strip()!r}")
    for at in ("2026-11-01", "2026-11-01", "9999-12-31T22:30-01:00", "0100-02-28T23:00-02:00"):
        proc = add(history, batch, "--calibration", cal, "--at", at)
        check(proc.returncode == 0, f"--at {at}: {proc.stderr.strip()}")
    status, body, err = report(history, "--reference", 2)
    times = [p["time"] for p in (body or {}).get("points", [])]
    check(times == ["0100-03-01T01:00:00Z", "2026-11-01T00:00:00Z", "2026-11-01T00:00:00Z", "9999-12-31T23:30:00Z"],
          f"times in UTC, in time order: {times} ({err.strip()})")
    # the default reference is the first add in time: the backfilled year-100 point alone, refused
    status, body, err = report(history)
    check(status == 2 and "first add's points" in err and "at least 2" in err, f"default reference by time: {err.strip()}")


def test_read_only_media(tmp, good, batch, cal):
    """Item 7: a history on a read-only file system (a read-only bind mount in a mount namespace of
    its own), with a write-ahead log left beside it and no shared-memory file (which cannot be made
    there), is reported: from the main file as it is."""
    # a read-only bind mount needs root and a mount namespace; where there is none, say so
    if shutil.which("unshare") is None or os.geteuid() != 0 or \
            subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        print("skipped: read-only media (needs root and unshare -m, from util-linux, to mount a read-only file system)")
        return
    source = tmp / "ro_source.db"
    shutil.copy(good, source)
    status, expected, _ = report(source)
    media = tmp / "media"
    media.mkdir()
    keep = sqlite3.connect(source)  # open: the add's log stays beside the file, not yet moved into it
    keep.execute("SELECT count(*) FROM points").fetchone()
    proc = add(source, batch, "--calibration", cal, "--at", "2026-11-04")
    shutil.copy(source, media / "history.db")
    shutil.copy(f"{source}-wal", media / "history.db-wal")
    keep.close()
    check(proc.returncode == 0 and (media / "history.db-wal").stat().st_size > 0, f"a history with its log: {proc.stderr.strip()}")
    script = (f'mount --bind "{media}" "{media}" && mount -o remount,bind,ro "{media}" && '
              f'! touch "{media}/probe" 2>/dev/null && "{MANO}" monitor report "{media}/history.db" --json')
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    got = json.loads(proc.stdout) if proc.returncode in (0, 3) and proc.stdout.strip() else None
    check(got is not None and proc.returncode == status and got["points"] == expected["points"],
          f"report on read-only media: exit {proc.returncode}, {proc.stderr.strip()!r}")


def test_fifo(tmp, batch, cal):
    """Item 9: a FIFO is refused at once (it would block an open forever); so is a device."""
    fifo = tmp / "fifo.db"
    os.mkfifo(fifo)
    for path in (fifo, pathlib.Path("/dev/zero")):
        for args in (["report", path], ["add", path, batch, "--calibration", cal]):
            proc = text_of(mano("monitor", *args, timeout=30))
            check(one_error_line(proc, str(path), "not a regular file"), f"monitor {args[0]} {path}: {proc.stderr.strip()!r}")


def test_report_memory(tmp, good):
    """Item 8: report reads the points as it writes them: 40000 points take less than 64 MB."""
    big = tmp / "big.db"
    shutil.copy(good, big)
    with sqlite3.connect(big) as db:
        row = db.execute("SELECT add_id, name, file, n, k, level, calibration_sha256, prediction FROM points "
                         "ORDER BY id DESC LIMIT 1").fetchone()
        db.executemany("INSERT INTO points (add_id, time, name, file, n, k, level, calibration_sha256, prediction, state) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '{}')",
                       ((row[0], f"2026-12-{1 + i // 4000:02d}T00:00:00Z", *row[1:]) for i in range(40000)))
    db.close()
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen([MANO, "monitor", "report", str(big), "--json"], stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
    peak_mb = usage.ru_maxrss / 1024
    check(os.waitstatus_to_exitcode(status) in (0, 3) and peak_mb < 64,
          f"report of {point_count(big)} points: exit {os.waitstatus_to_exitcode(status)}, peak RSS {peak_mb:.0f} MB")
    child.stderr.close()


def test_add_memory(tmp, rng, cal):
    """Item 8: an add keeps the points it scored on disk until it appends them, and a point stores no
    per-row state: 8000 one-row chunks take less than 64 MB (before: 240 MB)."""
    history = tmp / "chunks.db"
    rows = make_batch(tmp / "rows.npy", rng, 3.0, n=8000)
    child = subprocess.Popen([MANO, "monitor", "add", str(history), str(rows), "--calibration", str(cal), "--chunk-size", "1",
                              "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    child.stderr.close()
    peak_mb = usage.ru_maxrss / 1024
    check(os.waitstatus_to_exitcode(status) == 0 and point_count(history) == 8000 and peak_mb < 64,
          f"add of 8000 one-row chunks: exit {os.waitstatus_to_exitcode(status)}, peak RSS {peak_mb:.0f} MB")


def test_value_limits(tmp, good):
    """Issue 50, finding 4: a point whose prediction carries a 24 MB extra array (before: 500 MB and
    seconds to report; 80 MB took 1.8 GB and 21 s) is refused in one line naming the point and the
    limit it broke, before the value is loaded: the report stays under 64 MB. So is any value a
    report reads that is longer than mano writes, or text where mano writes a whole number."""
    table = limits()["columns"]["points"]
    paths = [(with_huge_array(tmp, good, "limit_prediction.db", 12_000_000),
              ["points.prediction", f"{table['prediction']['max_bytes']}-byte limit"])]
    cases = [("name", "n" * (table["name"]["max_bytes"] + 1), "points.name", f"{table['name']['max_bytes']}-byte limit"),
             ("time", "2026-11-03T00:00:00Z" + " " * 1000, "points.time", "20-byte limit"),
             ("add_id", "x" * 1000, "its add_id is text", "a whole number")]
    paths += [(with_column(tmp, good, f"limit_{column}.db", value, column), words) for column, value, *words in cases]
    for (path, pid), words in paths:
        column = words[0]
        for extra in ([], ["--json"], ["--markdown"]):
            status, err, peak_mb = peak_report(path, *extra)
            proc = subprocess.CompletedProcess([], status, "", err)
            check(one_error_line(proc, str(path), "the history is damaged", f"point {pid}:", *words) and peak_mb < 64,
                  f"{column} over its limit {extra}: exit {status}, peak RSS {peak_mb:.0f} MB, {err.strip()[:300]!r}")


def test_unknown_keys(tmp, good):
    """Issue 50, finding 4: a key that mano does not write, anywhere in a point's prediction (a method
    that is not one of the table included), is refused in one line naming the point and the key."""
    prediction = last_prediction(good)
    top = {"extra": [1, 2, 3], **prediction}
    in_method = json.loads(json.dumps(prediction))
    in_method["methods"]["mano"]["extra"] = 1
    method = json.loads(json.dumps(prediction))
    method["methods"]["zzz"] = method["methods"]["mano"]
    audited = {**prediction, "audit": {"n": 10}}  # predict --audit writes one; an add never does
    cases = [("top", top, '"extra"', ""), ("method_key", in_method, '"extra"', "in methods.mano"),
             ("method", method, '"zzz"', "in methods"), ("audit", audited, '"audit"', "")]
    for label, value, key, where in cases:
        path, pid = with_column(tmp, good, f"key_{label}.db", json.dumps(value))
        for extra in ([], ["--json"]):
            proc = run("monitor", "report", path, *extra)
            check(one_error_line(proc, str(path), "the history is damaged", f"point {pid}:", key, where, "which mano does not write"),
                  f"unknown key {label} {extra}: exit {proc.returncode}, {proc.stderr.strip()!r}")
    wrong = json.loads(json.dumps(prediction))
    wrong["methods"]["mano"]["score"] = [0]
    path, pid = with_column(tmp, good, "key_type.db", json.dumps(wrong))
    proc = run("monitor", "report", path)
    check(one_error_line(proc, str(path), f"point {pid}:", "methods.mano.score is not of type number"),
          f"a known key of another type: {proc.stderr.strip()!r}")


def test_prediction_bound(tmp, good, batch, cal):
    """The prediction's limit holds what an add writes: the longest prediction its shape allows (every
    method of the table, every key, the longest numbers) fits it, and a real point is far below."""
    names = [m["name"] for m in json.loads(run("methods", "--json").stdout)["methods"]]
    longest = largest_prediction(names)
    limit = limits()["columns"]["points"]["prediction"]["max_bytes"]
    check(len(longest) <= limit and len(longest) * 2 < limit,
          f"the longest prediction an add writes, {len(longest)} bytes for {len(names)} methods, within {limit}")
    check(len(json.dumps(last_prediction(good), separators=(",", ":"))) < len(longest), "a real prediction is shorter")
    history = tmp / "long_name.db"
    name_limit = limits()["columns"]["points"]["name"]["max_bytes"]
    proc = add(history, batch, "--calibration", cal, "--name", "n" * (name_limit + 1))
    check(one_error_line(proc, "--name", f"{name_limit} bytes") and not history.exists(),
          f"add refuses a name a report would refuse: {proc.stderr.strip()!r}")


def test_calibration_read(tmp, good):
    """A report reads of the reference's calibration only its recommended method, that method's link
    and its slope, as the text goes: a calibration carrying a 12 MB extra array (the column's limit is
    the calibration reader's 256 MiB) takes no memory beyond its text (before: 240 MB). Points stored
    without a slope (older histories) get the too-small warning from the calibration's line where its
    link is the identity: the median of 1.645 |slope| se over the monitored points."""
    status, body, err = report(good)
    check(status in (0, 3) and "noise" in body, f"the good history has a too-small warning: {err.strip()}")
    path, _ = with_huge_array(tmp, good, "calibration_array.db", 6_000_000, table="calibrations")
    code, err, peak_mb = peak_report(path, "--json")
    check(code == status and peak_mb < 64, f"a 12 MB calibration: exit {code}, peak RSS {peak_mb:.0f} MB, {err.strip()[:200]!r}")
    check((report(path)[1] or {}).get("noise") == body["noise"], "the same warning from it")
    stripped = tmp / "no_slope.db"
    shutil.copy(good, stripped)
    db = sqlite3.connect(stripped)
    with db:
        for pid, text in db.execute("SELECT id, prediction FROM points").fetchall():
            p = json.loads(text)
            for m in p["methods"].values():
                m.pop("slope", None)
            db.execute("UPDATE points SET prediction = ? WHERE id = ?", (json.dumps(p), pid))
        cal = json.loads(db.execute("SELECT calibration FROM calibrations").fetchone()[0])
        method = cal["recommended"]
        cal["methods"][method].pop("link", None)  # the identity: its slope is the slope at every score
        db.execute("UPDATE calibrations SET calibration = ?", (json.dumps(cal),))
    db.close()
    noise = sorted(1.645 * abs(cal["methods"][method]["slope"]) * p["methods"][method]["se"] for p in body["points"][3:])
    status, got, err = report(stripped)
    check(got is not None and got["noise_method"] == method and noise[len(noise) // 2] > 0.05 and
          abs(got.get("noise", {}).get("half_width", 0) - noise[len(noise) // 2]) < 1e-12,
          f"points without a slope: the calibration's line's, {noise[len(noise) // 2]:.4f} ({got and got.get('noise')}, {err.strip()})")

def main():
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))  # a planted view that still ran stops here
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        rng = np.random.default_rng(43)
        cal = make_calibration(tmp, rng)
        good = make_history(tmp, rng, cal)
        batch = make_batch(tmp / "batch.npy", rng, 3.0, n=300)
        test_empty_reference(tmp, good)
        test_names(tmp, rng, cal)
        test_damaged_points(tmp, good)
        test_planted_schema(tmp, good, batch, cal)
        test_times(tmp, rng, cal)
        test_read_only_media(tmp, good, batch, cal)
        test_fifo(tmp, batch, cal)
        test_report_memory(tmp, good)
        test_add_memory(tmp, rng, cal)
        test_unknown_keys(tmp, good)
        test_prediction_bound(tmp, good, batch, cal)
        test_value_limits(tmp, good)
        test_calibration_read(tmp, good)
    finish("monitor untrusted: ")


if __name__ == "__main__":
    main()

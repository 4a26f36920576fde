"""`mano monitor add` and `mano monitor report` (docs/monitor.md): each point's estimate is what
`mano predict` gives for the same file (or chunk), the alert line is the reference period's
mean - 3 sd (NumPy), the exit status is 3 when the latest point alerts, the stored state merges to
the whole file's score, the schema is what the docs say (Python's sqlite3 and pandas read it), and
a point of another calibration is marked, not compared; a file of schema version 1 reads and takes
adds. Reliability: test_monitor_reliability.py.
Run: /usr/bin/python3 tests/cli/test_monitor.py path/to/mano"""
import hashlib
import json
import pathlib
import sqlite3
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

from monitor_support import add, make_batch, make_calibration, one_error_line, predict, report  # noqa: E402
from workflow_support import run  # noqa: E402


def same_prediction(stored, expected, what):
    """The recommended estimate and every method's, equal to 1e-9."""
    worst = 0.0
    e, s = expected.get("estimate"), stored.get("estimate")
    ok = (e is None) == (s is None) and set(expected["methods"]) == set(stored["methods"])
    if ok and e is not None:
        ok = e["method"] == s["method"] and e["regime"] == s["regime"]
        worst = max(abs(e["accuracy"] - s["accuracy"]), *(abs(a - b) for a, b in zip(e["interval"], s["interval"])))
    for m, v in expected["methods"].items():
        if m in stored["methods"]:
            w = stored["methods"][m]
            worst = max(worst, abs(v["score"] - w["score"]), abs(v["accuracy"] - w["accuracy"]),
                        *(abs(a - b) for a, b in zip(v["interval"], w["interval"])))
    check(ok and worst <= 1e-9, f"{what}: the stored prediction differs from mano predict (worst {worst:.2e})")


def test_timeline(tmp, rng, cal):
    """6 reference batches in one add, then a day at a time; the degraded day alerts (exit 3)."""
    history = tmp / "history.db"
    reference = [make_batch(tmp / f"ref{i}.npy", rng, 3.0) for i in range(6)]
    proc = add(history, *reference, "--calibration", cal, "--at", "2026-11-01T06:00:00Z")
    check(proc.returncode == 0, f"add the reference batches: {proc.stderr.strip()}")
    days = [make_batch(tmp / f"day{i}.npy", rng, 3.0) for i in range(2)] + [make_batch(tmp / "bad.npy", rng, 0.8)]
    times = ["2026-11-02", "2026-11-03T10:00+02:00", "2026-11-04T06:00:00.250Z"]
    for i, (day, at) in enumerate(zip(days, times)):
        status, body, err = report(history)
        # before day 0 every point is in the reference: not enough points yet, exit 0
        check(status == 0 and (body or {}).get("waiting", False) == (i == 0), f"report before day {i}: exit {status} ({err.strip()})")
        proc = add(history, day, "--calibration", cal, "--at", at, "--name", f"day {i}")
        check(proc.returncode == 0, f"add day {i}: {proc.stderr.strip()}")
    status, body, err = report(history)
    check(status == 3 and body is not None, f"report: the degraded day alerts, exit 3 (got {status}: {err.strip()})")
    if body is None:
        return
    points = body["points"]
    check([p["time"] for p in points] == ["2026-11-01T06:00:00Z"] * 6 + ["2026-11-02T00:00:00Z", "2026-11-03T08:00:00Z",
                                                                         "2026-11-04T06:00:00Z"],
          f"times in UTC, in order: {[p['time'] for p in points]}")
    check([p["name"] for p in points] == [str(f) for f in reference] + ["day 0", "day 1", "day 2"], "names")
    for p, f in zip(points, reference + days):
        same_prediction(p, predict(cal, f), f"point {p['name']}")
        check(p["n"] == 2000 and p["calibration"] == hashlib.sha256(cal.read_bytes()).hexdigest(), f"{p['name']}: n and SHA-256")
    # the alert line: NumPy's mean - 3 sd (ddof 1) of the first add's estimates
    ref = np.array([p["estimate"]["accuracy"] for p in points[:6]])
    line = ref.mean() - 3 * ref.std(ddof=1)
    t = body["threshold"]
    check(abs(t["value"] - line) < 1e-12 and t["reference"] == 6 and body["reference"]["points"] == 6,
          f"threshold {t} vs {line}")
    expected_alerts = [i for i in range(6, 9) if points[i]["estimate"]["accuracy"] < line]
    check(body["alerts"] == expected_alerts == [8], f"alerts {body['alerts']} vs {expected_alerts}")
    check([p["alert"] for p in points] == [False] * 8 + [True] and [p["reference"] for p in points] == [True] * 6 + [False] * 3,
          "each point's alert and reference flags")
    check(body["latest"]["alert"] is True, "the latest point alerts")

    # --reference N and --reference-until: other reference periods, NumPy's line for each
    for args, count in ((["--reference", "7"], 7), (["--reference-until", "2026-11-02T12:00:00Z"], 7),
                        (["--reference-until", "2026-11-01T06:00:00Z"], 6)):
        status, b, err = report(history, *args)
        ref = np.array([p["estimate"]["accuracy"] for p in points[:count]])
        ok = b is not None and abs(b["threshold"]["value"] - (ref.mean() - 3 * ref.std(ddof=1))) < 1e-12
        check(ok and b["threshold"]["reference"] == count and status == 3, f"report {args}: exit {status}, {err.strip()}")
    # --since lists the later points only; the reference and the line stay
    status, b, _ = report(history, "--since", "2026-11-03")
    check(b is not None and [p["index"] for p in b["points"]] == [7, 8] and b["threshold"] == body["threshold"] and status == 3,
          "--since 2026-11-03: points 7 and 8, the same line")

    # text and Markdown say the same; -o writes it (atomically) and never over the history
    text = run("monitor", "report", history)
    check(text.returncode == 3 and "ALERT" in text.stdout and "reference" in text.stdout and
          f"{100 * line:.1f}%" in text.stdout, "text report")
    markdown = run("monitor", "report", history, "--markdown")
    check(markdown.returncode == 3 and "| time | name |" in markdown.stdout and "| ALERT |" in markdown.stdout, "Markdown report")
    out = tmp / "report.md"
    proc = run("monitor", "report", history, "--markdown", "-o", out)
    check(proc.returncode == 3 and out.read_text() == markdown.stdout and proc.stdout == "", "-o writes the report")
    before = history.read_bytes()
    for target in (history, pathlib.Path(f"{history}-wal")):
        if not target.exists():
            continue
        proc = run("monitor", "report", history, "-o", target)
        check(one_error_line(proc, str(target), "input"), f"-o {target}: refused ({proc.stderr.strip()})")
    check(history.read_bytes() == before, "the history is untouched by a refused -o")

    # the schema as docs/monitor.md describes it, through Python's sqlite3 and pandas
    with sqlite3.connect(history) as db:
        check(db.execute("PRAGMA user_version").fetchone()[0] == 2, "user_version 2")
        check(db.execute("PRAGMA journal_mode").fetchone()[0] == "wal", "WAL mode")
        meta = dict(db.execute("SELECT key, value FROM meta"))
        check(meta.get("format") == "mano history" and meta.get("schema_version") == "2", f"meta {meta}")
        columns = [r[1] for r in db.execute("PRAGMA table_info(points)")]
        check("fallback" not in columns and "regime" in columns, f"points has no column fallback (schema 2): {columns}")
        check(db.execute("SELECT count(*) FROM adds").fetchone()[0] == 4, "four adds")
        stored = json.loads(db.execute("SELECT calibration FROM calibrations").fetchone()[0])
        check(stored == json.loads(cal.read_text()), "the calibration is stored under its hash")
        rows = db.execute("SELECT method, accuracy, lower, upper FROM points ORDER BY time, id").fetchall()
        check(all(r[0] == p["estimate"]["method"] and r[1] == p["estimate"]["accuracy"] and
                  [r[2], r[3]] == p["estimate"]["interval"] for r, p in zip(rows, points)), "the estimate columns")
        methods = db.execute("SELECT count(*) FROM estimates").fetchone()[0]
        check(methods == sum(len(p["methods"]) for p in points), "one estimates row per point and method")
    import pandas as pd
    with sqlite3.connect(history) as db:
        frame = pd.read_sql("SELECT time, name, n, method, accuracy, lower, upper FROM points ORDER BY time, id", db)
    check(len(frame) == 9 and np.allclose(frame["accuracy"], [p["estimate"]["accuracy"] for p in points], rtol=0, atol=0),
          "pandas reads the points")

    # a point of another calibration is marked and not compared: a low one does not alert
    other = make_calibration(tmp, np.random.default_rng(11), "other.json", count=7)
    proc = add(history, make_batch(tmp / "bad2.npy", rng, 0.5), "--calibration", other, "--at", "2026-11-05")
    check(proc.returncode == 0, f"add with another calibration: {proc.stderr.strip()}")
    status, b, err = report(history)
    last = b["points"][-1] if b else {}
    check(status == 0 and last.get("calibration_changed") is True and last.get("alert") is False and 9 not in b["alerts"] and
          "another calibration" in err, f"another calibration: marked, not compared (exit {status}, {err.strip()})")
    check(b is not None and b["points"][-1]["calibration"] == hashlib.sha256(other.read_bytes()).hexdigest(),
          "its calibration's hash")


def test_chunks(tmp, rng, cal):
    """--chunk-size: one point per chunk, each what mano predict gives for the chunk as its own
    file; the stored states merge (mano merge) to the whole file's score."""
    history = tmp / "chunks.db"
    logits = make_batch(tmp / "stream.npy", rng, 3.0, n=1050)
    proc = add(history, logits, "--calibration", cal, "--chunk-size", 300, "--at", "2026-11-01")
    check(proc.returncode == 0, f"add --chunk-size: {proc.stderr.strip()}")
    rows = np.load(logits)
    with sqlite3.connect(history) as db:
        stored = db.execute("SELECT name, chunk, first_row, n, prediction, state FROM points ORDER BY id").fetchall()
    check([(s[1], s[2], s[3]) for s in stored] == [(0, 0, 300), (1, 300, 300), (2, 600, 300), (3, 900, 150)],
          f"chunks {[(s[1], s[2], s[3]) for s in stored]}")
    states = []
    for name, _, first, n, prediction, state in stored:
        piece = tmp / f"piece_{first}.npy"
        np.save(piece, rows[first:first + n])
        same_prediction(json.loads(prediction), predict(cal, piece), f"chunk {name}")
        states.append(tmp / f"state_{first}.json")
        states[-1].write_text(state)
    check(stored[0][0] == f"{logits}[0:300]", f"a chunk's name: {stored[0][0]}")
    # a point keeps no per-row state: the methods that keep every row (cost keeps_rows) have no
    # section, the others merge
    table = json.loads(run("methods", "--json").stdout)["methods"]
    keeps_rows = {m["name"] for m in table if m["cost"] == "keeps_rows"}
    sections = [json.loads(pathlib.Path(s).read_text())["methods"] for s in states]
    check(all(not keeps_rows & set(sec) for sec in sections) and all(len(s[5]) < 20000 for s in stored),
          f"no per-row state stored: {[sorted(sec) for sec in sections][:1]}, {[len(s[5]) for s in stored]} bytes")
    merged = run("merge", *states, "--json")
    check(merged.returncode == 0, f"merge the chunk states: {merged.stderr.strip()}")
    if merged.returncode == 0:
        a, whole = json.loads(merged.stdout), predict(cal, logits)
        expected = {m for m in whole["methods"] if m not in keeps_rows}
        check(set(a["methods"]) == expected and expected, f"the merge scores {sorted(a['methods'])}, want {sorted(expected)}")
        worst = max(abs(a["methods"][m]["score"] - whole["methods"][m]["score"]) / max(abs(whole["methods"][m]["score"]), 1e-300)
                    for m in expected)
        check(worst < 1e-9 and a["n"] == 1050, f"the merged chunk states score the whole file as mano predict (worst {worst:.2e})")
    # chunks of 1050 / 300 rows: the too-small rule of the core, checked against its definition
    status, body, err = report(history, "--reference", 2)
    check(body is not None, f"report of chunks: {err.strip()}")
    if body is not None and "noise_method" in body:
        cal_json = json.loads(cal.read_text())
        slope = cal_json["methods"][body["noise_method"]]["slope"]
        noise = sorted(1.645 * abs(slope) * p["methods"][body["noise_method"]]["se"] for p in body["points"][2:])
        median = noise[len(noise) // 2]
        check(("noise" in body) == (median > 0.05), f"the too-small warning iff the median noise {median:.3f} > 0.05")


def version_1_copy(history, target):
    """HISTORY's points in a file of schema version 1 (src/mano/schema/history_v1.sql: points has a
    column fallback, 0), as mano wrote them before version 2."""
    sql = (pathlib.Path(__file__).resolve().parents[2] / "src/mano/schema/history_v1.sql").read_text()
    with sqlite3.connect(target) as db:
        db.executescript(sql)
        db.execute("ATTACH DATABASE ? AS new", (str(history),))
        for table in ("meta", "calibrations", "adds", "estimates"):
            db.execute(f"INSERT INTO {table} SELECT * FROM new.{table}")
        columns = ", ".join(r[1] for r in db.execute("PRAGMA new.table_info(points)"))
        db.execute(f"INSERT INTO points ({columns}, fallback) SELECT {columns}, 0 FROM new.points")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        db.commit()
        db.execute("DETACH DATABASE new")
        db.execute("PRAGMA user_version = 1")
    db.close()


def test_version_1(tmp, rng, cal):
    """A history of schema version 1 (with the column fallback) reads as before, and an add appends
    to it, leaving it version 1; its tables with user_version 2 are refused in one line."""
    history, old = tmp / "v2.db", tmp / "v1.db"
    for i in range(3):
        add(history, make_batch(tmp / f"v{i}.npy", rng, 3.0, n=300), "--calibration", cal, "--at", f"2026-11-0{i + 1}")
    version_1_copy(history, old)
    status, body, err = report(old, "--reference", 2)
    status_new, body_new, _ = report(history, "--reference", 2)
    same = body is not None and body_new is not None and {**body, "history": None} == {**body_new, "history": None}
    check(status == status_new and same, f"a version 1 history reports as its copy: {err.strip()}")
    proc = add(old, make_batch(tmp / "v3.npy", rng, 3.0, n=300), "--calibration", cal, "--at", "2026-11-04")
    check(proc.returncode == 0, f"an add to a version 1 history: {proc.stderr.strip()}")
    with sqlite3.connect(old) as db:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        fallback = db.execute("SELECT fallback FROM points ORDER BY id").fetchall()
    db.close()
    check(version == 1 and fallback == [(0,)] * 3 + [(None,)], f"it stays version 1, the new point's fallback NULL: {version} {fallback}")
    status, body, err = report(old, "--reference", 2)
    check(body is not None and len(body["points"]) == 4, f"report after the add: {status} {err.strip()}")
    mixed = tmp / "mixed.db"
    version_1_copy(history, mixed)
    with sqlite3.connect(mixed) as db:
        db.execute("PRAGMA user_version = 2")
    db.close()
    for args in (["report", mixed], ["add", mixed, tmp / "v3.npy", "--calibration", cal]):
        proc = run("monitor", *args)
        check(one_error_line(proc, str(mixed), "another definition of the table", "points"),
              f"version 2 with version 1's points: {args[0]} refused ({proc.returncode} {proc.stderr.strip()})")


def test_bad_options(tmp, rng, cal):
    history = tmp / "options.db"
    batch = make_batch(tmp / "opt.npy", rng, 3.0, n=100)
    cases = [
        (["monitor", "add", history, batch, "--calibration", cal, "--at", "yesterday"], ["--at", "yesterday", "ISO 8601"]),
        (["monitor", "add", history, batch, "--calibration", cal, "--at", "2026-02-30"], ["--at", "no such day"]),
        (["monitor", "add", history, batch, "--calibration", cal, "--at", "2026-13-01"], ["--at", "out of range"]),
        (["monitor", "add", history, batch, "--calibration", cal, "--chunk-size", "0"], ["--chunk-size"]),
        (["monitor", "add", history, batch], ["--calibration"]),
        (["monitor", "report", tmp / "absent.db"], [str(tmp / "absent.db"), "no such history"]),
        (["monitor", "report", tmp / "absent.db", "--json", "--markdown"], ["--json", "--markdown"]),
        (["monitor", "report", tmp / "absent.db", "--reference", "3", "--reference-until", "2026-01-01"], ["--reference"]),
        (["monitor", "report", tmp / "absent.db", "--since", "soon"], ["--since"]),
    ]
    for args, words in cases:
        proc = run(*args)
        check(one_error_line(proc, *words), f"{args[1:]}: {proc.returncode} {proc.stderr.strip()!r}")
    check(not history.exists() and not (tmp / "absent.db").exists(), "a refused command writes no history")
    # another K than the calibration's: refused before anything is written
    np.save(tmp / "k7.npy", rng.standard_normal((50, 7)).astype(np.float32))
    proc = run("monitor", "add", history, tmp / "k7.npy", "--calibration", cal)
    check(one_error_line(proc, "k7.npy", "classes") and not history.exists(), f"K mismatch: {proc.stderr.strip()}")
    # a cron job reporting after its first add of one point: not enough points yet, exit 0, no line
    # before the reference has 2 estimates
    add(history, batch, "--calibration", cal)
    proc = run("monitor", "report", history)
    check(proc.returncode == 0 and "not enough points yet" in proc.stdout and "alert line: none yet" in proc.stdout,
          f"first add of one point: {proc.returncode} {proc.stdout[-300:]!r} {proc.stderr.strip()!r}")
    proc = run("monitor", "report", history, "--json")
    body = json.loads(proc.stdout) if proc.returncode == 0 else {}
    check(body.get("waiting") is True and body.get("alerts") == [] and "value" not in body.get("threshold", {"value": 0}),
          f"--json waits: {proc.returncode} {proc.stderr.strip()}")


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        rng = np.random.default_rng(2026)
        cal = make_calibration(tmp, rng)
        test_timeline(tmp, rng, cal)
        test_chunks(tmp, rng, cal)
        test_version_1(tmp, rng, cal)
        test_bad_options(tmp, rng, cal)
    finish("monitor: ")


if __name__ == "__main__":
    main()

"""A long monitoring history for measuring `mano monitor report`'s memory (docs/monitor.md,
"Reliability"): a copy of HISTORY, whose last point (a real add's, its real prediction) is copied
until the copy holds COUNT points, one a second from 2026-12-01; the copies' state column is '{}',
which a report does not read.

    /usr/bin/python3 bench/perf/history_points.py h.db million.db 1000000
    /usr/bin/time -v mano monitor report million.db --json > /dev/null
"""
import shutil
import sqlite3
import sys


def main():
    source, target, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    shutil.copy(source, target)
    db = sqlite3.connect(target)
    have = db.execute("SELECT count(*) FROM points").fetchone()[0]
    db.execute("""INSERT INTO points (add_id, time, name, file, chunk, first_row, n, k, level, method, accuracy, lower, upper,
      regime, shift_distance, shift_range, shift_outside, calibration_sha256, prediction, state)
      WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
      SELECT p.add_id, strftime('%Y-%m-%dT%H:%M:%SZ', '2026-12-01', '+' || c.x || ' seconds'), p.name, p.file, NULL, NULL, p.n,
        p.k, p.level, p.method, p.accuracy, p.lower, p.upper, p.regime, p.shift_distance, p.shift_range,
        p.shift_outside, p.calibration_sha256, p.prediction, '{}'
      FROM c, (SELECT * FROM points ORDER BY id DESC LIMIT 1) AS p""", (count - have,))
    db.commit()
    print(db.execute("SELECT count(*) FROM points").fetchone()[0], "points in", target)
    db.close()


if __name__ == "__main__":
    main()

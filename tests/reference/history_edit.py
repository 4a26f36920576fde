"""Histories made untrusted on purpose, for the CLI's and Python's tests of what a history may
hold (tests/cli/test_monitor_untrusted.py, tests/python/test_monitor_untrusted.py): a copy of a
good history with SQL run on it by Python's sqlite3, which trusts everything."""
import shutil
import sqlite3

# a view over this never ends
RECURSIVE = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"


def edited(folder, good, name, *statements):
    """folder/name: a copy of the history `good` with `statements` run on it."""
    path = folder / name
    shutil.copy(good, path)
    db = sqlite3.connect(path)
    with db:
        for s in statements:
            db.execute(s)
    db.close()
    return path

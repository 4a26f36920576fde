"""Shard identities in accumulator states (`score --emit-state`, `merge`): every state names its
shards, a merged state lists them all, and merging one shard twice (directly, through a merged
state that holds it, or as the same state written again) is refused with one line naming both
files; shard lists are checked on load, with an input-independent limit.
Run: /usr/bin/python3 tests/cli/test_shards.py path/to/mano"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish, rel  # noqa: E402

MANO = sys.argv[1]
MAX_SHARDS = 1_000_000


def run(*args):
    return subprocess.run([MANO, *map(str, args)], capture_output=True, text=True, timeout=300)


def shards_of(path):
    return json.loads(pathlib.Path(path).read_text())["shards"]


def refused(proc, *needles):
    lines = proc.stderr.strip().splitlines()
    return proc.returncode == 2 and len(lines) == 1 and all(n in lines[0] for n in needles)


def test_names_and_merges(tmp):
    rng = np.random.default_rng(16)
    np.save(tmp / "q.npy", rng.normal(0, 2, (3000, 10)).astype(np.float32))
    parts = {}
    for name, rows in (("a", "0:1000"), ("b", "1000:2000"), ("c", "2000:3000")):
        parts[name] = tmp / f"{name}.json"
        proc = run("score", tmp / "q.npy", "--rows", rows, "--emit-state", parts[name], "--quiet", "--threads", "1")
        check(proc.returncode == 0, f"score --rows {rows}: {proc.stderr.strip()}")
    a, b, c = (shards_of(parts[x]) for x in "abc")
    check(all(len(s) == 1 and re.fullmatch(r"[0-9a-f]{16}", s[0]) for s in (a, b, c)),
          f"a state of one shard names it with 16 hexadecimal digits: {a} {b} {c}")
    check(len({a[0], b[0], c[0]}) == 3, "three shards, three names")

    # the same rows scored again the same way: a byte-identical state, so the same shard
    run("score", tmp / "q.npy", "--rows", "0:1000", "--emit-state", tmp / "a_again.json", "--quiet", "--threads", "1")
    check((tmp / "a_again.json").read_bytes() == parts["a"].read_bytes(), "states are byte-reproducible")

    # a merged state lists every shard, sorted, in whatever order it was merged
    for order, out in (((parts["a"], parts["b"]), "ab.json"), ((parts["b"], parts["a"]), "ba.json")):
        proc = run("merge", *order, "--emit-state", tmp / out, "--json")
        check(proc.returncode == 0, f"merge {out}: {proc.stderr.strip()}")
    check(shards_of(tmp / "ab.json") == sorted(a + b) == shards_of(tmp / "ba.json"), "merged states list both shards, sorted")
    proc = run("merge", tmp / "ab.json", parts["c"], "--emit-state", tmp / "abc.json", "--json")
    check(proc.returncode == 0, f"tree reduction: {proc.stderr.strip()}")
    check(shards_of(tmp / "abc.json") == sorted(a + b + c), "a tree reduction lists all three shards")
    whole = json.loads(run("score", tmp / "q.npy", "--json", "--quiet").stdout)
    merged = json.loads(proc.stdout)
    check(merged["n"] == 3000 and rel(merged["methods"]["mano"]["score"], whole["methods"]["mano"]["score"]) < 1e-9,
          "the merged shards equal the whole file")
    # a state merged alone is the same state: its shards are kept
    run("merge", tmp / "abc.json", "--emit-state", tmp / "abc_again.json", "--json")
    check(shards_of(tmp / "abc_again.json") == shards_of(tmp / "abc.json"), "merging one state keeps its shard list")

    # one shard twice: exit 2, one line naming the file at fault, the shard and where it already is
    cases = [
        ((parts["a"], parts["a"]), "a.json", a[0], "a.json"),
        ((parts["a"], tmp / "a_again.json"), "a_again.json", a[0], "a.json"),
        ((tmp / "ab.json", parts["b"]), "b.json", b[0], "ab.json"),
        ((parts["b"], tmp / "ab.json"), "ab.json", b[0], "b.json"),
        ((parts["c"], tmp / "abc.json"), "abc.json", c[0], "c.json"),
        ((tmp / "ab.json", tmp / "ba.json"), "ba.json", min(a[0], b[0]), "ab.json"),
        ((parts["c"], tmp / "ab.json", tmp / "abc_again.json"), "abc_again.json", min(a[0], b[0], c[0]),
         "c.json" if min(a[0], b[0], c[0]) == c[0] else "ab.json"),  # the first shard in order that is there
    ]
    for files, culprit, shard, holder in cases:
        out = tmp / "never_written.json"
        proc = run("merge", *files, "--emit-state", out)
        names = [pathlib.Path(f).name for f in files]
        check(refused(proc, f"/{culprit}: accumulator state: shard {shard} is already in ", f"/{holder} (",
                      "would count its rows twice") and not out.exists(),
              f"merge {names}: {proc.returncode} {proc.stderr!r}")


def test_checked_on_load(tmp):
    rng = np.random.default_rng(17)
    np.save(tmp / "small.npy", rng.normal(0, 1, (50, 4)).astype(np.float32))
    good = tmp / "good.json"
    run("score", tmp / "small.npy", "--emit-state", good, "--methods", "mano,confscore", "--quiet")
    base = json.loads(good.read_text())
    one = base["shards"][0]

    def tampered(name, change):
        j = json.loads(json.dumps(base))
        change(j)
        (tmp / name).write_text(json.dumps(j))
        return tmp / name

    cases = [
        (lambda j: j.__setitem__("shards", []), "names 0 shards for 50 rows"),
        (lambda j: j.__setitem__("shards", [one, one]), "distinct ids of 16 hexadecimal digits in ascending order"),
        (lambda j: j.__setitem__("shards", ["00000000000000ff", "00000000000000fe"]), "ascending order"),
        (lambda j: j.__setitem__("shards", [one.upper() if one.upper() != one else "X" * 16]), "16 hexadecimal digits"),
        (lambda j: j.__setitem__("shards", [one[:15]]), "16 hexadecimal digits"),
        (lambda j: j.__setitem__("shards", one), "must be a list of shard ids"),
        (lambda j: j.__setitem__("shards", [f"{i:016x}" for i in range(51)]), "names 51 shards for 50 rows"),
        (lambda j: j.pop("shards"), "accumulator state"),
        (lambda j: j.__setitem__("version", 5), "unsupported version 5 (this build reads 7; emit it again with this mano)"),
    ]
    for i, (change, needle) in enumerate(cases):
        proc = run("merge", tampered(f"tampered{i}.json", change))
        check(refused(proc, f"tampered{i}.json", needle), f"tampered shards {i}: {proc.stderr!r}")

    # the limit on shards per state does not depend on the input: one over it is refused on load,
    # and a merge that would go over it is refused before anything is written
    def with_shards(name, ids):
        j = json.loads(json.dumps(base))
        j["predicted"][0] += len(ids) - j["n"]  # n rows, one per shard; sums stay in range
        # the sums of per-row values that have lower bounds (the criterion's at least n log K,
        # MaNo's sum_k p^p at least n K^(1-p)) grow with n, as n such rows give
        grow = len(ids) / j["n"]
        j["phi_sum"] *= grow
        j["methods"]["mano"]["sum_softmax"] = [x * grow for x in j["methods"]["mano"]["sum_softmax"]]
        j["n"] = len(ids)
        j["shards"] = [f"{i:016x}" for i in ids]
        (tmp / name).write_text(json.dumps(j))
        return tmp / name

    proc = run("merge", with_shards("over.json", range(MAX_SHARDS + 1)))
    check(refused(proc, "over.json", f"names {MAX_SHARDS + 1} shards, over the {MAX_SHARDS} a state may name"),
          f"a state over the limit: {proc.stderr!r}")
    half = MAX_SHARDS // 2 + 1
    first, second = with_shards("half0.json", range(half)), with_shards("half1.json", range(half, 2 * half))
    proc = run("merge", first, "--json")
    check(proc.returncode == 0, f"a state of {half} shards loads: {proc.stderr!r}")
    out = tmp / "too_many.json"
    proc = run("merge", first, second, "--emit-state", out)
    check(refused(proc, "half1.json", f"would hold {2 * half} shards, over the {MAX_SHARDS} a state may name")
          and not out.exists(), f"a merge over the limit: {proc.stderr!r}")


with tempfile.TemporaryDirectory() as d:
    tmp = pathlib.Path(d)
    test_names_and_merges(tmp)
    test_checked_on_load(tmp)
finish()

"""The `mano` workflow's failures: kill -9 during a write never leaves a partial file nor loses the
previous one, concurrent writers leave one whole file, inputs are never overwritten; and a bad
input per command -> exit 2 with one stderr line naming it.
Run: /usr/bin/python3 tests/cli/test_workflow_errors.py path/to/mano"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

from workflow_support import MANO, make_shifted_sets, run  # noqa: E402


def test_atomic_writes(tmp):
    """kill -9 at random points of --emit-state and -o never leaves a partial file nor loses the
    previous good one; concurrent writers to one path leave one whole file; inputs are never overwritten."""
    import random
    import signal
    import time
    rng = np.random.default_rng(5)
    big, small = tmp / "atomic_big.npy", tmp / "atomic_small.npy"
    np.save(big, rng.standard_normal((5000, 100)).astype(np.float32))  # a ~10 MB state (COT keeps the rows)
    np.save(small, rng.standard_normal((50, 100)).astype(np.float32))
    state = tmp / "atomic_state.json"
    run("score", small, "--emit-state", state, "--quiet")
    old = state.read_text()
    run("score", big, "--emit-state", tmp / "atomic_new.json", "--quiet")
    new = (tmp / "atomic_new.json").read_text()
    check(old != new and json.loads(new)["n"] == 5000, "two different states to tell apart")
    start = time.monotonic()
    run("score", big, "--emit-state", tmp / "atomic_timing.json", "--quiet")
    duration = time.monotonic() - start
    random.seed(7)
    outcomes = {"previous": 0, "new": 0}
    bad = []
    for trial in range(200):
        proc = subprocess.Popen([MANO, "score", str(big), "--emit-state", str(state), "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(random.uniform(0, duration * 1.1))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        text = state.read_text()
        if text == old:
            outcomes["previous"] += 1
        elif text == new:
            outcomes["new"] += 1
        else:
            bad.append(trial)
        if trial % 2 and text == new:
            state.write_text(old)  # start again from the previous state, to catch a loss of it
    check(not bad, f"kill -9 during --emit-state left a partial or corrupt state in trials {bad[:10]}")
    check(outcomes["previous"] > 0 and outcomes["new"] > 0, f"the kills fell before and after the rename: {outcomes}")
    print(f"kill -9 during --emit-state, 200 trials: {outcomes}")
    # -o of calibrate, killed the same way
    cal_manifest = tmp / "atomic_manifest.json"
    sets = make_shifted_sets(tmp, np.random.default_rng(3), 6)
    cal_manifest.write_text(json.dumps({"sets": sets}))
    cal = tmp / "atomic_cal.json"
    run("calibrate", cal_manifest, "-o", cal, "--quiet")
    good = cal.read_text()
    broken = 0
    for trial in range(50):
        proc = subprocess.Popen([MANO, "calibrate", str(cal_manifest), "-o", str(cal), "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(random.uniform(0, 0.05))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        broken += cal.read_text() != good
    check(broken == 0, f"kill -9 during calibrate -o changed the calibration in {broken} of 50 trials")
    # eight writers at once to one path, ten times: one whole state
    for round_ in range(10):
        procs = [subprocess.Popen([MANO, "score", str(big), "--emit-state", str(state), "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(8)]
        codes = [p.wait() for p in procs]
        check(codes == [0] * 8 and state.read_text() == new, f"8 concurrent --emit-state, round {round_}: {codes}")
    # mano never writes over its inputs
    before = big.read_bytes()
    for args, needle in ((["score", big, "--emit-state", big], "input file"),
                         (["merge", tmp / "atomic_new.json", "--emit-state", tmp / "atomic_new.json"], "input file"),
                         (["calibrate", cal_manifest, "-o", cal_manifest], "input file"),
                         (["calibrate", cal_manifest, "-o", tmp / sets[0]["labels"]], "input file")):
        proc = run(*args)
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and needle in lines[0], f"{args[0]} over an input: {proc.stderr!r}")
    check(big.read_bytes() == before and json.loads(cal_manifest.read_text())["sets"] == sets, "the inputs are unchanged")


def test_bad_inputs(tmp):
    rng = np.random.default_rng(2)
    sets = make_shifted_sets(tmp, rng, 4)
    np.save(tmp / "y_short.npy", np.zeros(10, np.int64))
    good = {"sets": sets}

    def manifest(name, content):
        path = tmp / name
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return path

    cases = [
        (["eval", manifest("m_syntax.json", "{\"sets\": [")], "not valid JSON"),
        (["eval", manifest("m_list.json", [1, 2])], "JSON object"),
        (["eval", manifest("m_nosets.json", {"sets": []})], "non-empty \"sets\""),
        (["eval", manifest("m_key.json", {"sets": sets, "extra": 1})], "unknown key \"extra\""),
        (["eval", manifest("m_setkey.json", {"sets": [dict(sets[0], label="x")] + sets[1:]})], "unknown key \"label\""),
        (["eval", manifest("m_dup.json", {"sets": sets + [sets[0]]})], "used twice"),
        (["eval", manifest("m_nolabels.json", {"sets": [{k: v for k, v in s.items() if k != "labels"} for s in sets]})],
         "no \"labels\""),
        (["eval", manifest("m_missing.json", {"sets": [dict(sets[0], logits="nope.npy")] + sets[1:]})], "nope.npy"),
        (["eval", manifest("m_short.json", {"sets": [dict(sets[0], labels="y_short.npy")] + sets[1:]})], "10 labels"),
        (["eval", manifest("m_two.json", {"sets": sets[:2]})], "at least 3"),
        (["eval", manifest("m_name.json", {"sets": [dict(sets[0], name=3)] + sets[1:]})], "\"name\" must be"),
        (["calibrate", manifest("m_ok.json", good), "--group", "nosuch"], "no set has the group"),
        (["predict", "--calibration", manifest("cal_bad.json", {"format": "x"}), tmp / "set0.npy"], "cal_bad.json"),
        (["predict", "--calibration", manifest("cal_text.json", "hello"), tmp / "set0.npy"], "cal_text.json"),
        (["merge", manifest("state_bad.json", {"format": "mano-accumulator", "version": 2})], "state_bad.json"),
        (["merge", manifest("state_text.json", "[")], "state_text.json"),
        (["score", tmp / "set0.npy", "--rows", "5:2"], "--rows"),
        (["score", tmp / "set0.npy", "--rows", "0:100000"], "--rows"),
        (["score", tmp / "set0.npy", "--rows", "abc"], "--rows"),
        (["score", tmp / "set0.npy", tmp / "set1.npy", "--emit-state", tmp / "s.json"], "--emit-state"),
        (["score", tmp / "set0.npy", "--emit-state", tmp / "no_dir" / "s.json"], "cannot write"),
        (["score", tmp / "set0.npy", "--shape", "3"], "--shape"),
        (["score", tmp / "set0.npy", "--level", "2"], "--level"),
        (["score", tmp / "set0.npy", "--threads", "-1"], "threads"),
        (["score", tmp / "set0.npy", "--json", "--chunk-size", "-1"], "--chunk-size"),
        (["score", tmp / "set0.npy", "--chunk-size", "0"], "--chunk-size"),
        (["score", tmp / "set0.npy", "--chunk-size", "99999999999999999999"], "--chunk-size"),
        (["score", tmp / "set0.npy", "--chunk-size", "1e3"], "--chunk-size"),
        (["predict", "--calibration", tmp / "cal_bad.json"], "give logit files or --manifest"),
    ]
    # every JSON reader: nesting and size limits that do not depend on the input, and no hang on a FIFO
    import os
    import struct
    deep = "[" * 20_000_000
    (tmp / "deep_state.json").write_text(deep)
    (tmp / "deep_cal.json").write_text("{\"a\": " * 100 + "1" + "}" * 100)
    (tmp / "deep_marginal.json").write_text("[" * 70 + "]" * 70)
    (tmp / "deep_manifest.json").write_text("{\"sets\": " + "[" * 100 + "]" * 100 + "}")
    with open(tmp / "huge_manifest.json", "w") as f:
        f.write(" " * (64 << 20) + "{}")
    os.mkfifo(tmp / "fifo.json")
    (tmp / "big_header.safetensors").write_bytes(struct.pack("<Q", 200_000_000) + b"{}")
    # a key twice in one object: NumPy-like readers keep one value or the other; mano refuses
    dup_header = (b'{"logits":{"dtype":"F32","shape":[2,10],"data_offsets":[0,80]},'
                  b'"logits":{"dtype":"F32","shape":[1,10],"data_offsets":[0,40]}}')
    (tmp / "dup_key.safetensors").write_bytes(struct.pack("<Q", len(dup_header)) + dup_header + bytes(80))
    (tmp / "dup_manifest.json").write_text('{"sets": [], "sets": ' + json.dumps(sets) + '}')
    cases += [
        (["merge", tmp / "deep_state.json"], "nests deeper than 64 levels"),
        (["predict", "--calibration", tmp / "deep_cal.json", tmp / "set0.npy"], "nests deeper than 64 levels"),
        (["score", tmp / "set0.npy", "--label-marginal", tmp / "deep_marginal.json", "--methods", "cot"], "nests deeper"),
        (["eval", tmp / "deep_manifest.json"], "nests deeper than 64 levels"),
        (["eval", tmp / "huge_manifest.json"], "-byte limit"),
        (["merge", tmp / "fifo.json"], "not a readable regular file"),
        (["predict", "--calibration", tmp / "fifo.json", tmp / "set0.npy"], "not a readable regular file"),
        (["score", tmp / "big_header.safetensors"], "over the format's limit of 100000000 bytes"),
        (["score", tmp / "dup_key.safetensors"], "has the key \"logits\" twice in one object"),
        (["eval", tmp / "dup_manifest.json"], "has the key \"sets\" twice in one object"),
    ]
    for args, needle in cases:
        proc = run(*args)
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and needle in lines[0],
              f"{[str(a).replace(str(tmp), '') for a in args]}: exit {proc.returncode}, {proc.stderr!r}")
    # tampered states and calibrations: counts, ranges and keys are checked on load
    good_state = tmp / "good_state.json"
    run("score", tmp / "set0.npy", "--emit-state", good_state, "--quiet")
    cal_path = tmp / "good_cal.json"
    run("calibrate", tmp / "m_ok.json", "-o", cal_path, "--quiet")
    base_state, base_cal = json.loads(good_state.read_text()), json.loads(cal_path.read_text())

    def tampered(name, source, change):
        j = json.loads(json.dumps(source))
        change(j)
        (tmp / name).write_text(json.dumps(j))
        return tmp / name

    state_cases = [
        (lambda j: j["max_prob"].__setitem__(0, j["n"] * 2.83), "inconsistent"),
        (lambda j: j.__setitem__("phi_sum", -j["phi_sum"]), "inconsistent"),
        (lambda j: j["methods"]["mde"].__setitem__("exp_sum", -1.0), "inconsistent"),
        (lambda j: j.__setitem__("k", -10), "\"k\" must be a whole number >= 0"),
        (lambda j: j.__setitem__("n", -5), "\"n\" must be a whole number >= 0"),
        (lambda j: j.__setitem__("surprise", 1), "unknown key \"surprise\""),
    ]
    for i, (change, needle) in enumerate(state_cases):
        proc = run("merge", tampered(f"tampered_state{i}.json", base_state, change))
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and needle in lines[0], f"tampered state {i}: {proc.stderr!r}")
    first = next(iter(base_cal["methods"]))
    cal_cases = [
        (lambda j: j["methods"][first].__setitem__("n", -5), "must be a whole number >= 0"),
        (lambda j: j["methods"][first].__setitem__("score_sxx", 0), "inconsistent"),
        (lambda j: j["methods"][first].__setitem__("extra", 0), "unknown key \"extra\""),
        (lambda j: j.__setitem__("k", -10), "must be a whole number >= 0"),
        (lambda j: j.__setitem__("surprise", 1), "unknown key \"surprise\""),
    ]
    flags = base_cal["methods"][first]["folds"][0].get("copy", [])
    check(True in flags and False in flags, f"the folds mark the label-shift copies' residuals: {flags}")
    cal_cases += [  # a copy passed off as a set, a set as a copy, a flag that is not a boolean
        (lambda j: j["methods"][first]["folds"][0]["copy"].__setitem__(flags.index(True), False), "inconsistent"),
        (lambda j: j["methods"][first]["folds"][0]["copy"].__setitem__(flags.index(False), True), "inconsistent"),
        (lambda j: j["methods"][first]["folds"][0]["copy"].__setitem__(flags.index(True), 1), "inconsistent"),
    ]
    for i, (change, needle) in enumerate(cal_cases):
        proc = run("predict", "--calibration", tampered(f"tampered_cal{i}.json", base_cal, change), tmp / "set0.npy")
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and needle in lines[0], f"tampered calibration {i}: {proc.stderr!r}")
    # output that cannot be written is a failure
    with open("/dev/full", "w") as full:
        proc = subprocess.run([MANO, "score", str(tmp / "set0.npy"), "--json"], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    check(proc.returncode == 1 and "cannot write the output" in proc.stderr, f"stdout to /dev/full: {proc.returncode} {proc.stderr!r}")
    # merging shards scored with different options
    a, b = tmp / "sa.json", tmp / "sb.json"
    run("score", tmp / "set0.npy", "--emit-state", a, "--quiet")
    run("score", tmp / "set1.npy", "--emit-state", b, "--p", "3", "--quiet")
    proc = run("merge", a, b)
    check(proc.returncode == 2 and "different p" in proc.stderr and "sb.json" in proc.stderr, f"merge p: {proc.stderr!r}")
    # a calibration fitted for 10 classes refuses 5-class logits
    cal = tmp / "cal10.json"
    proc = run("calibrate", manifest("m_ok.json", good), "-o", cal, "--quiet")
    np.save(tmp / "k5.npy", rng.standard_normal((50, 5)).astype(np.float32))
    proc = run("predict", "--calibration", cal, tmp / "k5.npy")
    check(proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, f"predict K mismatch: {proc.stderr!r}")
    # a file of 0 rows: the one error, no size warning about the methods that keep rows before it
    np.save(tmp / "empty.npy", np.zeros((0, 10), np.float32))
    proc = run("predict", "--calibration", cal, tmp / "empty.npy")
    lines = proc.stderr.strip().splitlines()
    check(proc.returncode == 2 and len(lines) == 1 and "empty.npy: no rows to score" in lines[0], f"predict 0 rows: {proc.stderr!r}")


with tempfile.TemporaryDirectory() as d:
    tmp = pathlib.Path(d)
    test_atomic_writes(tmp)
    test_bad_inputs(tmp)
finish()

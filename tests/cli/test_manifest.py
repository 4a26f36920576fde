"""Manifests and what `mano` prints from them: a manifest reads only files inside its own folder
unless --allow-outside-paths is given (absolute paths, '..', symbolic links); set names and
paths are printed with control characters escaped; names are bounded; a NaN in --features names
the features file; numeric options refuse nan, inf and out-of-range values with exit 2.
Run: /usr/bin/python3 tests/cli/test_manifest.py path/to/mano"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

MANO = os.path.abspath(sys.argv[1])
ESC = "\x1b"


def run(*args, cwd=None):
    return subprocess.run([MANO, *map(str, args)], capture_output=True, timeout=300, cwd=cwd)


def text(stream):
    return stream.decode("utf-8", errors="replace")


def one_error(proc, needle, what):
    """Exit 2, one line on stderr that holds `needle`, and no raw control character in it."""
    err = text(proc.stderr)
    lines = err.strip().splitlines()
    ok = proc.returncode == 2 and len(lines) == 1 and needle in lines[0] and ESC not in err
    check(ok, f"{what}: exit {proc.returncode}, {err!r}")
    return lines[0] if lines else ""


def write_manifest(path, content):
    path.write_text(json.dumps(content))
    return path


def make_sets(folder, rng, count=4, n=60, k=5):
    sets = []
    for i in range(count):
        q = (rng.standard_normal((n, k)) * (1 + i)).astype(np.float32)
        y = rng.integers(0, k, n)
        np.save(folder / f"s{i}_logits.npy", q)
        np.save(folder / f"s{i}_labels.npy", y)
        sets.append({"name": f"s{i}", "logits": f"s{i}_logits.npy", "labels": f"s{i}_labels.npy"})
    return sets


def test_confinement(tmp, rng):
    data, outside = tmp / "data", tmp / "outside"
    data.mkdir()
    outside.mkdir()
    sets = make_sets(data, rng)
    np.save(outside / "o_logits.npy", rng.standard_normal((60, 5)).astype(np.float32))
    np.save(outside / "o_labels.npy", rng.integers(0, 5, 60))
    os.symlink(outside / "o_logits.npy", data / "link_out.npy")
    os.symlink(data / "s3_logits.npy", data / "link_in.npy")
    os.symlink(data, tmp / "data_link")
    (data / "sub").mkdir()

    def with_last(**change):
        return {"sets": sets[:3] + [dict(sets[3], **change)]}

    # paths that stay inside the folder, written in every way a user might
    inside = {
        "ok.json": {"sets": sets},
        "dots.json": with_last(logits="./sub/../s3_logits.npy"),
        "absolute_inside.json": with_last(logits=str(data / "s3_logits.npy")),
        "link_inside.json": with_last(logits="link_in.npy"),
    }
    reference = None
    for name, content in inside.items():
        proc = run("eval", write_manifest(data / name, content), "--json", "--quiet", "--methods", "mano")
        check(proc.returncode == 0, f"{name}: exit {proc.returncode}, {text(proc.stderr)!r}")
        if proc.returncode == 0:
            report = json.loads(proc.stdout)
            reference = reference or report["sets"]
            check(report["sets"] == reference, f"{name}: the same sets as ok.json")
    # the manifest reached through a symbolic link to its folder, and from inside its folder
    proc = run("eval", tmp / "data_link" / "ok.json", "--quiet", "--methods", "mano")
    check(proc.returncode == 0, f"manifest through a linked folder: {text(proc.stderr)!r}")
    proc = run("eval", "ok.json", "--quiet", "--methods", "mano", cwd=data)
    check(proc.returncode == 0, f"manifest in the working directory: {text(proc.stderr)!r}")
    proc = run("eval", write_manifest(data / "missing.json", with_last(logits="nope.npy")), "--quiet")
    one_error(proc, "nope.npy: cannot open", "a missing file inside the folder is still 'cannot open'")

    # paths that leave it: refused before anything is read, naming the set and the key
    hint = "leaves the manifest's folder; pass --allow-outside-paths to read it"
    leaving = [
        ("dotdot.json", with_last(logits="../outside/o_logits.npy"),
         "dotdot.json: sets[3].logits: '../outside/o_logits.npy' " + hint),
        ("passwd.json", with_last(labels="../../../../../../../../etc/passwd"),
         "passwd.json: sets[3].labels: '../../../../../../../../etc/passwd' " + hint),
        ("absolute.json", with_last(labels="/etc/passwd"), "absolute.json: sets[3].labels: '/etc/passwd' " + hint),
        ("absolute_out.json", with_last(logits=str(outside / "o_logits.npy")), "sets[3].logits: '" + str(outside)),
        ("link_out.json", with_last(logits="link_out.npy"),
         "sets[3].logits: 'link_out.npy' leaves the manifest's folder (through a symbolic link, to '" +
         str((outside / "o_logits.npy").resolve()) + "'); pass --allow-outside-paths"),
        ("source_out.json", {"source": {"logits": "../outside/o_logits.npy", "labels": "s0_labels.npy"}, "sets": sets},
         "source_out.json: source.logits: '../outside/o_logits.npy' " + hint),
        ("source_labels_out.json", {"source": {"logits": "s0_logits.npy", "labels": "/etc/shadow"}, "sets": sets},
         "source.labels: '/etc/shadow' " + hint),
        ("first_set.json", {"sets": [dict(sets[0], logits="../outside/o_logits.npy")] + sets[1:]}, "sets[0].logits"),
    ]
    for name, content, needle in leaving:
        manifest = write_manifest(data / name, content)
        one_error(run("eval", manifest, "--quiet"), needle, f"eval {name}")
    manifest = data / "dotdot.json"
    cal = tmp / "cal.json"
    one_error(run("calibrate", manifest, "-o", cal, "--quiet"), "sets[3].logits", "calibrate refuses it too")
    check(not cal.exists(), "nothing written by a refused calibrate")
    proc = run("calibrate", data / "ok.json", "-o", cal, "--quiet", "--methods", "mano,confscore")
    check(proc.returncode == 0, f"calibrate ok.json: {text(proc.stderr)!r}")
    one_error(run("predict", "--calibration", cal, "--manifest", manifest, "--quiet"), "sets[3].logits",
              "predict --manifest refuses it too")

    # --allow-outside-paths: every command reads them, and the outside set is the file it names
    proc = run("eval", manifest, "--json", "--quiet", "--methods", "mano", "--allow-outside-paths")
    check(proc.returncode == 0, f"eval --allow-outside-paths: {text(proc.stderr)!r}")
    if proc.returncode == 0:
        got = json.loads(proc.stdout)["sets"][3]
        truth = np.mean(np.load(outside / "o_logits.npy").argmax(1) == np.load(data / "s3_labels.npy"))
        check(abs(got["accuracy"] - truth) < 1e-12, f"the outside file is the one scored: {got['accuracy']} vs {truth}")
    for args in (["calibrate", manifest, "-o", tmp / "cal_out.json"],
                 ["predict", "--calibration", cal, "--manifest", manifest],
                 ["eval", data / "link_out.json"], ["eval", data / "source_out.json"]):
        proc = run(*args, "--quiet", "--allow-outside-paths")
        check(proc.returncode == 0, f"{args[0]} --allow-outside-paths: {text(proc.stderr)!r}")

    # paths the operating system would read otherwise than they are written
    one_error(run("eval", write_manifest(data / "nul.json", with_last(logits="s3_logits.npy\0/../../etc/passwd")),
                  "--allow-outside-paths"), "sets[3].logits: 's3_logits.npy\\x00/../../etc/passwd' holds a NUL character",
              "a NUL in a path")
    one_error(run("eval", write_manifest(data / "long_path.json", with_last(logits="a/" * 3000))),
              "sets[3].logits: the path is 6000 bytes long; paths are at most 4096 bytes", "a path over 4096 bytes")


def test_names(tmp, rng):
    folder = tmp / "names"
    folder.mkdir()
    sets = make_sets(folder, rng)

    def with_last(**change):
        return {"sets": sets[:3] + [dict(sets[3], **change)]}

    # hostile names: a screen clear, a C1 CSI, a right-to-left override, a newline; é is kept
    names = ["a\x1b[2Jb", "c\u009b31md", "e\u202egnp.exe", "f\ng|h", "été"]
    shown = ["a\\x1b[2Jb", "c\\xc2\\x9b31md", "e\\xe2\\x80\\xaegnp.exe", "f\\x0ag|h", "été"]
    hostile = write_manifest(folder / "hostile.json",
                             {"sets": [dict(s, name=n, group="grp\x1b[2J") for s, n in zip(sets + sets[:1], names)]})
    proc = run("eval", hostile, "--quiet", "--methods", "mano")
    out = text(proc.stdout)
    check(proc.returncode == 0, f"eval with hostile names: {text(proc.stderr)!r}")
    check(all(ord(c) >= 0x20 or c == "\n" for c in out) and "\u009b" not in out and "\u202e" not in out,
          f"eval's table holds no control character: {out!r}")
    check(all(s in out for s in shown), f"eval shows each name escaped: {out!r}")
    check("group grp\\x1b[2J" in out, f"eval's group headings are escaped: {out!r}")
    proc = run("eval", hostile, "--quiet", "--methods", "mano", "--markdown")
    out = text(proc.stdout)
    check(ESC not in out and "| f\\x0ag\\|h |" in out, f"--markdown escapes controls and '|': {out!r}")
    proc = run("eval", hostile, "--quiet", "--methods", "mano", "--json")
    check(proc.returncode == 0 and [s["name"] for s in json.loads(proc.stdout)["sets"]] == names,
          "JSON keeps the names as they are")
    cal = tmp / "names_cal.json"
    run("calibrate", write_manifest(folder / "plain.json", {"sets": sets}), "-o", cal, "--quiet",
        "--methods", "mano,confscore")
    proc = run("predict", "--calibration", cal, "--manifest", hostile, "--quiet")
    out, err = text(proc.stdout), text(proc.stderr)
    check(proc.returncode == 0 and ESC not in out + err and "a\\x1b[2Jb" in out,
          f"predict's table and warnings are escaped: {out!r} {err!r}")

    # error messages quote names, keys and paths escaped, on one line
    np.save(folder / "short_labels.npy", np.zeros(10, np.int64))
    one_error(run("eval", write_manifest(folder / "mismatch.json", with_last(name="x\x1b[2J", labels="short_labels.npy"))),
              "(set \"x\\x1b[2J\")", "a label-count error names the set escaped")
    one_error(run("eval", write_manifest(folder / "esc_path.json", with_last(logits="gone\x1b[2J.npy"))),
              "gone\\x1b[2J.npy: cannot open", "a missing file's name is escaped")
    one_error(run("eval", write_manifest(folder / "esc_key.json", {"sets": sets, "x\x1b[2J": 1})),
              "unknown key \"x\\x1b[2J\"", "an unknown key is escaped")
    one_error(run("eval", write_manifest(folder / "esc_dup.json", {"sets": sets + [dict(sets[0], name="a\x1b")] * 2})),
              "the set name \"a\\x1b\" is used twice", "a repeated name is escaped")
    one_error(run("eval", write_manifest(folder / "m.json", {"sets": sets}), "--group", "\x1b[2J"),
              "no set has the group \"\\x1b[2J\"", "a --group from the command line is escaped")
    hostile_file = folder / "evil\x1b[2J.npy"
    np.save(hostile_file, np.full((3, 4), np.nan, np.float32))
    one_error(run("score", hostile_file), "evil\\x1b[2J.npy: row 0, column 0: logit is NaN",
              "a file name from a folder is escaped in errors")

    # bounds: empty names, names over 256 bytes, text that is not UTF-8
    one_error(run("eval", write_manifest(folder / "empty.json", with_last(name=""))),
              "sets[3]: \"name\" must be a non-empty string", "an empty name")
    one_error(run("eval", write_manifest(folder / "empty_group.json", with_last(group=""))),
              "sets[3]: \"group\" must be a non-empty string", "an empty group")
    one_error(run("eval", write_manifest(folder / "long.json", with_last(name="x" * 257))),
              "sets[3]: \"name\" 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is 257 bytes long; names are at most 256 bytes",
              "a name over 256 bytes")
    one_error(run("eval", write_manifest(folder / "long_group.json", with_last(group="é" * 129))),
              "\"group\"", "a group over 256 bytes")
    proc = run("eval", write_manifest(folder / "longest.json", with_last(name="x" * 256)), "--quiet", "--methods", "mano")
    check(proc.returncode == 0, f"a name of 256 bytes is fine: {text(proc.stderr)!r}")
    raw = json.dumps(with_last(name="PLACE")).encode()
    (folder / "latin1.json").write_bytes(raw.replace(b"PLACE", b"caf\xe9"))
    one_error(run("eval", folder / "latin1.json"), "ill-formed UTF-8", "a name that is not UTF-8")
    (folder / "surrogate.json").write_text(json.dumps(with_last(name="PLACE")).replace("PLACE", "\\ud800"))
    one_error(run("eval", folder / "surrogate.json"), "surrogate", "a lone UTF-16 surrogate")


def test_extra_inputs(tmp, rng):
    n = 20000  # several threads' worth of rows
    logits = tmp / "q.npy"
    np.save(logits, rng.standard_normal((n, 5)).astype(np.float32))
    features = rng.standard_normal((n, 8)).astype(np.float32)
    features[15001, 3] = np.nan
    np.save(tmp / "feat_nan.npy", features)
    second = rng.standard_normal((n, 5)).astype(np.float64)
    second[12345, 2] = -np.inf
    np.save(tmp / "second_inf.npy", second)
    for threads in ("1", "4"):
        line = one_error(run("score", logits, "--features", tmp / "feat_nan.npy", "--threads", threads, "--quiet"),
                         "feat_nan.npy: row 15001, column 3: feature is NaN", f"NaN feature, {threads} thread(s)")
        check("q.npy" not in line, f"the NaN feature's message does not name the logits file: {line!r}")
        line = one_error(run("score", logits, "--second-logits", tmp / "second_inf.npy", "--threads", threads, "--quiet"),
                         "second_inf.npy: row 12345, column 2: logit is -Inf", f"-Inf second logit, {threads} thread(s)")
        check("q.npy" not in line, f"the second logits' message does not name the logits file: {line!r}")
    line = one_error(run("score", logits, "--features", tmp / "feat_nan.npy", "--rows", "15000:16000", "--quiet"),
                     "feat_nan.npy: row 15001, column 3", "rows count from the file's start with --rows")
    np.save(tmp / "feat_ok.npy", np.nan_to_num(features))
    proc = run("score", logits, "--features", tmp / "feat_ok.npy", "--quiet", "--methods", "dispersion")
    check(proc.returncode == 0, f"finite features score: {text(proc.stderr)!r}")


def test_numeric_options(tmp, rng):
    folder = tmp / "options"
    folder.mkdir()
    sets = make_sets(folder, rng)
    logits = folder / "s0_logits.npy"
    manifest = write_manifest(folder / "m.json", {"sets": sets})
    cal = folder / "cal.json"
    run("calibrate", manifest, "-o", cal, "--quiet", "--methods", "mano")
    score = ["score", logits]
    cases = []
    for value in ("nan", "NaN", "inf", "-inf", "1", "0.5", "-3", "1e400", "abc", "4x", ""):
        cases.append((score + ["--p", value], "--p: must be a finite number > 1"))
    for option in ("--eta", "--criterion"):
        for value in ("nan", "inf", "-inf", "1e999", "x"):
            cases.append((score + [option, value], f"{option}: must be a finite number"))
    for command in (score + ["--calibration", cal], ["predict", "--calibration", cal, logits]):
        # 0.9999999999999999: 0.5 + level / 2 rounds to 1, so its t quantile is infinite
        for value in ("nan", "inf", "0", "1", "-0.5", "1.5", "1e-400", "0.9999999999999999", "0.9999995"):
            cases.append((command + ["--level", value], "--level: must be a finite number in (0, 0.999999]"))
    for value in ("0", "171", "-1", "1.5", "2e0", "99999999999999999999"):
        cases.append((score + ["--taylor-order", value], "--taylor-order: must be a whole number >= 1 and <= 170"))
    for value in ("0", "2,171", "2,-1", "2,x"):
        cases.append((["eval", manifest, "--taylor-orders", value], "--taylor-orders: must be a whole number >= 1 and <= 170"))
    for value in ("-1", "1e3", "1.5", "99999999999999999999"):
        cases.append((score + ["--batch-size", value], "--batch-size: must be a whole number >= 0"))
    for value in ("-1", "1025", "99999999999"):
        cases.append((score + ["--threads", value], "--threads: must be a whole number >= 0 and <= 1024"))
    for value in ("inf", "nan", "0", "-1", "1e999"):
        cases.append((score + ["--temperature", value], "--temperature: must be 'fit' or a finite number > 0"))
    cases += [
        (score + ["--chunk-size", "0"], "--chunk-size: must be a whole number >= 1"),
        (["calibrate", manifest, "--seed", "-1"], "--seed: must be a whole number >= 0"),
        (["infer", "--resize", "100000"], "--resize: must be a whole number >= 1 and <= 16384"),
        (["infer", "--crop", "0"], "--crop: must be a whole number >= 1 and <= 16384"),
        (["infer", "--workers", "5000"], "--workers: must be a whole number >= 0 and <= 1024"),
        (["infer", "--batch-size", "1000000000"], "--batch-size: must be a whole number >= 1 and <= 65536"),
        (["infer", "--level", "nan"], "--level: must be a finite number in (0, 0.999999]"),
    ]
    for args, needle in cases:
        line = one_error(run(*args), needle, " ".join(map(str, args)).replace(str(folder), ""))
        check(line.startswith("mano: error: --"), f"{args[2:]}: the message starts with the option: {line!r}")
    # values at the edges of each range are accepted
    for args in (["--p", "1.0001"], ["--p", "64"], ["--eta", "-1e300"], ["--taylor-order", "170"],
                 ["--threads", "1024"], ["--batch-size", "0"], ["--temperature", "1e-3"], ["--criterion", "0"]):
        proc = run("score", logits, "--quiet", "--methods", "mano", *args)
        check(proc.returncode == 0, f"{args}: exit {proc.returncode}, {text(proc.stderr)!r}")
    proc = run("predict", "--calibration", cal, logits, "--level", "0.999")
    check(proc.returncode == 0, f"--level 0.999: {text(proc.stderr)!r}")


with tempfile.TemporaryDirectory() as d:
    tmp = pathlib.Path(d)
    rng = np.random.default_rng(16)
    test_confinement(tmp, rng)
    test_names(tmp, rng)
    test_extra_inputs(tmp, rng)
    test_numeric_options(tmp, rng)
finish()

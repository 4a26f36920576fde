"""The reader spec (tests/readers/spec/expected.json) against the native readers (native/io),
through tests/readers/dump.cpp: each case's file read as logits (matrix) or labels must give
exactly the values and shape the spec says, or exit 2 with one stderr line that names the file and
holds the spec's phrase. web/test/reader_spec.test.js holds the npm package to the same cases.
Run: /usr/bin/python3 tests/readers/test_spec.py path/to/mano_io_dump"""
import json
import math
import pathlib
import struct
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

SPEC = pathlib.Path(__file__).resolve().parent / "spec"
DUMP = sys.argv[1]
SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}


def same(got, want):
    """Bit-for-bit as a reader sees it: NaN equals NaN, and -0 is not 0."""
    want = SPECIAL.get(want, want)
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


def arguments(options):
    args = []
    if "key" in options:
        args += ["--key", options["key"]]
    if "label_column" in options:
        args += ["--label-column", str(options["label_column"])]
    if "header" in options:
        args += ["--header", "yes" if options["header"] else "no"]
    if "shape" in options:
        args += ["--shape", ",".join(map(str, options["shape"]))]
    return args


def run(case, chunk):
    path = SPEC / case["file"]
    args = [DUMP, case["kind"], str(path), *arguments(case.get("options", {}))]
    if case["kind"] == "matrix":
        args += ["--chunk", str(chunk)]
    return path, subprocess.run(args, capture_output=True, timeout=60)


def check_case(case):
    outcome = case.get("native", case["expect"])
    what = f"{case['id']}" + (" (native outcome)" if "native" in case else "")
    for chunk in (1, 1000) if case["kind"] == "matrix" else (None,):
        path, proc = run(case, chunk)
        stderr = proc.stderr.decode(errors="replace").strip()
        if "error" in outcome:
            phrase = outcome["error"]
            phrase = phrase["native"] if isinstance(phrase, dict) else phrase
            lines = stderr.splitlines()
            ok = proc.returncode == 2 and len(lines) == 1 and path.name in lines[0]
            check(ok and (phrase == "*" or phrase in lines[0]),
                  f"{what}: want an error holding {phrase!r}, got exit {proc.returncode}, stderr {stderr!r}")
            continue
        if proc.returncode != 0:
            check(False, f"{what}: exit {proc.returncode}: {stderr}")
            continue
        if case["kind"] == "labels":
            got = list(struct.unpack(f"<{len(proc.stdout) // 8}q", proc.stdout))
            check(got == outcome["values"], f"{what}: labels {got}, want {outcome['values']}")
            continue
        got = struct.unpack(f"<{len(proc.stdout) // 8}d", proc.stdout)
        header = f"{outcome['rows']} {outcome['cols']} {outcome['dtype']}"
        lines = stderr.splitlines()
        notes = [line[len("note: "):] for line in lines[:-1] if line.startswith("note: ")]
        want_notes = case.get("notes", [])
        check(len(notes) == len(want_notes) == len(lines) - 1 and all(p in n for p, n in zip(want_notes, notes)),
              f"{what}: notes {notes}, want one holding each of {want_notes}")
        ok = lines[-1].rsplit(" ", 1)[0] == header and len(got) == len(outcome["values"])
        bad = [i for i, (g, w) in enumerate(zip(got, outcome["values"])) if not same(g, w)]
        check(ok and not bad, f"{what} (chunks of {chunk} rows): got {stderr!r} {list(got)[:8]}, want {header!r} "
                              f"{outcome['values'][:8]}" + (f"; first difference at {bad[0]}" if bad else ""))


def main():
    spec = json.loads((SPEC / "expected.json").read_text())
    ran = 0
    for case in spec["cases"]:
        if "native" in case.get("targets", ["native", "js"]):
            check_case(case)
            ran += 1
    check(ran > 100, f"only {ran} cases ran")
    finish(f"reader spec ({ran} cases): ")


if __name__ == "__main__":
    main()

"""The K = 1000 table of issue 44: whole `mano score` processes on float32 logits with a labeled
10000 x 1000 source, each method alone and the default set against `--methods mano` in the same
run, with the peak RSS of each process; and NumPy (SciPy's L-BFGS, float64) computing the same
MLLS and CBPE (bench/perf/anchors.py, label_shift_anchors), with their values beside mano's.

  /usr/bin/python3 bench/perf/k1000.py build/release/native/mano [ROWS ...] > k1000.md

ROWS: the target sizes (default 10000 50000). The logits are made here (seeded; the target's
logits shifted from the source's) in a temporary folder. Prints Markdown: median seconds of 7
runs (3 for MLLS, 1 for the NumPy anchors; MaNo alone takes about 20 ms at 50000 x 1000, so a few
runs' noise moves its ratios), ratios to MaNo alone from the same run, RSS in MB."""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from anchors import label_shift_anchors  # noqa: E402

K = 1000


def logits(rows, seed, shift):
    """Random logits whose true class stands out by about 3 - shift standard deviations."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, rows)
    z = rng.normal(0, 1, (rows, K)).astype(np.float32)
    z[np.arange(rows), y] += rng.normal(3.0 - shift, 1.0, rows).astype(np.float32)
    return (2 * z).astype(np.float32), y


def timed(command, repeats=7):
    """Median seconds of `repeats` runs and the largest peak RSS (MB) among them, and the output."""
    times, rss, out = [], 0.0, ""
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", *command], capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(command)} failed: {proc.stderr.strip()}")
        rss = max(rss, int(proc.stderr.strip().splitlines()[-1]) / 1024)
        out = proc.stdout
    return float(np.median(times)), rss, out


def main(mano, sizes):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        qs, ys = logits(10000, 1, 0.0)
        np.save(tmp / "source.npy", qs)
        np.save(tmp / "labels.npy", ys.astype(np.int64))
        source = ["--source-logits", str(tmp / "source.npy"), "--source-labels", str(tmp / "labels.npy")]
        print(f"K = {K}, a labeled 10000 x {K} source; {os.cpu_count()} cores; mano: {mano}\n")
        print("| target | MaNo alone (s) | method | seconds | × MaNo | RSS (MB) | value |")
        print("|---|---|---|---|---|---|---|")
        for rows in sizes:
            qt, _ = logits(rows, 1 + rows, 0.5)
            target = tmp / f"t{rows}.npy"
            np.save(target, qt)
            score = [mano, "score", str(target), "--json"]
            base, base_rss, _ = timed([*score, "--methods", "mano"])
            print(f"| {rows}×{K} | {base:.3f} | mano | {base:.3f} | 1.0× | {base_rss:.0f} | |")
            cases = [("mano, source given", [*source, "--methods", "mano"]), ("mlls", [*source, "--methods", "mlls"]),
                     ("cbpe", [*source, "--methods", "cbpe"]), ("cot", ["--methods", "cot"]),
                     ("default set, source given", source)]
            for name, extra in cases:
                if name == "default set + mlls + cot":
                    extra = [*source, "--methods", extra]
                seconds, rss, out = timed([*score, *extra], 3 if "mlls" in name else 7)
                methods = json.loads(out.splitlines()[0])["methods"]
                shown = {m: v.get("accuracy") for m, v in methods.items() if m in ("mlls", "cbpe", "cot")}
                if name == "default set, source given":
                    named = ",".join(sorted(set(methods) | {"mlls", "cot"}))
                    cases.append(("default set + mlls + cot", named))
                label = name if name != "default set, source given" else f"default set, source given ({len(methods)} methods)"
                value = ", ".join(f"{m} {v:.6f}" for m, v in shown.items() if v is not None)
                print(f"| {rows}×{K} | {base:.3f} | {label} | {seconds:.3f} | {seconds / base:.1f}× | {rss:.0f} | {value} |")
        print("\nNumPy (float64) computing the same MLLS and CBPE on the same files "
              "(bench/perf/anchors.py, label_shift_anchors):\n")
        print("| target | step | NumPy seconds | mano seconds (whole process) | NumPy / mano | NumPy value | mano value |")
        print("|---|---|---|---|---|---|---|")
        for rows in sizes:
            qt = np.load(tmp / f"t{rows}.npy")
            anchor = label_shift_anchors(qs, ys, qt)
            score = [mano, "score", str(tmp / f"t{rows}.npy"), "--json", *source]
            for name in ("mlls", "cbpe"):
                seconds, _, out = timed([*score, "--methods", name], 3)
                got = json.loads(out.splitlines()[0])["methods"][name]["accuracy"]
                print(f"| {rows}×{K} | {name} ({anchor[name + '_detail']}) | {anchor[name]:.2f} | {seconds:.3f} | "
                      f"{anchor[name] / seconds:.1f}× | {anchor[name + '_value']:.8f} | {got:.8f} |")


if __name__ == "__main__":
    main(sys.argv[1], [int(x) for x in sys.argv[2:]] or [10000, 50000])

"""Every kernel of a `mano` binary against the float64 NumPy references, through the CLI: the
golden cases (tests/golden/mano.json and baselines.json, written by the generators beside them)
and cases generated here (MaNo, ConfScore, Entropy, Nuclear on random logits), each under
MANO_ARCH=<kernel>, within 1e-6 relative. Kernels the binary has but this CPU cannot run are
named as skipped. With --compare OTHER, every value must also equal OTHER's (another build of
mano, e.g. the x86-64 one beside an aarch64 one) within 1e-6 relative.
Run: /usr/bin/python3 tests/cli/test_kernels.py MANO [--emulator CMD] [--compare OTHER]
(--emulator runs MANO through a command, e.g. qemu-aarch64)."""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

tests = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(tests / "reference"))
from baselines_reference import baselines  # noqa: E402
from harness import check, finish  # noqa: E402
from mano_reference import criterion, mano  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("mano")
parser.add_argument("--emulator", default="")
parser.add_argument("--compare", default="")
args = parser.parse_args()
MANO = [*args.emulator.split(), args.mano]
BASELINES = ["confscore", "entropy", "nuclear", "mde", "cot", "confscore_softrun", "nuclear_softrun"]


def run(command, *cli, arch=None):
    env = dict(os.environ)
    env.pop("MANO_ARCH", None)
    if arch:
        env["MANO_ARCH"] = arch
    return subprocess.run([*command, *map(str, cli)], capture_output=True, text=True, timeout=600, env=env)


def kernels(command):
    """(compiled, runnable here) from `mano --version`."""
    lines = run(command, "--version").stdout.splitlines()
    field = {line.split(":")[0]: line.split(":", 1)[1] for line in lines if ":" in line}
    compiled = [k.strip() for k in field["kernels compiled"].split(",")]
    runs = [k.strip() for k in field["kernels this CPU runs"].split("(")[0].split(",")]
    return compiled, runs


def mano_cli_options(options):
    flags = {"p": "--p", "eta": "--eta", "taylor_order": "--taylor-order", "normalization": "--normalization",
             "batch_size": "--batch-size", "fixed_criterion": "--criterion"}
    return [x for key, value in options.items() for x in (flags[key], value)]


def cases(tmp):
    """(name, file, cli arguments, expected {method: {key: value}}, keys to compare) for every case."""
    out = []
    golden = json.loads((tests / "golden" / "mano.json").read_text())["cases"]
    for c in golden:
        e = c["expected"]
        expected = {"mano": {"score": e["score"], "criterion": e["criterion"]}}
        out.append((c["name"], tests / c["file"], ["--methods", "mano", *mano_cli_options(c["options"])], expected,
                    e["normalization"]))
    for c in json.loads((tests / "golden" / "baselines.json").read_text())["cases"]:
        out.append((c["name"], tests / c["file"],
                    ["--methods", ",".join(BASELINES), "--temperature", c["temperature"]], c["expected"], None))
    # cases made here: random logits of several shapes, scales and dtypes
    rng = np.random.default_rng(2026)
    for i, (n, k, scale, dtype) in enumerate([(200, 10, 3.0, np.float32), (64, 100, 1.0, np.float32),
                                              (30, 1000, 0.5, np.float64), (500, 3, 8.0, np.float32),
                                              (40, 37, 20.0, np.float16), (17, 129, 4.0, np.float32)]):
        q = (rng.standard_normal((n, k)) * scale).astype(dtype)
        path = tmp / f"generated_{i}.npy"
        np.save(path, q)
        q64 = q.astype(np.float64)
        for normalization in ("softmax", "taylor"):
            m = mano(q64, normalization=normalization)
            expected = {"mano": {"score": m["score"], "criterion": criterion(q64)}}
            if normalization == "softmax":
                reference = baselines(q64)
                expected.update({name: reference[name] for name in ("confscore", "entropy", "nuclear")})
            methods = ",".join(expected)
            out.append((f"generated {n}x{k} {np.dtype(dtype).name} {normalization}", path,
                        ["--methods", methods, "--normalization", normalization], expected, normalization))
    return out


def score(command, arch, case):
    name, path, cli, _, _ = case
    proc = run(command, "score", path, "--json", *cli, arch=arch)
    if proc.returncode != 0:
        return None, f"exit {proc.returncode}: {proc.stderr.strip()}"
    return json.loads(proc.stdout)["methods"], None


def difference(got, want):
    # relative, with an absolute floor for values near 0 (a COT error of 1e-12)
    return abs(got - want) / max(abs(want), 1e-3)


def close(got, want):
    return difference(got, want) <= 1e-6


def main():
    compiled, runs = kernels(MANO)
    check("scalar" in compiled, f"the portable scalar kernel is compiled in: {compiled}")
    check(bool(runs) and runs[-1] == "scalar", f"scalar is the last kernel this CPU runs: {runs}")
    for kernel in compiled:
        if kernel not in runs:
            print(f"skipped kernel {kernel}: this CPU does not run it")
    with tempfile.TemporaryDirectory() as d:
        all_cases = cases(pathlib.Path(d))
        jobs = [(arch, case) for arch in runs for case in all_cases]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda job: score(MANO, *job), jobs))
            other = {}
            if args.compare:
                other_runs = kernels([args.compare])[1]
                other = dict(zip((c[0] for c in all_cases),
                                 pool.map(lambda c: score([args.compare], other_runs[0], c)[0], all_cases)))
    worst = 0.0
    for (arch, (name, _, _, expected, branch)), (got, error) in zip(jobs, results):
        check(error is None, f"{arch}: {name}: {error}")
        if error:
            continue
        if branch:
            check(got["mano"]["normalization"] == branch, f"{arch}: {name}: branch {got['mano']['normalization']}")
        for method, values in expected.items():
            for key, want in values.items():
                value = got[method][key]
                worst = max(worst, difference(value, want))
                check(close(value, want), f"{arch}: {name}: {method}.{key} {value} vs NumPy {want}")
                if other.get(name):
                    theirs = other[name][method][key]
                    check(close(value, theirs), f"{arch}: {name}: {method}.{key} {value} vs {args.compare} {theirs}")
    print(f"kernels {', '.join(runs)}: {len(all_cases)} cases each, worst relative difference to NumPy {worst:.2e}"
          + (f"; compared with {args.compare}" if args.compare else ""))


main()
finish("kernels: ")

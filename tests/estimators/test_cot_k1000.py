"""COT at K = 1000 (`mano score --methods cot`, the epsilon-scaling auction on float rows,
src/mano/shift/auction.cpp) against POT's exact ot.emd2 on the same float32 logits: within 1e-4
(issue 44), on rows where K divides N (every row to one class whole) and where it does not, with
the uniform marginal and the source's label frequencies; and with every other kernel this CPU runs
(MANO_ARCH) on one of them, since the auction's candidate lists come from a kernel pass
(top_classes, src/mano/kernel/shift_impl.hpp).
Run: /usr/bin/python3 tests/estimators/test_cot_k1000.py build/release/native/mano"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import ot

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

mano = sys.argv[1]
K = 1000


def softmax(q):
    z = q - q.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def logits(rng, n):
    y = rng.integers(0, K, n)
    z = rng.normal(0, 1, (n, K))
    z[np.arange(n), y] += rng.normal(3.0, 1.0, n)
    return (2 * z).astype(np.float32), y


# the kernels this CPU runs, the default first (`mano --version`)
version = subprocess.run([mano, "--version"], capture_output=True, text=True, check=True).stdout
kernels = next(line for line in version.splitlines() if line.startswith("kernels this CPU runs:"))
kernels = [name.strip() for name in kernels.split(":", 1)[1].split("(")[0].split(",")]

with tempfile.TemporaryDirectory() as tmp:
    tmp = pathlib.Path(tmp)
    rng = np.random.default_rng(44)
    source, labels = logits(rng, 1500)
    np.save(tmp / "s.npy", source)
    np.save(tmp / "ys.npy", labels)
    frequencies = np.bincount(labels, minlength=K) / len(labels)
    for n in (1000, 1203):
        q, _ = logits(rng, n)
        np.save(tmp / "t.npy", q)
        cost = 1.0 - softmax(q.astype(np.float64)).T  # class c to row i
        for name, marginal, extra in (("uniform", np.full(K, 1.0 / K), []),
                                      ("source", frequencies, ["--source-logits", tmp / "s.npy", "--source-labels",
                                                               tmp / "ys.npy", "--label-marginal", "source"])):
            want = ot.emd2(marginal, np.full(n, 1.0 / n), cost, numItermax=10**8)
            for arch in kernels if (n, name) == (1203, "uniform") else kernels[:1]:
                proc = subprocess.run([mano, "score", tmp / "t.npy", "--methods", "cot", "--json", *map(str, extra)],
                                      capture_output=True, text=True, env={**os.environ, "MANO_ARCH": arch})
                check(proc.returncode == 0, f"N = {n}, {name} marginal, {arch}: mano score failed: {proc.stderr.strip()}")
                if proc.returncode != 0:
                    continue
                got = json.loads(proc.stdout)["methods"]["cot"]["error"]
                check(abs(got - want) <= 1e-4, f"N = {n}, {name} marginal, {arch}: COT's cost {got} against ot.emd2's {want}")
                print(f"N = {n}, {name} marginal, {arch}: |mano - ot.emd2| = {abs(got - want):.2e}")

finish()

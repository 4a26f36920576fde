"""The Python package's part of `npm run bench` (bench/perf/run.mjs runs it and reports the ratios):

1. mano.score(logits, methods="mano", threads=1) on FILE (an N x K float32 .npy, loaded into
   memory first) against MaNo in PyTorch on one CPU thread (the authors' recipe,
   bench/perf/anchors.py) and the native kernel on the same file (MANO_BENCH, mano_bench), and
   the same call with every core;
2. mano.dask.score on a set of .npy shards of about SIZE_GB gigabytes (written to a temporary
   folder, read once so that the page cache holds it), on a LocalCluster of 1 worker process and
   then of 2 (1 thread each), the default methods; the results of the two are checked equal.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/perf/python.py FILE.npy MANO_BENCH [SIZE_GB]

Prints JSON: {"shape", "mano_1", "mano_all", "torch_1", "kernel" (mano_bench's best architecture on
1 thread, interleaved with the others: 3 rounds, medians), "rel_diff_float64", "dask": {"gb", "shards", "rows", "cols",
"workers_1", "workers_2", "rel_diff"}}, median seconds."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from anchors import mano_torch, median_seconds  # noqa: E402

import mano  # noqa: E402
import mano.dask  # noqa: E402


def in_memory(file, bench_bin):
    """Rounds of: mano.score on 1 thread, MaNo in PyTorch on 1 thread, the native kernel (mano_bench,
    its best architecture on 1 thread), each the median of its repeats; the medians over the rounds.
    Interleaved, so that the ratios compare runs made at the same time on a noisy machine."""
    import torch

    q = np.load(file)
    t = torch.from_numpy(q)
    cores = torch.get_num_threads()
    rounds = {"mano_1": [], "mano_all": [], "torch_1": [], "kernel": []}
    for _ in range(3):
        rounds["mano_1"].append(median_seconds(lambda: mano.score(q, methods="mano", threads=1)))
        rounds["mano_all"].append(median_seconds(lambda: mano.score(q, methods="mano")))
        torch.set_num_threads(1)
        rounds["torch_1"].append(median_seconds(lambda: mano_torch(torch, t)))
        torch.set_num_threads(cores)
        native = json.loads(subprocess.run([bench_bin, file, "--repeats", "5"], check=True, capture_output=True,
                                           text=True).stdout)
        rounds["kernel"].append(native["mano_1"][native["best"]])
        kernel_arch = native["best"]
    out = {"shape": list(q.shape), "kernel_arch": kernel_arch, "rounds": rounds}
    out.update({key: float(np.median(values)) for key, values in rounds.items()})
    # against the float64 recipe (PyTorch's float32 sums drift by ~1e-4 over 5e7 entries)
    ref = mano.score(q, methods="mano", threads=1)["methods"]["mano"]["score"]
    out["rel_diff_float64"] = abs(mano_torch(torch, t.double()) - ref) / ref
    return out


def dask_shards(gb):
    from dask.distributed import Client, LocalCluster

    cols, shards = 1000, 16
    rows_per_shard = int(gb * 1e9 / (4 * cols * shards))
    folder = pathlib.Path(tempfile.mkdtemp(prefix="mano-dask-bench-"))
    try:
        rng = np.random.default_rng(7)
        files = []
        for i in range(shards):
            q = (rng.standard_normal((rows_per_shard, cols), dtype=np.float32) * 2)
            q[np.arange(rows_per_shard), rng.integers(0, cols, rows_per_shard)] += 6
            f = folder / f"shard_{i:02d}.npy"
            np.save(f, q)
            files.append(str(f))
        del q
        for f in files:  # into the page cache: both runs read from memory, not the disk
            with open(f, "rb") as fh:
                while fh.read(1 << 24):
                    pass
        out = {"gb": shards * rows_per_shard * cols * 4 / 1e9, "shards": shards, "rows": shards * rows_per_shard,
               "cols": cols}
        results = {}
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                              silence_logs=40) as cluster, Client(cluster) as client:
                mano.dask.score(files[:workers], client=client)  # warm: the workers import mano
                times = []
                for _ in range(3):
                    t = time.perf_counter()
                    results[workers] = mano.dask.score(files, client=client)
                    times.append(time.perf_counter() - t)
                out[f"workers_{workers}"] = float(np.median(times))
        a, b = results[1]["methods"]["mano"]["score"], results[2]["methods"]["mano"]["score"]
        out["rel_diff"] = abs(a - b) / abs(b)
        return out
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    file, bench_bin = sys.argv[1], sys.argv[2]
    gb = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
    out = in_memory(file, bench_bin)
    sys.stderr.write("bench: mano.score against PyTorch done\n")
    out["dask"] = dask_shards(gb)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

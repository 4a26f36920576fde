"""The anchors of the speed table, timed on the same logits as the native and WASM runs:
MaNo as the authors' code computes it (the criterion, then softmax or the Taylor rows, then the
entry-wise p-norm) in NumPy and in PyTorch (CPU) on 1 thread and on all threads; the nuclear norm
as a user computes it, from the softmax probabilities (their time left out): by the Gram matrix
P^T P and eigvalsh, and by the singular values, in NumPy (with the BLAS it runs on, named by
threadpoolctl: OpenBLAS, as Debian's libopenblas0-pthread gives it) and in PyTorch, on 1 thread
and on all; COT with POT's ot.emd2. label_shift_anchors: MLLS and CBPE in NumPy for the K = 1000
table (bench/perf/k1000.py).

  /usr/bin/python3 bench/perf/anchors.py FILE.npy [FILE.npy ...] > anchors.json

Prints JSON: {"blas": ..., FILE: {"rows", "cols", "numpy_1", "numpy_all", "torch_1", "torch_all",
"nuclear"?: {"<library>_<how>_<dtype>_<threads>": seconds, ..., "value": the norm}, "svd"?, "emd2"?}}
with median seconds over the repeats (fewer repeats for slow runs)."""
import json
import os
import sys
import time

import numpy as np


def median_seconds(fn, budget=20.0, most=5):
    times = []
    start = time.perf_counter()
    while len(times) < most and (len(times) < 1 or time.perf_counter() - start < budget):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def mano_numpy(q, p=4.0, eta=5.0):
    shifted = q - q.max(axis=1, keepdims=True)
    lse = np.log(np.exp(shifted).sum(axis=1))
    phi = float(np.mean(lse - shifted.mean(axis=1)))
    if phi > eta:
        e = np.exp(shifted)
        sigma = e / e.sum(axis=1, keepdims=True)
    else:
        v = 1.0 + q + q * q / 2.0
        v = v - v.min(axis=1, keepdims=True)
        sigma = v / v.sum(axis=1, keepdims=True)
    return float(np.mean(sigma ** p) ** (1.0 / p))


def mano_torch(torch, q, p=4.0, eta=5.0):
    with torch.no_grad():
        log_p = torch.log_softmax(q, dim=1)
        phi = float(-log_p.mean())
        if phi > eta:
            sigma = torch.softmax(q, dim=1)
        else:
            v = 1.0 + q + q * q / 2.0
            v = v - v.min(dim=1, keepdim=True).values
            sigma = v / v.sum(dim=1, keepdim=True)
        return float(torch.norm(sigma, p=p) / q.numel() ** (1.0 / p))


def softmax(q):
    e = np.exp(q - q.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def nuclear_anchors(torch, probs, cores):
    """The nuclear norm ||P||_* (the sum of P's singular values) of the probability rows, each way
    a NumPy or PyTorch user would compute it, in float32 (the logits' type) and float64."""
    from threadpoolctl import threadpool_limits

    timings = {}
    for dtype in (np.float32, np.float64):
        p = probs.astype(dtype)
        name = np.dtype(dtype).name
        tp = torch.from_numpy(p)
        for threads in (1, cores):
            with threadpool_limits(limits=threads):
                timings[f"numpy_gram_{name}_{threads}"] = median_seconds(
                    lambda: np.sqrt(np.clip(np.linalg.eigvalsh(p.T @ p), 0, None)).sum(), budget=30.0, most=3)
                timings[f"numpy_svd_{name}_{threads}"] = median_seconds(
                    lambda: np.linalg.svd(p, compute_uv=False).sum(), budget=60.0, most=3)
            torch.set_num_threads(threads)
            with torch.no_grad():
                timings[f"torch_gram_{name}_{threads}"] = median_seconds(
                    lambda: torch.linalg.eigvalsh(tp.T @ tp).clamp(min=0).sqrt().sum(), budget=30.0, most=3)
                timings[f"torch_svd_{name}_{threads}"] = median_seconds(
                    lambda: torch.linalg.svdvals(tp).sum(), budget=60.0, most=3)
    torch.set_num_threads(cores)
    timings["value"] = float(np.linalg.svd(probs, compute_uv=False).sum())
    return timings


def _log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _fit_scaling(logp, y, bias):
    """a (and b, b_0 = 0, with `bias`) minimizing the mean NLL of softmax(a logp + b): SciPy's
    L-BFGS with the analytic gradient, as tight as tests/estimators/test_mlls.py fits it."""
    from scipy.optimize import minimize

    n, k = logp.shape
    rows = np.arange(n)

    def nll(x):
        b = np.r_[0.0, x[1:]] if bias else 0.0
        z = _log_softmax(x[0] * logp + b)
        p = np.exp(z)
        grad = [np.mean((p * logp).sum(axis=1) - logp[rows, y])]
        if bias:
            grad = np.r_[grad, (p.sum(axis=0) - np.bincount(y, minlength=k))[1:] / n]
        return -z[rows, y].mean(), np.asarray(grad, dtype=np.float64)

    start = np.r_[1.0, np.zeros(k - 1)] if bias else np.array([1.0])
    x = minimize(nll, start, jac=True, method="L-BFGS-B",
                 options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000}).x
    return x[0], (np.r_[0.0, x[1:]] if bias else 0.0)


def _em_squarem(p, source_priors, tol=1e-10, limit=5000):
    """The EM fixed point of the target priors (Saerens et al.), accelerated by SQUAREM (Varadhan
    and Roland, 2008, scheme S3), the EM step being one pass over the rows; returns the priors and
    the passes."""
    ratio = p / source_priors

    def step(priors):
        q = ratio * priors
        return (q / q.sum(axis=1, keepdims=True)).mean(axis=0)

    priors, passes = source_priors.copy(), 0
    while passes < limit:
        first = step(priors)
        second = step(first)
        passes += 2
        r, v = first - priors, second - 2 * first + priors
        alpha = -np.sqrt((r @ r) / (v @ v)) if v @ v > 0 else -1.0
        alpha = min(alpha, -1.0)
        proposal = priors - 2 * alpha * r + alpha * alpha * v
        # a prior of 0 would stay 0 in every later EM step: where the extrapolation leaves the
        # simplex, the plain EM steps' point instead
        proposal = proposal / proposal.sum() if (proposal > 0).all() else second
        new = step(proposal)
        passes += 1
        moved = np.abs(new - priors).max()
        priors = new
        if moved < tol:
            break
    return priors, passes


def label_shift_anchors(source, labels, target):
    """MLLS and CBPE in NumPy (float64) as mano computes them (the bias of BCTS up to K = 100) (tests/estimators/test_mlls.py holds
    the reference they are tested against): seconds, values and what was done."""
    out = {}
    start = time.perf_counter()
    ls, lt = _log_softmax(source.astype(np.float64)), _log_softmax(target.astype(np.float64))
    # mano fits the bias only up to 100 classes (src/mano/shift/label_shift.hpp, bias_correction_max_k)
    a, b = _fit_scaling(ls, labels, bias=target.shape[1] <= 100)
    pt = np.exp(_log_softmax(a * lt + b))
    k = target.shape[1]
    source_priors = np.bincount(labels, minlength=k) / len(labels)
    priors, passes = _em_squarem(pt, source_priors)
    q = pt * (priors / source_priors)
    q /= q.sum(axis=1, keepdims=True)
    out["mlls_value"] = float(q[np.arange(len(target)), target.argmax(axis=1)].mean())
    out["mlls"] = time.perf_counter() - start
    fitted = "BCTS" if target.shape[1] <= 100 else "temperature"
    out["mlls_detail"] = f"{fitted} by L-BFGS, EM by SQUAREM: {passes} passes"
    start = time.perf_counter()
    ls, lt = _log_softmax(source.astype(np.float64)), _log_softmax(target.astype(np.float64))
    a, _ = _fit_scaling(ls, labels, bias=False)
    out["cbpe_value"] = float(np.exp(_log_softmax(a * lt)).max(axis=1).mean())
    out["cbpe"] = time.perf_counter() - start
    out["cbpe_detail"] = "temperature by L-BFGS, one pass"
    return out


def blas_in_use():
    """What NumPy's BLAS is, as threadpoolctl finds it loaded ("openblas 0.3.21 pthreads, kernel
    SkylakeX (...)"): the kernel is the core type OpenBLAS chose (or OPENBLAS_CORETYPE forced)."""
    from threadpoolctl import threadpool_info

    np.ones((2, 2)) @ np.ones((2, 2))
    found = [f"{i.get('internal_api')} {i.get('version')} {i.get('threading_layer', '')}, kernel "
             f"{i.get('architecture', 'unknown')} ({i.get('filepath')})"
             for i in threadpool_info() if i.get("user_api") == "blas"]
    return "; ".join(found) or "no BLAS found by threadpoolctl"


def main(files):
    import torch

    cores = os.cpu_count() or 1
    out = {"blas": blas_in_use()}
    for path in files:
        q = np.load(path)
        rows, cols = q.shape
        entry = {"rows": rows, "cols": cols}
        q64 = q.astype(np.float64)  # the authors' NumPy code works in float64
        entry["numpy_1"] = median_seconds(lambda: mano_numpy(q64))
        entry["numpy_all"] = entry["numpy_1"]  # NumPy's element-wise ufuncs use one thread
        t = torch.from_numpy(q)
        for threads, key in ((1, "torch_1"), (cores, "torch_all")):
            torch.set_num_threads(threads)
            entry[key] = median_seconds(lambda: mano_torch(torch, t))
        torch.set_num_threads(cores)
        entry["mano_numpy"] = mano_numpy(q64)
        if cols <= 1000:
            entry["nuclear"] = nuclear_anchors(torch, softmax(q64), cores)
            entry["svd"] = entry["nuclear"]["numpy_svd_float64_%d" % cores]
        if rows * cols <= 200_000:
            import ot

            probs = softmax(q64)
            a, b = np.full(cols, 1.0 / cols), np.full(rows, 1.0 / rows)
            entry["emd2"] = median_seconds(lambda: ot.emd2(a, b, 1.0 - probs.T), budget=60.0, most=3)
        out[path] = entry
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])

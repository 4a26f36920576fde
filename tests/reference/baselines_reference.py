"""Independent float64 NumPy/SciPy/POT implementations of the baselines MaNo is compared with
(docs/methods.md), used by the CLI tests as the reference for `mano score --json`."""
import numpy as np
import ot
import scipy.linalg
import scipy.optimize

from mano_reference import criterion, softmax_rows, softrun_branch, taylor_rows


def fit_temperature(q, y):
    def nll(t):
        z = q / t
        m = z.max(1, keepdims=True)
        return float(np.mean(m[:, 0] + np.log(np.exp(z - m).sum(1)) - z[np.arange(len(y)), y]))
    res = scipy.optimize.minimize_scalar(nll, bounds=(1e-3, 1e3), method="bounded", options={"xatol": 1e-12})
    return float(res.x)


def atc_threshold(scores, correct):
    """docs/methods.md#atc_mc: walk the distinct source scores ascending; fp = incorrect above, fn = correct
    at or below; the first score with the smallest |fp - fn|."""
    best, best_t = None, None
    for t in np.unique(scores):
        fp = np.sum((scores > t) & ~correct)
        fn = np.sum((scores <= t) & correct)
        if best is None or abs(fp - fn) < best:
            best, best_t = abs(fp - fn), t
    return float(best_t)


def nuclear(p):
    n, k = p.shape
    return float(np.linalg.svd(p, compute_uv=False).sum() / np.sqrt(n * min(n, k)))


def frechet(x1, x2):
    mu1, mu2 = x1.mean(0), x2.mean(0)
    s1, s2 = np.cov(x1, rowvar=False), np.cov(x2, rowvar=False)
    root = scipy.linalg.sqrtm(s1 @ s2).real
    return float(np.sum((mu1 - mu2) ** 2) + np.trace(s1 + s2 - 2 * root))


def dispersion(x, predicted):
    mu = x.mean(0)
    classes = np.unique(predicted)
    between = sum(np.sum(predicted == c) * np.sum((x[predicted == c].mean(0) - mu) ** 2) for c in classes)
    return float(np.log(between / (len(classes) - 1)))


def baselines(q, temperature=1.0, source=None, second=None, features=None, source_features=None,
              marginal=None, eta=5.0, taylor_order=2):
    """Every method's JSON value for target logits q (float64)."""
    n, k = q.shape
    p = softmax_rows(q / temperature)
    lse = np.log(np.exp(q / temperature - (q / temperature).max(1, keepdims=True)).sum(1)) + (q / temperature).max(1)
    entropy = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0), axis=1)
    energy = -lse
    out = {
        "confscore": {"score": float(p.max(1).mean())},
        "entropy": {"score": float(entropy.mean())},
        "nuclear": {"score": nuclear(p)},
        "mde": {"score": float(scipy.special.logsumexp(energy) - energy.mean())},
    }
    marginal = np.full(k, 1.0 / k) if marginal is None else np.asarray(marginal, dtype=np.float64)
    cost = float(ot.emd2(marginal, np.full(n, 1.0 / n), 1.0 - p.T))
    out["cot"] = {"error": cost, "accuracy": 1.0 - cost}
    sigma = softmax_rows(q) if softrun_branch(criterion(q), eta, q.shape[1]) == "softmax" else taylor_rows(q, taylor_order)
    out["confscore_softrun"] = {"score": float(sigma.max(1).mean())}
    out["nuclear_softrun"] = {"score": nuclear(sigma)}
    if source is not None:
        sq, sy = source
        sp = softmax_rows(sq / temperature)
        correct = sp.argmax(1) == sy
        s_mc = sp.max(1)
        s_ne = np.sum(np.where(sp > 0, sp * np.log(np.where(sp > 0, sp, 1)), 0), axis=1)
        t_mc, t_ne = atc_threshold(s_mc, correct), atc_threshold(s_ne, correct)
        out["atc_mc"] = {"accuracy": float(np.mean(p.max(1) >= t_mc)), "threshold": t_mc}
        out["atc_ne"] = {"accuracy": float(np.mean(-entropy >= t_ne)), "threshold": t_ne}
        out["doc"] = {"accuracy": float(np.clip(correct.mean() - (s_mc.mean() - p.max(1).mean()), 0, 1))}
    if second is not None:
        out["agreement"] = {"accuracy": float(np.mean(q.argmax(1) == second.argmax(1)))}
    if features is not None:
        out["dispersion"] = {"score": dispersion(features, q.argmax(1))}
        if source_features is not None:
            out["frechet"] = {"score": frechet(source_features, features)}
    return out

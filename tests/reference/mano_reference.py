"""Independent float64 NumPy implementation of MaNo, written from the paper's formulas
(Xie et al., NeurIPS 2024; docs/methods.md#mano). The C++ core is tested against it."""
from math import factorial

import numpy as np


def softmax_rows(q):
    e = np.exp(q - q.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def taylor_rows(q, order):
    v = sum(q ** j / factorial(j) for j in range(order + 1))
    v = v - v.min(axis=1, keepdims=True)  # paper footnote: the row minimum becomes exactly 0
    total = v.sum(axis=1, keepdims=True)
    k = q.shape[1]
    out = np.full_like(v, 1.0 / k)  # a row whose shifted sum is 0 becomes uniform
    ok = total[:, 0] > 0
    out[ok] = v[ok] / total[ok]
    return out


def softrun_branch(phi, eta, k):
    """The branch softrun takes: softmax when Phi > eta, and always at K = 2, where the Taylor
    rows above are one-hot at the argmax whatever the logits (docs/methods.md#mano)."""
    return "softmax" if phi > eta or k == 2 else "taylor"


def criterion(q):
    """Phi = -(1/NK) sum_ik log softmax(q)_ik."""
    m = q.max(axis=1, keepdims=True)
    log_p = q - m - np.log(np.exp(q - m).sum(axis=1, keepdims=True))
    return float(-log_p.mean())


def mano(q, p=4.0, eta=5.0, taylor_order=2, normalization="softrun", batch_size=0, fixed_criterion=None):
    q = np.asarray(q, dtype=np.float64)
    phi = criterion(q) if fixed_criterion is None else float(fixed_criterion)
    if normalization == "softrun":
        used = softrun_branch(phi, eta, q.shape[1])
    else:
        used = normalization
    if used == "taylor" and q.shape[1] == 2:
        raise ValueError("the Taylor normalization is not defined for 2 classes")
    probs = softmax_rows(q) if used == "softmax" else taylor_rows(q, taylor_order)

    def norm_score(block):
        # ||P||_p / (N K)^(1/p)
        return float(np.mean(block ** p) ** (1.0 / p))

    out = {"criterion": phi, "normalization": used}
    if batch_size > 0:
        scores = [norm_score(probs[i:i + batch_size]) for i in range(0, len(probs), batch_size)]
        out["score"] = float(np.mean(scores))
        out["batches"] = len(scores)
    else:
        out["score"] = norm_score(probs)
    return out

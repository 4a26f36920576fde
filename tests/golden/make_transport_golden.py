"""Writes the golden vectors for COT's exact optimal transport cost (mano::transport_cost):
softmax matrices as float64 .npy files under tests/data/golden/transport_*.npy and
tests/golden/transport.json with POT's ot.emd2 on the K x N problem (label marginal -> rows of
mass 1/N, cost 1 - p_ic). Run with Debian's Python: /usr/bin/python3 tests/golden/make_transport_golden.py"""
import json
import pathlib

import numpy as np
import ot

here = pathlib.Path(__file__).resolve().parent
data_dir = here.parent / "data" / "golden"
data_dir.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20241121)
cases = []


def softmax(q):
    e = np.exp(q - q.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def save(name, p):
    assert p.dtype == np.float64 and np.allclose(p.sum(axis=1), 1)
    np.save(data_dir / f"transport_{name}.npy", p)
    return p


def add(name, file, p, marginal):
    marginal = np.asarray(marginal, dtype=np.float64)
    n = p.shape[0]
    cost, log = ot.emd2(marginal, np.full(n, 1.0 / n), 1 - p.T, numItermax=10**9, log=True)
    assert log["warning"] is None, (name, log["warning"])
    cases.append({"name": name, "file": f"data/golden/transport_{file}.npy", "marginal": marginal.tolist(),
                  "expected_cost": float(cost)})
    return cost


def frequencies(k, draws, weights=None):
    """A label marginal as the class frequencies of `draws` sampled labels."""
    counts = np.bincount(rng.choice(k, size=draws, p=weights), minlength=k)
    return counts / counts.sum()


def uniform(k):
    return np.full(k, 1.0 / k)


# K from binary to 1000; N keeps the files small (< 300 KB in all).
for k, n, scale in [(2, 300, 2.0), (10, 300, 3.0), (100, 150, 4.0), (1000, 12, 5.0)]:
    p = save(f"k{k}", softmax(rng.standard_normal((n, k)) * scale))
    add(f"k{k} uniform marginal", f"k{k}", p, uniform(k))
    add(f"k{k} class frequencies", f"k{k}", p, frequencies(k, 10 * k + 7, rng.dirichlet(np.ones(k))))

# Marginals with zero entries: a class absent from the labels, and a sparse K = 1000 marginal.
p = np.load(data_dir / "transport_k10.npy")
marginal = frequencies(10, 500)
marginal[3] = 0
add("k10 marginal with a zero class", "k10", p, marginal / marginal.sum())
add("k1000 sparse class frequencies", "k1000", np.load(data_dir / "transport_k1000.npy"), frequencies(1000, 40))

# A confident model: peaked rows, many costs near 0.
labels = rng.integers(0, 10, 200)
q = rng.standard_normal((200, 10))
q[np.arange(200), labels] += 8.0
p = save("confident", softmax(q))
add("k10 confident uniform marginal", "confident", p, uniform(10))
add("k10 confident label frequencies", "confident", p, np.bincount(labels, minlength=10) / 200)

# One-hot rows: cost 0 when the predicted class counts equal the marginal, else the total
# variation between the two histograms.
predicted = rng.integers(0, 10, 100)
p = save("onehot", np.eye(10)[predicted])
assert abs(add("one-hot rows matching marginal", "onehot", p, np.bincount(predicted, minlength=10) / 100)) < 1e-12
add("one-hot rows uniform marginal", "onehot", p, uniform(10))

# Uniform rows: every plan costs 1 - 1/K.
p = save("uniform_rows", np.full((50, 10), 0.1))
for name, marginal in [("uniform", uniform(10)), ("class frequencies", frequencies(10, 300))]:
    assert abs(add(f"uniform rows {name} marginal", "uniform_rows", p, marginal) - 0.9) < 1e-12

# A single row: all mass goes to it, cost = sum_c marginal_c (1 - p_c).
p = save("n1", softmax(rng.standard_normal((1, 10)) * 2))
marginal = frequencies(10, 50)
assert abs(add("n1 class frequencies", "n1", p, marginal) - marginal @ (1 - p[0])) < 1e-12
add("n1 uniform marginal", "n1", p, uniform(10))

(here / "transport.json").write_text(
    json.dumps({"generator": "tests/golden/make_transport_golden.py", "cases": cases}, indent=1) + "\n")
print(f"wrote {len(cases)} cases to {here / 'transport.json'}")

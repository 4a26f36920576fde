"""Binary models (K = 2: input='binary-logit' and two logit columns) through the Python API:
softrun scores MaNo's softmax branch (against NumPy on softmax([0, z])), normalization='taylor'
is refused with one line, and an Accumulator's chunks, pickled and merged, give one pass's result
for every logit-only method. (The Dask path: tests/python/test_dask.py.)"""
import pickle

import numpy as np
import pytest

import mano
from api_support import assert_same

METHODS = ["mano", "confscore", "entropy", "nuclear", "mde", "cot", "confscore_softrun", "nuclear_softrun"]


def binary_logits(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return ((2 * y - 1) * rng.gamma(2, 1.5, n) + rng.normal(0, 1.5, n)).astype(np.float32)


def layouts(z):
    """The same rows as a binary input and as two logit columns [0, z]."""
    return [(z, "binary-logit"), (np.stack([np.zeros_like(z), z], 1), None)]


def test_softrun_scores_the_softmax_branch():
    z = binary_logits(2000, 1)
    s = 0.5 * (1 + np.tanh(z.astype(np.float64) / 2))  # sigmoid(z)
    probs = np.stack([1 - s, s], 1)
    want = float(np.mean(probs ** 4) ** 0.25)
    for x, kind in layouts(z):
        r = mano.score(x, METHODS, input=kind)
        m = r["methods"]
        assert m["mano"]["criterion"] < 5  # the Taylor branch above K = 2
        assert m["mano"]["normalization"] == "softmax"
        assert set(m["mano"]["variants"]) == {"softmax"}
        assert m["mano"]["score"] == pytest.approx(want, rel=1e-7)
        assert m["confscore_softrun"]["score"] == pytest.approx(probs.max(1).mean(), rel=1e-7)
        assert m["confscore_softrun"]["score"] <= 1.0


def test_taylor_is_refused_at_k2():
    for x, kind in layouts(binary_logits(100, 2)):
        with pytest.raises(mano.InputError, match=r"normalization taylor is not defined for 2 classes.*use normalization softmax"):
            mano.score(x, ["mano"], input=kind, normalization="taylor")
        with pytest.raises(mano.InputError, match="not defined for 2 classes"):
            mano.Accumulator(2, ["confscore_softrun"], input=kind, normalization="taylor")


@pytest.mark.parametrize("options", [{}, {"batch_size": 128}, {"p": 3.0}])
def test_chunks_pickled_and_merged_equal_one_pass(options):
    z = binary_logits(3000, 3)
    for x, kind in layouts(z):
        want = mano.score(x, METHODS, input=kind, **options)
        parts = []
        for first, end in ((0, 640), (640, 1920), (1920, 3000)):
            acc = mano.Accumulator(2, METHODS, input=kind, **options).push(x[first:end])
            parts.append(pickle.loads(pickle.dumps(acc)))
        total = parts[0]
        for part in parts[1:]:
            total.merge(mano.Accumulator.from_state(part.state()))
        assert total.rows == 3000 and total.k == 2
        assert_same(total.result(), want, rel=1e-9, abs_tol=1e-9)  # sums in another order

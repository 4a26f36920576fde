"""The files of issue 43's input tests and what they must score as, from pandas and NumPy alone:
CSVs as pandas writes them (an index column, a label column, an id column, two label columns) and
probabilities and binary outputs, with the logits each must be read as and their MaNo and
ConfScore (mano_reference.py, float64). The CLI (tests/cli/test_inputs.py), Python
(tests/python/test_inputs.py) and npm (web/test/inputs.test.js) suites read the same files.
Run: /usr/bin/python3 tests/reference/inputs_reference.py OUT_DIR   (writes OUT_DIR/expected.json)"""
import json
import pathlib
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from mano_reference import mano, softmax_rows  # noqa: E402

FLOOR = float(np.finfo(np.float32).tiny)  # what a probability of 0 is raised to before the log
N, K = 300, 10


def scores(q):
    """MaNo (softrun) and ConfScore of float64 logits q, as mano score --json names them."""
    m = mano(q)
    return {"mano": m["score"], "normalization": m["normalization"], "confscore": float(softmax_rows(q).max(1).mean())}


def probability_sets(seed, count=4, n=400, k=5):
    """Labeled sets of a model's softmax outputs in float32, the signal rising from set to set: a
    family to calibrate on probabilities. [(probabilities, labels)]"""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        y = rng.integers(0, k, n)
        q = rng.normal(0, 1, (n, k))
        q[np.arange(n), y] += 0.5 + i
        out.append((softmax_rows(q).astype(np.float32), y))
    return out


def write(out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(43)
    y = rng.integers(0, K, N)
    q = rng.normal(0, 1.5, (N, K))
    q[np.arange(N), y] += 2.0
    expected = {"n": N, "k": K}

    # CSVs: the logits q, with columns that are not classes
    frame = pd.DataFrame(q)
    frame.to_csv(out / "pandas.csv")  # an index column ("" header) and the names 0..9
    frame.assign(label=y).to_csv(out / "pandas_labeled.csv")  # the index and a label column
    frame.assign(label=y, y=y).to_csv(out / "two_labels.csv", index=False)
    frame.rename(columns=lambda c: f"c{c}").assign(id=np.arange(N) + 1000)[["id"] + [f"c{c}" for c in range(K)]] \
        .to_csv(out / "ids.csv", index=False)
    # issue 50: a named index (df.index.name = "row": the header row,0,1,...), an index of any name
    # before the names 0..9, a sample_id column; and an index of any name before names of classes,
    # which mano cannot tell from a class by its name (refused)
    named = frame.copy()
    named.index.name = "row"
    named.to_csv(out / "named_index.csv")
    named.index.name = "frame"
    named.to_csv(out / "frame_index.csv")
    named.rename(columns=lambda c: f"c{c}").to_csv(out / "frame_named.csv")
    pd.concat([pd.Series(np.arange(N) + 7, name="sample_id"), frame], axis=1).to_csv(out / "sample_id.csv", index=False)
    back = pd.read_csv(out / "pandas.csv", index_col=0).to_numpy()  # the numbers as written, read back
    expected["csv"] = {**scores(back), "accuracy": float(np.mean(back.argmax(1) == y))}
    np.save(out / "csv_labels.npy", y.astype(np.int64))

    # probabilities: a softmax in float32, with exact zeros
    p = softmax_rows(q).astype(np.float32)
    p[np.arange(0, N, 7), (y[::7] + 1) % K] = 0
    p /= p.sum(1, keepdims=True, dtype=np.float64).astype(np.float32)
    np.save(out / "p.npy", p)
    expected["probabilities"] = scores(np.log(np.maximum(p.astype(np.float64), FLOOR)))

    # a binary classifier: its logit z of class 1 and its probability sigmoid(z)
    yb = rng.integers(0, 2, N)
    z = rng.normal(0, 1, N) + np.where(yb == 1, 1.5, -1.5)
    pz = (1 / (1 + np.exp(-z))).astype(np.float64)
    pz[:3] = [0.0, 1.0, 0.5]  # the ends: floored before the log
    np.save(out / "z.npy", z.reshape(-1, 1))
    np.save(out / "pz.npy", pz.reshape(-1, 1))
    np.save(out / "binary_labels.npy", yb.astype(np.int64))
    expected["binary_logit"] = scores(np.stack([np.zeros(N), z], 1))
    expected["binary_probability"] = scores(np.log(np.maximum(np.stack([1 - pz, pz], 1), FLOOR)))
    (out / "expected.json").write_text(json.dumps(expected, indent=1))
    return expected


if __name__ == "__main__":
    write(sys.argv[1])

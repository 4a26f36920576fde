"""Writes the bundled example: a 10-class linear classifier (multinomial logistic regression on
Gaussian classes, fitted here by gradient descent) evaluated on six test sets of growing
covariate shift (the class signal fades while the noise grows, as under a contrast loss). Each set is 2000 rows: <name>_logits.npy (float32,
N x 10) and <name>_labels.npy (int64). Deterministic; run with Debian's Python:
/usr/bin/python3 tests/data/make_example.py"""
import pathlib

import numpy as np

out = pathlib.Path(__file__).resolve().parent / "example"
out.mkdir(exist_ok=True)
rng = np.random.default_rng(2024)
k, d = 10, 32
means = rng.standard_normal((k, d)) * 0.55


def sample(n, signal, noise):
    y = rng.integers(0, k, n)
    x = means[y] * signal + rng.standard_normal((n, d)) * noise
    return x, y


# Fit W, b on clean training data (full-batch gradient descent on the cross-entropy).
x, y = sample(20000, 1.0, 1.0)
w, b = np.zeros((d, k)), np.zeros(k)
onehot = np.eye(k)[y]
for _ in range(300):
    z = x @ w + b
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    w -= 0.5 * x.T @ (p - onehot) / len(x)
    b -= 0.5 * (p - onehot).mean(0)

print("| set | N | K | true accuracy |")
print("|---|---|---|---|")
for severity in range(6):
    x, y = sample(2000, 1.0 - 0.13 * severity, 1.0 + 0.1 * severity)
    logits = (x @ w + b).astype(np.float32)
    name = f"shift_{severity}"
    np.save(out / f"{name}_logits.npy", logits)
    np.save(out / f"{name}_labels.npy", y.astype(np.int64))
    print(f"| {name} | {len(y)} | {k} | {np.mean(logits.argmax(1) == y):.4f} |")

"""Writes the bundled example: a 10-class linear classifier (multinomial logistic regression on
Gaussian classes, fitted here by gradient descent) evaluated on twelve test sets: two kinds of
covariate shift (contrast: the class signal fades; blend: inputs drift toward other classes), six severities each.
Each set is 2000 rows: <name>_logits.npy (float32, N x 10) and <name>_labels.npy (int64); a
labeled source validation set and manifest.json (the format of `mano eval`) come with them. Deterministic; run with Debian's Python:
/usr/bin/python3 tests/data/make_example.py"""
import pathlib

import numpy as np

out = pathlib.Path(__file__).resolve().parent / "example"
out.mkdir(exist_ok=True)
rng = np.random.default_rng(2024)
k, d = 10, 32
means = rng.standard_normal((k, d)) * 0.55


def sample(n, signal, noise, blend=0.0):
    """Gaussian classes; `blend` moves each point toward another class's mean (ambiguous inputs)."""
    y = rng.integers(0, k, n)
    other = (y + rng.integers(1, k, n)) % k
    x = (means[y] * (1 - blend) + means[other] * blend) * signal + rng.standard_normal((n, d)) * noise
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

import json

sets = []
print("| set | group | N | K | true accuracy |")
print("|---|---|---|---|---|")
# Two kinds of shift, six severities each: the class signal fades while noise grows (contrast),
# or inputs drift toward other classes (blend).
for group in ["contrast", "blend"]:
    for severity in range(6):
        if group == "contrast":
            x, y = sample(2000, 1.0 - 0.13 * severity, 1.0 + 0.1 * severity)
        else:
            x, y = sample(2000, 1.0, 1.0, blend=0.085 * severity)
        logits = (x @ w + b).astype(np.float32)
        name = f"{group}_{severity}"
        np.save(out / f"{name}_logits.npy", logits)
        np.save(out / f"{name}_labels.npy", y.astype(np.int64))
        sets.append({"name": name, "group": group, "logits": f"{name}_logits.npy", "labels": f"{name}_labels.npy"})
        print(f"| {name} | {group} | {len(y)} | {k} | {np.mean(logits.argmax(1) == y):.4f} |")
# A labeled validation set from the training distribution, for the source-based baselines.
x, y = sample(2000, 1.0, 1.0)
np.save(out / "source_logits.npy", (x @ w + b).astype(np.float32))
np.save(out / "source_labels.npy", y.astype(np.int64))
manifest = {"source": {"logits": "source_logits.npy", "labels": "source_labels.npy"}, "sets": sets}
(out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")

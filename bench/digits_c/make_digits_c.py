"""Writes Digits-C, the quality benchmark of mano: three classifiers of scikit-learn's bundled
digits (8x8 images, 10 classes; nothing is downloaded) evaluated on 14 corruption types x 5
severities of the test split, the clean test split, 12 label-shifted resamples of it, and 14 mixed
sets (a label-shifted resample, then one corruption type at severity 3).

For each model <m> in logreg, mlp, cnn, bench/digits_c/data/<m>/ receives float32 logits
(<set>_logits.npy, N x 10) and int64 labels (<set>_labels.npy) for every set, a labeled source
validation set (source_*.npy) and manifest.json in the format of `mano eval`. Deterministic
(fixed split, seeds, one torch thread): run it twice and the files are byte-identical.

    /usr/bin/python3 bench/digits_c/make_digits_c.py
"""
import json
import os
import pathlib
import sys

# One BLAS thread: the order of floating-point sums, hence every byte written, stays fixed.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from corruptions import (brightness, contrast, elastic, gaussian_blur, gaussian_noise, impulse_noise, invert,  # noqa: E402
                         occlusion, pixelate, print_digest, print_per_set, rotate, shot_noise, speckle_noise, translate,
                         zoom)

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

OUT = pathlib.Path(__file__).resolve().parent / "data"
K = 10

# ---- data: images in [0, 1], a fixed stratified 50 / 20 / 30 split ----
digits = load_digits()
images = (digits.images / 16.0).astype(np.float64)
labels = digits.target.astype(np.int64)
idx = np.arange(len(labels))
train_idx, rest_idx = train_test_split(idx, train_size=0.5, stratify=labels, random_state=0)
val_idx, test_idx = train_test_split(rest_idx, test_size=0.6, stratify=labels[rest_idx], random_state=0)
x_train, y_train = images[train_idx], labels[train_idx]
x_val, y_val = images[val_idx], labels[val_idx]
x_test, y_test = images[test_idx], labels[test_idx]


# ---- models: each maps images in [0, 1] (M x 8 x 8) to logits (M x 10) ----
def fit_logreg():
    # Multinomial logistic regression on the 64 pixels; decision_function gives the logits.
    model = LogisticRegression(C=1.0, max_iter=5000)
    model.fit(x_train.reshape(len(x_train), -1), y_train)
    return lambda x: model.decision_function(x.reshape(len(x), -1))


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                       torch.nn.Linear(128, 64), torch.nn.ReLU(), torch.nn.Linear(64, K))

    def forward(self, x):
        return self.net(x)


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(32 * 4 * 4, K))

    def forward(self, x):
        return self.head(self.features(x.unsqueeze(1)))


def fit_torch(make, seed, epochs, lr, weight_decay):
    torch.manual_seed(seed)
    model = make()
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    xt = torch.tensor(x_train, dtype=torch.float32)
    yt = torch.tensor(y_train)
    order = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        model.train()
        for batch in torch.randperm(len(xt), generator=order).split(32):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xt[batch]), yt[batch]).backward()
            opt.step()
    model.eval()

    def logits(x):
        with torch.no_grad():
            return model(torch.tensor(x, dtype=torch.float32)).numpy()
    return logits


# ---- corruptions of images in [0, 1] (bench/corruptions.py); 5 severities each, a fixed seed per (type, severity) ----
# Severity 1..5 parameters, chosen so that the models' accuracies run from near-clean to degraded.
CORRUPTIONS = {
    "gaussian_noise": (gaussian_noise, [0.1, 0.2, 0.3, 0.45, 0.6]),
    "shot_noise": (shot_noise, [20.0, 8.0, 4.0, 2.0, 1.0]),
    "impulse_noise": (impulse_noise, [0.05, 0.1, 0.18, 0.27, 0.38]),
    "speckle_noise": (speckle_noise, [0.3, 0.6, 0.9, 1.3, 1.8]),
    "gaussian_blur": (gaussian_blur, [0.5, 0.7, 0.9, 1.1, 1.4]),
    "contrast": (contrast, [0.5, 0.35, 0.25, 0.15, 0.08]),
    "brightness": (brightness, [0.1, 0.2, 0.3, 0.45, 0.6]),
    "pixelate": (pixelate, [7, 6, 5, 4, 3]),
    "rotate": (rotate, [5.0, 10.0, 15.0, 22.0, 30.0]),
    "translate": (translate, [0.25, 0.5, 0.75, 1.0, 1.4]),
    "elastic": (elastic, [0.2, 0.35, 0.5, 0.7, 1.0]),
    "occlusion": (occlusion, [2, 3, 4, 5, 6]),
    "invert": (invert, [0.1, 0.2, 0.3, 0.38, 0.45]),
    "zoom": (zoom, [0.95, 0.9, 0.85, 0.8, 0.75]),
}
LABEL_SHIFT_ALPHAS = [0.1, 0.5, 1.0, 5.0]  # three resamples each
MIXED_SEVERITY = 3                   # mixed sets: every corruption type at its middle severity,
MIXED_ALPHAS = [0.5, 1.0, 5.0]       # on Dirichlet(alpha) class proportions, alpha cycling by type


def build_sets():
    """[(name, group, images, labels)]: the clean test split, every corruption, the label shifts, the
    mixed sets."""
    sets = [("clean", "clean", x_test, y_test)]
    for t, (name, (f, params)) in enumerate(CORRUPTIONS.items()):
        for s, c in enumerate(params, start=1):
            rng = np.random.default_rng([t, s])
            sets.append((f"{name}_{s}", name, f(x_test, c, rng), y_test))
    # Label shift: class proportions ~ Dirichlet(alpha), as many rows as the test split, drawn with
    # replacement within each class of the clean test split.
    by_class = [np.flatnonzero(y_test == k) for k in range(K)]
    for a, alpha in enumerate(LABEL_SHIFT_ALPHAS):
        for r in range(3):
            rng = np.random.default_rng([100, a, r])
            counts = rng.multinomial(len(y_test), rng.dirichlet(np.full(K, alpha)))
            rows = np.concatenate([rng.choice(by_class[k], counts[k]) for k in range(K)])
            sets.append((f"label_shift_a{alpha:g}_{r}", "label_shift", x_test[rows], y_test[rows]))
    # Mixed: label shift on top of a corruption, where label-shift routing is weakest. For the t-th
    # corruption type: class proportions ~ Dirichlet(MIXED_ALPHAS[t % 3]), as many rows as the test
    # split drawn with replacement within each class of it (as above), then corrupted by that type at
    # MIXED_SEVERITY. One generator per set, seeded [200, t], used after every draw above, so the
    # other sets are unchanged.
    for t, (name, (f, params)) in enumerate(CORRUPTIONS.items()):
        rng = np.random.default_rng([200, t])
        alpha = MIXED_ALPHAS[t % len(MIXED_ALPHAS)]
        counts = rng.multinomial(len(y_test), rng.dirichlet(np.full(K, alpha)))
        rows = np.concatenate([rng.choice(by_class[k], counts[k]) for k in range(K)])
        sets.append((f"mixed_{name}_{MIXED_SEVERITY}", "mixed", f(x_test[rows], params[MIXED_SEVERITY - 1], rng), y_test[rows]))
    return sets


def main():
    sets = build_sets()
    models = {
        "logreg": fit_logreg(),
        "mlp": fit_torch(Mlp, seed=1, epochs=60, lr=1e-3, weight_decay=0.0),
        "cnn": fit_torch(Cnn, seed=2, epochs=30, lr=1e-3, weight_decay=0.0),
    }
    print("| model | accuracy: source | clean test | min over sets | median | max | sets |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    summary = {}
    for model_name, logits_of in models.items():
        folder = OUT / model_name
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "source_logits.npy", logits_of(x_val).astype(np.float32))
        np.save(folder / "source_labels.npy", y_val)
        entries, accs = [], {}
        for name, group, x, y in sets:
            z = logits_of(x).astype(np.float32)
            np.save(folder / f"{name}_logits.npy", z)
            np.save(folder / f"{name}_labels.npy", y)
            accs[name] = float(np.mean(z.argmax(1) == y))
            entries.append({"name": name, "group": group, "logits": f"{name}_logits.npy", "labels": f"{name}_labels.npy"})
        manifest = {"source": {"logits": "source_logits.npy", "labels": "source_labels.npy"}, "sets": entries}
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        source_acc = float(np.mean(logits_of(x_val).argmax(1) == y_val))
        values = np.array(list(accs.values()))
        print(f"| {model_name} | {source_acc:.3f} | {accs['clean']:.3f} | {values.min():.3f} | "
              f"{np.median(values):.3f} | {values.max():.3f} | {len(values)} |")
        summary[model_name] = accs
    if "-v" in sys.argv:
        print_per_set(summary, [s[0] for s in sets])
    print_digest(OUT, "bench/digits_c/data")

if __name__ == "__main__":
    main()

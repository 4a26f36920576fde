"""Writes Fashion-MNIST-C, the real-image quality benchmark of mano: three classifiers of
Fashion-MNIST (28x28 gray images, 10 classes, from Debian's dataset-fashion-mnist; nothing is
downloaded) evaluated on 13 corruption types x 5 severities of a fixed 2000-image subset of the
test split, that clean subset, 12 label-shifted resamples of the test split, and 13 mixed sets
(label shift on top of one corruption type at severity 3).

For each model <m> in mlp, lenet, bncnn, bench/fashion_mnist_c/data/<m>/ receives float32 logits
(<set>_logits.npy, 2000 x 10) for every set, int64 labels (test_labels.npy, shared by the clean
and every corrupted set; label_shift_*_labels.npy for the label shifts), a labeled source
validation set (source_*.npy) and manifest.json in the format of `mano eval`. Deterministic
(fixed split, seeds, one torch thread): run it twice and the files are byte-identical.

The mixed sets (mixed_<type>_3_logits.npy, 1000 x 10, and mixed_<type>_3_labels.npy) are the last
step, and they derive from the corrupted logits written before them, not from new images: the
committed models cannot be retrained bit-for-bit on another CPU, so new images could not be scored
by them. `--mixed-only` runs that step alone on the logits already in data/ (no training, no idx
files) and leaves every other file as it is, apart from the mixed entries of each manifest.

    /usr/bin/python3 bench/fashion_mnist_c/make_fashion_mnist_c.py [-v] [--mixed-only]
"""
import gzip
import json
import os
import pathlib
import sys
import time

# One BLAS thread: the order of floating-point sums, hence every byte written, stays fixed.
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"
sys.dont_write_bytecode = True

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import corruptions as C  # noqa: E402  (bench/corruptions.py: size-generic, shared with Digits-C)

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "data"
DATA_DIR = pathlib.Path("/usr/share/datasets/fashion-mnist")
K = 10
N_SOURCE = 2000   # held out of the training split, labeled: the source validation set
N_TEST = 2000     # fixed subset of the test split: the clean set and every corruption of it
N_SHIFT = 2000    # rows of each label-shift set
N_MIXED = 1000    # rows of each mixed set (fewer than the others, to keep data/ near 20 MB)
MIXED_ONLY = "--mixed-only" in sys.argv


# ---- data: the idx files of Debian's dataset-fashion-mnist, images in [0, 1] ----
def read_idx(name):
    """An idx file (plain or .gz) as a numpy array: big-endian header, magic 0x0000 08 <ndim>."""
    for path in (DATA_DIR / name, DATA_DIR / (name + ".gz")):
        if path.is_file():
            raw = (gzip.open if path.suffix == ".gz" else open)(path, "rb").read()
            break
    else:
        sys.exit(f"Fashion-MNIST not found in {DATA_DIR} ({name}[.gz]): apt-get install dataset-fashion-mnist")
    if raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        sys.exit(f"{name}: not an unsigned-byte idx file")
    ndim = raw[3]
    shape = tuple(int(v) for v in np.frombuffer(raw, ">u4", ndim, 4))
    return np.frombuffer(raw, np.uint8, int(np.prod(shape)), 4 + 4 * ndim).reshape(shape)


def stratified(y, per_class, rng):
    """Sorted indices of `per_class` rows of every class, drawn without replacement."""
    return np.sort(np.concatenate([rng.choice(np.flatnonzero(y == k), per_class, replace=False) for k in range(K)]))


if not MIXED_ONLY:  # the mixed sets need only the logits already written
    train_images = read_idx("train-images-idx3-ubyte").astype(np.float64) / 255.0
    train_labels = read_idx("train-labels-idx1-ubyte").astype(np.int64)
    test_images = read_idx("t10k-images-idx3-ubyte").astype(np.float64) / 255.0
    test_labels = read_idx("t10k-labels-idx1-ubyte").astype(np.int64)

    val_idx = stratified(train_labels, N_SOURCE // K, np.random.default_rng(0))
    train_mask = np.ones(len(train_labels), bool)
    train_mask[val_idx] = False
    x_train, y_train = train_images[train_mask], train_labels[train_mask]
    x_val, y_val = train_images[val_idx], train_labels[val_idx]
    sub_idx = stratified(test_labels, N_TEST // K, np.random.default_rng(1))
    x_test, y_test = test_images[sub_idx], test_labels[sub_idx]


# ---- models: each maps images in [0, 1] (M x 28 x 28) to logits (M x 10) ----
MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST training pixels, a fixed input standardization


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                       torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, K))

    def forward(self, x):
        return self.net((x - MEAN) / STD)


class LeNet(torch.nn.Module):
    # LeNet-5 style: conv 5x5 x6 (padded), max-pool, conv 5x5 x16, max-pool, 120-84-10, ReLU.
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 6, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(6, 16, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2))
        self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16 * 5 * 5, 120), torch.nn.ReLU(),
                                        torch.nn.Linear(120, 84), torch.nn.ReLU(), torch.nn.Linear(84, K))

    def forward(self, x):
        return self.head(self.features(((x - MEAN) / STD).unsqueeze(1)))


def conv_bn(cin, cout):
    return [torch.nn.Conv2d(cin, cout, 3, padding=1, bias=False), torch.nn.BatchNorm2d(cout), torch.nn.ReLU()]


class BnCnn(torch.nn.Module):
    # Three 3x3 conv + BatchNorm + ReLU layers (16, 32, 64 channels), a max-pool after the first
    # two, a linear head on the 64 x 7 x 7 features.
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            *conv_bn(1, 16), torch.nn.MaxPool2d(2),
            *conv_bn(16, 32), torch.nn.MaxPool2d(2),
            *conv_bn(32, 64))
        self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64 * 7 * 7, K))

    def forward(self, x):
        return self.head(self.features(((x - MEAN) / STD).unsqueeze(1)))


def fit_torch(make, seed, epochs, lr, batch_size=128):
    """Adam, cross-entropy, a fixed seed for the weights and the batch order; eval mode after."""
    torch.manual_seed(seed)
    model = make()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    xt = torch.tensor(x_train, dtype=torch.float32)
    yt = torch.tensor(y_train)
    order = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        model.train()
        for batch in torch.randperm(len(xt), generator=order).split(batch_size):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xt[batch]), yt[batch]).backward()
            opt.step()
    model.eval()

    def logits(x):
        with torch.no_grad():
            xt = torch.tensor(x, dtype=torch.float32)
            return torch.cat([model(b) for b in xt.split(500)]).numpy()
    return logits


MODELS = {  # name: (class, seed, epochs, learning rate)
    "mlp": (Mlp, 1, 3, 1e-3),
    "lenet": (LeNet, 2, 3, 2e-3),
    "bncnn": (BnCnn, 3, 2, 1e-3),
}

# ---- corruptions (corruptions.py); severity 1..5 parameters, chosen so that the models'
# accuracies run from near clean (1) to heavily degraded (5). Pixel units are 28x28 pixels.
CORRUPTIONS = {  # name: (function, [parameter of severity 1..5], keyword arguments)
    "gaussian_noise": (C.gaussian_noise, [0.08, 0.15, 0.25, 0.4, 0.6], {}),
    "shot_noise": (C.shot_noise, [40.0, 15.0, 6.0, 3.0, 1.5], {}),
    "impulse_noise": (C.impulse_noise, [0.03, 0.07, 0.12, 0.2, 0.3], {}),
    "gaussian_blur": (C.gaussian_blur, [0.6, 1.0, 1.5, 2.0, 3.0], {}),
    "contrast": (C.contrast, [0.6, 0.4, 0.25, 0.15, 0.08], {}),
    "brightness": (C.brightness, [0.1, 0.2, 0.35, 0.5, 0.7], {}),
    "pixelate": (C.pixelate, [20, 14, 10, 7, 5], {}),
    "rotate": (C.rotate, [5.0, 10.0, 15.0, 25.0, 40.0], {}),
    "translate": (C.translate, [0.5, 1.0, 2.0, 3.0, 4.5], {}),
    "elastic": (C.elastic, [0.5, 1.0, 1.5, 2.2, 3.0], {"sigma": 3.0}),
    "occlusion": (C.occlusion, [6, 9, 12, 15, 18], {}),
    "invert": (C.invert, [0.1, 0.2, 0.3, 0.38, 0.45], {}),
    "zoom": (C.zoom, [0.95, 0.9, 0.8, 0.7, 0.6], {}),
}
LABEL_SHIFT_ALPHAS = [0.1, 0.5, 1.0, 5.0]  # three resamples each
MIXED_SEVERITY = 3                   # mixed sets: every corruption type at its middle severity,
MIXED_ALPHAS = [0.5, 1.0, 5.0]       # on Dirichlet(alpha) class proportions, alpha cycling by type


def build_sets():
    """[(name, group, images, labels, labels file)]: the clean subset, every corruption of it, the
    label shifts. The clean and corrupted sets share one labels file."""
    sets = [("clean", "clean", x_test, y_test, "test_labels.npy")]
    for t, (name, (f, params, kwargs)) in enumerate(CORRUPTIONS.items()):
        for s, c in enumerate(params, start=1):
            rng = np.random.default_rng([t, s])
            sets.append((f"{name}_{s}", name, f(x_test, c, rng, **kwargs), y_test, "test_labels.npy"))
    # Label shift: class proportions ~ Dirichlet(alpha), N_SHIFT rows drawn with replacement within
    # each class of the full clean test split (10000 images).
    by_class = [np.flatnonzero(test_labels == k) for k in range(K)]
    for a, alpha in enumerate(LABEL_SHIFT_ALPHAS):
        for r in range(3):
            rng = np.random.default_rng([100, a, r])
            counts = rng.multinomial(N_SHIFT, rng.dirichlet(np.full(K, alpha)))
            rows = np.concatenate([rng.choice(by_class[k], counts[k]) for k in range(K)])
            name = f"label_shift_a{alpha:g}_{r}"
            sets.append((name, "label_shift", test_images[rows], test_labels[rows], f"{name}_labels.npy"))
    return sets


def write_mixed_sets(folder):
    """Mixed sets: label shift on top of a corruption, where label-shift routing is weakest. For
    the t-th corruption type (CORRUPTIONS order): class proportions ~ Dirichlet(MIXED_ALPHAS[t % 3]),
    N_MIXED rows drawn with replacement within each class of that type's severity-MIXED_SEVERITY set
    (2000 rows, 200 per class, labels test_labels.npy), whose logits, as written in `folder`, are
    taken row for row. One generator per set, seeded [200, t] (no other set's seed). Digits-C
    corrupts freshly drawn images instead; here the committed models could not score new images
    (see the module's docstring). Returns (manifest entries, {set: accuracy})."""
    y = np.load(folder / "test_labels.npy")
    by_class = [np.flatnonzero(y == k) for k in range(K)]
    entries, accs = [], {}
    for t, corruption in enumerate(CORRUPTIONS):
        rng = np.random.default_rng([200, t])
        alpha = MIXED_ALPHAS[t % len(MIXED_ALPHAS)]
        counts = rng.multinomial(N_MIXED, rng.dirichlet(np.full(K, alpha)))
        rows = np.concatenate([rng.choice(by_class[k], counts[k]) for k in range(K)])
        z = np.load(folder / f"{corruption}_{MIXED_SEVERITY}_logits.npy")[rows].astype(np.float32)
        labels = y[rows].astype(np.int64)
        name = f"mixed_{corruption}_{MIXED_SEVERITY}"
        np.save(folder / f"{name}_logits.npy", z)
        np.save(folder / f"{name}_labels.npy", labels)
        accs[name] = float(np.mean(z.argmax(1) == labels))
        entries.append({"name": name, "group": "mixed", "logits": f"{name}_logits.npy", "labels": f"{name}_labels.npy"})
    return entries, accs


MIXED_HEADER = ["| model | mixed sets: min accuracy | median | max | sets |", "|---|---:|---:|---:|---:|"]


def mixed_row(model_name, accs):
    values = np.array(list(accs.values()))
    return f"| {model_name} | {values.min():.3f} | {np.median(values):.3f} | {values.max():.3f} | {len(values)} |"


def mixed_only():
    """--mixed-only: (re)writes the mixed sets of every model from the logits in data/, replaces the
    manifests' mixed entries and touches no other file."""
    summary, lines = {}, []
    for model_name in MODELS:
        folder = OUT / model_name
        if not (folder / "manifest.json").is_file():
            sys.exit(f"{folder / 'manifest.json'} not found: run without --mixed-only first")
        for stale in folder.glob("mixed_*.npy"):
            stale.unlink()
        manifest = json.loads((folder / "manifest.json").read_text())
        entries, accs = write_mixed_sets(folder)
        manifest["sets"] = [e for e in manifest["sets"] if e.get("group") != "mixed"] + entries
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        lines.append(mixed_row(model_name, accs))
        summary[model_name] = accs
    print("\n".join(MIXED_HEADER + lines))
    if "-v" in sys.argv:
        C.print_per_set(summary, list(next(iter(summary.values()))))
    C.print_digest(OUT, "bench/fashion_mnist_c/data")


def main():
    if MIXED_ONLY:
        return mixed_only()
    start = time.time()
    sets = build_sets()
    print(f"# corrupted sets built in {time.time() - start:.1f} s", file=sys.stderr)
    models = {}
    for name, (make, seed, epochs, lr) in MODELS.items():
        start = time.time()
        models[name] = fit_torch(make, seed, epochs, lr)
        print(f"# {name} trained in {time.time() - start:.1f} s", file=sys.stderr)
    print("| model | accuracy: source | clean test | min over sets | median | max | sets |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    summary, mixed_lines = {}, []
    for model_name, logits_of in models.items():
        folder = OUT / model_name
        folder.mkdir(parents=True, exist_ok=True)
        for stale in list(folder.glob("*.npy")) + list(folder.glob("manifest.json")):
            stale.unlink()
        source_logits = logits_of(x_val).astype(np.float32)
        np.save(folder / "source_logits.npy", source_logits)
        np.save(folder / "source_labels.npy", y_val)
        entries, accs = [], {}
        for name, group, x, y, labels_file in sets:
            z = logits_of(x).astype(np.float32)
            np.save(folder / f"{name}_logits.npy", z)
            if not (folder / labels_file).exists():
                np.save(folder / labels_file, y)
            accs[name] = float(np.mean(z.argmax(1) == y))
            entries.append({"name": name, "group": group, "logits": f"{name}_logits.npy", "labels": labels_file})
        mixed_entries, mixed_accs = write_mixed_sets(folder)  # last: from the logits just written
        entries += mixed_entries
        manifest = {"source": {"logits": "source_logits.npy", "labels": "source_labels.npy"}, "sets": entries}
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        source_acc = float(np.mean(source_logits.argmax(1) == y_val))
        values = np.array(list(accs.values()))
        print(f"| {model_name} | {source_acc:.3f} | {accs['clean']:.3f} | {values.min():.3f} | "
              f"{np.median(values):.3f} | {values.max():.3f} | {len(values)} |")
        mixed_lines.append(mixed_row(model_name, mixed_accs))
        summary[model_name] = {**accs, **mixed_accs}
    print("\n".join([""] + MIXED_HEADER + mixed_lines))
    if "-v" in sys.argv:
        C.print_per_set(summary, list(next(iter(summary.values()))))
    C.print_digest(OUT, "bench/fashion_mnist_c/data")

if __name__ == "__main__":
    main()

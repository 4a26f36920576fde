"""Binary and imbalanced tasks made from the trained 10-class models of bench/fashion_mnist_c and
bench/digits_c (bench/binary/README.md says which tasks and why).

A K-class network becomes a binary one with positive classes P through z = LSE(logits of P) -
LSE(logits of the others): each row's logits are written as [LSE(others), LSE(P)], so their
softmax is exactly the model's summed probability of P, and the label is 1 where the class is in P.
Every set of the source benchmark's manifest is read from its committed files; nothing is retrained.

    /usr/bin/python3 bench/binary/make_binary.py OUT_DIR [--models cnn,bncnn] [--benches digits_c]
        [--bench-root DIR]

writes OUT_DIR/data/<bench>_<task>_<model>/manifest.json (the `mano eval` format) and its .npy files.
--bench-root is where the source benchmarks are read from (default: this repository's bench/).
"""
import argparse
import json
import pathlib
import sys
import zlib
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

BENCH_ROOT = pathlib.Path(__file__).resolve().parents[1]
LABEL_SHIFT_ROWS, LABEL_SHIFT_DRAWS = 2000, 3
MIXED_ROWS, MIXED_SEVERITY = 1000, 3
NOT_TYPES = ("clean", "label_shift", "mixed")  # the source manifests' groups that are not corruption types


@dataclass(frozen=True)
class Task:
    name: str
    positives: tuple  # the classes that make the positive label
    thin_to: float  # base rate the positive rows are thinned to (clean, corrupted, source); None: natural
    shift_rates: tuple  # the label-shift and mixed sets' base rates


TASKS = {
    "fashion_mnist_c": (
        Task("p50", (5, 6, 7, 8, 9), None, (0.1, 0.3, 0.7, 0.9)),  # sandal, shirt, sneaker, bag, ankle boot
        Task("p20", (0, 6), None, (0.05, 0.1, 0.35, 0.5)),  # T-shirt/top and shirt
        Task("p05", (6,), 0.05, (0.01, 0.02, 0.1, 0.2)),  # shirt
    ),
    "digits_c": (
        Task("p50", (5, 6, 7, 8, 9), None, (0.1, 0.3, 0.7, 0.9)),
        Task("p20", (3, 8), None, (0.05, 0.1, 0.35, 0.5)),
        Task("p05", (8,), 0.05, (0.01, 0.02, 0.1, 0.2)),
    ),
}


def binary_logits(logits, positives):
    """[LSE(others), LSE(P)] per row, in float64, written as float32."""
    x = logits.astype(np.float64)
    is_positive = np.isin(np.arange(x.shape[1]), positives)
    return np.stack([logsumexp(x[:, ~is_positive], axis=1), logsumexp(x[:, is_positive], axis=1)],
                    axis=1).astype(np.float32)


def binary_labels(labels, positives):
    return np.isin(labels, positives).astype(np.int64)


def thinned_rows(labels, rate, rng):
    """Every negative row and as many positive rows (drawn without replacement) as make `rate`."""
    positive = np.flatnonzero(labels == 1)
    negative = np.flatnonzero(labels == 0)
    keep = int(round(rate / (1 - rate) * len(negative)))
    if keep > len(positive):
        sys.exit(f"make_binary.py: only {len(positive)} positive rows, {keep} needed for base rate {rate}; "
                 "choose a lower rate or a larger set")
    return np.sort(np.concatenate([negative, rng.choice(positive, keep, replace=False)]))


def resampled_rows(labels, rate, rows, rng):
    """`rows` rows drawn with replacement within each label, round(rate * rows) of them positive, shuffled."""
    n_positive = int(round(rate * rows))
    drawn = np.concatenate([rng.choice(np.flatnonzero(labels == 1), n_positive),
                            rng.choice(np.flatnonzero(labels == 0), rows - n_positive)])
    return rng.permutation(drawn)


def task_seed(bench, task):
    return zlib.crc32(f"{bench}/{task.name}".encode())


class Writer:
    """One task's folder: .npy files and the manifest's entries."""

    def __init__(self, folder):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.sets = []

    def save(self, name, array):
        np.save(self.folder / name, array)
        return name

    def add(self, name, group, logits, labels):
        """A set; `labels` is a file name already written or an array to write as <name>_labels.npy."""
        if not isinstance(labels, str):
            labels = self.save(f"{name}_labels.npy", labels)
        self.sets.append({"name": name, "group": group, "logits": self.save(f"{name}_logits.npy", logits),
                          "labels": labels})

    def finish(self, source):
        manifest = {"source": source, "sets": self.sets}
        (self.folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def load_sets(model_dir):
    """The source manifest's sets other than its own label-shift and mixed ones, as
    [(entry, logits, labels)], and the source set's (logits, labels)."""
    manifest = json.loads((model_dir / "manifest.json").read_text())
    sets = [(s, np.load(model_dir / s["logits"]), np.load(model_dir / s["labels"]))
            for s in manifest["sets"] if s["group"] not in ("label_shift", "mixed")]
    source = manifest["source"]
    return sets, (np.load(model_dir / source["logits"]), np.load(model_dir / source["labels"]))


def make_task(bench, model_dir, task, out_data):
    """Writes OUT/data/<bench>_<task>_<model>/ from one model's sets."""
    sets, (source_logits, source_labels) = load_sets(model_dir)
    writer = Writer(out_data / f"{bench}_{task.name}_{model_dir.name}")
    seed = task_seed(bench, task)
    clean = next((x, y) for s, x, y in sets if s["group"] == "clean")
    test_labels = binary_labels(clean[1], task.positives)
    for s, _, y in sets:  # clean and corrupted sets share the test rows (bench/*/README.md)
        if not np.array_equal(y, clean[1]):
            sys.exit(f"make_binary.py: {model_dir / s['labels']}: its labels differ from the clean set's; "
                     "the corrupted sets must be copies of the clean rows")
    rows = np.arange(len(test_labels))
    if task.thin_to is not None:
        rows = thinned_rows(test_labels, task.thin_to, np.random.default_rng([300, seed]))
    labels_file = writer.save("test_labels.npy", test_labels[rows])
    for s, x, _ in sets:
        writer.add(s["name"], s["group"], binary_logits(x[rows], task.positives), labels_file)
    for i, rate in enumerate(task.shift_rates):
        for draw in range(LABEL_SHIFT_DRAWS):
            picked = resampled_rows(test_labels, rate, LABEL_SHIFT_ROWS, np.random.default_rng([100, seed, i, draw]))
            writer.add(f"label_shift_p{rate:g}_{draw}", "label_shift", binary_logits(clean[0][picked], task.positives),
                       test_labels[picked])
    types = [g for g in dict.fromkeys(s["group"] for s, _, _ in sets) if g not in NOT_TYPES]
    for t, kind in enumerate(types):
        name = f"{kind}_{MIXED_SEVERITY}"
        logits = next(x for s, x, _ in sets if s["name"] == name)
        rate = task.shift_rates[t % len(task.shift_rates)]
        picked = resampled_rows(test_labels, rate, MIXED_ROWS, np.random.default_rng([200, seed, t]))
        writer.add(f"mixed_{name}", "mixed", binary_logits(logits[picked], task.positives), test_labels[picked])
    labels = binary_labels(source_labels, task.positives)
    picked = np.arange(len(labels))
    if task.thin_to is not None:
        picked = thinned_rows(labels, task.thin_to, np.random.default_rng([301, seed]))
    writer.save("source_labels.npy", labels[picked])
    writer.save("source_logits.npy", binary_logits(source_logits[picked], task.positives))
    writer.finish({"logits": "source_logits.npy", "labels": "source_labels.npy"})
    return writer


def summary_line(writer):
    """<task folder>: sets, base rate and accuracy (min/median/max) per regime."""
    by_regime = {}
    for s in writer.sets:
        labels = np.load(writer.folder / s["labels"])
        logits = np.load(writer.folder / s["logits"])
        regime = s["group"] if s["group"] in NOT_TYPES else "corrupted"
        by_regime.setdefault(regime, []).append((labels.mean(), np.mean(logits.argmax(1) == labels)))
    parts = []
    for regime, values in by_regime.items():
        rate, accuracy = np.array(values).T
        parts.append(f"{regime} {len(values)} sets, base rate {rate.min():.3f}-{rate.max():.3f}, "
                     f"accuracy {accuracy.min():.3f}/{np.median(accuracy):.3f}/{accuracy.max():.3f}")
    return f"{writer.folder.name}: " + "; ".join(parts)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path, help="folder to write data/<bench>_<task>_<model>/ into")
    parser.add_argument("--models", help="comma-separated model names (default: every model of each benchmark)")
    parser.add_argument("--benches", default=",".join(TASKS), help=f"comma-separated, of {', '.join(TASKS)}")
    parser.add_argument("--bench-root", type=pathlib.Path, default=BENCH_ROOT)
    args = parser.parse_args(argv)
    wanted = None if args.models is None else set(args.models.split(","))
    if any((args.out / "data").resolve() == (args.bench_root / b / "data").resolve() for b in TASKS):
        sys.exit(f"make_binary.py: {args.out}: a source benchmark's folder; write the tasks elsewhere")
    made = 0
    for bench in args.benches.split(","):
        if bench not in TASKS:
            sys.exit(f"make_binary.py: --benches: unknown benchmark {bench!r}; use {', '.join(TASKS)}")
        model_dirs = sorted(p.parent for p in (args.bench_root / bench / "data").glob("*/manifest.json"))
        if not model_dirs:
            sys.exit(f"make_binary.py: {args.bench_root / bench / 'data'}: no <model>/manifest.json; "
                     "pass --bench-root the folder that holds the benchmarks")
        for model_dir in model_dirs:
            if wanted is None or model_dir.name in wanted:
                for task in TASKS[bench]:
                    print(summary_line(make_task(bench, model_dir, task, args.out / "data")), file=sys.stderr)
                    made += 1
    if made == 0:
        sys.exit(f"make_binary.py: --models {args.models}: no such model in {args.benches}")


if __name__ == "__main__":
    main(sys.argv[1:])

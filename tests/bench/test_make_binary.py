"""bench/binary/make_binary.py against NumPy: on a small made-up Digits-C (random 10-class logits,
two corruption types) and on the committed Digits-C `cnn`, every written row's z = logit 1 -
logit 0 equals log(sum of the positive classes' softmax probabilities / sum of the others') of the
row it came from (recomputed here in float64), its label is 1 exactly where that row's class is
positive, the clean set and every corrupted copy keep the same rows, the base rates are the ones
asked for (5% after thinning, the label-shift and mixed sets' rates exactly), and the manifest has
the groups bench/trust_report.py reads.
Run: /usr/bin/python3 tests/bench/test_make_binary.py"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "tests" / "reference"), str(REPO / "bench" / "binary")]
from harness import check, finish  # noqa: E402
from make_binary import TASKS  # noqa: E402  the tasks' classes and rates: what is asked for, not how it is made

GENERATOR = REPO / "bench" / "binary" / "make_binary.py"


def reference_pair(logits, positives):
    """(z, positive probability) per row, from a float64 softmax."""
    x = logits.astype(np.float64)
    p = np.exp(x - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    is_positive = np.isin(np.arange(x.shape[1]), positives)
    positive, others = p[:, is_positive].sum(axis=1), p[:, ~is_positive].sum(axis=1)
    return np.log(positive / others), positive


def matched_rows(written, source_logits, positives, what):
    """The source row each written row came from, found by its z; checks z and softmax on the way."""
    z_ref, p_ref = reference_pair(source_logits, positives)
    z = written[:, 1].astype(np.float64) - written[:, 0]
    order = np.argsort(z_ref)
    at = np.clip(np.searchsorted(z_ref[order], z), 1, len(z_ref) - 1)
    rows = np.where(np.abs(z_ref[order][at - 1] - z) < np.abs(z_ref[order][at] - z), order[at - 1], order[at])
    check(np.allclose(z, z_ref[rows], rtol=1e-5, atol=1e-4), f"{what}: z = log(P(positive) / P(others))")
    e = np.exp(written.astype(np.float64) - written.max(axis=1, keepdims=True))
    check(np.allclose(e[:, 1] / e.sum(axis=1), p_ref[rows], atol=1e-6), f"{what}: softmax = summed probability")
    return rows


def check_task(folder, source_dir, task):
    """One written task folder against the source model folder it was made from."""
    manifest = json.loads((folder / "manifest.json").read_text())
    source = json.loads((source_dir / "manifest.json").read_text())
    by_name = {s["name"]: s for s in source["sets"]}
    load = lambda d, f: np.load(d / f)  # noqa: E731
    clean_labels = load(source_dir, by_name["clean"]["labels"])
    test_rows = None
    groups = [s["group"] for s in manifest["sets"]]
    types = [g for g in dict.fromkeys(s["group"] for s in source["sets"]) if g not in ("clean", "label_shift", "mixed")]
    check(list(dict.fromkeys(groups)) == ["clean", *types, "label_shift", "mixed"], f"{folder.name}: groups {set(groups)}")
    for s in manifest["sets"]:
        what = f"{folder.name}/{s['name']}"
        logits, labels = load(folder, s["logits"]), load(folder, s["labels"])
        check(logits.dtype == np.float32 and logits.shape == (len(labels), 2), f"{what}: float32 N x 2")
        check(labels.dtype == np.int64 and set(np.unique(labels)) <= {0, 1}, f"{what}: int64 labels 0/1")
        origin = by_name.get(s["name"][len("mixed_"):] if s["group"] == "mixed" else s["name"], by_name["clean"])
        origin_logits = load(source_dir, origin["logits"])
        if s["group"] in ("label_shift", "mixed") or test_rows is None:
            rows = matched_rows(logits, origin_logits, task.positives, what)
        else:  # a corrupted copy: the clean set's rows, in its order
            rows = test_rows
            z = logits[:, 1].astype(np.float64) - logits[:, 0]
            check(len(z) == len(rows) and np.allclose(z, reference_pair(origin_logits[rows], task.positives)[0],
                                                      rtol=1e-5, atol=1e-4), f"{what}: the clean set's rows")
        check(np.array_equal(labels, np.isin(clean_labels[rows], task.positives)), f"{what}: label 1 = positive class")
        if s["group"] in ("label_shift", "mixed"):
            check(len(labels) == (2000 if s["group"] == "label_shift" else 1000), f"{what}: {len(labels)} rows")
            check(any(labels.sum() == round(r * len(labels)) for r in task.shift_rates),
                  f"{what}: base rate {labels.mean()} is one of {task.shift_rates}")
        test_rows = rows if test_rows is None else test_rows
    positives = np.isin(clean_labels, task.positives)
    kept = np.isin(np.arange(len(clean_labels)), test_rows)
    check(kept[~positives].all(), f"{folder.name}: every negative row kept")
    if task.thin_to is None:
        check(kept.all(), f"{folder.name}: every row kept")
    else:
        check(kept[positives].sum() == round(task.thin_to / (1 - task.thin_to) * (~positives).sum()),
              f"{folder.name}: positives thinned to {task.thin_to}: {kept[positives].sum()} of {positives.sum()}")
    rate = load(folder, manifest["sets"][0]["labels"]).mean()
    check(abs(rate - (task.thin_to or rate)) < 0.005, f"{folder.name}: clean base rate {rate}")
    src_logits, src_labels = load(folder, manifest["source"]["logits"]), load(folder, manifest["source"]["labels"])
    rows = matched_rows(src_logits, load(source_dir, source["source"]["logits"]), task.positives, f"{folder.name}/source")
    check(np.array_equal(src_labels, np.isin(load(source_dir, source["source"]["labels"])[rows], task.positives)),
          f"{folder.name}: source labels")
    check(task.thin_to is None or abs(src_labels.mean() - task.thin_to) < 0.005, f"{folder.name}: source base rate")


def made_up_digits(root):
    """A small Digits-C: 10 classes, 300 test rows, two corruption types, its own label-shift set."""
    rng = np.random.default_rng(7)
    folder = root / "digits_c" / "data" / "tiny"
    folder.mkdir(parents=True)
    labels = np.repeat(np.arange(10), 30)
    sets = [("clean", "clean")] + [(f"{t}_{s}", t) for t in ("noise", "blur") for s in range(1, 6)]
    entries = []
    for name, group in [*sets, ("label_shift_x", "label_shift"), ("source", None)]:
        n = 100 if name == "source" else len(labels)
        logits = rng.normal(0, 3, (n, 10)) * rng.choice([1, 10], (n, 1))  # some rows far more confident
        np.save(folder / f"{name}_logits.npy", logits.astype(np.float32))
        np.save(folder / f"{name}_labels.npy", labels if n == len(labels) else np.arange(n) % 10)
        if group:
            entries.append({"name": name, "group": group, "logits": f"{name}_logits.npy", "labels": f"{name}_labels.npy"})
    manifest = {"source": {"logits": "source_logits.npy", "labels": "source_labels.npy"}, "sets": entries}
    (folder / "manifest.json").write_text(json.dumps(manifest))


def generate(out, *args):
    proc = subprocess.run([sys.executable, GENERATOR, out, *args], capture_output=True, text=True, timeout=300)
    check(proc.returncode == 0, f"make_binary.py {' '.join(map(str, args))}: exit {proc.returncode}: {proc.stderr[-500:]}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        made_up_digits(tmp / "in")
        for root, model, out in ((tmp / "in", "tiny", tmp / "tiny"), (REPO / "bench", "cnn", tmp / "cnn")):
            generate(out, "--benches", "digits_c", "--models", model, "--bench-root", root)
            for task in TASKS["digits_c"]:
                check_task(out / "data" / f"digits_c_{task.name}_{model}", root / "digits_c" / "data" / model, task)
        first = sorted((tmp / "cnn" / "data").rglob("*"))
        generate(tmp / "again", "--benches", "digits_c", "--models", "cnn")
        again = sorted((tmp / "again" / "data").rglob("*"))
        check([p.relative_to(tmp / "cnn") for p in first] == [p.relative_to(tmp / "again") for p in again] and
              all(a.read_bytes() == b.read_bytes() for a, b in zip(first, again) if a.is_file()), "two runs, the same bytes")
        bad = subprocess.run([sys.executable, GENERATOR, tmp / "x", "--benches", "cifar"], capture_output=True, text=True)
        check(bad.returncode != 0 and "--benches" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1,
              f"unknown benchmark: one line naming --benches, got {bad.stderr!r}")
    finish("make_binary: ")


if __name__ == "__main__":
    main()

"""Label shift with one dominant class (issue 52): for each model of a benchmark, calibrate as
bench/trust_report.py does (half of the corruption types, 1st, 3rd, ...), then predict

- dominant-class sets: the clean set resampled by label (with replacement within each class) to
  SHARES of one class, the rest split evenly over the others, for every class; DOMINANT_ROWS rows;
- the same sets' random subsets of SUBSET_SIZES rows, judged against their own accuracy;
- the benchmark's own label-shift sets, the held-out corruption types with the clean set, and the
  mixed sets (label shift on top of a corruption),

and print the recommended estimate's MAE and 90% interval coverage per scope, with how many sets
each regime took and the reasons predict gave for joining both regimes' intervals
("label_shift": {"reason"}).

    /usr/bin/python3 bench/dominant_class.py build/release/native/mano bench/fashion_mnist_c
"""
import collections
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

SHARES = (0.65, 0.8, 0.95)
DOMINANT_ROWS = 2000
SUBSET_SIZES = (20, 50)
SUBSET_DRAWS = 2  # random subsets per dominant-class set and size
NOT_TYPES = ("clean", "label_shift", "mixed")


def run(mano, *args):
    return subprocess.run([mano, *map(str, args)], check=True, capture_output=True, text=True).stdout


def save_set(tmp, name, group, logits, labels):
    np.save(pathlib.Path(tmp, f"{name}_logits.npy"), logits)
    np.save(pathlib.Path(tmp, f"{name}_labels.npy"), labels)
    return {"name": name, "group": group, "logits": f"{name}_logits.npy", "labels": f"{name}_labels.npy"}


def dominant_sets(manifest, sets, tmp):
    """The dominant-class resamples of the clean set and their subsets, as manifest entries."""
    clean = next(s for s in sets if s["group"] == "clean")
    logits = np.load(manifest.parent / clean["logits"])
    labels = np.load(manifest.parent / clean["labels"])
    k = logits.shape[1]
    by_class = [np.flatnonzero(labels == c) for c in range(k)]
    rng = np.random.default_rng(52)
    entries = []
    for share in SHARES:
        for dominant in range(k):
            counts = np.full(k, (1 - share) / (k - 1))
            counts[dominant] = share
            counts = np.round(counts * DOMINANT_ROWS).astype(int)
            rows = np.concatenate([rng.choice(by_class[c], n, replace=True) for c, n in enumerate(counts)])
            name = f"dominant_{dominant}_{share}"
            entries.append(save_set(tmp, name, "dominant", logits[rows], labels[rows]))
            for size in SUBSET_SIZES:
                for draw in range(SUBSET_DRAWS):
                    sub = rng.choice(rows, size, replace=False)
                    entries.append(save_set(tmp, f"{name}_{size}_{draw}", f"dominant/{size}", logits[sub], labels[sub]))
    return entries


def predicted_sets(mano, family, manifest, predicted, tmp, dominant):
    """predict's sets: the manifest's predicted groups, then the dominant-class sets."""
    groups = [a for g in predicted for a in ("--group", g)]
    own = json.loads(run(mano, "predict", "--calibration", family, "--manifest", manifest, *groups, "--json", "--quiet"))
    extra_manifest = pathlib.Path(tmp, "dominant.json")
    extra_manifest.write_text(json.dumps({"sets": dominant}))
    extra = json.loads(run(mano, "predict", "--calibration", family, "--manifest", extra_manifest, "--json", "--quiet"))
    return own["sets"] + extra["sets"]


def scope_of(group):
    if group in ("label_shift", "mixed") or group.startswith("dominant"):
        return group
    return "held-out types + clean"


def reason_kind(reason):
    """The kind of predict's reason for joining both regimes' intervals, without its numbers."""
    kinds = {"less confident": "dominant class less confident than the source's",
             "too weak": "check too weak at this size", "no source profile": "no source profile"}
    return next((kind for key, kind in kinds.items() if key in reason), reason)


def stats_line(scope, sets):
    est = [s["estimate"] for s in sets]
    truth = np.array([s["accuracy"] for s in sets])
    acc = np.array([e["accuracy"] for e in est])
    lo, hi = (np.array([e["interval"][i] for e in est]) for i in (0, 1))
    regimes = collections.Counter(e["regime"] for e in est)
    reasons = collections.Counter(reason_kind(s["label_shift"]["reason"]) for s in sets
                                  if s.get("label_shift", {}).get("reason"))
    cover = (lo <= truth) & (truth <= hi)
    per_regime = ", ".join(
        f"{r} {n} (MAE {np.mean(np.abs(acc - truth)[[e['regime'] == r for e in est]]):.3f}, "
        f"cov. {100 * np.mean(cover[[e['regime'] == r for e in est]]):.0f}%)" for r, n in sorted(regimes.items()))
    why = "; ".join(f"{r}: {n}" for r, n in sorted(reasons.items())) or "–"
    return (f"| {scope} | {len(sets)} | {np.mean(np.abs(acc - truth)):.3f} | {100 * np.mean(cover):.0f}% | "
            f"{np.mean(hi - lo):.2f} | {per_regime} | {why} |")


def report(mano, bench):
    for manifest in sorted(pathlib.Path(bench, "data").glob("*/manifest.json")):
        sets = json.loads(manifest.read_text())["sets"]
        types = [g for g in dict.fromkeys(s["group"] for s in sets) if g not in NOT_TYPES]
        fit_on, held_out = types[0::2], types[1::2]
        present = {s["group"] for s in sets}
        predicted = [*held_out, *(g for g in NOT_TYPES if g in present)]
        with tempfile.TemporaryDirectory() as tmp:
            family = pathlib.Path(tmp, "family.json")
            run(mano, "calibrate", manifest, *[a for g in fit_on for a in ("--group", g)], "-o", family, "--quiet")
            out = predicted_sets(mano, family, manifest, predicted, tmp, dominant_sets(manifest, sets, tmp))
        print(f"\n#### {manifest.parent.name}: the recommended estimate (MAE, 90% coverage, mean width)\n")
        print("| scope | sets | MAE | cov. | width | regimes (MAE, cov.) | intervals joined, why |")
        print("|---|---:|---:|---:|---:|---|---|")
        by_scope = collections.defaultdict(list)
        for s in out:
            if "estimate" in s and "accuracy" in s:
                by_scope[scope_of(s.get("group", ""))].append(s)
        for scope in sorted(by_scope):
            print(stats_line(scope, by_scope[scope]))
        for share in SHARES:
            dom = [s for s in by_scope["dominant"] if s["name"].endswith(f"_{share}")]
            print(stats_line(f"dominant {share:.0%}", dom))


if __name__ == "__main__":
    report(sys.argv[1], sys.argv[2])

"""Audit mode on the held-out protocol of bench/trust_report.py: for each model of a benchmark,
calibrate on the labeled sets of half of the corruption types (1st, 3rd, ... in manifest order)
with `mano calibrate`, then draw `--draws` seeded audits of n rows each, label them from the
benchmark's labels, and read the audited interval (PPI on the calibration's correctness model with
Student t and pseudo-rows, Wilson on the labels alone under 10 labels) and the labels-only Wilson
interval beside it. The audits are drawn from
- every predicted set (the other half's sets, the clean set, the label-shift and mixed sets), and
- with `--accuracies`, sets simulated from each predicted set at those accuracies: `--sim-rows`
  rows, seeded, for each of `--qualities`: "good", that share of them drawn from the set's correct
  rows and the rest from its wrong rows (without replacement where the set has enough, else with;
  a set with fewer than 20 of either kind that the target needs is skipped), so the correctness
  model sees the errors; "poor", drawn from the set's confident correct rows and that share
  labeled wrong at random, so it cannot (see simulated()).
The draws run in process through the Python package's core calls (mano audit's draw, the
calibration's scoring options, predict --audit's interval: the same core functions, not a copy),
because 200 draws x 4 sizes x ~60 sets x 3 models through two CLI processes each would take hours;
the first draws of every model's first set are checked against `mano audit` and
`mano predict --audit` to the last digit.
Reports, per model and n (and accuracy and quality), the average coverage of the audited interval at `--level`
over all draws and sets, the worst set's coverage, the mean width, and the same for Wilson.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/audit_report.py build/release/native/mano \
        bench/fashion_mnist_c [bench/digits_c] [--n 5,10,25,100] [--draws 200] [--level 0.9] \
        [--accuracies 0.5,0.8,0.97,0.99] [--qualities good,poor] [--sim-rows 500] [--models bncnn,lenet] \
        [--markdown] [--json summary.json]
"""
import argparse
import json
import pathlib
import subprocess
import tempfile

import numpy as np

from mano import _core


NOT_TYPES = ("clean", "label_shift", "mixed")  # groups that are not corruption types: predicted, never calibrated on
CLI_CHECKED_DRAWS = 3  # draws per model checked against the CLI
MIN_KIND_ROWS = 20  # a simulated set needs this many of the correct (wrong) rows it draws from
POOR_CONFIDENCE = 0.99  # the "poor" model's simulated sets are drawn from rows at least this confident


def run(mano, *args):
    return subprocess.run([mano, *map(str, args)], check=True, capture_output=True, text=True).stdout


def load_logits(path):
    """As mano reads a .npy: float64 stays float64, other types are read as float32."""
    x = np.load(path)
    return x if x.dtype == np.float64 else x.astype(np.float32)


class set_audits:
    """A predicted set scored once with the calibration's options; each draw scores only its
    audited rows with their labels and asks the core for the audited interval."""

    def __init__(self, calibration, logits, labels):
        self.calibration, self.logits, self.labels = calibration, logits, labels
        self.options = _core.scoring_options(calibration, *logits.shape)["options"]
        self.whole = _core.score(logits, self.options, None, None, None, 0)

    def draw(self, n, seed, level):
        rows = np.array(_core.audit_sample(len(self.logits), n, seed)["rows"], dtype=np.int64)
        audited = _core.score(self.logits[rows], self.options, self.labels[rows].astype(np.int64), None, None, 1)
        return _core.predict_audited(self.calibration, self.whole, audited, level, [])["audit"]


def cli_draw(mano, cal, logits, labels, n, seed, level, tmp):
    rows_file = pathlib.Path(tmp, f"rows_{seed}_{n}.csv")
    labeled = rows_file.with_suffix(".labeled.csv")
    run(mano, "audit", logits, "--budget", n, "--seed", seed, "-o", rows_file, "--quiet")
    lines = rows_file.read_text().splitlines()
    head = [line for line in lines if line.startswith("#")]
    rows = [int(line.split(",")[0]) for line in lines if line and line[0].isdigit()]
    labeled.write_text("\n".join(head + ["row,weight,label"] + [f"{r},1,{labels[r]}" for r in rows]) + "\n")
    out = json.loads(run(mano, "predict", "--calibration", cal, logits, "--audit", labeled, "--level", level, "--json",
                         "--quiet"))
    return out["audit"]


def simulated(logits, labels, accuracy, rows, rng, quality="good"):
    """A set of `rows` rows of this accuracy, or None. "good": drawn from the set's correct and wrong
    rows, so the correctness model sees what makes a row wrong; "poor": rows of the set,
    each labeled with the predicted class (correct) or the next class (wrong) at random: errors that
    do not depend on the logits, which the model cannot see, among rows it is sure of (the set's
    correct rows of confidence at least POOR_CONFIDENCE where it has MIN_KIND_ROWS of them, else its
    correct rows, else all its rows), so that f is nearly the same for every row."""
    pred = logits.argmax(1)
    right = round(accuracy * rows)
    if quality == "poor":
        sure = np.exp(logits - logits.max(1, keepdims=True))
        sure = 1 / sure.sum(1) >= POOR_CONFIDENCE
        pool = next(p for p in (np.flatnonzero((pred == labels) & sure), np.flatnonzero(pred == labels),
                                np.arange(len(logits))) if len(p) >= MIN_KIND_ROWS or p.size == len(logits))
        chosen = np.sort(rng.choice(pool, rows, replace=len(pool) < rows))
        wrong = np.zeros(rows, dtype=bool)
        wrong[rng.choice(rows, rows - right, replace=False)] = True
        made = np.where(wrong, (pred[chosen] + 1) % logits.shape[1], pred[chosen])
        return logits[chosen], made.astype(labels.dtype)
    correct = pred == labels
    picked = []
    for pool, want in ((np.flatnonzero(correct), right), (np.flatnonzero(~correct), rows - right)):
        if want and len(pool) < min(want, MIN_KIND_ROWS):
            return None
        picked.append(rng.choice(pool, want, replace=len(pool) < want))
    chosen = np.sort(np.concatenate(picked))
    return logits[chosen], labels[chosen]


def model_sets(args, manifest):
    """(fit_on, [(name, (accuracy, quality) or None, logits path or None, logits, labels)])"""
    sets = json.loads(manifest.read_text())["sets"]
    types = [g for g in dict.fromkeys(s["group"] for s in sets) if g not in NOT_TYPES]
    fit_on, held_out = types[0::2], types[1::2]
    out = []
    rng = np.random.default_rng(2045)
    for s in (s for s in sets if s["group"] in (*held_out, *NOT_TYPES)):
        path, labels = manifest.parent / s["logits"], np.load(manifest.parent / s["labels"])
        logits = load_logits(path)
        out.append((s["name"], None, path, logits, labels))
        for quality in args.qualities:
            for a in args.accuracies:
                made = simulated(logits, labels, a, args.sim_rows, rng, quality)
                if made is not None:
                    out.append((f"{s['name']}@{a}" + ("" if quality == "good" else f"/{quality}"), (a, quality), None,
                                *made))
    return fit_on, out


def summarize(model, n, kind, results):
    by_set = {}
    for name, m, a_set, truth, a in results:
        if m != n or a_set != kind:
            continue
        iv, wil = a["interval"], a["wilson"]
        by_set.setdefault(name, []).append((iv[0] <= truth <= iv[1], iv[1] - iv[0], wil[0] <= truth <= wil[1],
                                            wil[1] - wil[0], abs(a["accuracy"] - truth)))
    if not by_set:
        return None
    per_set = {k: np.array(v, dtype=float).mean(0) for k, v in by_set.items()}
    table = np.array(list(per_set.values()))
    worst = min(per_set, key=lambda k: per_set[k][0])
    worst_wilson = min(per_set, key=lambda k: per_set[k][2])
    accuracy, quality = kind or (None, None)
    return {"model": model, "n": n, "accuracy": accuracy, "quality": quality, "sets": len(per_set), "coverage": table[:, 0].mean(),
            "worst": per_set[worst][0], "worst_set": worst, "width": table[:, 1].mean(),
            "wilson_coverage": table[:, 2].mean(), "wilson_worst": per_set[worst_wilson][2],
            "wilson_width": table[:, 3].mean(), "mae": table[:, 4].mean()}


def report(args):
    lines, summary = [], []
    ns = [int(x) for x in args.n.split(",")]
    args.accuracies = [float(x) for x in args.accuracies.split(",")] if args.accuracies else []
    args.qualities = args.qualities.split(",")
    manifests = [m for b in args.bench for m in sorted(pathlib.Path(b, "data").glob("*/manifest.json"))]
    for manifest in manifests:
        if args.models and manifest.parent.name not in args.models.split(","):
            continue
        model = f"{manifest.parent.parent.parent.name.split('_')[0]} {manifest.parent.name}"  # "fashion mlp", "digits mlp"
        fit_on, sets = model_sets(args, manifest)
        with tempfile.TemporaryDirectory() as tmp:
            cal = pathlib.Path(tmp, "cal.json")
            run(args.mano, "calibrate", manifest, *[a for g in fit_on for a in ("--group", g)], "-o", cal, "--quiet")
            model_json = json.loads(cal.read_text()).get("correctness")
            if model_json is None:
                raise SystemExit(f"{model}: the calibration has no correctness model")
            cal_text = cal.read_text()
            results = []
            for index, (name, kind, logits_path, logits, labels) in enumerate(sets):
                truth = float(np.mean(logits.argmax(1) == labels))
                audits = set_audits(json.loads(cal_text), logits, labels)
                for n in ns:
                    for seed in range(args.draws):
                        a = audits.draw(n, seed, args.level)
                        if index == 0 and seed < CLI_CHECKED_DRAWS:
                            cli = cli_draw(args.mano, cal, logits_path, labels, n, seed, args.level, tmp)
                            if cli != a:
                                raise SystemExit(f"{model} {name} n={n} seed={seed}: in process {a} but the CLI {cli}")
                        results.append((name, n, kind, truth, a))
        for kind in (None, *[(a, q) for q in args.qualities for a in args.accuracies]):
            summary += [r for n in ns if (r := summarize(model, n, kind, results))]
        lines.append(f"{model}: calibrated on {', '.join(fit_on)}; residual variance "
                     f"{model_json['residual_variance']:.4f}")
    lines.append(f"\n{args.draws} seeded audits per set and n, {round(100 * args.level)}% intervals "
                 "(coverage: mean over the sets of the share of draws whose interval holds the set's accuracy)\n")
    lines += table(summary, None)
    if args.accuracies:
        lines.append(f"\nSets simulated at an accuracy ({args.sim_rows} rows from each predicted set; model: good, its "
                     "correct and wrong rows; poor, its confident correct rows labeled wrong at random); each cell: the "
                     "audited interval's coverage / width, then Wilson's\n")
        lines += accuracy_table(summary, ns, args.accuracies, args.qualities)
    text = "\n".join(lines)
    print(text if args.markdown else text.replace("**", ""))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(summary, indent=1))


def table(summary, accuracy):
    out = ["| model | n | sets | coverage | worst set | width | MAE | Wilson coverage | Wilson worst | Wilson width | "
           "width / Wilson's |", "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in (r for r in summary if r["accuracy"] == accuracy):
        out.append(f"| {r['model']} | {r['n']} | {r['sets']} | {100 * r['coverage']:.1f}% | {100 * r['worst']:.1f}% "
                   f"({r['worst_set']}) | {r['width']:.3f} | {r['mae']:.3f} | {100 * r['wilson_coverage']:.1f}% | "
                   f"{100 * r['wilson_worst']:.1f}% | {r['wilson_width']:.3f} | {r['width'] / r['wilson_width']:.2f} |")
    return out


def accuracy_table(summary, ns, accuracies, qualities):
    out = ["| model | quality | accuracy | sets | " + " | ".join(f"n = {n}" for n in ns) + " | " +
           " | ".join(f"Wilson, n = {n}" for n in ns) + " |", "|---|---|---:|---:|" + "---:|" * (2 * len(ns))]
    models = list(dict.fromkeys(r["model"] for r in summary))
    for model in models:
        for q in qualities:
            for a in accuracies:
                rows = {r["n"]: r for r in summary if r["model"] == model and r["accuracy"] == a and r["quality"] == q}
                if not rows:
                    out.append(f"| {model} | {q} | {a} | 0 |" + " |" * (2 * len(ns)))
                    continue
                cell = [f"{100 * rows[n]['coverage']:.1f}% / {rows[n]['width']:.3f}" if n in rows else "" for n in ns]
                wilson = [f"{100 * rows[n]['wilson_coverage']:.1f}% / {rows[n]['wilson_width']:.3f}" if n in rows else ""
                          for n in ns]
                out.append(f"| {model} | {q} | {a} | {next(iter(rows.values()))['sets']} | " + " | ".join(cell + wilson) +
                           " |")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mano")
    parser.add_argument("bench", nargs="+")
    parser.add_argument("--n", default="100", help="audit sizes, comma-separated")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--models", default="")
    parser.add_argument("--accuracies", default="", help="also audit sets simulated at these accuracies, comma-separated")
    parser.add_argument("--qualities", default="good", help="the simulated sets' kinds of errors: good, poor or both")
    parser.add_argument("--sim-rows", type=int, default=500, help="rows of each simulated set")
    parser.add_argument("--json", default="", help="also write the summary rows here")
    parser.add_argument("--markdown", action="store_true")
    report(parser.parse_args())

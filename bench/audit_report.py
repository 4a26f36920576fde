"""Audit mode on the held-out protocol of bench/trust_report.py: for each model of a benchmark,
calibrate on the labeled sets of half of the corruption types (1st, 3rd, ... in manifest order)
with `mano calibrate`, then for every predicted set (the other half's sets, the clean set, the
label-shift and mixed sets) draw `--draws` seeded audits of n rows each, label them from the
benchmark's labels, and read the audited interval (PPI on the calibration's correctness model) and
the labels-only Wilson interval beside it.
The draws run in process through the Python package's core calls (mano audit's draw, the
calibration's scoring options, predict --audit's interval: the same core functions, not a copy),
because 200 draws x 4 sizes x ~60 sets x 3 models through two CLI processes each would take hours;
the first draws of every model's first set are checked against `mano audit` and
`mano predict --audit` to the last digit.
Reports, per model and n, the average coverage of the PPI interval at `--level` over all draws and
sets, the worst set's coverage, the mean width, and the same for Wilson.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/audit_report.py build/release/native/mano \
        bench/fashion_mnist_c [--n 25,50,100,200] [--draws 200] [--level 0.9] [--models bncnn,lenet] [--markdown]
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


def run(mano, *args):
    return subprocess.run([mano, *map(str, args)], check=True, capture_output=True, text=True).stdout


def load_logits(path):
    """As mano reads a .npy: float64 stays float64, other types are read as float32."""
    x = np.load(path)
    return x if x.dtype == np.float64 else x.astype(np.float32)


class set_audits:
    """A predicted set scored once with the calibration's options; each draw scores only its
    audited rows with their labels and asks the core for the audited interval."""

    def __init__(self, cal_text, logits, labels):
        self.cal_text, self.logits, self.labels = cal_text, logits, labels
        options = json.loads(_core.scoring_options(cal_text, *logits.shape))["options"]
        self.options = json.dumps(options)
        self.whole = _core.score(logits, self.options, None, None, None, 0)

    def draw(self, n, seed, level):
        rows = np.array(json.loads(_core.audit_sample(len(self.logits), n, seed))["rows"], dtype=np.int64)
        audited = _core.score(self.logits[rows], self.options, self.labels[rows].astype(np.int64), None, None, 1)
        return json.loads(_core.predict_audited(self.cal_text, self.whole, audited, level))["audit"]


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


def report(args):
    lines = []
    summary = []
    ns = [int(x) for x in args.n.split(",")]
    for manifest in sorted(pathlib.Path(args.bench, "data").glob("*/manifest.json")):
        model = manifest.parent.name
        if args.models and model not in args.models.split(","):
            continue
        sets = json.loads(manifest.read_text())["sets"]
        types = [g for g in dict.fromkeys(s["group"] for s in sets) if g not in NOT_TYPES]
        fit_on, held_out = types[0::2], types[1::2]
        predicted = [s for s in sets if s["group"] in (*held_out, *NOT_TYPES)]
        with tempfile.TemporaryDirectory() as tmp:
            cal = pathlib.Path(tmp, "cal.json")
            run(args.mano, "calibrate", manifest, *[a for g in fit_on for a in ("--group", g)], "-o", cal, "--quiet")
            model_json = json.loads(cal.read_text()).get("correctness")
            if model_json is None:
                raise SystemExit(f"{model}: the calibration has no correctness model")
            cal_text = cal.read_text()
            results = []
            for index, s in enumerate(predicted):
                logits_path = manifest.parent / s["logits"]
                labels = np.load(manifest.parent / s["labels"])
                logits = load_logits(logits_path)
                truth = float(np.mean(logits.argmax(1) == labels))
                audits = set_audits(cal_text, logits, labels)
                for n in ns:
                    for seed in range(args.draws):
                        a = audits.draw(n, seed, args.level)
                        if index == 0 and seed < CLI_CHECKED_DRAWS:
                            cli = cli_draw(args.mano, cal, logits_path, labels, n, seed, args.level, tmp)
                            if cli != a:
                                raise SystemExit(f"{model} {s['name']} n={n} seed={seed}: in process {a} but the CLI {cli}")
                        results.append((s["name"], n, truth, a))
        for n in ns:
            by_set = {}
            for name, m, truth, a in results:
                if m != n:
                    continue
                ppi, wil = a["interval"], a["wilson"]
                by_set.setdefault(name, []).append((ppi[0] <= truth <= ppi[1], ppi[1] - ppi[0], wil[0] <= truth <= wil[1],
                                                    wil[1] - wil[0], abs(a["accuracy"] - truth)))
            per_set = {k: np.array(v, dtype=float).mean(0) for k, v in by_set.items()}
            table = np.array(list(per_set.values()))
            worst = min(per_set, key=lambda k: per_set[k][0])
            worst_wilson = min(per_set, key=lambda k: per_set[k][2])
            row = {"model": model, "n": n, "sets": len(per_set), "coverage": table[:, 0].mean(), "worst": per_set[worst][0],
                   "worst_set": worst, "width": table[:, 1].mean(), "wilson_coverage": table[:, 2].mean(),
                   "wilson_worst": per_set[worst_wilson][2], "wilson_width": table[:, 3].mean(), "mae": table[:, 4].mean()}
            summary.append(row)
        lines.append(f"{model}: calibrated on {', '.join(fit_on)}; residual variance {model_json['residual_variance']:.4f}")
    lines.append(f"\n{args.draws} seeded audits per set and n, {int(100 * args.level)}% intervals "
                 "(coverage: mean over the sets of the share of draws whose interval holds the set's accuracy)\n")
    lines.append("| model | n | sets | PPI coverage | worst set | PPI width | PPI MAE | Wilson coverage | Wilson worst | "
                 "Wilson width | PPI / Wilson width |")
    lines.append("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in summary:
        lines.append(f"| {r['model']} | {r['n']} | {r['sets']} | {100 * r['coverage']:.1f}% | {100 * r['worst']:.1f}% "
                     f"({r['worst_set']}) | {r['width']:.3f} | {r['mae']:.3f} | {100 * r['wilson_coverage']:.1f}% | "
                     f"{100 * r['wilson_worst']:.1f}% | {r['wilson_width']:.3f} | {r['width'] / r['wilson_width']:.2f} |")
    text = "\n".join(lines)
    print(text if args.markdown else text.replace("**", ""))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mano")
    parser.add_argument("bench")
    parser.add_argument("--n", default="100", help="audit sizes, comma-separated")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--models", default="")
    parser.add_argument("--json", default="", help="also write the summary rows here")
    parser.add_argument("--markdown", action="store_true")
    report(parser.parse_args())

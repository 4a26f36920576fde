"""The binary and imbalanced quality table (bench/binary/README.md): writes the tasks of
bench/binary/make_binary.py into a temporary folder, runs bench/trust_report.py's held-out protocol
on each task and model, and prints per task and regime the positive base rate of the predicted sets,
the recommended estimate's MAE, 90% interval coverage and mean width, MaNo's MAE and the best single
baseline's MAE (the baseline trust_report.py names best over all predicted sets), then trust_report.py's
summary tables (the 20- and 50-row subsets among them).

    /usr/bin/python3 bench/binary/report.py build/release/native/mano [--models cnn,bncnn] [--markdown]
        [--full] [--keep DIR]

--full adds trust_report.py's per-model tables; --keep writes the tasks into DIR and keeps them.
"""
import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

sys.path[:0] = [str(pathlib.Path(__file__).resolve().parent), str(pathlib.Path(__file__).resolve().parents[1])]
import make_binary  # noqa: E402  bench/binary/make_binary.py
import trust_report  # noqa: E402  bench/trust_report.py


def base_rates(manifest, predicted):
    """{scope: [positive base rate of each predicted set in it]}."""
    sets = [s for s in json.loads(manifest.read_text())["sets"] if s["group"] in predicted]
    rates = [(s["group"], float(np.load(manifest.parent / s["labels"]).mean())) for s in sets]
    return {name: [rate for group, rate in rates if keep(group)] for name, keep in trust_report.SCOPES}


def rate_range(rates):
    low, high = min(rates), max(rates)
    return f"{low:.3f}" if f"{low:.3f}" == f"{high:.3f}" else f"{low:.3f}–{high:.3f}"


def task_rows(manifest, r):
    """The compact table's rows of one task and model, one per regime."""
    rates = base_rates(manifest, r["predicted"])
    rows, best = r["rows"], r["best_baseline"]
    out = []
    for name, keep in trust_report.SCOPES:
        est = trust_report.stats_of(rows["estimate"], keep)
        if est is None:
            continue
        mano = trust_report.stats_of(rows["mano"], keep)
        base = trust_report.stats_of(rows[best], keep)
        out.append(f"| {r['model']} | {name} | {est['sets']} | {rate_range(rates[name])} | {r['cal']['recommended']} | "
                   f"{est['mae']:.3f} | {100 * est['coverage']:.0f}% | {est['width']:.2f} | {mano['mae']:.3f} | "
                   f"{best} | {base['mae']:.3f} |")
    return out


def report(mano, out_dir, models, markdown, full):
    make_binary.main([str(out_dir), *(["--models", models] if models else [])])
    results, table = [], []
    for manifest in trust_report.manifests(out_dir):
        r = trust_report.evaluate(mano, manifest)
        results.append(r)
        table += task_rows(manifest, r)
    out = ["#### Binary tasks: the recommended estimate per regime (MAE, 90% interval coverage, mean width)\n",
           "| task and model | regime | sets | positive base rate | recommended | MAE | cov. | width | MaNo MAE | "
           "best baseline | its MAE |",
           "|---|---|---:|---|---|---:|---:|---:|---:|---|---:|", *table]
    if full:
        out += [line for r in results for line in trust_report.model_section(r)]
    out += trust_report.summary_section(results)
    text = "\n".join(out)
    print(text if markdown else text.replace("**", ""))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mano", help="the CLI, e.g. build/release/native/mano")
    parser.add_argument("--models", help="comma-separated model names (default: all six)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--full", action="store_true", help="add trust_report.py's per-model tables")
    parser.add_argument("--keep", type=pathlib.Path, help="write the tasks into this folder and keep them")
    args = parser.parse_args(argv)
    if not (os.path.isfile(args.mano) and os.access(args.mano, os.X_OK)):
        sys.exit(f"report.py: {args.mano}: not an executable; pass the CLI, e.g. build/release/native/mano")
    started = time.monotonic()
    if args.keep:
        report(args.mano, args.keep, args.models, args.markdown, args.full)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            report(args.mano, pathlib.Path(tmp), args.models, args.markdown, args.full)
    print(f"report.py: {time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])

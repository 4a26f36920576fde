"""The held-out protocol of the quality tables (docs/benchmarks/quality.md): for each model of a
benchmark, calibrate on the labeled sets of half of the corruption types (1st, 3rd, ... in manifest order), then
estimate the accuracy of the other half's sets, the clean set and the label-shift sets from
their logits alone, and compare every estimate with the truth. MaNo appears twice: with the
family's normalization (one branch for all sets, `mano calibrate`'s default) and with the
paper's literal per-set criterion (`--normalization softrun`).

    /usr/bin/python3 bench/trust_report.py build/release/native/mano bench/fashion_mnist_c [--markdown]
"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

EXTRA = [a for a in sys.argv[3:] if a != "--markdown"]


def run(mano, *args):
    out = subprocess.run([mano, *map(str, args)], check=True, capture_output=True, text=True)
    return out.stdout


def groups(manifest, *names):
    return [a for g in names for a in ("--group", g)]


def rows_of(prediction, names):
    """{method: [(truth, estimate, lower, upper)]} over the predicted sets, plus "estimate"."""
    out = {}
    for s in prediction["sets"]:
        truth = s["accuracy"]
        entries = dict(s["methods"])
        if "estimate" in s:
            entries["estimate"] = s["estimate"]
        for m, e in entries.items():
            if m in names or m == "estimate":
                out.setdefault(m, []).append((truth, e["accuracy"], *e["interval"], s.get("group", "")))
    return out


def stats_of(rows, keep):
    r = [x for x in rows if keep(x[4])]
    if not r:
        return None
    t, e, lo, hi = (np.array([x[i] for x in r]) for i in range(4))
    return {"mae": float(np.mean(np.abs(e - t))), "coverage": float(np.mean((lo <= t) & (t <= hi))),
            "width": float(np.mean(hi - lo)), "sets": len(r)}


def fmt(s):
    return "–" if s is None else f"{s['mae']:.3f} | {100 * s['coverage']:.0f}% | {s['width']:.2f}"


def report(mano, bench, markdown):
    out = []
    summary = []
    for manifest in sorted(pathlib.Path(bench, "data").glob("*/manifest.json")):
        model = manifest.parent.name
        sets = json.loads(manifest.read_text())["sets"]
        types = [g for g in dict.fromkeys(s["group"] for s in sets) if g not in ("clean", "label_shift")]
        fit_on, held_out = types[0::2], types[1::2]
        predicted = [*held_out, "clean", "label_shift"]
        with tempfile.TemporaryDirectory() as tmp:
            family, literal = pathlib.Path(tmp, "family.json"), pathlib.Path(tmp, "per_set.json")
            run(mano, "calibrate", manifest, *groups(manifest, *fit_on), "-o", family, "--quiet", *EXTRA)
            run(mano, "calibrate", manifest, *groups(manifest, *fit_on), "-o", literal, "--quiet",
                "--normalization", "softrun", "--methods", "mano")
            cal = json.loads(family.read_text())
            pred = json.loads(run(mano, "predict", "--calibration", family, "--manifest", manifest,
                                  *groups(manifest, *predicted), "--json", "--quiet"))
            pred_literal = json.loads(run(mano, "predict", "--calibration", literal, "--manifest", manifest,
                                          *groups(manifest, *predicted), "--json", "--quiet"))
        methods = list(cal["methods"])
        rows = rows_of(pred, methods)
        rows["mano (per-set criterion)"] = rows_of(pred_literal, ["mano"])["mano"]
        scopes = [("held-out types + clean", lambda g: g != "label_shift"), ("label shift", lambda g: g == "label_shift"),
                  ("all predicted", lambda g: True)]
        choice = cal["normalization"]
        order = ["estimate", "mano", "mano (per-set criterion)"] + [m for m in methods if m != "mano"]
        best_baseline = min((m for m in methods if m != "mano"), key=lambda m: stats_of(rows[m], scopes[2][1])["mae"])
        ranking = ", ".join(f"{r['method']} {r['logo_mae']:.3f}" for r in cal["ranking"][:4])
        out.append(f"\n#### {model}: calibrated on {', '.join(fit_on)} ({5 * len(fit_on)} sets); predicted "
                   f"{', '.join(held_out)}, clean and label shift ({len(pred['sets'])} sets)\n")
        out.append(f"MaNo's normalization for the family: {choice['variant']} (held-out-group error: " +
                   ", ".join(f"{k} {v:.3f}" for k, v in choice.get("errors", {}).items()) +
                   f"); recommended: {cal['recommended']}, fallback under class shift: {cal.get('fallback')}; "
                   f"calibration ranking: {ranking}\n")
        out.append("| method | " + " | ".join(f"MAE | cov. | width ({name})" for name, _ in scopes) + " |")
        out.append("|---|" + "---:|---:|---:|" * len(scopes))
        for m in order:
            label = {"estimate": f"**recommended estimate** ({cal['recommended']})",
                     "mano": f"mano (family: {choice['variant']})"}.get(m, m)
            out.append(f"| {label} | " + " | ".join(fmt(stats_of(rows[m], keep)) for _, keep in scopes) + " |")
        all_scope = scopes[2][1]
        est, fam, lit = (stats_of(rows[m], all_scope) for m in ("estimate", "mano", "mano (per-set criterion)"))
        base = stats_of(rows[best_baseline], all_scope)
        outside = sum(s["shift"]["outside"] for s in pred["sets"] if s.get("group") == "label_shift")
        flagged = sum(s["shift"]["outside"] for s in pred["sets"] if s.get("group") != "label_shift")
        n_ls = sum(s.get("group") == "label_shift" for s in pred["sets"])
        out.append(f"\nclass shift flagged on {outside}/{n_ls} label-shift sets and on {flagged}/"
                   f"{len(pred['sets']) - n_ls} other sets")
        summary.append((model, est, fam, lit, best_baseline, base))
    out.append("\n#### Summary over all predicted sets (MAE, 90% interval coverage, mean width)\n")
    out.append("| model | recommended estimate | MaNo, family normalization | MaNo, per-set criterion | "
               "best single baseline | MaNo family / best baseline |")
    out.append("|---|---|---|---|---|---:|")
    for model, est, fam, lit, name, base in summary:
        cell = lambda s: f"{s['mae']:.3f}, {100 * s['coverage']:.0f}%, {s['width']:.2f}"
        out.append(f"| {model} | {cell(est)} | {cell(fam)} | {cell(lit)} | {name}: {cell(base)} | "
                   f"{fam['mae'] / base['mae']:.2f}× |")
    text = "\n".join(out)
    if not markdown:
        text = text.replace("**", "")
    print(text)


if __name__ == "__main__":
    report(sys.argv[1], sys.argv[2], "--markdown" in sys.argv)

"""The held-out protocol of the quality tables (docs/benchmarks/quality.md): for each model of a
benchmark, calibrate on the labeled sets of half of the corruption types (1st, 3rd, ... in manifest order), then
estimate the accuracy of the other half's sets, the clean set, the label-shift sets and the mixed
sets (label shift on top of a corruption; never calibrated on, whatever their corruption type) from
their logits alone, and compare every estimate with the truth; then the same on random subsets of
20 and 50 rows of the predicted sets, each judged against its own accuracy. MaNo appears twice: with the
family's normalization (one branch for all sets, `mano calibrate`'s default) and with the
paper's literal per-set criterion (`--normalization softrun`).

It reads only the CLI's JSON. Where predict names each set's regime ("estimate": {"regime"}), it
counts the sets routed to the label-shift regime per scope; the class-shift flag ("shift":
{"outside"}) and an older CLI's fallback ("estimate": {"fallback"}) are information lines only.

    /usr/bin/python3 bench/trust_report.py build/release/native/mano bench/fashion_mnist_c [--markdown]

bench/binary/report.py runs the same protocol (evaluate, model_section, summary_section) on its tasks.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

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


NOT_TYPES = ("clean", "label_shift", "mixed")  # groups that are not corruption types
SCOPES = [("held-out types + clean", lambda g: g not in ("label_shift", "mixed")),
          ("label shift", lambda g: g == "label_shift"), ("mixed", lambda g: g == "mixed"),
          ("all predicted", lambda g: True)]
ALL = SCOPES[-1][1]
BEFORE_MIXED = lambda g: g != "mixed"  # noqa: E731  the protocol before the mixed sets were added


def count_line(what, pred, flag):
    """'what: a/b held-out types + clean, ...' over the scopes but the last, or None when no set
    carries the flag (flag(set) is None where the JSON lacks it)."""
    flags = [(s.get("group", ""), flag(s)) for s in pred["sets"]]
    if all(f is None for _, f in flags):
        return None
    parts = [f"{sum(bool(f) for g, f in flags if keep(g))}/{sum(keep(g) for g, _ in flags)} {name}"
             for name, keep in SCOPES[:-1] if any(keep(g) for g, _ in flags)]
    return f"{what}: " + ", ".join(parts)


def fmt(s):
    return "– | – | –" if s is None else f"{s['mae']:.3f} | {100 * s['coverage']:.0f}% | {s['width']:.2f}"


SUBSET_SIZES = (20, 50)
SUBSET_DRAWS = 6  # random subsets per predicted set and size


def subsets(mano, family, manifest, predicted_sets, tmp):
    """The recommended estimate on random subsets of SUBSET_SIZES rows of every predicted set,
    judged against each subset's own accuracy: {size: stats_of(...)} and the share of subsets
    routed to the label-shift regime."""
    rng = np.random.default_rng(2026)
    entries = []
    for s in predicted_sets:
        logits = np.load(manifest.parent / s["logits"])
        labels = np.load(manifest.parent / s["labels"])
        for size in SUBSET_SIZES:
            for draw in range(SUBSET_DRAWS):
                rows = np.sort(rng.choice(len(labels), size, replace=False))
                name = f"{s['name']}_{size}_{draw}"
                np.save(pathlib.Path(tmp, f"{name}_logits.npy"), logits[rows])
                np.save(pathlib.Path(tmp, f"{name}_labels.npy"), labels[rows])
                entries.append({"name": name, "group": f"{s['group']}/{size}", "logits": f"{name}_logits.npy",
                                "labels": f"{name}_labels.npy"})
    sub_manifest = pathlib.Path(tmp, "subsets.json")
    sub_manifest.write_text(json.dumps({"sets": entries}))
    pred = json.loads(run(mano, "predict", "--calibration", family, "--manifest", sub_manifest, "--json", "--quiet"))
    out = {}
    for size in SUBSET_SIZES:
        rows = [(s["accuracy"], s["estimate"]["accuracy"], *s["estimate"]["interval"], s["group"].split("/")[0])
                for s in pred["sets"] if s["group"].endswith(f"/{size}") and "estimate" in s]
        out[size] = {name: stats_of(rows, keep) for name, keep in SCOPES}
    return out


def evaluate(mano, manifest, extra=()):
    """One model's run of the protocol: calibrate on half of the types, predict the rest, subsets.
    `extra` goes to the family's `mano calibrate`."""
    sets = json.loads(manifest.read_text())["sets"]
    types = [g for g in dict.fromkeys(s["group"] for s in sets) if g not in NOT_TYPES]
    fit_on, held_out = types[0::2], types[1::2]
    present = {s["group"] for s in sets}
    predicted = [*held_out, *(g for g in ("clean", "label_shift", "mixed") if g in present)]
    with tempfile.TemporaryDirectory() as tmp:
        family, literal = pathlib.Path(tmp, "family.json"), pathlib.Path(tmp, "per_set.json")
        run(mano, "calibrate", manifest, *groups(manifest, *fit_on), "-o", family, "--quiet", *extra)
        run(mano, "calibrate", manifest, *groups(manifest, *fit_on), "-o", literal, "--quiet",
            "--normalization", "softrun", "--methods", "mano")
        cal = json.loads(family.read_text())
        pred = json.loads(run(mano, "predict", "--calibration", family, "--manifest", manifest,
                              *groups(manifest, *predicted), "--json", "--quiet"))
        pred_literal = json.loads(run(mano, "predict", "--calibration", literal, "--manifest", manifest,
                                      *groups(manifest, *predicted), "--json", "--quiet"))
        small = subsets(mano, family, manifest, [s for s in sets if s["group"] in predicted], tmp)
    methods = list(cal["methods"])
    rows = rows_of(pred, methods)
    rows["mano (per-set criterion)"] = rows_of(pred_literal, ["mano"])["mano"]
    best_baseline = min((m for m in methods if m != "mano"), key=lambda m: stats_of(rows[m], ALL)["mae"])
    return {"model": manifest.parent.name, "fit_on": fit_on, "held_out": held_out, "predicted": predicted,
            "n_fit": sum(s["group"] in fit_on for s in sets), "cal": cal, "pred": pred, "methods": methods,
            "rows": rows, "best_baseline": best_baseline, "small": small}


def model_section(r):
    """The lines of one model's tables."""
    cal, pred, rows, methods = r["cal"], r["pred"], r["rows"], r["methods"]
    fit_on, held_out, predicted = r["fit_on"], r["held_out"], r["predicted"]
    choice = cal["normalization"]
    order = ["estimate", "mano", "mano (per-set criterion)"] + [m for m in methods if m != "mano"]
    ranking = ", ".join(f"{x['method']} {x['logo_mae']:.3f}" for x in cal["ranking"][:4])
    what = [*held_out, *({"label_shift": "label shift"}.get(g, g) for g in predicted if g in NOT_TYPES)]
    out = [f"\n#### {r['model']}: calibrated on {', '.join(fit_on)} ({r['n_fit']} sets); predicted "
           f"{', '.join(what[:-1])} and {what[-1]} ({len(pred['sets'])} sets)\n"]
    estimates = [s["estimate"] for s in pred["sets"] if "estimate" in s]
    if "fallback" in cal:  # an older CLI: one estimate with a fallback under class shift
        routing = f"fallback under class shift: {cal.get('fallback')}"
    else:
        routed = sorted({e["method"] for e in estimates if e.get("regime") == "label_shift"})
        routing = f"label-shift regime: {', '.join(routed) or 'no set routed'}"
    out.append(f"MaNo's normalization for the family: {choice['variant']} (held-out-group error: " +
               ", ".join(f"{k} {v:.3f}" for k, v in choice.get("errors", {}).items()) +
               f"); recommended: {cal['recommended']}, {routing}; calibration ranking: {ranking}\n")
    out.append("| method | " + " | ".join(f"MAE | cov. | width ({name})" for name, _ in SCOPES) + " |")
    out.append("|---|" + "---:|---:|---:|" * len(SCOPES))
    for m in order:
        label = {"estimate": f"**recommended estimate** ({cal['recommended']})",
                 "mano": f"mano (family: {choice['variant']})"}.get(m, m)
        out.append(f"| {label} | " + " | ".join(fmt(stats_of(rows[m], keep)) for _, keep in SCOPES) + " |")
    info = [
        count_line("routed to the label-shift regime", pred,
                   lambda s: None if "regime" not in s.get("estimate", {}) else s["estimate"]["regime"] == "label_shift"),
        count_line("fell back (older CLI: class shift)", pred,
                   lambda s: s.get("estimate", {}).get("fallback")),
        count_line("class shift flagged (information only)", pred,
                   lambda s: s.get("shift", {}).get("outside")),
    ]
    mixed = [(s["name"], s["accuracy"], s["estimate"]["accuracy"]) for s in pred["sets"]
             if s.get("group") == "mixed" and "estimate" in s]
    if mixed:  # mixed_<type>_<severity>: was <type> calibrated on?
        split = [(what, [abs(e - a) for n, a, e in mixed if n[len("mixed_"):].rsplit("_", 1)[0] in types_of])
                 for what, types_of in (("held out", held_out), ("calibrated on", fit_on))]
        info.append("recommended estimate's MAE on mixed sets whose corruption type was " + ", ".join(
            f"{what}: {np.mean(e):.3f} ({len(e)} sets)" for what, e in split if e))
    out.append("\n" + "\n".join(line for line in info if line))
    out.append(f"\nRandom subsets of the predicted sets ({SUBSET_DRAWS} per set and size), the recommended "
               "estimate against each subset's own accuracy:\n")
    out.append("| rows | " + " | ".join(f"MAE | cov. | width ({name})" for name, _ in SCOPES) + " |")
    out.append("|---|" + "---:|---:|---:|" * len(SCOPES))
    for size in SUBSET_SIZES:
        out.append(f"| {size} | " + " | ".join(fmt(r["small"][size][name]) for name, _ in SCOPES) + " |")
    return out


def summary_section(results):
    """The two summary tables over the models."""
    cell = lambda s: f"{s['mae']:.3f}, {100 * s['coverage']:.0f}%, {s['width']:.3f}" if s else "–"  # noqa: E731
    out = ["\n#### Summary over all predicted sets (MAE, 90% interval coverage, mean width)\n",
           "| model | recommended estimate | the same without the mixed sets | MaNo, family normalization | "
           "MaNo, per-set criterion | best single baseline | MaNo family / best baseline |",
           "|---|---|---|---|---|---|---:|"]
    for r in results:
        rows, name = r["rows"], r["best_baseline"]
        est, fam, lit, base = (stats_of(rows[m], ALL) for m in ("estimate", "mano", "mano (per-set criterion)", name))
        out.append(f"| {r['model']} | {cell(est)} | {cell(stats_of(rows['estimate'], BEFORE_MIXED))} | {cell(fam)} | "
                   f"{cell(lit)} | {name}: {cell(base)} | {fam['mae'] / base['mae']:.2f}× |")
    out.append("\n#### Small sets: the recommended estimate on random subsets, against their own accuracy "
               "(MAE, 90% interval coverage, mean width)\n")
    out.append("| model | " + " | ".join(f"{size} rows" for size in SUBSET_SIZES) + " |")
    out.append("|---|" + "---|" * len(SUBSET_SIZES))
    for r in results:
        out.append(f"| {r['model']} | " + " | ".join(cell(r["small"][size]["all predicted"]) for size in SUBSET_SIZES) + " |")
    return out


def manifests(bench):
    return sorted(pathlib.Path(bench, "data").glob("*/manifest.json"))


def report(mano, bench, markdown, extra=()):
    results = [evaluate(mano, manifest, extra) for manifest in manifests(bench)]
    out = [line for r in results for line in model_section(r)] + summary_section(results)
    text = "\n".join(out)
    if not markdown:
        text = text.replace("**", "")
    print(text)


if __name__ == "__main__":
    report(sys.argv[1], sys.argv[2], "--markdown" in sys.argv, [a for a in sys.argv[3:] if a != "--markdown"])

"""Prints the result tables of bench/digits_c/README.md from `mano eval --json`, and checks a few
of the CLI's numbers against NumPy/SciPy recomputed from the .npy files (the formulas of docs/methods.md).

    /usr/bin/python3 bench/digits_c/report.py build/release/native/mano
"""
import json
import math
import pathlib
import subprocess
import sys

import numpy as np
from scipy import stats

DATA = pathlib.Path(__file__).resolve().parent / "data"
MODELS = ["logreg", "mlp", "cnn"]


def run_eval(mano, manifest, *options):
    out = subprocess.run([mano, "eval", str(manifest), "--json", "--quiet", *options], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def groups_of(manifest):
    return list(dict.fromkeys(s["group"] for s in json.loads(manifest.read_text())["sets"]))


# ---- an independent recomputation (NumPy, double precision) ----
def mano_score(q, p=4.0, eta=5.0, order=2):
    q = q.astype(np.float64)
    m = q.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(q - m).sum(1))
    criterion = np.mean(lse - q.mean(1))
    if criterion > eta:
        sigma = np.exp(q - lse[:, None])
    else:
        v = sum(q ** j / math.factorial(j) for j in range(order + 1))
        v = v - v.min(1, keepdims=True)
        total = v.sum(1, keepdims=True)
        sigma = np.where(total > 0, v / np.where(total > 0, total, 1.0), 1.0 / q.shape[1])
    return float(np.mean(sigma ** p) ** (1.0 / p)), float(criterion)


def loo_mae(x, y):
    errors = []
    for i in range(len(x)):
        keep = np.arange(len(x)) != i
        a, b = np.polyfit(x[keep], y[keep], 1)
        errors.append(abs(a * x[i] + b - y[i]))
    return float(np.mean(errors))


def check(model, report):
    """Per-set MaNo score, criterion, accuracy and the MaNo summary, from the .npy files alone."""
    folder = DATA / model
    cli_sets = {s["name"]: s for s in report["sets"]}
    scores, accs, worst = [], [], 0.0
    for s in json.loads((folder / "manifest.json").read_text())["sets"]:
        if s["name"] not in cli_sets:
            continue
        q, y = np.load(folder / s["logits"]), np.load(folder / s["labels"])
        score, criterion = mano_score(q)
        accuracy = float(np.mean(q.argmax(1) == y))
        got = cli_sets[s["name"]]
        worst = max(worst, abs(got["methods"]["mano"]["score"] - score),
                    abs(got["methods"]["mano"]["criterion"] - criterion), abs(got["accuracy"] - accuracy))
        scores.append(score)
        accs.append(accuracy)
    scores, accs = np.array(scores), np.array(accs)
    ours = {"r2": stats.pearsonr(scores, accs)[0] ** 2, "spearman": stats.spearmanr(scores, accs)[0],
            "mae": loo_mae(scores, accs)}
    diff = max(abs(ours[k] - report["summary"]["mano"][k]) for k in ours)
    assert worst < 1e-5 and diff < 1e-6, (model, worst, diff)
    return (f"{model}: {len(scores)} sets, largest |NumPy - CLI| of MaNo score/criterion/accuracy {worst:.1e}; "
            f"MaNo R2 {ours['r2']:.4f}, rho {ours['spearman']:.4f}, LOO MAE {ours['mae']:.4f} "
            f"(NumPy/SciPy) = CLI to {diff:.1e}")


def fmt(value):
    return "–" if value is None else f"{value:.3f}"


def main():
    mano = sys.argv[1] if len(sys.argv) > 1 else "build/release/native/mano"
    # every method of the estimator table that the manifests' inputs allow (logits and a source set)
    table = json.loads(subprocess.run([mano, "methods", "--json"], check=True, capture_output=True, text=True).stdout)
    table_methods = [m["name"] for m in table["methods"] if set(m["needs"]) <= {"source"}]
    checks = []
    for model in MODELS:
        manifest = DATA / model / "manifest.json"
        groups = groups_of(manifest)
        corruption_types = [g for g in groups if g not in ("clean", "label_shift", "mixed")]
        covariate = [arg for g in ["clean", *corruption_types] for arg in ("--group", g)]
        # "all": the clean, corrupted and label-shifted sets; the mixed sets (label shift on a
        # corruption) are left out of these tables
        every = [*covariate, "--group", "label_shift"]
        # the paper's literal per-set criterion, then MaNo with one branch for the family of sets
        full = run_eval(mano, manifest, "--normalization", "softrun", *every)
        methods = [m for m in table_methods if m in full["summary"]]  # those `mano eval` runs by default
        cov = run_eval(mano, manifest, *covariate, "--normalization", "softrun")
        rows = {m: (full["summary"].get(m), cov["summary"].get(m)) for m in methods}
        per_group = {m: [full["groups"][g].get(m) for g in corruption_types] for m in methods}
        f = run_eval(mano, manifest, "--methods", "mano", *every)
        c = run_eval(mano, manifest, "--methods", "mano", *covariate)
        rows["mano (family: " + f["normalization"]["variant"] + ")"] = (f["summary"]["mano"], c["summary"]["mano"])
        per_group["mano (family: " + f["normalization"]["variant"] + ")"] = [f["groups"][g]["mano"] for g in corruption_types]
        for forced in ("softmax", "taylor"):
            f = run_eval(mano, manifest, "--methods", "mano", "--normalization", forced, *every)
            c = run_eval(mano, manifest, "--methods", "mano", "--normalization", forced, *covariate)
            rows[f"mano (forced {forced})"] = (f["summary"]["mano"], c["summary"]["mano"])
            per_group[f"mano (forced {forced})"] = [f["groups"][g]["mano"] for g in corruption_types]
        top = {g: max(full["groups"][g][m]["r2"] for m in methods) for g in corruption_types}
        branches = [s["methods"]["mano"]["normalization"] for s in full["sets"]]
        accs = [s["accuracy"] for s in full["sets"]]
        print(f"\n#### {model}: {len(full['sets'])} sets, accuracy {min(accs):.3f} to {max(accs):.3f}; "
              f"MaNo's softrun chose softmax on {branches.count('softmax')} sets, Taylor on {branches.count('taylor')}\n")
        print("| method | R² (all) | ρ (all) | MAE (all) | R² (no label shift) | ρ (no label shift) | "
              "MAE (no label shift) | mean R² per type | mean MAE per type | types where best R² (ties count) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, (a, c) in rows.items():
            g = per_group[name]
            wins = sum(full["groups"][t][name]["r2"] >= top[t] - 1e-9 for t in corruption_types) if name in methods else None
            print(f"| {name} | {fmt(a['r2'])} | {fmt(a['spearman'])} | {fmt(a['mae'])} | {fmt(c['r2'])} | "
                  f"{fmt(c['spearman'])} | {fmt(c['mae'])} | {fmt(np.mean([x['r2'] for x in g]))} | "
                  f"{fmt(np.mean([x['mae'] for x in g]))} | {'' if wins is None else wins} |")
        ls = full["groups"]["label_shift"]
        ls_accs = [s["accuracy"] for s in full["sets"] if s.get("group") == "label_shift"]
        print(f"\nlabel shift ({len(ls_accs)} sets, accuracy {min(ls_accs):.3f} to {max(ls_accs):.3f}): " +
              ", ".join(f"{m} R² {ls[m]['r2']:.2f} MAE {ls[m]['mae']:.4f}" for m in methods))
        print("\nper type, R² of MaNo / of the best method: " + "; ".join(
            f"{t} {full['groups'][t]['mano']['r2']:.2f} / {top[t]:.2f}" for t in corruption_types))
        checks.append(check(model, full))
    print("\nIndependent check (NumPy/SciPy from the .npy files vs the CLI's --json):")
    for line in checks:
        print("- " + line)


if __name__ == "__main__":
    main()

"""Audit mode through the CLI (docs/audit.md), against independent NumPy/SciPy references:
the correctness histogram of `mano score --correctness-histogram`, the logistic correctness model
`mano calibrate` fits (SciPy's trust-region Newton on the same pooled cells and ridge), the PPI
and Wilson intervals of `mano predict --audit` (Wilson alone under 10 labels), the labels needed
for a 0.25-wide interval (by counting up n), the sample `mano audit` draws (a Python splitmix64 + Floyd, deterministic for a
seed, uniform), and every bad audit file refused in one line with exit status 2.

  /usr/bin/python3 tests/cli/test_audit.py build/release/native/mano"""
import json
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit, log_softmax
from scipy.stats import chisquare

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
import audit_reference  # noqa: E402
from harness import check, finish  # noqa: E402
from shapes_support import conforms  # noqa: E402
from workflow_support import run  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
EDGES = np.array([-4 + 0.75 * i for i in range(19)])  # docs/audit.md: 20 bins in logit(confidence)
K, N = 5, 900
LEVEL = 0.9


def output(*args):
    proc = run(*args)
    check(proc.returncode == 0, f"mano {' '.join(map(str, args[:3]))}: exit {proc.returncode} {proc.stderr.strip()[:400]}")
    return proc.stdout


def cells(q, temperature=1.0):
    """Each row's confidence (max softmax(q / T) in double), bin and predicted class; the rows
    within 1e-6 of an edge, where the kernel's float arithmetic may bin them either way."""
    conf = np.exp(log_softmax(q.astype(np.float64) / temperature, axis=1)).max(1)
    thresholds = expit(EDGES)
    bins = np.searchsorted(thresholds, conf, side="right")
    near = np.searchsorted(thresholds, conf * (1 - 1e-6), side="right") != np.searchsorted(thresholds, conf * (1 + 1e-6), side="right")
    return conf, bins, q.argmax(1), near


def cell_table(conf, bins, pred, correct=None):
    """{(bin, class): [rows, confidence sum, correct]}"""
    table = {}
    for b, c in sorted(set(zip(bins.tolist(), pred.tolist()))):
        m = (bins == b) & (pred == c)
        table[(b, c)] = [int(m.sum()), float(conf[m].sum()), int(correct[m].sum()) if correct is not None else None]
    return table


def check_histogram(tmp):
    q = np.load(tmp / "set3.npy")
    for temperature in (1.0, 2.0):
        result = json.loads(output("score", tmp / "set3.npy", "--json", "--quiet", "--correctness-histogram",
                                   "--methods", "confscore", "--temperature", temperature))
        conforms("Result", result, "score --correctness-histogram")
        h = result["correctness"]
        check(h["edges"] == EDGES.tolist() and h["classes"] == K and h["labeled"] is False,
              f"T = {temperature}: the histogram's edges, classes and labeled flag")
        conf, bins, pred, near = cells(q, temperature)
        want = cell_table(conf, bins, pred)
        got = {(c["bin"], c["class"]): [c["rows"], c["confidence"]] for c in h["cells"]}
        moved = sum(abs(got.get(key, [0, 0])[0] - want.get(key, [0])[0]) for key in set(got) | set(want))
        check(moved <= 2 * int(near.sum()), f"T = {temperature}: cell counts as NumPy's ({moved} rows differ, "
                                            f"{int(near.sum())} within 1e-6 of an edge)")
        check(sum(v[0] for v in got.values()) == N, f"T = {temperature}: the cells hold every row")
        check(all(abs(got[key][1] - want[key][1]) <= 1e-5 * max(1.0, want[key][1]) for key in want if key in got
                  and got[key][0] == want[key][0]), f"T = {temperature}: confidence sums as NumPy's")
        check("correctness" not in json.loads(output("score", tmp / "set3.npy", "--json", "--quiet", "--methods",
                                                     "confscore")), "no histogram unless asked for")


def reference_fit(tmp, sets, ridge=1.0):
    """The pooled cells of the calibration sets and SciPy's fit of the penalized logistic model."""
    rows = []
    per_set = []
    for s in sets:
        q, y = np.load(tmp / s["logits"]), np.load(tmp / s["labels"])
        conf, bins, pred, _ = cells(q)
        table = cell_table(conf, bins, pred, pred == y)
        per_set.append(table)
        for (b, c), (n, csum, good) in table.items():
            mean = min(csum / n, 1 - 1e-12)
            rows.append((np.log(mean / (1 - mean)), c, n, good))
    x, cls, n, good = (np.array(v, dtype=float) for v in zip(*rows))
    cls = cls.astype(int)
    design = np.zeros((len(x), 2 + K))
    design[:, 0], design[:, 1] = 1, x
    design[np.arange(len(x)), 2 + cls] = 1
    penalty = np.diag([0, 0] + [ridge] * K)

    def objective(t):
        eta = design @ t
        return np.sum(n * np.logaddexp(0, eta) - good * eta) + 0.5 * t @ penalty @ t

    def gradient(t):
        return design.T @ (n * expit(design @ t) - good) + penalty @ t

    def hessian(t):
        p = expit(design @ t)
        return design.T @ (design * (n * p * (1 - p))[:, None]) + penalty

    fit = minimize(objective, np.zeros(2 + K), jac=gradient, hess=hessian, method="trust-exact", options={"gtol": 1e-11})
    return fit.x, per_set


def probabilities(theta, table):
    """f of each cell of a table, from its own mean confidence."""
    out = {}
    for (b, c), (n, csum, _) in table.items():
        mean = min(csum / n, 1 - 1e-12)
        out[(b, c)] = expit(theta[0] + theta[1] * np.log(mean / (1 - mean)) + theta[2 + c])
    return out


def residual_variance(theta, table):
    f = probabilities(theta, table)
    total = sum(v[0] for v in table.values())
    mean = sum(v[2] * (1 - f[k]) - (v[0] - v[2]) * f[k] for k, v in table.items()) / total
    square = sum(v[2] * (1 - f[k]) ** 2 + (v[0] - v[2]) * f[k] ** 2 for k, v in table.items()) / total
    return square - mean ** 2


def check_model(tmp, sets, cal):
    model = json.loads(cal.read_text())["correctness"]
    theta, per_set = reference_fit(tmp, sets)
    got = np.array([model["intercept"], model["slope"], *model["class_effects"]])
    check(np.max(np.abs(got - theta)) < 2e-5, f"the correctness model as SciPy's fit: {got.round(6)} vs {theta.round(6)}")
    variances = [residual_variance(theta, t) for t in per_set]
    check(np.allclose(model["set_residual_variances"], variances, atol=1e-6), "each set's Var(c - f) as NumPy's")
    check(abs(model["residual_variance"] - np.mean(variances)) < 1e-6, "the pooled Var(c - f) is their mean")
    check(model["rows"] == N * len(sets) and model["ridge"] == 1, "the model's rows and ridge")
    return theta


def read_rows(path):
    frame = pd.read_csv(path, comment="#")
    return frame["row"].tolist(), frame


def check_sample(tmp):
    target = tmp / "target.npy"
    a, b, c = tmp / "a.csv", tmp / "b.csv", tmp / "c.csv"
    output("audit", target, "--budget", 60, "--seed", 11, "-o", a)
    output("audit", target, "--budget", 60, "--seed", 11, "-o", b)
    output("audit", target, "--budget", 60, "--seed", 12, "-o", c)
    check(a.read_bytes() == b.read_bytes(), "the same seed draws the same file")
    rows, frame = read_rows(a)
    check(list(frame.columns) == ["row", "weight"] and set(frame["weight"]) == {1}, "the file is row,weight with weights 1")
    check(a.read_text().startswith("# mano audit: 60 of the 1500 rows of") and "seed 11" in a.read_text().splitlines()[0],
          "the first line records the draw and its seed")
    check(len(set(rows)) == 60 and all(0 <= r < 1500 for r in rows) and rows == sorted(rows),
          "60 distinct rows in range, ascending")
    check(rows == audit_reference.sample(1500, 60, 11), "the rows of splitmix64 + Floyd (docs/audit.md)")
    check(read_rows(c)[0] != rows, "another seed draws other rows")
    # uniform: each of 12 rows in a third of 300 draws of 4
    counts = np.zeros(12)
    small = tmp / "small.npy"
    np.save(small, np.zeros((12, 3), dtype=np.float32))
    for seed in range(300):
        output("audit", small, "--budget", 4, "--seed", seed, "-o", tmp / "s.csv", "--quiet")
        counts[read_rows(tmp / "s.csv")[0]] += 1
    check(chisquare(counts).pvalue > 1e-4, f"every row equally likely over 300 seeds: {counts.tolist()}")
    for args, what in [(("--budget", 1501, "--seed", 1), "more than the set's 1500 rows"),
                       (("--budget", 0), "--budget"),
                       (("--budget", 1, "--seed", 1), "a budget of 1 row is below the 2 rows an audit needs"),
                       (("--budget", 5, "--seed", 2 ** 53), "--seed")]:
        proc = run("audit", target, *args, "-o", tmp / "x.csv")
        check(proc.returncode == 2 and what in proc.stderr and len(proc.stderr.strip().splitlines()) == 1,
              f"audit {args}: {proc.returncode} {proc.stderr.strip()}")
    proc = run("audit", target, "--budget", 5, "-o", target)
    check(proc.returncode == 2 and "-o" in proc.stderr, f"audit -o over its input is refused: {proc.stderr.strip()}")


def labeled_audit(tmp, rows_file, labels, name="labeled.csv"):
    rows, frame = read_rows(rows_file)
    frame["label"] = labels[rows]
    path = tmp / name
    path.write_text(rows_file.read_text().splitlines()[0] + "\n" + frame.to_csv(index=False))
    return path, rows


def reference_ppi(theta, q, labels, rows):
    conf, bins, pred, _ = cells(q)
    correct = (pred == labels).astype(float)
    table = cell_table(conf, bins, pred)
    f_cell = probabilities(theta, table)
    f = np.array([f_cell[(b, c)] for b, c in zip(bins.tolist(), pred.tolist())])
    estimate, interval = audit_reference.ppi(f, correct, rows, LEVEL)
    return estimate, interval, audit_reference.wilson(correct[rows].sum(), len(rows), LEVEL), f


def check_audit(tmp, cal, theta):
    target = tmp / "target.npy"
    q, labels = np.load(target), np.load(tmp / "target_labels.npy")
    for seed, budget in ((3, 80), (4, 200)):
        output("audit", target, "--budget", budget, "--seed", seed, "-o", tmp / "rows.csv")
        path, rows = labeled_audit(tmp, tmp / "rows.csv", labels)
        got = json.loads(output("predict", "--calibration", cal, target, "--audit", path, "--json", "--quiet"))
        conforms("Prediction", got, "predict --audit --json")
        a = got["audit"]
        estimate, interval, wilson, _ = reference_ppi(theta, q, labels, rows)
        check(a["n"] == budget and a["method"] == "ppi", f"seed {seed}: {a['n']} rows by PPI")
        check(abs(a["accuracy"] - estimate) < 1e-5 and np.allclose(a["interval"], interval, atol=1e-5),
              f"seed {seed}: PPI {a['accuracy']:.6f} {a['interval']} vs NumPy {estimate:.6f} {interval}")
        check(np.allclose(a["wilson"], wilson, atol=1e-12), f"seed {seed}: Wilson {a['wilson']} vs {wilson}")
    text = output("predict", "--calibration", cal, target, "--audit", path, "--quiet")
    check(text.startswith("audit of ") and "PPI" in text.splitlines()[0], f"the text output shows the audit first: {text[:120]!r}")
    # under 10 labels: Wilson on the labels alone, and the output says so
    output("audit", target, "--budget", 9, "--seed", 8, "-o", tmp / "few.csv")
    few, few_rows = labeled_audit(tmp, tmp / "few.csv", labels, "few_labeled.csv")
    got = json.loads(output("predict", "--calibration", cal, target, "--audit", few, "--json", "--quiet"))
    conforms("Prediction", got, "predict --audit --json with 9 labels")
    a, reason = got["audit"], "n < 10 labels: Wilson on the labels alone"
    correct = int(np.sum(q[few_rows].argmax(1) == labels[few_rows]))
    check(a["method"] == "wilson" and a.get("reason") == reason and a["interval"] == a["wilson"]
          and np.allclose(a["interval"], audit_reference.wilson(correct, 9, LEVEL), atol=1e-12)
          and abs(a["accuracy"] - correct / 9) < 1e-12, f"9 labels: Wilson on the labels alone {a}")
    text = output("predict", "--calibration", cal, target, "--audit", few, "--quiet")
    check(f"({reason})" in text.splitlines()[0], f"the text says why: {text.splitlines()[0]!r}")
    # a calibration without the model: labels alone
    bare = json.loads(cal.read_text())
    del bare["correctness"]
    (tmp / "bare.json").write_text(json.dumps(bare))
    got = json.loads(output("predict", "--calibration", tmp / "bare.json", target, "--audit", path, "--json", "--quiet"))
    a = got["audit"]
    share = np.mean(q[rows].argmax(1) == labels[rows])
    check(a["method"] == "wilson" and a["interval"] == a["wilson"] and abs(a["accuracy"] - share) < 1e-12
          and "no correctness model" in a.get("reason", ""), f"without a correctness model: labels alone {a}")
    proc = run("predict", "--calibration", cal, target, tmp / "set0.npy", "--audit", path)
    check(proc.returncode == 2 and "one set" in proc.stderr, f"--audit with two sets: {proc.stderr.strip()}")


def check_audit_belongs(tmp, cal):
    """An audit drawn from one set: refused for a set of another size, a warning for another file."""
    target = tmp / "target.npy"
    q, labels = np.load(target), np.load(tmp / "target_labels.npy")
    output("audit", target, "--budget", 40, "--seed", 5, "-o", tmp / "rows.csv")
    path, _ = labeled_audit(tmp, tmp / "rows.csv", labels, "belongs.csv")
    np.save(tmp / "smaller.npy", q[:1000])
    proc = run("predict", "--calibration", cal, tmp / "smaller.npy", "--audit", path)
    want = (f"mano: error: {path}, line 1: this audit was drawn from the {len(q)} rows of {target}, but the set has 1000 "
            "rows: its labels are another set's rows; draw the audit from this set (mano audit)")
    check(proc.returncode == 2 and proc.stderr.strip() == want, f"an audit of another size is refused: {proc.stderr.strip()!r}")
    np.save(tmp / "renamed.npy", q)
    proc = run("predict", "--calibration", cal, tmp / "renamed.npy", "--audit", path, "--json")
    note = f"{path} was drawn from {target}, not from {tmp / 'renamed.npy'} (both have {len(q)} rows): check that its " \
           "labels are this set's rows"
    check(proc.returncode == 0 and f"mano: warning: {note}" in proc.stderr, f"another name is a warning: {proc.stderr.strip()!r}")
    got = json.loads(proc.stdout)
    check(got["audit"]["warnings"] == [note], f"... and in the audit's JSON: {got['audit'].get('warnings')}")
    conforms("Prediction", got, "predict --audit --json with a warning")
    proc = run("predict", "--calibration", cal, target, "--audit", path, "--json")
    check(proc.returncode == 0 and "warning" not in proc.stderr and "warnings" not in json.loads(proc.stdout)["audit"],
          f"the set it was drawn from: no warning ({proc.stderr.strip()!r})")


def check_labels_needed(tmp, cal):
    target = tmp / "target.npy"
    q = np.load(target)
    got = json.loads(output("predict", "--calibration", cal, target, "--json", "--quiet"))
    estimate = got["estimate"]["interval"]
    check(estimate[1] - estimate[0] > 0.25, f"the target's estimate interval is wider than 0.25 (the test covers it): {estimate}")
    need = got.get("labels_for_width")
    v = json.loads(cal.read_text())["correctness"]["residual_variance"]
    big_n = len(q)
    want = audit_reference.labels_for_width(v, big_n, *estimate, LEVEL)
    check(need == want and want["method"] == "ppi", f"labels needed (PPI): {need} vs {want}")
    want = want["n"]
    text = output("predict", "--calibration", cal, target, "--quiet")
    check(f"{want} labeled rows drawn uniformly would bring it to 0.25" in text, f"the text says so: {text[-300:]!r}")
    # several sets: said once, with the range of labels and the command for the first
    text = output("predict", "--calibration", cal, target, target, "--quiet")
    advice = [line for line in text.splitlines() if "labeled rows" in line]
    check(advice == [f"2 of 2 sets have 90% intervals wider than 0.25; {want} labeled rows of each, drawn uniformly, would bring "
                     f"each to 0.25 (for {target}: mano audit {target} --budget {want} -o rows.csv, label them, then mano "
                     f"predict --calibration {cal} {target} --audit rows.csv; each set's number: labels_for_width in --json)"],
          f"two sets get one line of advice: {advice}")
    got = json.loads(output("predict", "--calibration", tmp / "bare.json", target, "--json", "--quiet"))
    lo, hi = got["estimate"]["interval"]
    wilson = audit_reference.labels_for_width(None, big_n, lo, hi, LEVEL)
    check(got.get("labels_for_width") == wilson and wilson["method"] == "wilson",
          f"labels needed without a model: {got.get('labels_for_width')} vs {wilson}")


def check_bad_files(tmp):
    target = tmp / "target.npy"
    cal = tmp / "cal.json"
    header = "row,weight,label\n"
    cases = [
        ("out_of_range", header + "5,1,0\n1500,1,2\n", "line 3, column 1 (row): row 1500 is outside the set's rows 0 to 1499"),
        ("twice", header + "5,1,0\n7,1,1\n5,1,0\n", "line 4, column 1 (row): row 5 is listed twice (also on line 2)"),
        ("label_outside", header + "5,1,5\n", "line 2, column 3 (label): label 5 is outside the classes 0 to 4"),
        ("label_negative", header + "5,1,-1\n", "label -1 is outside the classes 0 to 4"),
        ("no_label_column", "row,weight\n5,1\n", "line 1: the header (row,weight) has no column label"),
        ("no_row_column", "weight,label\n1,0\n", "has no column row"),
        ("no_weight_column", "row,label\n5,0\n", "has no column weight"),
        ("weight", header + "5,2,0\n", "line 2, column 2 (weight): weight 2: only the uniform design is implemented"),
        ("weight_text", header + "5,one,0\n", "\"one\" is not a number"),
        ("row_not_integer", header + "5.5,1,0\n", "line 2, column 1 (row): \"5.5\" is not a row number"),
        ("label_not_integer", header + "5,1,cat\n", "line 2, column 3 (label): \"cat\" is not a class index"),
        ("label_missing", header + "5,1,\n", "line 2, column 3 (label): no label"),
        ("empty", "", "empty; an audit file starts with the header row,weight,label"),
        ("comments_only", "# a comment\n\n", "empty"),
        ("garbled_record", "# mano audit: nothing\n" + header + "5,1,0\n7,1,0\n",
         "line 1: this line starts as mano audit's record of the draw but does not read as one"),
        ("one_row", header + "5,1,0\n", "1 labeled row; an audit needs at least 2"),
        ("half_label", header + "5,1,3.5\n7,1,0\n", "line 2, column 3 (label): \"3.5\" is not a class index"),
        ("header_only", header, "no audited rows after the header"),
        ("long_line", header + "5,1,0," + "x" * 5000 + "\n", "line 2: a line of 5006 bytes, over the 4096"),
        ("long_field", "row,weight,label,note\n5,1,0," + "x" * 300 + "\n", "column 4: a field of 300 bytes, over the 256"),
        ("fields", header + "5,1\n", "line 2: 2 fields but the header has 3"),
        ("quote", header + '5,1,"0\n', "line 2, column 3: a quoted field has no closing quote"),
        ("twice_named", "row,row,weight,label\n", "names the column row twice"),
    ]
    for name, text, expected in cases:
        path = tmp / f"bad_{name}.csv"
        path.write_text(text)
        proc = run("predict", "--calibration", cal, target, "--audit", path)
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"mano: error: {path}") and expected in lines[0]
              and "Traceback" not in proc.stderr, f"bad audit file {name}: exit {proc.returncode}, {proc.stderr.strip()!r}")
    good = tmp / "good.csv"
    good.write_text('\ufeffnote,LABEL,"row",weight\n"a, b",3,17,1.0\n\nx,1,4,1\r\n')
    proc = run("predict", "--calibration", cal, target, "--audit", good, "--json", "--quiet")
    check(proc.returncode == 0 and json.loads(proc.stdout)["audit"]["n"] == 2,
          f"columns in any order, quoted, a BOM, CRLF and blank lines: {proc.stderr.strip()}")


def check_draw_is_checked(tmp, cal):
    """The rows of an audit file are the draw its first line records (recomputed): the red team's
    file, the wrongly classified drawn rows swapped for correct ones, is refused, as are an edited
    seed or count and a row left out; labels written as pandas' floats (3.0) are read as 3."""
    target = tmp / "target.npy"
    q, labels = np.load(target), np.load(tmp / "target_labels.npy")
    output("audit", target, "--budget", 30, "--seed", 5, "-o", tmp / "rows.csv", "--quiet")
    path, rows = labeled_audit(tmp, tmp / "rows.csv", labels, "honest.csv")
    honest = json.loads(output("predict", "--calibration", cal, target, "--audit", path, "--json", "--quiet"))["audit"]
    wrong = [r for r in rows if q[r].argmax() != labels[r]]
    right = [r for r in range(len(q)) if r not in rows and q[r].argmax() == labels[r]]
    check(len(wrong) >= 3, f"the draw has wrongly classified rows to swap ({len(wrong)})")
    swap = dict(zip(wrong, right))
    lines = path.read_text().splitlines()
    edited = [lines[0], lines[1]] + [f"{swap[int(l.split(',')[0])]},1,{labels[swap[int(l.split(',')[0])]]}"
                                     if int(l.split(",")[0]) in swap else l for l in lines[2:]]
    first = 3 + next(i for i, r in enumerate(rows) if r in swap)

    def refused(name, text, want):
        bad = tmp / f"{name}.csv"
        bad.write_text(text)
        proc = run("predict", "--calibration", cal, target, "--audit", bad, "--json", "--quiet")
        got = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(got) == 1 and got[0].startswith(f"mano: error: {bad}") and want in got[0],
              f"{name}: refused in one line naming what differs: {proc.returncode} {proc.stderr.strip()!r}")

    refused("swapped", "\n".join(edited) + "\n",
            f"{tmp / 'swapped.csv'}, line {first}, column 1 (row): row {swap[rows[first - 3]]} is not in the draw of seed 5 "
            "(30 of the 1500 rows) that line 1 records: the rows or line 1 were edited")
    refused("seed_edited", "\n".join([lines[0].replace("seed 5 ", "seed 6 ")] + lines[1:]) + "\n",
            "is not in the draw of seed 6 (30 of the 1500 rows) that line 1 records")
    refused("count_edited", "\n".join([lines[0].replace("30 of", "31 of")] + lines[1:]) + "\n",
            "is not in the draw of seed 5 (31 of the 1500 rows) that line 1 records (30 rows given)")
    refused("left_out", "\n".join(lines[:5] + lines[6:]) + "\n",
            f"row {rows[3]} of the draw of seed 5 (30 of the 1500 rows) that line 1 records is not labeled (29 rows given)")
    refused("seed_garbled", "\n".join([lines[0].replace("seed 5 ", "seed five ")] + lines[1:]) + "\n",
            "line 1: this line starts as mano audit's record of the draw but does not read as one")
    # labels as pandas writes a column that held a NaN: 3.0 is 3, the same audit
    frame = pd.read_csv(path, comment="#")
    frame["label"] = frame["label"].astype(float)
    floats = tmp / "floats.csv"
    floats.write_text(lines[0] + "\n" + frame.to_csv(index=False))
    check(",3.0\n" in floats.read_text() or ",1.0\n" in floats.read_text(), "pandas wrote the labels as floats")
    got = json.loads(output("predict", "--calibration", cal, target, "--audit", floats, "--json", "--quiet"))["audit"]
    check(got == honest, f"float labels read as the whole numbers they are: {got} vs {honest}")
    frame.loc[0, "label"] = 3.5
    halves = tmp / "halves.csv"
    halves.write_text(lines[0] + "\n" + frame.to_csv(index=False))
    refused("halves", halves.read_text(), "line 3, column 3 (label): \"3.5\" is not a class index")


def check_suggested_commands_run(tmp):
    """The mano audit and mano predict --audit commands predict suggests run as printed, with the
    options the set needs to be read the same way (--input binary-logit, --key; a path with a space)."""
    rng = np.random.default_rng(7)
    sets = []
    for i in range(8):
        y = rng.integers(0, 2, 600)
        z = (2 * y - 1) * (0.2 + 0.3 * i) + rng.standard_normal(600) * 1.5
        z *= [0.5, 1.0, 2.0, 3.0][i % 4]
        np.save(tmp / f"bin{i}.npy", z.astype(np.float32)[:, None])
        np.save(tmp / f"bin{i}_labels.npy", y)
        sets.append({"name": f"bin{i}", "group": f"g{i % 4}", "logits": f"bin{i}.npy", "labels": f"bin{i}_labels.npy"})
    (tmp / "binary.json").write_text(json.dumps({"sets": sets}))
    cal = tmp / "binary_cal.json"
    output("calibrate", tmp / "binary.json", "-o", cal, "--quiet", "--input", "binary-logit", "--methods", "confscore,nuclear")
    folder = tmp / "new sets"
    folder.mkdir()
    y = rng.integers(0, 2, 1200)
    z = (2 * y - 1) * 0.3 + rng.standard_normal(1200) * 2.0
    target = folder / "batch.npz"
    np.savez(target, scores=z.astype(np.float32)[:, None], other=np.zeros(3))
    text = output("predict", "--calibration", cal, target, "--input", "binary-logit", "--key", "scores", "--quiet")
    found = [line for line in text.splitlines() if "labeled rows drawn uniformly" in line]
    check(len(found) == 1, f"predict suggests an audit: {text[-400:]!r}")
    m = re.search(r"\(mano audit (.*) -o rows\.csv, label them, then mano predict (.*) --audit rows\.csv\)$", found[0] if found else "")
    check(m is not None, f"the suggestion names both commands: {found}")
    if not m:
        return
    audit_args, predict_args = shlex.split(m.group(1)), shlex.split(m.group(2))
    check("--input" in audit_args and "binary-logit" in audit_args and "--key" in audit_args and "scores" in audit_args,
          f"the audit command reads the set as predict did: {audit_args}")
    proc = subprocess.run([str(pathlib.Path(sys.argv[1]).resolve()), "audit", *audit_args, "-o", "rows.csv", "--quiet"], cwd=tmp, capture_output=True,
                          text=True, timeout=300)
    check(proc.returncode == 0, f"mano audit {m.group(1)} runs as printed: {proc.stderr.strip()}")
    rows_file = tmp / "rows.csv"
    path, rows = labeled_audit(tmp, rows_file, y, "rows.csv")
    proc = subprocess.run([str(pathlib.Path(sys.argv[1]).resolve()), "predict", *predict_args, "--audit", "rows.csv", "--json", "--quiet"], cwd=tmp,
                          capture_output=True, text=True, timeout=300)
    check(proc.returncode == 0 and json.loads(proc.stdout or "{}").get("audit", {}).get("n") == len(rows),
          f"mano predict {m.group(2)} --audit rows.csv runs as printed: {proc.stderr.strip()}")
    # mano audit's own line names the options too
    proc = run("audit", target, "--input", "binary-logit", "--key", "scores", "--budget", 20, "--seed", 1, "-o", tmp / "r.csv")
    check(proc.returncode == 0 and f"'{target}' --input binary-logit --key scores --audit" in proc.stdout,
          f"mano audit's line says how to predict with it: {proc.stdout.strip()!r}")


def main():
    rng = np.random.default_rng(20240531)
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        sets = audit_reference.make_sets(tmp, rng, K, N)
        cal = tmp / "cal.json"
        output("calibrate", tmp / "manifest.json", "-o", cal, "--quiet", "--methods", "confscore,nuclear,mde")
        conforms("Calibration", json.loads(cal.read_text()), "a calibration with a correctness model")
        check_histogram(tmp)
        theta = check_model(tmp, sets, cal)
        check_sample(tmp)
        check_audit(tmp, cal, theta)
        check_audit_belongs(tmp, cal)
        check_labels_needed(tmp, cal)
        check_bad_files(tmp)
        check_draw_is_checked(tmp, cal)
        check_suggested_commands_run(tmp)
    finish()


if __name__ == "__main__":
    main()

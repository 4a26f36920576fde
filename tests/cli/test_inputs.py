"""What `mano` reads as logits (issue 43, items 11 and 12): a CSV's columns that are not classes
(pandas' index, ids, labels) are left out and said, and --input reads probabilities and a binary
classifier's one column as logits; every number against NumPy (tests/reference/inputs_reference.py,
pandas writes the CSVs), every refusal one stderr line naming the file or the option.
Run: /usr/bin/python3 tests/cli/test_inputs.py path/to/mano"""
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish, rel  # noqa: E402
from inputs_reference import probability_sets, write  # noqa: E402

MANO = sys.argv[1]
TOL = 1e-6  # the kernel's float lanes (docs/architecture.md)


def run(*args):
    return subprocess.run([MANO, *map(str, args)], capture_output=True, text=True, timeout=300)


def scored(*args):
    proc = run("score", "--json", *args, "--methods", "mano,confscore")
    check(proc.returncode == 0, f"score {args}: {proc.stderr.strip()}")
    return (json.loads(proc.stdout) if proc.returncode == 0 else None), proc.stderr


def same_scores(got, want, what):
    if got is None:
        return
    check(rel(got["methods"]["mano"]["score"], want["mano"]) < TOL and got["methods"]["mano"]["normalization"] == want["normalization"],
          f"{what}: MaNo {got['methods']['mano']} vs NumPy {want['mano']} ({want['normalization']})")
    check(rel(got["methods"]["confscore"]["score"], want["confscore"]) < TOL,
          f"{what}: ConfScore {got['methods']['confscore']['score']} vs NumPy {want['confscore']}")


def refused(args, *phrases):
    proc = run(*args)
    lines = proc.stderr.strip().splitlines()
    check(proc.returncode == 2 and len(lines) == 1 and all(p in lines[0] for p in phrases),
          f"{args}: want exit 2 and one line holding {phrases}, got {proc.returncode} {proc.stderr!r}")


def test_csv_columns(d, want):
    # pandas' df.to_csv(): the index is no class; the reader says so (a warning), --quiet not
    got, err = scored(d / "pandas.csv")
    same_scores(got, want["csv"], "pandas.csv")
    check(got is not None and got["k"] == want["k"], f"pandas.csv: k {got and got['k']}, want {want['k']}")
    check("pandas.csv: column 1 ('') is pandas' index column, not a class: left out of the logits" in err,
          f"pandas.csv: the note on stderr: {err!r}")
    _, quiet = scored(d / "pandas.csv", "--quiet")
    check(quiet == "", f"--quiet: no note, got {quiet!r}")
    # the index and a label column; an id column
    for name in ("pandas_labeled.csv", "ids.csv"):
        got, err = scored(d / name)
        same_scores(got, want["csv"], name)
    got, err = scored(d / "pandas_labeled.csv")
    check("column 12 ('label') holds labels, not a class: it is the label column" in err, f"the label note: {err!r}")
    # two label columns: refused, naming the option; with it, the other is left out
    refused(["score", d / "two_labels.csv"], "two_labels.csv: has 2 columns named as labels ('label', 'y')", "--label-column")
    got, err = scored(d / "two_labels.csv", "--label-column", "y")
    same_scores(got, want["csv"], "two_labels.csv --label-column y")
    # the label column's labels are read where labels are read: a manifest's "labels" is the CSV itself
    sets = [{"name": f"s{i}", "logits": "pandas_labeled.csv", "labels": "pandas_labeled.csv"} for i in range(3)]
    (d / "csv_manifest.json").write_text(json.dumps({"sets": sets}))
    proc = run("eval", d / "csv_manifest.json", "--json", "--quiet", "--methods", "confscore", "--normalization", "softrun")
    check(proc.returncode == 0, f"eval of a manifest of labeled CSVs: {proc.stderr.strip()}")
    if proc.returncode == 0:
        accuracies = [s["accuracy"] for s in json.loads(proc.stdout)["sets"]]
        check(all(abs(a - want["csv"]["accuracy"]) < 1e-12 for a in accuracies),
              f"the labels of the CSV's label column: accuracies {accuracies}, NumPy {want['csv']['accuracy']}")


def test_ids_and_indexes(d, want):
    # issue 50: df.to_csv() with a named index, or a sample_id column, scored the ids as a class
    # (k = 11, ConfScore near 1): they are left out with a note, and score as the logits alone
    for name, note in (("named_index.csv", "column 1 ('row') holds ids, not a class: left out of the logits"),
                       ("frame_index.csv", "column 1 ('frame') is pandas' index column, not a class: left out of the logits"),
                       ("sample_id.csv", "column 1 ('sample_id') holds ids, not a class: left out of the logits")):
        got, err = scored(d / name)
        same_scores(got, want["csv"], name)
        check(got is not None and got["k"] == want["k"], f"{name}: k {got and got['k']}, want {want['k']}")
        check(f"{name}: {note}" in err, f"{name}: the note on stderr: {err!r}")
    # an index under a name of its own before classes' names: known by its values, refused with the fix
    refused(["score", d / "frame_named.csv"], "frame_named.csv: column 1 ('frame') holds an index or ids, not a class's logits",
            "first 100 rows count 0, 1, 2", "drop the column (pandas: to_csv(index=False)) or name it 'index'")


def test_input_kinds(d, want):
    same_scores(scored(d / "p.npy", "--input", "probabilities")[0], want["probabilities"], "--input probabilities")
    same_scores(scored(d / "z.npy", "--input", "binary-logit")[0], want["binary_logit"], "--input binary-logit")
    same_scores(scored(d / "pz.npy", "--input", "binary-probability")[0], want["binary_probability"], "--input binary-probability")
    got, _ = scored(d / "p.npy", "--input", "probabilities")
    check(got is not None and got.get("input") == "probabilities" and got["k"] == want["k"], f"the result records its input: {got}")
    # every kernel this CPU runs reads them alike (the rows become logits before the kernel)
    version = run("--version").stdout
    for arch in version.split("kernels this CPU runs:")[1].split("(")[0].split(","):
        for name, kind in (("p.npy", "probabilities"), ("pz.npy", "binary-probability")):
            same_scores(scored(d / name, "--input", kind, "--arch", arch.strip())[0], want[kind.replace("-", "_")],
                        f"--input {kind} --arch {arch.strip()}")
    got, _ = scored(d / "z.npy", "--input", "binary-logit")
    check(got is not None and got["k"] == 2 and got["input"] == "binary-logit", f"one binary column is 2 classes: {got}")
    # probabilities read as logits: flagged, and a warning naming --input
    got, err = scored(d / "p.npy")
    check(got is not None and got.get("looks_like_probabilities") is True, f"probabilities as logits are flagged: {got}")
    check("p.npy: every row lies in [0, 1] and sums to 1" in err and "--input probabilities" in err, f"the warning: {err!r}")
    got, err = scored(d / "pandas.csv", "--quiet")
    check(got is not None and "looks_like_probabilities" not in got, "logits are not flagged")
    # a state keeps the count, a merge of shards too
    for part, rows in (("a", "0:150"), ("b", "150:300")):
        check(run("score", d / "p.npy", "--rows", rows, "--emit-state", d / f"p_{part}.json", "--quiet").returncode == 0,
              f"the state of rows {rows}")
    merged = run("merge", d / "p_a.json", d / "p_b.json", "--json")
    check(merged.returncode == 0 and json.loads(merged.stdout).get("looks_like_probabilities") is True and
          "give --input probabilities to mano score" in merged.stderr, f"merged states keep the flag: {merged.stdout[:200]} {merged.stderr}")
    # shapes that do not fit the input kind, values that are not of it
    refused(["score", d / "z.npy"], "z.npy: logits need at least 2 columns", "binary-logit or binary-probability")
    refused(["score", d / "p.npy", "--input", "binary-logit"], "p.npy: input binary-logit takes one column per row")
    bad = np.load(d / "p.npy").astype(np.float64)
    bad[5, 3] = 1.5
    np.save(d / "bad_p.npy", bad)
    refused(["score", d / "bad_p.npy", "--input", "probabilities"], "bad_p.npy: row 5, column 3: 1.5 is not a probability")
    bad = np.load(d / "p.npy").astype(np.float64) * 0.5
    np.save(d / "half_p.npy", bad)
    refused(["score", d / "half_p.npy", "--input", "probabilities"], "half_p.npy: row 0: its probabilities sum to 0.5, not 1")
    refused(["score", d / "p.npy", "--input", "softmax"], "--input")
    # mano audit names a binary column's classes 0 and 1
    out = d / "rows.csv"
    check(run("audit", d / "z.npy", "--input", "binary-logit", "--budget", "5", "-o", out).returncode == 0, "audit --input")
    check(out.exists() and "0 to 1" in run("audit", d / "z.npy", "--input", "binary-logit", "--budget", "5",
                                          "-o", d / "rows2.csv").stdout, "audit: the classes 0 to 1")


def test_calibration_records_the_input(d):
    """calibrate --input probabilities records it; predict refuses a set read otherwise, in one line."""
    sets = []
    for i, (p, y) in enumerate(probability_sets(7)):
        np.save(d / f"cal{i}.npy", p)
        np.save(d / f"cal{i}_labels.npy", y)
        sets.append({"name": f"cal{i}", "logits": f"cal{i}.npy", "labels": f"cal{i}_labels.npy"})
    (d / "cal_manifest.json").write_text(json.dumps({"sets": sets}))
    proc = run("calibrate", d / "cal_manifest.json", "--input", "probabilities", "-o", d / "cal.json", "--quiet")
    check(proc.returncode == 0, f"calibrate --input probabilities: {proc.stderr.strip()}")
    if proc.returncode != 0:
        return
    check(json.loads((d / "cal.json").read_text())["options"].get("input") == "probabilities", "the calibration records it")
    refused(["predict", "--calibration", d / "cal.json", d / "cal0.npy"],
            "cal0.npy: the set is read as input logits but the calibration was fitted on input probabilities")
    refused(["score", "--calibration", d / "cal.json", d / "cal0.npy"], "fitted on input probabilities")
    ok = run("predict", "--calibration", d / "cal.json", d / "cal0.npy", "--input", "probabilities", "--json")
    check(ok.returncode == 0 and "estimate" in json.loads(ok.stdout), f"predict --input probabilities: {ok.stderr.strip()}")
    # the labeled source set is read as the sets are
    source = run("score", d / "cal0.npy", "--input", "probabilities", "--source-logits", d / "cal1.npy",
                 "--source-labels", d / "cal1_labels.npy", "--methods", "atc_mc", "--json", "--quiet")
    logs = d / "cal1_log.npy"
    np.save(logs, np.log(np.maximum(np.load(d / "cal1.npy").astype(np.float64), np.finfo(np.float32).tiny)))
    np.save(d / "cal0_log.npy", np.log(np.maximum(np.load(d / "cal0.npy").astype(np.float64), np.finfo(np.float32).tiny)))
    reference = run("score", d / "cal0_log.npy", "--source-logits", logs, "--source-labels", d / "cal1_labels.npy",
                    "--methods", "atc_mc", "--json", "--quiet")
    check(source.returncode == 0 and reference.returncode == 0 and
          rel(json.loads(source.stdout)["methods"]["atc_mc"]["accuracy"],
              json.loads(reference.stdout)["methods"]["atc_mc"]["accuracy"]) < 1e-9,
          f"a source set of probabilities: {source.stdout[:300]} {source.stderr} vs {reference.stdout[:300]}")
    history = d / "history.db"
    if run("monitor", "--help").returncode != 0:
        return  # built without the monitoring history (MANO_WITH_MONITOR=OFF)
    refused(["monitor", "add", history, d / "cal1.npy", "--calibration", d / "cal.json", "--at", "2026-01-01"],
            "fitted on input probabilities")
    added = run("monitor", "add", history, d / "cal1.npy", "--calibration", d / "cal.json", "--at", "2026-01-01",
                "--input", "probabilities")
    check(added.returncode == 0, f"monitor add --input probabilities: {added.stderr.strip()}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        want = write(d)
        test_csv_columns(d, want)
        test_ids_and_indexes(d, want)
        test_input_kinds(d, want)
        test_calibration_records_the_input(d)
    finish("inputs: ")


if __name__ == "__main__":
    main()

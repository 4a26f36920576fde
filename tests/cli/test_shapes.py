"""The JSON the CLI writes has the shapes their one description gives
(src/mano/schema/*.schema.json, from which bindings/make_types.py writes the npm and Python
types): every result of `mano score --json` (every method of the table, MaNo batched and not,
chunks), the calibration file of `mano calibrate`, and `mano predict --json` with and without a
manifest, checked with jsonschema (Debian's python3-jsonschema). The schema allows no key it does
not name, so a key the core starts writing fails here until the description names it.

  /usr/bin/python3 tests/cli/test_shapes.py build/release/native/mano"""
import json
import pathlib
import sys
import tempfile


sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402
from shapes_support import conforms, validator  # noqa: E402
from workflow_support import run  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFEST = REPO / "bench/fashion_mnist_c/data/bncnn/manifest.json"
DATA = MANIFEST.parent


def output(*args):
    proc = run(*args)
    check(proc.returncode == 0, f"mano {' '.join(map(str, args[:2]))}: exit {proc.returncode} {proc.stderr.strip()[:300]}")
    return proc.stdout


def methods_of_table():
    return [m["name"] for m in json.loads(output("methods", "--json"))["methods"]]


def check_results(tmp):
    """Every method of the table on one set (the inputs each needs given), then MaNo batched."""
    logits = DATA / "contrast_3_logits.npy"
    inputs = ["--source-logits", DATA / "source_logits.npy", "--source-labels", DATA / "source_labels.npy",
              "--second-logits", DATA / "rotate_2_logits.npy"]
    names = methods_of_table()
    without_features = [m for m in names if m not in ("dispersion", "frechet")]
    text = output("score", "--json", "--quiet", logits, *inputs, "--methods", ",".join(without_features))
    result = json.loads(text)
    check(set(result["methods"]) == set(without_features), f"score computed {sorted(result['methods'])}")
    conforms("Result", result, "score --json with every method but the feature ones")
    batched = json.loads(output("score", "--json", "--quiet", logits, "--methods", "mano", "--batch-size", "500"))
    conforms("Result", batched, "score --json --batch-size 500")
    chunked = [json.loads(line) for line in output("score", "--json", "--quiet", logits, "--chunk-size", "800").splitlines()]
    check(len(chunked) >= 2, f"--chunk-size 800 gave {len(chunked)} results")
    for i, r in enumerate(chunked):
        conforms("Result", r, f"score --chunk-size 800, chunk {i}")


def check_calibration_and_predictions(tmp):
    cal = tmp / "cal.json"
    output("calibrate", MANIFEST, "-o", cal, "--quiet", "--methods", "mano,confscore,mde,cot,atc_ne,nuclear",
           "--group", "gaussian_noise", "--group", "contrast", "--group", "pixelate", "--group", "zoom")
    calibration = json.loads(cal.read_text())
    conforms("Calibration", calibration, "the file mano calibrate wrote")
    for key in ("normalization", "recommended", "ranking", "shift"):
        check(key in calibration, f"the calibration has {key!r} (the test covers it)")
    report = json.loads(output("predict", "--calibration", cal, "--manifest", MANIFEST, "--json", "--quiet",
                               "--group", "rotate", "--group", "label_shift"))
    conforms("PredictionReport", report, "predict --manifest --json")
    check(all("accuracy" in s for s in report["sets"]), "the manifest's sets have their true accuracy (the test covers it)")
    check("coverage" in report and report["sets"] and "estimate" in report["sets"][0],
          "predict --manifest --json has its coverage and estimates (the test covers them)")
    lines = output("predict", "--calibration", cal, DATA / "rotate_5_logits.npy", DATA / "clean_logits.npy",
                   "--json", "--quiet").splitlines()
    check(len(lines) == 2, f"predict FILE FILE --json wrote {len(lines)} lines")
    for line in lines:
        conforms("Prediction", json.loads(line), "predict FILE --json")


def check_method_table():
    """`mano methods --json` has every fact of each row by name; exactly one row is the
    label-shift regime's and the softrun rows are the ones that read MaNo's normalization."""
    table = json.loads(output("methods", "--json"))
    conforms("MethodTable", table, "methods --json")
    by_name = {m["name"]: m for m in table["methods"]}
    check([n for n, m in by_name.items() if m["estimates_label_shift"]] == ["mlls"], "mlls alone estimates label shift")
    check(sorted(n for n, m in by_name.items() if m["on_softrun_branch"]) == ["confscore_softrun", "nuclear_softrun"],
          "the softrun baselines read the softrun rows")
    check([n for n, m in by_name.items() if m["softrun_variants"]] == ["mano"], "mano alone carries softrun variants")
    check(by_name["nuclear"]["gram_matrices"] == 1 and by_name["nuclear_softrun"]["gram_matrices"] == 2,
          "the Gram matrices each nuclear norm keeps")
    check(sorted(n for n, m in by_name.items() if m["fits_on_source"]) == ["cbpe", "cott", "mlls"],
          "the methods with a source fit of their own")
    check(by_name["atc_mc"].get("detail") == "threshold" and "detail" not in by_name["mano"], "the detail numbers")


def check_drift_is_caught():
    """A key the description does not name, or a required one missing, is not a Result."""
    good = {"n": 2, "k": 3, "methods": {"confscore": {"score": 0.5}}}
    check(validator("Result").is_valid(good), "a minimal result conforms")
    check(not validator("Result").is_valid({**good, "unnamed": 1}), "a result with an unnamed key does not")
    check(not validator("Result").is_valid({"n": 2, "k": 3}), "a result without methods does not")


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        check_results(tmp)
        check_calibration_and_predictions(tmp)
    check_method_table()
    check_drift_is_caught()
    finish()


if __name__ == "__main__":
    main()

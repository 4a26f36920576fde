"""End-to-end tests of the LibTorch front end (`mano infer`, `mano calibrate --synthesize`) on the
fixtures of make_fixtures.py: logits equal PyTorch's (<= 1e-5) from the image folder and from
the .npy tensor, labels and true accuracy from the folder layout, the incrementally written .npy,
the JSON result, the two-command label-free workflow, and bad inputs -> exit 2 with one line.
Run: /usr/bin/python3 tests/torch/test_torch.py path/to/mano"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish, rel  # noqa: E402
from mano_reference import mano  # noqa: E402

MANO = sys.argv[1]
DATA = pathlib.Path(__file__).resolve().parent / "data"
MODEL, IMAGES, INPUTS, LABELS = DATA / "model.pt", DATA / "images", DATA / "inputs.npy", DATA / "labels.npy"
PREPROCESS = ["--resize", "14", "--crop", "12", "--mean", "0.5,0.4,0.3", "--std", "0.25,0.2,0.3"]


def run(*args):
    return subprocess.run([MANO, *map(str, args)], capture_output=True, text=True, timeout=120)


def pytorch_logits(inputs):
    torch.set_num_threads(1)
    with torch.no_grad():
        return torch.jit.load(str(MODEL))(torch.from_numpy(np.load(inputs))).numpy()


def test_logits(tmp):
    expected = pytorch_logits(INPUTS)
    check(np.abs(expected - np.load(DATA / "logits.npy")).max() <= 1e-5, "committed logits.npy is PyTorch's")
    for name, args in [("folder", ["--input", IMAGES, *PREPROCESS]), ("tensor", ["--input", INPUTS]),
                       ("folder, batches of 4, 2 workers", ["--input", IMAGES, *PREPROCESS, "--batch-size", "4",
                                                            "--workers", "2"])]:
        out = tmp / "logits.npy"
        proc = run("infer", "--model", MODEL, *args, "--out", out, "--quiet")
        check(proc.returncode == 0, f"{name}: exit {proc.returncode}, {proc.stderr!r}")
        if proc.returncode:
            continue
        got = np.load(out)
        check(got.dtype == np.float32 and got.shape == expected.shape, f"{name}: .npy {got.dtype} {got.shape}")
        diff = np.abs(got - expected).max()
        check(diff <= 1e-5, f"{name}: logits differ from PyTorch's by {diff}")
        header = out.read_bytes()[:128]
        check(header[:6] == b"\x93NUMPY" and header[127:128] == b"\n", f"{name}: .npy header {header!r}")
        leftovers = [p.name for p in tmp.iterdir() if ".tmp-" in p.name]
        check(not leftovers, f"{name}: --out is written through a temporary file renamed over it: {leftovers}")
    # --out never replaces an input, and a run that fails keeps the previous file
    before = (tmp / "logits.npy").read_bytes()
    proc = run("infer", "--model", MODEL, "--input", INPUTS, "--out", INPUTS)
    check(proc.returncode == 2 and "input file" in proc.stderr, f"--out over the input: {proc.stderr!r}")
    proc = run("infer", "--model", MODEL, "--input", INPUTS, "--out", tmp / "logits.npy", "--calibration", tmp / "none.json")
    check(proc.returncode == 2 and (tmp / "logits.npy").read_bytes() == before, "a failed run keeps the previous --out file")


def test_results(tmp):
    logits = pytorch_logits(INPUTS).astype(np.float64)
    labels = np.load(LABELS)
    truth = float((logits.argmax(1) == labels).mean())
    proc = run("infer", "--model", MODEL, "--input", IMAGES, *PREPROCESS, "--json", "--quiet")
    r = json.loads(proc.stdout)
    check(r["n"] == 18 and r["k"] == 3 and r["file"] == str(IMAGES), f"json n, k, file: {r}")
    check(r["accuracy"] == truth, f"true accuracy {r.get('accuracy')} vs {truth}")
    check(rel(r["methods"]["mano"]["score"], mano(logits)["score"]) <= 1e-5, f"mano score {r['methods']['mano']}")
    check({"confscore", "entropy", "nuclear", "mde", "cot"} <= set(r["methods"]), f"methods {sorted(r['methods'])}")
    proc = run("infer", "--model", MODEL, "--input", INPUTS, "--labels", LABELS, "--json", "--quiet")
    check(json.loads(proc.stdout)["accuracy"] == truth, "labels of a .npy input")
    # the class of an image is its subfolder's rank: swapping two folder names changes the labels
    swapped = tmp / "swapped"
    shutil.copytree(IMAGES, swapped)
    (swapped / "a_red").rename(swapped / "z_red")
    proc = run("infer", "--model", MODEL, "--input", swapped, *PREPROCESS, "--json", "--quiet")
    order = np.concatenate([labels[6:] - 1, np.full(6, 2)])
    expected = float((np.concatenate([logits[6:], logits[:6]]).argmax(1) == order).mean())
    check(json.loads(proc.stdout)["accuracy"] == expected, f"labels follow sorted class folders: {proc.stdout}")
    flat = tmp / "flat"
    flat.mkdir()
    for i, png in enumerate(sorted(IMAGES.rglob("*.png"))):
        shutil.copy(png, flat / f"{i:02d}.png")
    r = json.loads(run("infer", "--model", MODEL, "--input", flat, *PREPROCESS, "--json", "--quiet").stdout)
    check(r["n"] == 18 and "accuracy" not in r, f"a flat folder has no labels: {r}")
    proc = run("infer", "--model", MODEL, "--input", IMAGES, *PREPROCESS, "--methods", "mano,cot")
    check(proc.returncode == 0 and "true accuracy 1.0000" in proc.stdout and "images/s" in proc.stderr,
          f"table and speed line: {proc.stdout!r} {proc.stderr!r}")
    return flat


def test_workflow(tmp, flat):
    cal = tmp / "cal.json"
    proc = run("calibrate", "--model", MODEL, "--input", IMAGES, "--synthesize", *PREPROCESS, "-o", cal, "--quiet")
    check(proc.returncode == 0, f"calibrate --synthesize: exit {proc.returncode}, {proc.stderr!r}")
    c = json.loads(cal.read_text())
    check(len(c["sets"]) == 46 and "mano" in c["methods"] and c["methods"]["mano"]["n"] == 46, f"calibration {c['sets']}")
    check(c["inference"]["preprocessing"] == {"resize": 14, "crop": 12, "mean": [0.5, 0.4, 0.3], "std": [0.25, 0.2, 0.3]},
          f"recorded preprocessing {c['inference']}")
    check("brightness_5" in proc.stdout and "occlusion_3" in proc.stdout, "per-set table")
    again = tmp / "again.json"
    run("calibrate", "--model", MODEL, "--input", IMAGES, "--synthesize", *PREPROCESS, "-o", again, "--quiet",
        "--workers", "3")
    check(again.read_text() == cal.read_text(), "synthetic shifts are deterministic (whatever the workers)")
    run("calibrate", "--model", MODEL, "--input", IMAGES, "--synthesize", *PREPROCESS, "-o", again, "--quiet",
        "--infer-batch-size", "5")
    fits = [json.loads(f.read_text())["methods"]["mano"] for f in (cal, again)]
    check(all(rel(fits[0][key], fits[1][key]) <= 1e-6 for key in ("slope", "intercept", "score_mean")),
          f"other model batch sizes change only float rounding: {fits}")
    other = tmp / "other.json"
    run("calibrate", "--model", MODEL, "--input", IMAGES, "--synthesize", *PREPROCESS, "-o", other, "--quiet", "--seed", "5")
    check(other.read_text() != cal.read_text(), "--seed changes the draws")
    # label-free: the calibration brings its preprocessing along
    proc = run("infer", "--model", MODEL, "--input", flat, "--calibration", cal, "--json", "--quiet")
    check(proc.returncode == 0, f"infer --calibration: {proc.stderr!r}")
    p = json.loads(proc.stdout)
    m = p["methods"]["mano"]
    check(0 <= m["interval"][0] <= m["accuracy"] <= m["interval"][1] <= 1 and "accuracy" not in p,
          f"estimate with interval: {p}")
    proc = run("infer", "--model", MODEL, "--input", flat, "--calibration", cal, "--quiet")
    check("% prediction interval" in proc.stdout and "[" in proc.stdout, f"table: {proc.stdout!r}")
    proc = run("infer", "--model", MODEL, "--input", flat, "--calibration", cal, "--quiet", "--resize", "16", "--crop", "12")
    check(proc.returncode == 0 and "differ" in proc.stderr, f"other preprocessing warns: {proc.stderr!r}")


def test_errors(tmp):
    bad_shape, bad_dtype, text = tmp / "bad_shape.npy", tmp / "bad_dtype.npy", tmp / "model.txt"
    np.save(bad_shape, np.zeros((4, 1, 12, 12), np.float32))
    np.save(bad_dtype, np.zeros((4, 3, 12, 12), np.float64))
    text.write_text("not a model\n")
    stray = tmp / "stray"
    shutil.copytree(IMAGES, stray)
    (stray / "b_green" / "notes.txt").write_text("hello\n")
    broken = tmp / "broken"
    shutil.copytree(IMAGES, broken)
    (broken / "c_blue" / "3.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    mixed = tmp / "mixed"
    shutil.copytree(IMAGES, mixed)
    shutil.copy(IMAGES / "a_red" / "0.png", mixed / "loose.png")
    flat = tmp / "flat"
    infer = ["infer", "--model", MODEL, "--input"]
    cases = [
        (["infer", "--model", tmp / "missing.pt", "--input", INPUTS], "missing.pt: no such model file"),
        (["infer", "--model", text, "--input", INPUTS], "model.txt: not a TorchScript model"),
        (["infer", "--model", LABELS, "--input", INPUTS], "labels.npy: not a TorchScript model"),
        ([*infer, bad_shape], "bad_shape.npy (RuntimeError: Given groups=1"),
        ([*infer, bad_dtype], "bad_dtype.npy: has dtype '<f8'"),
        ([*infer, LABELS], "labels.npy: has dtype '<i8'"),
        ([*infer, stray, *PREPROCESS], "notes.txt: not an image file"),
        ([*infer, broken, *PREPROCESS], "3.png: cannot decode this image"),
        ([*infer, mixed, *PREPROCESS], "holds both files"),
        ([*infer, IMAGES], "give --resize S --crop C"),
        ([*infer, IMAGES, "--crop", "17"], "smaller than --crop 17"),
        ([*infer, tmp / "nowhere"], "--input"),
        ([*infer, INPUTS, "--device", "gpu"], "--device must be auto, cpu, cuda"),
        ([*infer, INPUTS, "--device", "cuda:x"], "--device must be"),
        ([*infer, INPUTS, "--amp", "fp8"], "--amp must be"),
        ([*infer, IMAGES, "--resize", "14", "--crop", "12", "--mean", "0.5,0.4"], "--mean must be three"),
        ([*infer, IMAGES, "--resize", "14", "--crop", "12", "--std", "1,0,1"], "--std must be three"),
        ([*infer, INPUTS, "--resize", "14"], "apply to image folders"),
        ([*infer, INPUTS, "--labels", tmp / "missing_labels.npy"], "missing_labels.npy"),
        ([*infer, INPUTS, "--labels", DATA / "logits.npy"], "logits.npy"),
        ([*infer, IMAGES, *PREPROCESS, "--labels", LABELS], "--labels goes with a .npy input"),
        ([*infer, INPUTS, "--out", tmp / "no" / "dir" / "x.npy"], "--out"),
        ([*infer, INPUTS, "--batch-size", "0"], "--batch-size: must be a whole number >= 1"),
        ([*infer, INPUTS, "--batch-size", "-4"], "--batch-size: must be a whole number >= 1"),
        ([*infer, INPUTS, "--workers", "-1"], "--workers: must be a whole number >= 0"),
        (["infer", "--input", INPUTS], "needs --model"),
        (["calibrate", "--model", MODEL, "--input", IMAGES, *PREPROCESS], "needs --synthesize"),
        (["calibrate", "--model", MODEL, "--input", flat, "--synthesize", *PREPROCESS], "no class subfolders"),
        (["calibrate", "--model", MODEL, "--input", INPUTS, "--synthesize"], "labeled image folder"),
        (["calibrate"], "calibrate needs a manifest"),
    ]
    if not torch.cuda.is_available():
        cases.append(([*infer, INPUTS, "--device", "cuda"], "CUDA is not available"))
        cases.append(([*infer, INPUTS, "--amp", "fp16"], "--amp fp16 needs a CUDA device"))
    for args, needle in cases:
        proc = run(*args)
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and needle in lines[0],
              f"{[str(a) for a in args]}: exit {proc.returncode}, {proc.stderr!r}")


with tempfile.TemporaryDirectory() as d:
    tmp = pathlib.Path(d)
    test_logits(tmp)
    flat = test_results(tmp)
    test_workflow(tmp, flat)
    test_errors(tmp)
finish()

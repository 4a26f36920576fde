"""End-to-end tests of `mano score`: random valid files against the float64 NumPy reference
(within 1e-6 relative), and every kind of bad file or option -> exit 2 with one stderr line.
Run: /usr/bin/python3 tests/cli/test_cli.py path/to/mano"""
import json
import pathlib
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from baselines_reference import baselines, fit_temperature  # noqa: E402
from harness import check, finish, rel  # noqa: E402
from mano_reference import criterion, mano, softmax_rows  # noqa: E402

MANO = sys.argv[1]


def run(*args):
    return subprocess.run([MANO, *map(str, args)], capture_output=True, text=True, timeout=120)


def random_valid_files(tmp, rng):
    """Yields (path, logits as float64, cli options, reference options)."""
    shapes = [(1, 2), (3, 2), (50, 3), (257, 10), (1000, 10), (64, 100), (33, 1000), (5, 5000), (2, 32000)]
    for i in range(60):
        n, k = shapes[i % len(shapes)]
        scale = float(rng.choice([0.05, 1.0, 3.0, 8.0, 30.0, 300.0]))
        dtype = [np.float32, np.float64, np.float16][i % 3]
        q = rng.standard_normal((n, k)) * scale + float(rng.choice([0.0, -7.0, 1000.0]))
        q = q.astype(dtype)
        if dtype == np.float16 and not np.all(np.isfinite(q)):
            continue
        path = tmp / f"valid_{i}.npy"
        np.save(path, q)
        ref = {"p": float(rng.choice([1.5, 2.0, 4.0, 7.5])), "eta": float(rng.choice([3.0, 5.0, 9.0])),
               "taylor_order": int(rng.integers(1, 5)),
               "normalization": str(rng.choice(["softrun", "softrun", "softmax", "taylor"]))}
        if i % 7 == 3:
            ref["batch_size"] = int(rng.choice([1, 16, 128]))
        if i % 11 == 5:
            ref["fixed_criterion"] = float(rng.choice([2.0, 6.0]))
        cli = ["--p", ref["p"], "--eta", ref["eta"], "--taylor-order", ref["taylor_order"],
               "--normalization", ref["normalization"]]
        if "batch_size" in ref:
            cli += ["--batch-size", ref["batch_size"]]
        if "fixed_criterion" in ref:
            cli += ["--criterion", ref["fixed_criterion"]]
        yield path, q.astype(np.float64), cli, ref


def test_valid(tmp):
    rng = np.random.default_rng(7)
    worst = 0.0
    for path, q, cli, ref in random_valid_files(tmp, rng):
        if ref["normalization"] == "softrun" and "fixed_criterion" not in ref and abs(criterion(q) - ref["eta"]) < 1e-5:
            continue  # a coin flip at the threshold is not a property of either implementation
        proc = run("score", path, "--json", *cli)
        if q.shape[1] == 2 and ref["normalization"] == "taylor":  # one-hot Taylor rows (docs/methods.md#mano)
            check(proc.returncode == 2 and "not defined for 2 classes" in proc.stderr, f"{path.name} {cli}: {proc.stderr!r}")
            continue
        expected = mano(q, **ref)
        check(proc.returncode == 0, f"{path.name} {cli}: exit {proc.returncode}: {proc.stderr.strip()}")
        if proc.returncode != 0:
            continue
        got = json.loads(proc.stdout)
        m = got["methods"]["mano"]
        check(got["n"] == q.shape[0] and got["k"] == q.shape[1], f"{path.name}: n, k")
        check(m["normalization"] == expected["normalization"], f"{path.name} {cli}: branch {m['normalization']} vs {expected['normalization']}")
        err = max(rel(m["score"], expected["score"]), rel(m["criterion"], expected["criterion"]))
        worst = max(worst, err)
        check(err <= 1e-6, f"{path.name} {cli}: score {m['score']} vs {expected['score']}, criterion {m['criterion']} vs {expected['criterion']}")
    big = tmp / "big.npy"  # several 4 MiB read chunks
    q = (rng.standard_normal((3000, 1000)) * 4).astype(np.float32)
    np.save(big, q)
    expected = mano(q.astype(np.float64))
    proc = run("score", big, "--json")
    got = json.loads(proc.stdout)["methods"]["mano"] if proc.returncode == 0 else {"score": -1, "criterion": -1}
    worst = max(worst, rel(got["score"], expected["score"]), rel(got["criterion"], expected["criterion"]))
    check(rel(got["score"], expected["score"]) <= 1e-6 and rel(got["criterion"], expected["criterion"]) <= 1e-6,
          f"3000x1000 file read in chunks: {got} vs {expected}")
    print(f"valid files: worst relative difference to the NumPy reference {worst:.2e}")


def test_output_forms(tmp):
    q = np.random.default_rng(1).standard_normal((100, 10)).astype(np.float32)
    a, b = tmp / "a.npy", tmp / "b.npy"
    np.save(a, q)
    np.save(b, q * 3)
    proc = run("score", a, b)
    lines = proc.stdout.strip().splitlines()
    check(proc.returncode == 0 and len(lines) == 4 and "mano" in lines[0] and str(a) in lines[1] and "cot" in lines[0],
          "table output")
    expected = mano(q.astype(np.float64))
    check(f"{expected['score']:.6f}" in lines[1], f"table shows the score: {lines[1]}")
    proc = run("score", a, b, "--json")
    objs = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    check(len(objs) == 2 and objs[0]["file"] == str(a) and objs[1]["file"] == str(b), "JSON lines, one per file")
    check(set(objs[0]) == {"n", "k", "methods", "file", "predicted", "confidence"}, "JSON keys")
    q64 = q.astype(np.float64)
    check(objs[0]["predicted"] == np.bincount(q64.argmax(1), minlength=10).tolist(), "predicted class counts")
    e = np.exp(q64 - q64.max(1, keepdims=True))
    check(rel(objs[0]["confidence"], float(np.mean(1 / e.sum(1)))) <= 1e-6, "confidence: mean max softmax")
    variants = objs[0]["methods"]["mano"]["variants"]
    check(set(variants) == {"softmax", "taylor2"}, f"softrun's variants: {sorted(variants)}")
    for name, forced in (("softmax", "softmax"), ("taylor2", "taylor")):
        want = mano(q64, normalization=forced)["score"]
        check(rel(variants[name], want) <= 1e-6, f"variant {name}: {variants[name]} vs {want}")
    # the default: every method of the table that needs nothing but the logits (this set is small)
    table = json.loads(run("methods", "--json").stdout)["methods"]
    check(set(objs[0]["methods"]) == {m["name"] for m in table if m["default"] and not m["needs"]},
          f"default methods: {sorted(objs[0]['methods'])}")
    proc = run("score", a, "--json", "--methods", "mano")
    check(proc.returncode == 0 and set(json.loads(proc.stdout)["methods"]) == {"mano"}, "--methods mano")
    check(set(objs[0]["methods"]["mano"]) == {"score", "criterion", "normalization", "p", "eta", "taylor_order", "se",
                                              "variants"}, "mano keys")
    proc = run("score", a, "--json", "--methods", "mano", "--normalization", "softmax")
    check(proc.returncode == 0 and "variants" not in json.loads(proc.stdout)["methods"]["mano"], "no variants when forced")
    check(run("--help").returncode == 0 and run("score", "--help").returncode == 0, "--help exits 0")
    version = run("--version").stdout.splitlines()
    check(version[0].startswith("mano ") and version[1].startswith("kernels compiled: ")
          and version[2].startswith("kernels this CPU runs: "), f"--version: {version}")
    compiled = version[1].split(": ")[1].split(", ")
    check(compiled[-1] == "scalar", f"the portable scalar kernel is compiled in: {compiled}")
    # --help names every compiled kernel, whatever this CPU runs (docs/cli.md is generated from it)
    check(f"force a kernel ({', '.join(compiled)};" in run("score", "--help").stdout, "--help lists the compiled kernels")
    for arch in compiled:
        proc = run("score", a, "--json", "--arch", arch)
        if proc.returncode == 0:
            check(rel(json.loads(proc.stdout)["methods"]["mano"]["score"], expected["score"]) < 1e-6, f"--arch {arch}")
        else:
            check("not supported by this CPU" in proc.stderr, f"--arch {arch}: {proc.stderr}")
            print(f"skipped --arch {arch}: this CPU does not run it")


def npy_bytes(descr, shape, payload, fortran=False, major=1):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    header += " " * ((64 - (len(header) + 11) % 64) % 64) + "\n"
    length = struct.pack("<H", len(header)) if major == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode() + payload


def test_bad_files(tmp):
    good = np.arange(12, dtype=np.float32).reshape(3, 4)
    nan = good.copy()
    nan[2, 1] = np.nan
    inf = good.astype(np.float64)
    inf[1, 3] = -np.inf
    cases = {
        "truncated.npy": (npy_bytes("<f4", "(3, 4)", good.tobytes()[:-5]), "truncated"),
        "header_cut.npy": (npy_bytes("<f4", "(3, 4)", b"")[:20], "truncated"),
        "magic.npy": (b"\x93NUMPX not numpy at all", "not a .npy file"),
        "zip.npy": (b"PK\x03\x04 not numpy at all", "not a valid .npz"),
        "empty.npy": (b"", "is empty"),
        "int64.npy": (npy_bytes("<i8", "(3, 4)", np.zeros(12, np.int64).tobytes()), "dtype '<i8'"),
        "complex.npy": (npy_bytes("<c8", "(3, 4)", np.zeros(12, np.complex64).tobytes()), "dtype '<c8'"),
        "vector.npy": (npy_bytes("<f4", "(12,)", good.tobytes()), "shape (12,)"),
        "cube.npy": (npy_bytes("<f4", "(3, 2, 2)", good.tobytes()), "shape (3, 2, 2)"),
        "extra.npy": (npy_bytes("<f4", "(3, 4)", good.tobytes() + b"\0" * 8), "8 bytes after"),
        "nan.npy": (npy_bytes("<f4", "(3, 4)", nan.tobytes()), "row 2, column 1: logit is NaN"),
        "inf.npy": (npy_bytes("<f8", "(3, 4)", inf.tobytes()), "row 1, column 3: logit is -Inf"),
        "one_class.npy": (npy_bytes("<f4", "(12, 1)", good.tobytes()), "at least 2 columns"),
        "no_rows.npy": (npy_bytes("<f4", "(0, 4)", b""), "0 rows"),
        "version9.npy": (npy_bytes("<f4", "(3, 4)", good.tobytes())[:6] + b"\x09\x00" + npy_bytes("<f4", "(3, 4)", good.tobytes())[8:], "version 9"),
        "huge_shape.npy": (npy_bytes("<f4", "(99999999999999999999999, 4)", b""), "too large"),
    }
    for name, (content, needle) in cases.items():
        path = tmp / name
        path.write_bytes(content)
        proc = run("score", path)
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and needle in lines[0] and name in lines[0] and proc.stdout == "",
              f"{name}: exit {proc.returncode}, stderr {proc.stderr!r}")
    v2 = tmp / "version2.npy"
    v2.write_bytes(npy_bytes("<f4", "(3, 4)", good.tobytes(), major=2))
    check(run("score", v2).returncode == 0, "a version 2.0 header is read")
    # big-endian and Fortran-order files give the same numbers as the plain file
    plain, big, fortran = tmp / "plain.npy", tmp / "big.npy", tmp / "fortran.npy"
    np.save(plain, good)
    big.write_bytes(npy_bytes(">f4", "(3, 4)", good.astype(">f4").tobytes()))
    fortran.write_bytes(npy_bytes("<f4", "(3, 4)", np.asfortranarray(good).tobytes(order="F"), fortran=True))
    outs = [run("score", f, "--json").stdout for f in (plain, big, fortran)]
    check(outs[0] != "" and outs[0].replace("plain", "X") == outs[1].replace("big", "X") ==
          outs[2].replace("fortran", "X"), f"big-endian and Fortran files: {outs}")
    proc = run("score", tmp / "does_not_exist.npy")
    check(proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, "missing file")


def test_bad_options(tmp):
    path = tmp / "ok.npy"
    np.save(path, np.random.default_rng(2).standard_normal((20, 5)).astype(np.float32))
    cases = [(["--p", "1"], "--p: must be"), (["--p", "abc"], "--p"), (["--p", "nan"], "--p: must be"),
             (["--taylor-order", "0"], "--taylor-order"), (["--batch-size", "-3"], "--batch-size"),
             (["--normalization", "sparsemax"], "normalization"), (["--arch", "neon9"], "not a known architecture"),
             (["--criterion", "inf"], "criterion"), (["--eta", "x"], "--eta"), (["--frobnicate"], "frobnicate")]
    for args, needle in cases:
        proc = run("score", path, *args)
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and needle in lines[0], f"{args}: exit {proc.returncode}, {proc.stderr!r}")
    proc = run()
    check(proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, f"no subcommand: {proc.stderr!r}")


def logits_for(rng, n, k, signal, labels):
    q = rng.standard_normal((n, k)) * 1.5
    q[np.arange(n), labels] += signal
    return q.astype(np.float32)


def test_baselines(tmp):
    """Every method through the CLI against the NumPy/SciPy/POT reference."""
    rng = np.random.default_rng(11)
    worst = 0.0
    for k, n, d, temperature in [(2, 300, 3, "1"), (10, 400, 16, "fit"), (10, 250, 8, "0.7"), (50, 200, 64, "1")]:
        ys, yt = rng.integers(0, k, 500), rng.integers(0, k, n)
        source, target = logits_for(rng, 500, k, 3.0, ys), logits_for(rng, n, k, 2.0, yt)
        second = logits_for(rng, n, k, 2.0, yt)
        feats, src_feats = rng.standard_normal((n, d)) + 0.3, rng.standard_normal((600, d))
        paths = {}
        for name, arr in [("t", target), ("s", source), ("y", ys.astype(np.int64)), ("q2", second),
                          ("f", feats.astype(np.float32)), ("sf", src_feats.astype(np.float32))]:
            paths[name] = tmp / f"b_{k}_{name}.npy"
            np.save(paths[name], arr)
        proc = run("score", paths["t"], "--json", "--source-logits", paths["s"], "--source-labels", paths["y"],
                   "--second-logits", paths["q2"], "--features", paths["f"], "--source-features", paths["sf"],
                   "--temperature", temperature, "--label-marginal", "source")
        check(proc.returncode == 0, f"baselines K={k}: {proc.stderr.strip()}")
        if proc.returncode != 0:
            continue
        got = json.loads(proc.stdout)["methods"]
        t = fit_temperature(source.astype(np.float64), ys) if temperature == "fit" else float(temperature)
        marginal = np.bincount(ys, minlength=k) / len(ys)
        expected = baselines(target.astype(np.float64), t, (source.astype(np.float64), ys), second.astype(np.float64),
                             feats.astype(np.float32).astype(np.float64), src_feats.astype(np.float32).astype(np.float64),
                             marginal)
        # mlls and cbpe come with a source set; tests/estimators/test_mlls.py checks their values
        check(set(got) == set(expected) | {"mano", "mlls", "cbpe"}, f"K={k}: methods {sorted(got)}")
        for method, values in expected.items():
            for key, value in values.items():
                g = got.get(method, {}).get(key)
                err = abs(g - value) / max(abs(value), 1e-3) if g is not None else 1.0
                worst = max(worst, err)
                check(err <= 1e-6, f"K={k} T={temperature} {method}.{key}: {g} vs {value}")
    print(f"baselines: worst relative difference to the reference {worst:.2e}")


def test_baseline_errors(tmp):
    rng = np.random.default_rng(3)
    q = logits_for(rng, 100, 5, 2.0, rng.integers(0, 5, 100))
    np.save(tmp / "q.npy", q)
    np.save(tmp / "q4.npy", q[:, :4])
    np.save(tmp / "q_short.npy", q[:50])
    np.save(tmp / "y.npy", rng.integers(0, 5, 100).astype(np.int64))
    np.save(tmp / "y_bad.npy", np.full(100, 7, dtype=np.int64))
    np.save(tmp / "y_float.npy", np.zeros(100))
    np.save(tmp / "f_one_class.npy", rng.standard_normal((100, 3)).astype(np.float32))
    np.save(tmp / "q_one_class.npy", np.tile(np.array([[5, 0, 0, 0, 0]], np.float32), (100, 1)))
    cases = [
        (["--methods", "atc_mc"], "needs --source-logits"),
        (["--methods", "frobnicate"], "unknown method"),
        (["--methods", "agreement"], "needs --second-logits"),
        (["--methods", "frechet", "--features", tmp / "f_one_class.npy"], "frechet needs --source-features"),
        (["--methods", "mano,dispersion"], "dispersion needs --features"),
        (["--source-logits", tmp / "q.npy"], "go together"),
        (["--source-logits", tmp / "q4.npy", "--source-labels", tmp / "y.npy"], "classes"),
        (["--source-logits", tmp / "q.npy", "--source-labels", tmp / "y_bad.npy"], "7"),
        (["--source-logits", tmp / "q.npy", "--source-labels", tmp / "y_float.npy"], "labels must be"),
        (["--second-logits", tmp / "q_short.npy"], "same inputs"),
        (["--second-logits", tmp / "q4.npy"], "same inputs"),
        (["--features", tmp / "q_short.npy"], "rows"),
        (["--temperature", "fit"], "needs --source-logits"),
        (["--temperature", "-2"], "temperature"),
        (["--temperature", "warm"], "temperature"),
        (["--label-marginal", "source"], "needs --source-logits and --source-labels"),
        (["--label-marginal", tmp / "nope.json"], "label-marginal"),
    ]
    for args, needle in cases:
        proc = run("score", tmp / "q.npy", *args)
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and needle in lines[0], f"{args}: exit {proc.returncode}, {proc.stderr!r}")
    proc = run("score", tmp / "q_one_class.npy", "--features", tmp / "f_one_class.npy", "--methods", "dispersion")
    check(proc.returncode == 2 and "one class" in proc.stderr, f"single predicted class: {proc.stderr!r}")


def test_mde_extremes(tmp):
    """MDE = LSE_j(E_j) - mean_i E_i >= log N with E_i = -LSE(q_i): no cancellation at extreme logits."""
    from scipy.special import logsumexp
    top = tmp / "f32max.npy"
    np.save(top, np.full((200, 10), np.finfo(np.float32).max, np.float32))
    proc = run("score", top, "--json", "--methods", "mde")
    got = json.loads(proc.stdout)["methods"]["mde"]["score"] if proc.returncode == 0 else -1
    check(rel(got, np.log(200)) <= 1e-9, f"MDE of 200 equal float32-max rows: {got} vs log 200 = {np.log(200)}")
    q = np.zeros((300, 10))
    q[0::3, 0] = 1e300   # E = -1e300
    q[1::3, :] = -1e300  # E = 1e300 - log 10
    q[2::3, 1] = -5.0    # E = -LSE of a plain row
    wide = tmp / "pm1e300.npy"
    np.save(wide, q)
    m = q.max(1, keepdims=True)
    energies = -(m[:, 0] + np.log(np.exp(q - m).sum(1)))
    want = logsumexp(energies) - energies.mean()
    proc = run("score", wide, "--json", "--methods", "mde")
    got = json.loads(proc.stdout)["methods"]["mde"]["score"] if proc.returncode == 0 else -1
    check(rel(got, want) <= 1e-9 and got >= np.log(300), f"MDE at +-1e300: {got} vs {want}")
    # the same through shards merged in both orders
    a, b = tmp / "mde_a.json", tmp / "mde_b.json"
    run("score", wide, "--methods", "mde", "--rows", "0:100", "--emit-state", a, "--quiet")
    run("score", wide, "--methods", "mde", "--rows", "100:300", "--emit-state", b, "--quiet")
    for order in ((a, b), (b, a)):
        proc = run("merge", *order, "--json")
        got = json.loads(proc.stdout)["methods"]["mde"]["score"] if proc.returncode == 0 else -1
        check(rel(got, want) <= 1e-9, f"MDE at +-1e300 through merged shards: {got} vs {want}")
    # a tampered energy sum is refused, not printed as -inf
    state = json.loads(a.read_text())
    state["methods"]["mde"]["exp_sum"] = 0.0
    bad = tmp / "mde_bad.json"
    bad.write_text(json.dumps(state))
    proc = run("merge", bad)
    check(proc.returncode == 2 and "inconsistent" in proc.stderr, f"tampered MDE state: {proc.stderr!r}")


def test_methods_table(tmp):
    """`mano methods`: the estimator table, and the CLI following it."""
    proc = run("methods", "--json")
    check(proc.returncode == 0, f"methods --json: {proc.stderr!r}")
    table = json.loads(proc.stdout)["methods"]
    names = [m["name"] for m in table]
    check(len(names) == len(set(names)) >= 14, f"method names: {names}")
    for m in table:
        check(m["returns"] in ("score", "accuracy") and m["cost"] in ("linear", "quadratic", "keeps_rows") and
              set(m["needs"]) <= {"source", "second", "features", "source_features"} and len(m["summary"]) > 10,
              f"table row {m}")
    text = run("methods")
    check(text.returncode == 0 and all(n in text.stdout for n in names), "methods: the text table names every method")
    # every method that needs only the logits, asked for by name, gives the kind of number the table says
    rng = np.random.default_rng(8)
    np.save(tmp / "t.npy", rng.standard_normal((200, 6)).astype(np.float32) * 3)
    alone = [m for m in table if not m["needs"]]
    proc = run("score", tmp / "t.npy", "--json", "--methods", ",".join(m["name"] for m in alone))
    got = json.loads(proc.stdout)["methods"] if proc.returncode == 0 else {}
    for m in alone:
        check(m["returns"] in got.get(m["name"], {}), f"{m['name']}: a {m['returns']} in {got.get(m['name'])}")
    # the text output's note lists the scores and the accuracy estimates as the table does
    proc = run("score", tmp / "t.npy")
    scores = ", ".join(m["name"] for m in table if m["returns"] == "score")
    check(proc.returncode == 0 and f"(scores for {scores};" in proc.stdout, f"value note: {proc.stdout[-300:]!r}")
    proc = run("methods", "--bogus")
    check(proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, f"methods --bogus: {proc.stderr!r}")


def test_large_p(tmp):
    """A large p is exact while sigma^p stays within double's range, and refused once it would read 0."""
    from scipy.special import logsumexp
    rng = np.random.default_rng(12)
    q = (rng.standard_normal((500, 1000)) * 0.5).astype(np.float32)
    path = tmp / "large_p.npy"
    np.save(path, q)
    probs = softmax_rows(q.astype(np.float64))
    for p in (64, 100):
        want = np.exp((logsumexp(p * np.log(probs.ravel())) - np.log(probs.size)) / p)
        proc = run("score", path, "--json", "--methods", "mano", "--p", p, "--normalization", "softmax")
        got = json.loads(proc.stdout)["methods"]["mano"]["score"] if proc.returncode == 0 else -1
        check(rel(got, want) <= 1e-6, f"p = {p}, K = 1000: {got} vs {want} (log-space NumPy)")
    for p in ("200", "1e7"):
        proc = run("score", path, "--json", "--methods", "mano", "--p", p)
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and proc.stdout == "" and len(lines) == 1 and "too large" in lines[0],
              f"p = {p}: refused instead of a score of 0: {proc.returncode} {proc.stderr!r}")


with tempfile.TemporaryDirectory() as d:
    tmp = pathlib.Path(d)
    test_baselines(tmp)
    test_baseline_errors(tmp)
    test_valid(tmp)
    test_output_forms(tmp)
    test_bad_files(tmp)
    test_bad_options(tmp)
    test_mde_extremes(tmp)
    test_large_p(tmp)
    test_methods_table(tmp)
finish()

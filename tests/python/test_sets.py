"""mano.evaluate / calibrate / predict equal `mano eval`, `mano calibrate`, `mano predict`, from a
manifest and from in-memory sets, through the core's family workflow (src/mano/workflow/family.hpp)."""
import json
import math

import numpy as np
import pytest

import mano

try:
    import resource
except ImportError:  # not on Windows
    resource = None

from api_support import *  # noqa: F401,F403 (the shared constants, helpers and fixtures)


@needs_cli
def test_evaluate_equals_cli():
    want = cli_json("eval", MANIFEST, "--json", "--quiet")
    assert_same(mano.evaluate(MANIFEST), want)
    assert_same(mano.evaluate(str(MANIFEST)), want)
    assert_same(mano.evaluate(mano.read_manifest(MANIFEST)), want)


@needs_cli
@pytest.mark.parametrize("kwargs,args", [
    ({"normalization": "softrun"}, ["--normalization", "softrun"]),
    ({"normalization": "softmax", "methods": "mano,confscore,atc_mc"},
     ["--normalization", "softmax", "--methods", "mano,confscore,atc_mc"]),
    ({"groups": ["blend"], "p": 3.0, "taylor_order": 3}, ["--group", "blend", "--p", "3", "--taylor-order", "3"]),
    ({"temperature": "fit", "batch_size": 250}, ["--temperature", "fit", "--batch-size", "250"]),
], ids=["softrun", "softmax-methods", "group-p-order", "fit-batch"])
def test_evaluate_options_equal_cli(kwargs, args):
    assert_same(mano.evaluate(MANIFEST, **kwargs), cli_json("eval", MANIFEST, "--json", "--quiet", *args))


@needs_cli
def test_calibrate_equals_cli(calibration_file, tmp_path):
    want = json.loads(calibration_file.read_text())
    notes = []
    got = mano.calibrate(MANIFEST, notes=notes, label_shift_copies=0)
    assert_same(got, want)
    # the label-shifted copies (the default), drawn and scored as the CLI draws and scores them
    out = tmp_path / "copies.json"
    cli("calibrate", MANIFEST, "-o", out, "--quiet")
    copied = mano.calibrate(MANIFEST)
    assert copied["label_shift_copies"]["sets"] == 6 * len(copied["sets"])
    assert_same(copied, json.loads(out.read_text()))
    cli("calibrate", MANIFEST, "-o", out, "--quiet", "--label-shift-copies", "3", "--label-shift-seed", "11")
    assert_same(mano.calibrate(MANIFEST, label_shift_copies=np.int64(3), label_shift_seed=11), json.loads(out.read_text()))
    assert isinstance(notes, list)
    assert_same(mano.read_calibration(calibration_file), want)
    out = tmp_path / "softrun.json"
    cli("calibrate", MANIFEST, "-o", out, "--quiet", "--normalization", "softrun", "--group", "contrast")
    assert_same(mano.calibrate(MANIFEST, normalization="softrun", groups=["contrast"]), json.loads(out.read_text()))
    out = tmp_path / "order3.json"
    cli("calibrate", MANIFEST, "-o", out, "--quiet", "--taylor-order", "3", "--methods", "mano,nuclear,atc_ne")
    assert_same(mano.calibrate(MANIFEST, "mano,nuclear,atc_ne", taylor_order=3), json.loads(out.read_text()))


@needs_cli
def test_taylor_orders_equal_cli(tmp_path):
    """The family workflow (src/mano/workflow/family.hpp) with extra Taylor orders, as mano eval/calibrate."""
    want = cli_json("eval", MANIFEST, "--json", "--quiet", "--taylor-orders", "1,3")
    got = mano.evaluate(MANIFEST, taylor_orders=[1, 3])
    assert sorted(got["normalization"]["errors"]) == ["softmax", "taylor1", "taylor2", "taylor3"]
    assert_same(got, want)
    out = tmp_path / "orders.json"
    cli("calibrate", MANIFEST, "-o", out, "--quiet", "--taylor-orders", "1,3")
    assert_same(mano.calibrate(MANIFEST, taylor_orders=[1, 3]), json.loads(out.read_text()))


def test_family_of_results_moves_each_set_onto_the_branch():
    """Sets given as results cannot be scored again: MaNo takes each one's variant of the branch
    chosen for all, and the softrun baselines leave when a set was on the other branch."""
    manifest = mano.read_manifest(MANIFEST)
    base = MANIFEST.parent
    sets = [{"name": s["name"], "group": s["group"],
             "result": mano.score(base / s["logits"], "mano,confscore_softrun", labels=base / s["labels"])}
            for s in manifest["sets"]]
    notes = []
    cal = mano.calibrate(sets, notes=notes)
    variant = cal["normalization"]["variant"]
    branches = {s["result"]["methods"]["mano"]["normalization"] for s in sets}
    # the example's sets are on softmax one by one, and the family takes the Taylor branch
    assert branches == {"softmax"} and variant != "softmax"
    assert "confscore_softrun" not in cal["methods"] and any("confscore_softrun" in n for n in notes)
    with pytest.warns(UserWarning, match="confscore_softrun, nuclear_softrun: not calibrated"):
        report = mano.evaluate(sets)
    for s, row in zip(sets, report["sets"]):
        assert row["methods"]["mano"]["score"] == s["result"]["methods"]["mano"]["variants"][variant]


@needs_cli
def test_predict_equals_cli(calibration_file):
    want = cli_json("predict", "--calibration", calibration_file, "--manifest", MANIFEST, "--json", "--quiet")
    got = mano.predict(calibration_file, MANIFEST)
    # the CLI prints each set's prediction with its name and group, then the coverage of all sets
    assert_same([{"name": s["name"], "group": s["group"], **s["prediction"]} for s in got], want["sets"])
    cal = json.loads(calibration_file.read_text())
    assert_same(mano.predict(cal, str(MANIFEST)), got)
    for name in ("blend_0", "contrast_5"):
        path = EXAMPLE / f"{name}_logits.npy"
        lines = cli("predict", "--calibration", calibration_file, path, "--json", "--quiet").stdout.splitlines()
        one = json.loads(lines[0])
        assert one.pop("file") == str(path)
        assert_same(mano.predict(calibration_file, path), one)
        assert_same(mano.predict(cal, np.load(path)), one)
        scored = mano.score(path, **_calibration_kwargs(cal))
        assert_same(mano.predict(cal, scored), one)
        # predict_scores: the same accuracy for the same score
        mano_score = one["methods"]["mano"]["score"]
        [point] = mano.predict_scores(cal, "mano", [mano_score])
        assert math.isclose(point["accuracy"], one["methods"]["mano"]["accuracy"], rel_tol=REL, abs_tol=ABS)
    lines = cli("predict", "--calibration", calibration_file, "--level", "0.5", EXAMPLE / "blend_3_logits.npy",
                "--json", "--quiet").stdout.splitlines()
    one = json.loads(lines[0])
    one.pop("file")
    assert_same(mano.predict(cal, EXAMPLE / "blend_3_logits.npy", level=0.5), one)


def _calibration_kwargs(cal):
    """mano.score's keywords for the options a calibration was made with (its source model is
    fitted again from the example's source set)."""
    o = cal["options"]
    return {"methods": o["methods"], "p": o["p"], "eta": o["eta"], "taylor_order": o["taylor_order"],
            "normalization": o["normalization"], "batch_size": o["batch_size"], "temperature": o["temperature"],
            "source": (SOURCE_LOGITS, SOURCE_LABELS), "correctness_histogram": o.get("correctness_histogram", False)}


def test_in_memory_sets_equal_the_manifest():
    sets, src = example_sets()
    assert_same(mano.evaluate(sets, source=src), mano.evaluate(MANIFEST))
    assert_same(mano.evaluate(sets, source={"logits": src[0], "labels": src[1]}, normalization="softrun",
                              groups=["blend", "contrast"]),
                mano.evaluate(MANIFEST, normalization="softrun"))
    cal = mano.calibrate(sets, source=src)
    assert_same(cal, mano.calibrate(MANIFEST))
    assert_same(mano.predict(cal, sets), mano.predict(cal, MANIFEST))
    # a manifest dict with arrays, and sets given as scored results
    assert_same(mano.evaluate({"source": {"logits": src[0], "labels": src[1]}, "sets": sets}),
                mano.evaluate(MANIFEST))
    options = _calibration_kwargs(cal)
    results = [{"name": s["name"], "group": s["group"],
                "result": mano.score(s["logits"], labels=s["labels"], **options)} for s in sets]
    assert_same(mano.evaluate(results, normalization="taylor"), mano.evaluate(sets, source=src, normalization="taylor"))
    # sets without labels predict; predicting a set needs no labels
    unlabeled = [{"name": s["name"], "logits": s["logits"]} for s in sets[:2]]
    got = mano.predict(cal, unlabeled)
    assert [g["name"] for g in got] == ["contrast_0", "contrast_1"]
    assert "accuracy" not in got[0]["prediction"]


def test_evaluate_refuses_sets_without_what_it_needs():
    sets, src = example_sets()
    with pytest.raises(mano.InputError, match="labels"):
        mano.evaluate([{k: v for k, v in s.items() if k != "labels"} for s in sets])
    with pytest.raises(mano.InputError, match="at least 3"):
        mano.evaluate(sets[:2])
    with pytest.raises(mano.InputError, match="group"):
        mano.evaluate(sets, groups=["nope"])
    with pytest.raises(mano.InputError, match="source"):
        mano.evaluate(MANIFEST, source=src)
    with pytest.raises(mano.InputError, match="contrast_1"):
        bad = [dict(s) for s in sets]
        bad[1]["labels"] = bad[1]["labels"][:10]
        mano.evaluate(bad)

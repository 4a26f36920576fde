"""Tampered calibrations and states (tests/data/tampered/cases.json): the Python package accepts
or refuses each exactly as the CLI does, with the same message. web/test/tampered.test.js holds
the npm package to the same cases, so the three front ends agree."""
import copy
import json
import os
import pathlib
import subprocess

import pytest

import mano

REPO = pathlib.Path(__file__).resolve().parents[2]
MANO_BIN = os.environ.get("MANO_BIN", str(REPO / "build" / "release" / "native" / "mano"))
EXAMPLE = REPO / "tests" / "data" / "example"
CASES = json.loads((REPO / "tests" / "data" / "tampered" / "cases.json").read_text())["cases"]


def cli(*args):
    return subprocess.run([MANO_BIN, *map(str, args)], capture_output=True, text=True, timeout=300)


def resolve(doc, pointer):
    """The parents and keys a pointer names ('*' stands for every element of an array)."""
    targets = [(None, None, doc)]
    for part in pointer.strip("/").split("/"):
        nxt = []
        for _, _, node in targets:
            keys = range(len(node)) if part == "*" else [int(part) if isinstance(node, list) else part]
            nxt += [(node, key, node[key]) for key in keys]
        targets = nxt
    return [(parent, key) for parent, key, _ in targets]


def tampered(base, case):
    doc = copy.deepcopy(base)
    for pointer, value in case.get("set", []):
        for parent, key in resolve(doc, pointer):
            parent[key] = value
    if "truncate" in case:
        pointer, keep = case["truncate"]
        for parent, key in resolve(doc, pointer):
            parent[key] = parent[key][:keep]
    if "transpose" in case:
        for parent, key in resolve(doc, case["transpose"]):
            m = parent[key]
            k = int(round(len(m) ** 0.5))
            parent[key] = [m[b * k + a] for a in range(k) for b in range(k)]
    return doc


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tampered")
    cal, state = tmp / "cal.json", tmp / "state.json"
    assert cli("calibrate", EXAMPLE / "manifest.json", "-o", cal, "--quiet").returncode == 0
    assert cli("score", EXAMPLE / "blend_0_logits.npy", "--methods", "mano,confscore,nuclear,mde,cot",
               "--emit-state", state, "--quiet").returncode == 0
    result = json.loads(cli("score", EXAMPLE / "blend_0_logits.npy", "--json", "--quiet").stdout)
    return {"calibration": json.loads(cal.read_text()), "state": json.loads(state.read_text()), "tmp": tmp,
            "result": result}


def cli_verdict(path, kind):
    """None when the CLI accepts the file, else its message without 'mano: error: <path>: '."""
    if kind == "calibration":
        proc = cli("predict", "--calibration", path, EXAMPLE / "blend_0_logits.npy", "--json", "--quiet")
    else:
        proc = cli("merge", path, "--json")
    if proc.returncode == 0:
        return None
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    prefix = f"mano: error: {path}: "
    assert proc.stderr.startswith(prefix), proc.stderr
    return proc.stderr[len(prefix):].strip()


def python_verdict(doc, kind, result):
    try:
        if kind == "calibration":
            mano.predict(doc, result)
        else:
            mano.Accumulator.from_state(json.dumps(doc))
    except mano.InputError as e:
        return str(e)
    return None


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_front_ends_agree(bases, case):
    doc = tampered(bases[case["of"]], case)
    path = bases["tmp"] / (case["name"].replace(" ", "_").replace("'", "") + ".json")
    path.write_text(json.dumps(doc))
    native = cli_verdict(path, case["of"])
    python = python_verdict(doc, case["of"], bases["result"])
    if case["expect"] == "accepted":
        assert native is None and python is None, (native, python)
    else:
        assert native is not None and case["expect"] in native, native
        assert python == native

"""Writes tests/golden/baselines.json: the logit-only baselines (ConfScore, Entropy, Nuclear,
MDE, COT, softrun ConfScore/Nuclear) of the golden logits in tests/data/golden/, from the
independent NumPy/SciPy/POT reference. Shared by the C++ and JS tests.
Run after make_golden.py with Debian's Python: /usr/bin/python3 tests/golden/make_baselines_golden.py"""
import json
import pathlib
import sys

import numpy as np

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent / "reference"))
from baselines_reference import baselines  # noqa: E402

cases = []
for name in ["k2", "k10", "k100", "confident", "unsure", "magnitude_1000", "equal_rows", "float64"]:
    q = np.load(here.parent / "data" / "golden" / f"{name}.npy").astype(np.float64)
    for temperature in (1.0, 0.5, 2.5):
        expected = baselines(q, temperature)
        cases.append({"name": f"{name} T={temperature}", "file": f"data/golden/{name}.npy",
                      "temperature": temperature, "expected": expected})
(here / "baselines.json").write_text(
    json.dumps({"generator": "tests/golden/make_baselines_golden.py", "cases": cases}, indent=1) + "\n")
print(f"wrote {len(cases)} cases to {here / 'baselines.json'}")

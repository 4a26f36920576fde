"""Writes the golden vectors shared by the C++ and JS tests: logits as .npy files under
tests/data/golden/ and tests/golden/mano.json with the float64 reference results.
Run with Debian's Python: /usr/bin/python3 tests/golden/make_golden.py"""
import json
import pathlib
import sys

import numpy as np

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent / "reference"))
from mano_reference import criterion, mano  # noqa: E402

data_dir = here.parent / "data" / "golden"
data_dir.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20241120)
cases = []


def save(name, q):
    np.save(data_dir / f"{name}.npy", q)
    return q


def add(name, file, q, **options):
    expected = mano(q, **options)
    cases.append({"name": name, "file": f"data/golden/{file}.npy", "options": options, "expected": expected})


def scaled_to_criterion(base, target):
    """Scales `base` so that, after the cast to float32, Phi is within 1e-6 of `target`."""
    lo, hi = 1e-3, 1e3
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        phi = criterion((base * mid).astype(np.float32).astype(np.float64))
        lo, hi = (lo, mid) if phi > target else (mid, hi)  # Phi grows with the scale
    q = (base * np.sqrt(lo * hi)).astype(np.float32)
    assert abs(criterion(q.astype(np.float64)) - target) < 1e-6, criterion(q.astype(np.float64))
    return q


# K from binary to a language-model-sized vocabulary; N keeps each file small.
for k, n, scale in [(2, 600, 2.0), (10, 400, 3.0), (100, 120, 4.0), (1000, 40, 5.0), (32000, 4, 6.0)]:
    q = save(f"k{k}", (rng.standard_normal((n, k)) * scale).astype(np.float32))
    add(f"k{k} softrun", f"k{k}", q)
    add(f"k{k} softmax", f"k{k}", q, normalization="softmax")
    if k > 2:  # the Taylor normalization is not defined at K = 2 (mano_reference.softrun_branch)
        add(f"k{k} taylor", f"k{k}", q, normalization="taylor")

# Both softrun branches: a confident model (Phi far above log K -> softmax) and an unsure one
# (Phi near log K -> Taylor).
labels = rng.integers(0, 10, 500)
confident = rng.standard_normal((500, 10)) * 0.5
confident[np.arange(500), labels] += 9.0
q = save("confident", confident.astype(np.float32))
add("confident softrun (softmax branch)", "confident", q)
q = save("unsure", (rng.standard_normal((500, 10)) * 0.7).astype(np.float32))
add("unsure softrun (taylor branch)", "unsure", q)

# Phi just below and just above eta = 5 (K = 100, so Phi >= log K = 4.6 can reach 5).
base = rng.standard_normal((200, 100))
for side, target in [("below", 5.0 - 1e-4), ("above", 5.0 + 1e-4)]:
    q = save(f"phi_{side}_eta", scaled_to_criterion(base, target))
    add(f"phi just {side} eta", f"phi_{side}_eta", q)

# Logits of magnitude 1000.
q = save("magnitude_1000", (1000.0 * np.tanh(rng.standard_normal((100, 20)))).astype(np.float32))
add("magnitude 1000 softrun", "magnitude_1000", q)
add("magnitude 1000 taylor order 4", "magnitude_1000", q, normalization="taylor", taylor_order=4)
add("magnitude 1000 softmax p 7.5", "magnitude_1000", q, normalization="softmax", p=7.5)

# Rows of equal logits (all rows, and mixed with ordinary rows).
q = save("equal_rows", np.full((50, 10), 3.25, dtype=np.float32))
add("equal rows softrun", "equal_rows", q)
add("equal rows softmax", "equal_rows", q, normalization="softmax")
mixed = rng.standard_normal((60, 10)) * 2
mixed[::3] = -1.5
q = save("mixed_equal_rows", mixed.astype(np.float32))
add("mixed equal rows taylor", "mixed_equal_rows", q, normalization="taylor")

# Taylor orders 1-4 and p in {2, 4, 7.5}.
q = save("orders", (rng.standard_normal((300, 10)) * 2.5).astype(np.float32))
for order in (1, 2, 3, 4):
    add(f"taylor order {order}", "orders", q, normalization="taylor", taylor_order=order)
    add(f"softrun order {order} eta 10", "orders", q, taylor_order=order, eta=10.0)
for p in (2.0, 4.0, 7.5):
    add(f"p {p} softmax", "orders", q, normalization="softmax", p=p)
    add(f"p {p} taylor", "orders", q, normalization="taylor", p=p)

# Official-code compatibility: batches of 128 (last one partial), fixed criterion.
q = save("batches", (rng.standard_normal((300, 10)) * 3).astype(np.float32))
add("batch 128 softrun", "batches", q, batch_size=128)
add("batch 128 fixed criterion taylor", "batches", q, batch_size=128, fixed_criterion=4.0)
add("batch 100 fixed criterion softmax", "batches", q, batch_size=100, fixed_criterion=6.0)
add("fixed criterion whole set", "batches", q, fixed_criterion=5.5)

# float64 and float16 files.
q = save("float64", rng.standard_normal((100, 10)) * 3 + 1000.123456789)
add("float64 input", "float64", q, normalization="softmax")
add("float64 input taylor", "float64", q, normalization="taylor")
q = save("float16", (rng.standard_normal((100, 10)) * 3).astype(np.float16))
add("float16 input", "float16", q)

(here / "mano.json").write_text(json.dumps({"generator": "tests/golden/make_golden.py", "cases": cases}, indent=1) + "\n")
print(f"wrote {len(cases)} cases to {here / 'mano.json'}")

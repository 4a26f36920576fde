"""The example's prediction (main.cpp) against `mano predict --json` on the same file: the same
estimate (method, regime, accuracy and interval within 1e-9) and every method's accuracy and interval.
Usage: compare.py CLI.json EXAMPLE.json"""
import json
import sys

cli, example = (json.load(open(path)) for path in sys.argv[1:3])
problems = []


def close(what, a, b):
    if abs(a - b) > 1e-9:
        problems.append(f"{what}: CLI {a!r}, example {b!r}")


for key in ("method", "regime", "extrapolated"):
    if cli["estimate"][key] != example["estimate"][key]:
        problems.append(f"estimate {key}: CLI {cli['estimate'][key]!r}, example {example['estimate'][key]!r}")
close("estimate accuracy", cli["estimate"]["accuracy"], example["estimate"]["accuracy"])
for i in (0, 1):
    close(f"estimate interval[{i}]", cli["estimate"]["interval"][i], example["estimate"]["interval"][i])
if sorted(cli["methods"]) != sorted(example["methods"]):
    problems.append(f"methods: CLI {sorted(cli['methods'])}, example {sorted(example['methods'])}")
for name in set(cli["methods"]) & set(example["methods"]):
    a, b = cli["methods"][name], example["methods"][name]
    close(f"{name} score", a["score"], b["score"])
    close(f"{name} accuracy", a["accuracy"], b["accuracy"])
    for i in (0, 1):
        close(f"{name} interval[{i}]", a["interval"][i], b["interval"][i])
for p in problems:
    print("FAIL", p)
print(f"example vs mano predict: estimate {example['estimate']['method']} {example['estimate']['accuracy']:.6f}, "
      f"{len(example['methods'])} methods: {'FAILED' if problems else 'the same'}")
sys.exit(1 if problems else 0)

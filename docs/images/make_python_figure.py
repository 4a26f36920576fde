"""Draws docs/images/python-calibration-timeline.png (docs/python.md) with mano.plot from the
committed Fashion-MNIST-C logits (bench/fashion_mnist_c/data/bncnn), as `npm run demo` splits
them: calibrated on the labeled sets of 7 corruption types, predicted on 4 others.

    PYTHONPATH=build/release/python /usr/bin/python3 docs/images/make_python_figure.py
"""
import pathlib

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

import mano  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFEST = REPO / "bench/fashion_mnist_c/data/bncnn/manifest.json"
METHODS = "mano,confscore,mde,cot,atc_ne,nuclear"
CALIBRATE_ON = ["gaussian_noise", "impulse_noise", "contrast", "pixelate", "translate", "occlusion", "zoom"]
PREDICT_ON = ["shot_noise", "gaussian_blur", "brightness", "rotate"]
OUT = REPO / "docs/images/python-calibration-timeline.png"


def main() -> None:
    cal = mano.calibrate(MANIFEST, METHODS, groups=CALIBRATE_ON)
    scored = mano.evaluate(MANIFEST, METHODS, groups=CALIBRATE_ON)
    predictions = mano.predict(cal, MANIFEST, groups=PREDICT_ON)
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.3])
    mano.plot(cal, sets=scored, ax=left)
    mano.plot(predictions, ax=right)
    right.set_title(f"{cal['recommended']}: estimate and 90% interval on {len(PREDICT_ON)} other corruption types")
    left.legend(fontsize="x-small", ncol=2, loc="lower right")
    fig.savefig(OUT, dpi=72, metadata={"Software": None})
    print(f"wrote {OUT.relative_to(REPO)} ({OUT.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()

"""Fits are shown on their own scale: a probit fit (calibration.hpp, link) is
Φ⁻¹(accuracy) = slope Φ⁻¹(score) + intercept, so on the raw score it is a curve. `mano eval --plots`
draws each method's fit and band where its points are (the fit spans them and most lie inside the
drawn band), the curve's tooltip gives the equation in the user's terms and the curve read back
through the axis is that equation (SciPy's Φ) at the points' scores, and `mano calibrate` prints
the link and the score range on the score's own scale (the sets' scores from eval --json).
Run: /usr/bin/python3 tests/cli/test_fit_scale.py path/to/mano"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np
from scipy import stats

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reference"))
from harness import check, finish  # noqa: E402

MANO = sys.argv[1]
MANIFEST = pathlib.Path(__file__).resolve().parents[1] / "data/example/manifest.json"


def run(*args):
    return subprocess.run([MANO, *map(str, args)], capture_output=True, text=True, timeout=300)


def drawn(svg):
    """The fit polyline, the band polygon and the points, in pixels, and the fit's tooltip."""
    fit = re.search(r'<polyline fill="none" stroke="#333333"[^>]*points="([^"]*)"><title>([^<]*)</title>', svg)
    band = re.search(r'<polygon fill="[^"]*" fill-opacity="0.18"[^>]*points="([^"]*)"', svg)
    points = [(float(x), float(y)) for x, y in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="[\d.]+"[^>]*><title>', svg)]
    pairs = lambda text: np.array([[float(v) for v in p.split(",")] for p in text.split()])
    return (pairs(fit.group(1)) if fit else None), (fit.group(2) if fit else ""), (pairs(band.group(1)) if band else None), points


def check_plots(tmp, report):
    probits = 0
    for name in report["summary"]:
        svg = (tmp / "plots" / f"{name}.svg").read_text()
        fit, title, band, points = drawn(svg)
        check(fit is not None and band is not None and len(points) == len(report["sets"]), f"{name}: fit, band and points drawn")
        if fit is None or band is None:
            continue
        half = len(band) // 2
        upper, lower = band[:half], band[half:][::-1]
        inside = 0
        for px, py in points:
            check(fit[0, 0] - 1e-6 <= px <= fit[-1, 0] + 1e-6, f"{name}: the fit spans the point at x = {px}")
            y_fit = np.interp(px, fit[:, 0], fit[:, 1])
            hi, lo = np.interp(px, upper[:, 0], upper[:, 1]), np.interp(px, lower[:, 0], lower[:, 1])
            inside += hi - 1 <= py <= lo + 1  # pixels grow downwards: the band's upper edge has the smaller y
            check(hi - 1 <= y_fit <= lo + 1, f"{name}: the fit lies inside its band at x = {px}")
        check(inside >= 0.75 * len(points), f"{name}: {inside} of {len(points)} points inside the drawn band")
        # the curve is the tooltip's equation on the raw score: read back through the y axis's ticks
        eq = re.match(r"accuracy = (?:Φ\()?(-?[\d.e+-]+) × (Φ⁻¹\()?score\)? ([+−]) ([\d.e+-]+)\)?$", title)
        check(eq is not None, f"{name}: the fit's tooltip {title!r} is an equation in the user's terms")
        if eq is None:
            continue
        slope, probit = float(eq.group(1)), eq.group(2) is not None
        intercept = float(eq.group(4)) * (-1 if eq.group(3) == "−" else 1)
        probits += probit
        ticks = [(float(y) - 4, float(t)) for y, t in re.findall(r'<text x="[\d.]+" y="([\d.]+)" text-anchor="end">([-\d.]+)</text>', svg)]
        (py0, t0), (py1, t1) = ticks[0], ticks[-1]
        to_acc = lambda py: t0 + (py - py0) * (t1 - t0) / (py1 - py0)
        at = lambda s: (stats.norm.cdf(slope * stats.norm.ppf(np.clip(s, 1e-3, 1 - 1e-3)) + intercept) if probit
                        else slope * s + intercept)
        scores = sorted(s["methods"][name].get("score", s["methods"][name].get("accuracy")) for s in report["sets"])
        for px, score in ((min(points)[0], scores[0]), (max(points)[0], scores[-1])):
            got = to_acc(np.interp(px, fit[:, 0], fit[:, 1]))
            want = float(np.clip(at(score), 0, 1))
            check(abs(got - want) <= 0.01, f"{name}: the drawn fit at score {score:.4f} reads {got:.4f}, its equation {want:.4f}")
    check(probits > 0, f"{probits} probit fits drawn (the test covers them)")


def check_table(tmp, report):
    proc = run("calibrate", MANIFEST, "-o", tmp / "cal2.json")
    check(proc.returncode == 0, f"calibrate: {proc.stderr.strip()}")
    lines = proc.stdout.splitlines()
    check(lines[0].split()[:2] == ["method", "link"], f"the table names the link: {lines[0]!r}")
    check("probit: accuracy ~ Φ(slope * Φ⁻¹(score) + intercept)" in proc.stdout, "the table says what a probit fit is")
    for line in lines[1:]:
        m = re.match(r"^(\w+)\s+(identity|probit)\s.*\[(-?[\d.]+), (-?[\d.]+)\]", line)
        if not m:
            continue
        name = m.group(1)
        scores = [s["methods"][name].get("score", s["methods"][name].get("accuracy")) for s in report["sets"]]
        check(abs(float(m.group(3)) - min(scores)) <= 1e-3 and abs(float(m.group(4)) - max(scores)) <= 1e-3,
              f"{name}: the printed score range [{m.group(3)}, {m.group(4)}] is the sets' scores "
              f"[{min(scores):.4f}, {max(scores):.4f}]")


def main():
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        proc = run("eval", MANIFEST, "--json", "--quiet", "--plots", tmp / "plots")
        check(proc.returncode == 0, f"eval --plots: {proc.stderr.strip()}")
        report = json.loads(proc.stdout)
        check_plots(tmp, report)
        check_table(tmp, report)
    finish()


if __name__ == "__main__":
    main()

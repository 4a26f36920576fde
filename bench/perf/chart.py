"""The speed page's chart: MaNo's time per logit for one shape, every contestant of a
`node bench/perf/run.mjs` run, as a horizontal bar chart on a log scale (SVG, no dependencies).

  node bench/perf/run.mjs > run.md
  /usr/bin/python3 bench/perf/chart.py run.md [SHAPE] > docs/images/speed.svg   (SHAPE: 50000×1000)

It reads the run's first table ("MaNo, ns per logit"): the row of SHAPE, one bar per column
that has a number, the memory-read kernel (the machine's limit) first."""
import html
import math
import sys


def table_row(markdown, shape):
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| shape | memory read"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == shape:
            return header, cells
    raise SystemExit(f"{shape}: no such row in the run's first table")


def bars(header, cells):
    out = []
    for name, cell in zip(header[1:], cells[1:]):
        value = cell.split(" ")[0]
        try:
            ns = float(value)
        except ValueError:
            continue  # "–": not measured on this machine
        label = {"memory read (GB/s)": "memory read (the limit)", "scalar": "native scalar", "sse2": "native SSE2",
                 "sse4.2": "native SSE4.2", "avx2": "native AVX2", "avx512": "native AVX-512", "neon64": "native NEON",
                 "WASM": "WebAssembly (Node)"}.get(name, name)
        out.append((label, ns))
    return out


def svg(shape, data, cpu):
    width, left, right, bar, gap, top = 760, 210, 90, 22, 8, 48
    height = top + len(data) * (bar + gap) + 40
    lo = 10 ** math.floor(math.log10(min(v for _, v in data)))
    hi = 10 ** math.ceil(math.log10(max(v for _, v in data)))
    scale = (width - left - right) / (math.log10(hi) - math.log10(lo))
    x = lambda v: left + (math.log10(v) - math.log10(lo)) * scale  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             'font-family="sans-serif" font-size="13">',
             f'<title>MaNo on {shape} float32 logits: nanoseconds per logit, lower is better</title>',
             f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
             f'MaNo on {shape} float32 logits: ns per logit (log scale, lower is better)</text>']
    decade = lo
    while decade <= hi:
        parts.append(f'<line x1="{x(decade):.1f}" y1="{top - 6}" x2="{x(decade):.1f}" y2="{height - 32}" stroke="#ddd"/>')
        parts.append(f'<text x="{x(decade):.1f}" y="{height - 16}" text-anchor="middle" fill="#555">{decade:g}</text>')
        decade *= 10
    for i, (label, ns) in enumerate(data):
        y = top + i * (bar + gap)
        colour = "#999" if label.startswith("memory") else "#2563eb" if label.startswith(("native", "all")) \
            else "#7c3aed" if label.startswith("WebAssembly") else "#ea580c"
        parts.append(f'<text x="{left - 8}" y="{y + bar * 0.7:.1f}" text-anchor="end">{html.escape(label)}</text>')
        parts.append(f'<rect x="{left}" y="{y}" width="{max(1.0, x(ns) - left):.1f}" height="{bar}" fill="{colour}"/>')
        parts.append(f'<text x="{x(ns) + 6:.1f}" y="{y + bar * 0.7:.1f}">{ns:g}</text>')
    parts.append(f'<text x="{width - 8}" y="{height - 4}" text-anchor="end" fill="#555" font-size="11">'
                 f'{html.escape(cpu)}</text>')
    return "\n".join(parts + ["</svg>"]) + "\n"


def main():
    markdown = open(sys.argv[1], encoding="utf8").read()
    shape = sys.argv[2] if len(sys.argv) > 2 else "50000×1000"
    cpu = next((line for line in markdown.splitlines() if line.startswith("CPU:")), "")
    sys.stdout.write(svg(shape, bars(*table_row(markdown, shape)), cpu))


if __name__ == "__main__":
    main()

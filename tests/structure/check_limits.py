#!/usr/bin/env python3
"""Each option's range is written once, in the core's options table (src/mano/scan/options_table.hpp):
this check reads the table's rows and reports, as file:line, every line of a front end (native/cli,
bindings/python/mano, bindings/wasm, web/src, web/dashboard) that names an option in any spelling
(taylor_order, --taylor-order, taylorOrder) together with a number equal to one of its bounds.

Usage: check_limits.py [ROOT]  (exit status 1 and one line per re-declaration when any)."""
import pathlib
import re
import subprocess
import sys

TABLE = "src/mano/scan/options_table.hpp"
FRONT_ENDS = ("native/cli", "bindings/python/mano", "bindings/wasm", "web/src", "web/dashboard")
SUFFIXES = (".cpp", ".hpp", ".h", ".py", ".pyi", ".js", ".mjs", ".ts", ".html")

# option("name", option_type::t).defaulting_to(...).above(0).at_most(0.999999)...: a row's bounds
ROW = re.compile(r'\boption\("(\w+)",\s*option_type::\w+\)(.*?)(?=\boption\("|^\};)', re.S | re.M)
BOUND = re.compile(r"\.(?:above|at_least|below|at_most)\(([-\w.]+)\)")
NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w.])")


def table(root):
    """{name: [bounds]} from the table's rows."""
    text = (pathlib.Path(root) / TABLE).read_text()
    rows = {}
    for name, setters in ROW.findall(text):
        rows[name] = [float(v) for v in BOUND.findall(setters)]
    if not rows:
        raise SystemExit(f"{TABLE}: no option rows found (has the row layout changed? update check_limits.py)")
    return rows


def spellings(name):
    """The option's names in the front ends: snake_case, the CLI's --kebab-case, camelCase."""
    parts = name.split("_")
    camel = parts[0] + "".join(p.title() for p in parts[1:])
    return {name, "--" + "-".join(parts), camel}


def names_pattern(name):
    # a single-letter option (p) is an option only as --p, "p", 'p' or p= ; longer names as words
    if len(name) == 1:
        return re.compile(rf"--{name}\b|[\"']{name}[\"']|\b{name}=(?!=)")
    words = "|".join(re.escape(s) for s in sorted(spellings(name), key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{words})(?![\w-])")


def compared(line, bound):
    """Whether 0 or 1, too common to flag alone (a format's digits, a first index), is compared on
    this line or written as a range's end: "> 0", "1 <=", "from 1"."""
    b = "0" if bound == 0 else "1"
    return re.search(rf"(?:[<>]=?|==|\bfrom)\s*{b}(?![\w.])|(?<![\w.]){b}\s*(?:[<>]=?|==)", line) is not None


def front_end_files(root):
    root = pathlib.Path(root)
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", *FRONT_ENDS], cwd=root,
                            capture_output=True, text=True, check=True).stdout.split()
    return [root / f for f in sorted(set(listed)) if f.endswith(SUFFIXES) and (root / f).is_file()]


def check(root):
    rows = table(root)
    patterns = {name: (names_pattern(name), bounds) for name, bounds in rows.items() if bounds}
    problems = []
    for path in front_end_files(root):
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            values = {float(v) for v in NUMBER.findall(line)}
            if not values:
                continue
            for name, (pattern, bounds) in patterns.items():
                hit = [b for b in bounds if b in values and (b not in (0, 1) or compared(line, b))]
                if hit and pattern.search(line):
                    where = path.relative_to(root).as_posix()
                    problems.append(f"{where}:{number}: {name}'s bound {hit[0]:g} is written again; read it from the "
                                    f"options table ({TABLE}) or let the core check the value")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    problems = check(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

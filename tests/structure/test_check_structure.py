#!/usr/bin/env python3
"""check_structure.py finds what it guards against, in a small repository made here: an include that
runs back up, a circle of JS imports, a circle of Python imports and a file over the line limit;
and passes the same repository once they are mended. Then it checks this repository."""
import json
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_structure  # noqa: E402

RULES = {
    "layers": [
        {"path": "src/mano/base", "uses": []},
        {"path": "src/mano/scan", "uses": ["src/mano/base"]},
        {"path": "web/dashboard", "uses": []},
        {"path": "bindings/python", "uses": []},
    ],
    "packages": {"mano": "bindings/python/mano/__init__.py"},
    "include_roots": ["src"],
    "max_lines": 10,
    "not_hand_written": {"paths": ["data/*"]},
}


def repo_with(files):
    root = pathlib.Path(tempfile.mkdtemp())
    (root / "tests/structure").mkdir(parents=True)
    (root / "tests/structure/layers.json").write_text(json.dumps(RULES))
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def main():
    bad = repo_with({
        "src/mano/base/error.hpp": '#pragma once\n#include "mano/scan/result.hpp"\n',
        "src/mano/scan/result.hpp": '#pragma once\n#include <mano/base/error.hpp>\n',
        "web/dashboard/a.js": "import { b } from './b.js';\nexport const a = 1;\n",
        "web/dashboard/b.js": "import {\n  a,\n} from './a.js';\nexport const b = 2;\n",
        "bindings/python/mano/__init__.py": "from ._x import x\n",
        "bindings/python/mano/_x.py": "import mano\nx = 1\n",
        "notes.md": "line\n" * 11,
        "data/big.csv": "1\n" * 50,
    })
    problems = check_structure.check(bad)
    want = [
        "src/mano/base/error.hpp: includes src/mano/scan/result.hpp, but src/mano/base may not use src/mano/scan",
        "circle of includes/imports: src/mano/base/error.hpp -> src/mano/scan/result.hpp",
        "circle of includes/imports: web/dashboard/a.js -> web/dashboard/b.js",
        "circle of includes/imports: bindings/python/mano/__init__.py -> bindings/python/mano/_x.py",
        "notes.md: 11 lines, over the limit of 10",
    ]
    for w in want:
        assert any(p.startswith(w) for p in problems), f"not reported: {w}\n got: {problems}"
    assert len(problems) == len(want), problems

    good = repo_with({
        "src/mano/base/error.hpp": "#pragma once\n",
        "src/mano/scan/result.hpp": '#pragma once\n#include "mano/base/error.hpp"\n',
        "web/dashboard/a.js": "import { b } from './b.js';\nexport const a = b;\n",
        "web/dashboard/b.js": "export const b = 2;\n",
        "bindings/python/mano/__init__.py": "from ._x import x\n",
        "bindings/python/mano/_x.py": "x = 1\n",
        "notes.md": "line\n" * 10,
        "data/big.csv": "1\n" * 50,
    })
    assert check_structure.check(good) == [], check_structure.check(good)

    mine = check_structure.check(HERE.parents[1])
    assert mine == [], "\n".join(mine)
    print("structure: the check reports back arrows, circles and long files, and this repository has none")


if __name__ == "__main__":
    main()

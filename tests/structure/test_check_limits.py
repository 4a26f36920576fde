#!/usr/bin/env python3
"""check_limits.py finds an option's bound written again in a front end, in a small repository made
here (a table of two rows, a CLI file, a Python file and a JS file, each re-declaring one), names
each file:line, passes the repository once they read the table; then it checks this repository."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_limits  # noqa: E402
import test_check_structure  # noqa: E402  (its small-repository maker)

TABLE = '''inline constexpr option_row option_rows[] = {
    option("level", option_type::real).defaulting_to("0.9").above(0).at_most(0.999999).means("the level"),
    option("taylor_order", option_type::whole).defaulting_to("2").at_least(1).at_most(170).means("the order"),
    option("eta", option_type::real).defaulting_to("5").means("eta"),
};
'''


def repo_with(files):
    return test_check_structure.repo_with({check_limits.TABLE: TABLE, **files})


def main():
    bad = repo_with({
        "native/cli/main.cpp": 'int x;\napp->add_option("--taylor-order", n)->check(whole_number(true, 170));\n',
        "bindings/python/mano/_sets.py": "def f(level):\n    if not 0 < level <= 0.999999:\n        raise ValueError\n",
        "web/src/workflow.js": "if (options.taylorOrder < 1) throw new Error('bad');\n",
        "web/dashboard/page.js": "const digits = fixed(100 * level, 0);\nconst eta = 5;\n",
    })
    problems = check_limits.check(bad)
    want = ["native/cli/main.cpp:2: taylor_order's bound 170", "bindings/python/mano/_sets.py:2: level's bound 0",
            "web/src/workflow.js:1: taylor_order's bound 1"]
    for w in want:
        assert any(p.startswith(w) for p in problems), f"not reported: {w}\n got: {problems}"
    assert len(problems) == len(want), problems

    good = repo_with({
        "native/cli/main.cpp": 'app->add_option("--taylor-order", n)->check(table_option("taylor_order"));\n',
        "bindings/python/mano/_sets.py": "def f(level):\n    _check_options({'level': level})\n",
        "web/src/workflow.js": "checkOptions({ taylor_orders: taylorOrders });\n",
        "web/dashboard/page.js": "const digits = fixed(100 * level, 0);\n",
    })
    assert check_limits.check(good) == [], check_limits.check(good)

    mine = check_limits.check(HERE.parents[1])
    assert mine == [], "\n".join(mine)
    print("limits: a front end's re-declared bound is reported as file:line, and this repository has none")


if __name__ == "__main__":
    main()

"""A bad level, Taylor order or criterion-with-family gives one error line from the core's options
table (src/mano/scan/options_table.hpp) in the CLI and in Python, each naming its own spelling of
the option and the table's range (web/test/option_errors.test.js holds npm to the same lines)."""
import subprocess

import pytest

import mano

from api_support import EXAMPLE, EXAMPLE_LOGITS, MANIFEST, MANO_BIN, needs_cli

LEVEL = "in (0, 0.999999]"


def cli_error(*args):
    """The CLI's one stderr line for a refused command line."""
    proc = subprocess.run([str(MANO_BIN), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def python_error(call):
    with pytest.raises(mano.InputError) as e:
        call()
    assert "\n" not in str(e.value)
    return str(e.value)


@needs_cli
def test_level_in_each_spelling():
    logits = EXAMPLE_LOGITS[0]
    assert python_error(lambda: mano.predict({}, logits, level=1.5)) == f"level must be {LEVEL}, e.g. 0.9 (got 1.5)"
    assert python_error(lambda: mano.predict_scores({}, "mano", [0.5], level=0)) == f"level must be {LEVEL}, e.g. 0.9 (got 0)"
    assert python_error(lambda: mano.predict({}, logits, level="high")).startswith(f"level must be {LEVEL}")
    assert cli_error("predict", "--calibration", logits, logits, "--level", "1.5") == \
        f"mano: error: --level: must be a finite number {LEVEL} (got '1.5') (see mano --help)"


@needs_cli
def test_taylor_order_in_each_spelling():
    assert python_error(lambda: mano.evaluate(MANIFEST, taylor_orders=[2, 171])) == \
        "taylor_orders entries must be a whole number from 1 to 170 (got 171)"
    assert python_error(lambda: mano.evaluate(MANIFEST, taylor_orders=5)) == \
        "taylor_orders must be a list of whole numbers from 1 to 170 (got 5)"
    assert "\"taylor_order\" must be a whole number from 1 to 170" in python_error(lambda: mano.score(EXAMPLE_LOGITS[0], taylor_order=171))
    assert cli_error("eval", MANIFEST, "--taylor-orders", "2,171") == \
        "mano: error: --taylor-orders: must be a whole number >= 1 and <= 170 (got '171') (see mano --help)"


@needs_cli
def test_criterion_with_family_in_each_spelling():
    words = "fixes the softrun branch; give it with"
    assert python_error(lambda: mano.calibrate(MANIFEST, criterion=3.0)) == \
        f"criterion {words} normalization='softrun', not 'family'"
    assert cli_error("calibrate", MANIFEST, "--criterion", "3") == f"mano: error: --criterion {words} --normalization softrun, not family"


@needs_cli
def test_group_selection_in_each_front_end():
    assert python_error(lambda: mano.evaluate(MANIFEST, groups=["nosuch"])) == f"{MANIFEST}: no set has the group \"nosuch\""
    assert cli_error("eval", MANIFEST, "--group", "nosuch") == f"mano: error: {MANIFEST}: no set has the group \"nosuch\""


def test_the_table_is_exported():
    table = {row["name"]: row for row in mano._core.options_table({})["table"]}
    assert table["level"]["max"] == 0.999999 and table["level"]["min_inclusive"] is False
    assert table["taylor_order"]["range"] == "in [1, 170]"
    assert EXAMPLE.is_dir()

"""mano.methods() / default_methods() equal the CLI's."""

import numpy as np
import pytest

import mano

try:
    import resource
except ImportError:  # not on Windows
    resource = None

from api_support import *  # noqa: F401,F403 (the shared constants, helpers and fixtures)


@needs_cli
def test_methods_equal_cli():
    want = cli_json("methods", "--json")["methods"]
    assert mano.methods() == want
    names = [m["name"] for m in want]
    assert "mano" in names and len(names) == len(set(names))


@needs_cli
@pytest.mark.parametrize("n,k", [(1, 2), (5, 2), (200, 10), (40, 100), (30, 101), (12, 1000), (3, 4000)])
def test_default_methods_equal_the_cli_score(n, k, tmp_path):
    path = tmp_path / "logits.npy"
    np.save(path, random_logits(n, k, n * k))
    result = cli_score(path)
    assert sorted(mano.default_methods(k, n)) == sorted(result["methods"])
    assert sorted(mano.score(path)["methods"]) == sorted(result["methods"])
    # no n: the methods for an unknown number of rows (an accumulator's defaults)
    assert mano.default_methods(k) == mano.Accumulator(k).options["methods"]


@needs_cli
def test_default_methods_with_inputs_equal_the_cli_score(tmp_path):
    path, second = tmp_path / "logits.npy", tmp_path / "second.npy"
    np.save(path, random_logits(200, 10, 1))
    np.save(second, random_logits(200, 10, 2))
    result = cli_score(path, "--second-logits", second, "--source-logits", SOURCE_LOGITS,
                       "--source-labels", SOURCE_LABELS)
    assert sorted(mano.default_methods(10, 200, ["second", "source"])) == sorted(result["methods"])

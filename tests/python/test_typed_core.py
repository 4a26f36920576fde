"""mano._core takes and gives dicts and lists (bindings/python/json_values.hpp), not JSON text, and
every front end's methods come from the core's one resolver (src/mano/scan/resolve.hpp)."""
import json

import numpy as np
import pytest

import mano
from mano import _core


def _logits(n=200, k=5, seed=3):
    return np.random.default_rng(seed).normal(size=(n, k)).astype(np.float32)


def test_the_core_gives_dicts_and_lists():
    assert isinstance(_core.methods(), dict)
    assert _core.default_methods(10, 100, []) == [m["name"] for m in mano.methods() if m["default"] and not m["needs"]
                                                  and m.get("default_max_k", 10) >= 10]
    prepared = _core.prepare_options({"methods": ["mano", "entropy"]}, None, None, False, None, 1)
    assert isinstance(prepared, dict) and prepared["methods"] == ["mano", "entropy"]
    result = _core.score(_logits(), prepared, None, None, None, 1)
    assert isinstance(result, dict) and set(result["methods"]) == {"mano", "entropy"}


def test_a_state_crosses_as_a_dict_or_as_its_text():
    acc = _core.Accumulator(5, _core.prepare_options({}, None, None, False, None, 1))
    acc.push(_logits())
    state = acc.state()
    assert isinstance(state, dict)
    from_dict, from_text = _core.Accumulator.from_state(state), _core.Accumulator.from_state(json.dumps(state))
    assert from_dict.result() == from_text.result() == acc.result()
    with pytest.raises(mano.InputError, match="nests deeper than"):
        _core.Accumulator.from_state("[" * 5000 + "]" * 5000)


def test_a_value_json_cannot_hold_is_an_input_error():
    with pytest.raises(mano.InputError, match="options: a ndarray is not a JSON value"):
        _core.Accumulator(5, {"methods": np.array(["mano"])})
    with pytest.raises(mano.InputError, match="options: nan is not a JSON number"):
        _core.prepare_options({"p": float("nan")}, None, None, False, None, 1)
    with pytest.raises(mano.InputError, match="is not a text"):
        _core.prepare_options({1: 2}, None, None, False, None, 1)


def test_whole_numbers_cross_as_the_json_parser_reads_them():
    # a count >= 0 is unsigned, as the core's readers check it; beyond 64 bits a number
    calibration_like = {"rows": [0, 2**64 - 1, -5, 2**70]}
    with pytest.raises(mano.InputError, match="labeled rows are"):
        _core.audit_rows(calibration_like, "labeled", 10, 3)
    acc = _core.Accumulator(5, _core.prepare_options({}, None, None, False, None, 1))
    acc.push(_logits())
    state = acc.state()
    assert _core.Accumulator.from_state(state).state() == state


def test_the_family_scorer_gets_and_gives_dicts():
    passes = []

    def score(index, step):
        passes.append(step)
        options = dict(_core.prepare_options({"methods": ["entropy"]}, None, None, False, None, 1),
                       **{k: v for k, v in step.items() if k not in ("pass", "labels", "rows", "copy")})
        x = _logits(seed=index)
        result = _core.score(x, options, np.zeros(len(x), np.int64), None, None, 1)
        return result, _core.resolve_options(options, len(x), 5, False, False), None

    scored, warnings = _core.score_family([{"name": f"s{i}"} for i in range(3)], {"family": False}, score)
    assert isinstance(scored, dict) and [s["name"] for s in scored["sets"]] == ["s0", "s1", "s2"]
    assert warnings == [] and all(isinstance(p, dict) and p["pass"] == "first" for p in passes)


def test_a_named_method_without_its_input_is_refused_by_the_resolver():
    with pytest.raises(mano.InputError, match="methods: atc_mc needs source"):
        mano.score(_logits(), methods=["atc_mc"])

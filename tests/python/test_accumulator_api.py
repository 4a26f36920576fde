"""mano.Accumulator: chunks, merges, pickling (across processes too), states, copies, threads."""
import copy
import json
import multiprocessing
import pickle
import threading
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import mano

try:
    import resource
except ImportError:  # not on Windows
    resource = None

from api_support import *  # noqa: F401,F403 (the shared constants, helpers and fixtures)


def test_accumulator_chunks_and_merges_equal_one_pass(target, target_labels, source):
    methods = LOGIT_METHODS + ["atc_mc", "atc_ne", "doc", "cott"]
    kwargs = {"source": source, "temperature": "fit", "p": 3.0}
    whole = mano.Accumulator(10, methods, **kwargs).push(target, target_labels)
    a = mano.Accumulator(10, methods, **kwargs)
    a.push(target[:700], target_labels[:700]).push(target[700:701], target_labels[700:701])
    a.push(target[701:1300], target_labels[701:1300])
    b = mano.Accumulator(10, methods, **kwargs)
    b.push(target[1300:1900], target_labels[1300:1900])
    c = mano.Accumulator(10, methods, **kwargs)
    c.push(target[1900:], target_labels[1900:]).push(target[:0], target_labels[:0])
    b.merge(c)
    assert a.merge(b) is a
    assert a.rows == whole.rows == 2000 and a.k == 10
    assert len(a.shards) == 3 and len(whole.shards) == 1
    want = mano.score(target, methods, labels=target_labels, **kwargs)
    assert_same(whole.result(), want)
    assert_same(a.result(), want)
    assert sorted(a.options["methods"]) == sorted(methods) and a.options["p"] == 3.0


def test_accumulator_defaults(target):
    acc = mano.Accumulator(10)
    assert acc.options["methods"] == mano.default_methods(10)
    assert "cot" not in acc.options["methods"]  # COT keeps every row: only when named
    acc.push(target)
    assert_same(acc.result(), mano.score(target, mano.default_methods(10)))
    assert repr(acc).startswith("<mano.Accumulator k=10 rows=2000")
    assert acc.architecture in mano.architectures()
    assert mano.Accumulator(np.int64(3)).k == 3


def test_accumulator_push_is_all_or_nothing(target):
    acc = mano.Accumulator(10, LOGIT_METHODS).push(target[:100])
    before = acc.state()
    bad = target[100:200].copy()
    bad[37, 4] = np.nan
    with pytest.raises(mano.InputError, match=r"row 137, column 4.*NaN"):
        acc.push(bad)
    with pytest.raises(mano.InputError, match="labels"):
        acc.push(target[100:200], np.zeros(99, dtype=np.int64))
    assert acc.rows == 100 and acc.state() == before


def test_accumulator_pickles(target):
    acc = mano.Accumulator(10, LOGIT_METHODS, p=5.0).push(target[:1200])
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(acc, protocol=protocol))
        assert back.state() == acc.state() and back.rows == 1200
        assert_same(back.result(), acc.result())
    back.push(target[1200:])
    assert_same(back.result(), mano.score(target, LOGIT_METHODS, p=5.0))
    assert acc.rows == 1200


def test_accumulator_pickles_across_processes(target):
    """Two worker processes score four chunks of rows; the parent merges their states."""
    methods = LOGIT_METHODS
    parts = np.array_split(target, 4)
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        futures = [pool.submit(mano.Accumulator.push, mano.Accumulator(10, methods), part) for part in parts]
        partial = [f.result(timeout=120) for f in futures]
    assert [p.rows for p in partial] == [len(p) for p in parts]
    total = mano.Accumulator(10, methods)
    for p in partial:
        total.merge(p)
    assert total.rows == len(target) and len(total.shards) == 4
    assert_same(total.result(), mano.score(target, methods))
    with pytest.raises(mano.InputError, match="twice"):
        total.merge(partial[2])


def test_accumulator_merge_refuses_the_same_state_twice(target):
    a = mano.Accumulator(10, LOGIT_METHODS).push(target[:1000])
    b = mano.Accumulator(10, LOGIT_METHODS).push(target[1000:])
    a.merge(b)
    before = a.state()
    for again in (b, b.copy(), pickle.loads(pickle.dumps(b)), mano.Accumulator.from_state(b.state())):
        with pytest.raises(mano.InputError, match="twice"):
            a.merge(again)
    with pytest.raises(mano.InputError, match="itself"):
        a.merge(a)
    assert a.state() == before and a.rows == 2000
    # an accumulator that holds a shard already merged in
    c = mano.Accumulator(10, LOGIT_METHODS).merge(b)
    with pytest.raises(mano.InputError, match="twice"):
        a.merge(c)


def test_accumulator_own_rows_cannot_be_renamed_away(target):
    """a.merge(b); b.merge(a) would count b's rows twice, as would a's own state merged back in."""
    a = mano.Accumulator(10, LOGIT_METHODS).push(target[:1000])
    b = mano.Accumulator(10, LOGIT_METHODS).push(target[1000:])
    a.merge(b)
    with pytest.raises(mano.InputError, match="twice"):
        b.merge(a)
    assert b.rows == len(target) - 1000
    c = mano.Accumulator(10, LOGIT_METHODS).push(target[:1000])
    s = c.state()
    c.merge(mano.Accumulator(10, LOGIT_METHODS).push(target[1000:]))
    with pytest.raises(mano.InputError, match="twice"):
        c.merge(mano.Accumulator.from_state(s))
    assert c.rows == len(target)
    assert_same(c.result(), mano.score(target, LOGIT_METHODS))


@needs_cli
def test_accumulator_from_state(target, tmp_path):
    path = tmp_path / "state.json"
    want = cli_score(TARGET, "--emit-state", path)
    from_file = mano.Accumulator.from_state(path)
    assert from_file.rows == 2000 and from_file.k == 10
    assert_same(from_file.result(), want)
    assert_same(mano.Accumulator.from_state(str(path)).result(), want)
    state = from_file.state()
    assert state["format"] == "mano-accumulator"
    assert_same(mano.Accumulator.from_state(state).result(), want)
    assert_same(mano.Accumulator.from_state(json.dumps(state)).result(), want)
    assert_same(mano.Accumulator.from_state(json.dumps(state, indent=1)).result(), want)
    assert_same(mano.Accumulator.from_state(json.dumps(state).encode()).result(), want)
    assert_same(mano.Accumulator.from_state(path.read_text()).result(), want)
    # the CLI's state equals the package's for the same rows and options (but for the shard's
    # name, a hash of the sums' bits)
    cli_score(TARGET, "--emit-state", path, "--threads", "1")
    mine = mano.Accumulator(10, from_file.options["methods"]).push(target).state()
    theirs = json.loads(path.read_text())
    assert len(mine.pop("shards")) == len(theirs.pop("shards")) == 1
    assert_same(mine, theirs)


def test_accumulator_shared_by_threads():
    """The core releases the GIL while it pushes and merges: threads that push into (and merge
    into) one accumulator at once must each have their rows counted, once."""
    x = random_logits(50_000, 20, 14)
    methods = "mano,entropy,confscore,nuclear"
    shards = [mano.Accumulator(20, methods).push(x[i::5]) for i in range(5)]
    for _ in range(3):
        acc = mano.Accumulator(20, methods)

        def pusher():
            for _ in range(6):
                acc.push(x)

        def merger():
            for shard in shards:
                acc.merge(shard)

        threads = [threading.Thread(target=pusher), threading.Thread(target=pusher), threading.Thread(target=merger)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            acc.result() if acc.rows else None  # reads while the others write
            acc.state()
        for t in threads:
            t.join()
        assert acc.rows == 13 * len(x)
        assert_same(acc.result(), mano.score(np.concatenate([x] * 13), methods), rel=1e-9, abs_tol=1e-12)


def test_accumulator_copies(target):
    acc = mano.Accumulator(10, LOGIT_METHODS).push(target[:500])
    for other in (acc.copy(), copy.copy(acc), copy.deepcopy(acc), copy.deepcopy([acc])[0]):
        assert other is not acc and other.state() == acc.state()
        other.push(target[500:])
        assert other.rows == 2000 and acc.rows == 500
        assert_same(other.result(), mano.score(target, LOGIT_METHODS))
    assert_same(acc.result(), mano.score(target[:500], LOGIT_METHODS))

"""No reference or memory leaks over 10^4 calls, good or failing."""
import gc
import os
import pickle
import sys
import tracemalloc

import numpy as np
import pytest

import mano

try:
    import resource
except ImportError:  # not on Windows
    resource = None

from api_support import *  # noqa: F401,F403 (the shared constants, helpers and fixtures)


def _rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None


def test_no_reference_or_memory_leaks_over_many_calls():
    x = random_logits(64, 10, 10)
    labels = np.random.default_rng(11).integers(0, 10, 64)
    for _ in range(200):  # warm up caches, interned strings, allocator pools
        mano.score(x, methods="mano", labels=labels, threads=1)
    gc.collect()
    refs_x, refs_labels = sys.getrefcount(x), sys.getrefcount(labels)
    objects = len(gc.get_objects())
    rss = _rss_bytes()
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if resource else 0  # KiB on Linux
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        for _ in range(10_000):
            mano.score(x, methods="mano", labels=labels, threads=1)
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(x) == refs_x and sys.getrefcount(labels) == refs_labels
    assert len(gc.get_objects()) - objects < 100
    assert current - start < 64 * 1024, f"Python memory grew by {current - start} bytes over 10^4 calls"
    assert peak - start < 1024 * 1024
    if resource:
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_rss < 16 * 1024
    if rss is not None:
        assert _rss_bytes() - rss < 16 * 1024 * 1024


def test_no_leaks_over_many_failing_calls():
    bad, nan, short = X.astype(np.int32), with_value(np.nan, 3, 3), Y[:3].copy()
    calls = [lambda: mano.score(bad, methods="mano", threads=1),  # refused before the core runs
             lambda: mano.score(nan, methods="mano", threads=1),  # refused while scanning
             lambda: mano.score(X, methods="mano", labels=short, threads=1)]  # refused reading labels
    for _ in range(100):
        for call in calls:
            with pytest.raises(mano.InputError):
                call()
    gc.collect()
    refs = sys.getrefcount(bad), sys.getrefcount(nan), sys.getrefcount(short)
    objects = len(gc.get_objects())
    rss = _rss_bytes()
    for i in range(10_000):
        try:
            calls[i % 3]()
        except mano.InputError:
            pass
        else:
            raise AssertionError("no InputError")
    gc.collect()
    assert (sys.getrefcount(bad), sys.getrefcount(nan), sys.getrefcount(short)) == refs
    assert len(gc.get_objects()) - objects < 100
    if rss is not None:
        assert _rss_bytes() - rss < 16 * 1024 * 1024


def test_accumulator_does_not_leak():
    x = random_logits(64, 10, 12)
    acc = mano.Accumulator(10, "mano,entropy")
    for _ in range(100):
        mano.Accumulator.from_state(acc.copy().push(x).state()).result()
    gc.collect()
    refs = sys.getrefcount(x)
    objects = len(gc.get_objects())
    rss = _rss_bytes()
    for _ in range(2_000):
        a = acc.copy().push(x)
        b = pickle.loads(pickle.dumps(a))
        b.result()
    gc.collect()
    assert sys.getrefcount(x) == refs
    assert len(gc.get_objects()) - objects < 100
    if rss is not None:
        assert _rss_bytes() - rss < 16 * 1024 * 1024

"""mano.dask on a real dask.distributed LocalCluster of worker processes: the result of a set
scored partition by partition equals single-process mano.score (1e-9), with uneven and empty
partitions, from arrays, .npy shards and a dataframe column; a worker lost mid-job gives the
exact result (its partitions are recomputed, never counted twice) or, when it keeps dying, a
PartitionError and no result."""
import importlib
import json
import os

import numpy as np
import pytest

import mano
import mano.dask

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

TOL = 1e-9


def assert_same(got, want, path="result"):
    """Every number of `want` within TOL (relative, floor 1) in `got`, the same keys."""
    if isinstance(want, dict):
        assert set(got) == set(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]")
    elif isinstance(want, float):
        assert abs(got - want) <= TOL * max(1.0, abs(want)), f"{path}: {got} != {want}"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def logits(n, k, seed, scale=3.0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, k)) * scale
    q[np.arange(n), rng.integers(0, k, n)] += 2.5  # confident rows, as a trained model's
    return q.astype(np.float32), rng.integers(0, k, n)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        assert len(c.scheduler_info()["workers"]) == 2
        yield c


def test_uneven_and_empty_partitions_equal_one_process(client):
    x, y = logits(20000, 10, 1)
    want = mano.score(x, labels=y)
    assert "cot" in want["methods"] and "nuclear" in want["methods"]  # the row-keeping and Gram methods too
    chunks = ((0, 5000, 1, 0, 7000, 7999, 0), (10,))
    got = mano.dask.score(da.from_array(x, chunks=chunks), client=client, labels=y)
    assert_same(got, want)
    # the same with the classes split over chunks (joined before scoring) and a fan-in of 2
    got = mano.dask.score(da.from_array(x, chunks=(3000, 4)), client=client, labels=da.from_array(y, chunks=1000),
                          split_every=2)
    assert_same(got, want)


def test_options_and_methods_travel(client):
    x, _ = logits(9000, 7, 2)
    src, src_y = logits(2000, 7, 3)
    kwargs = dict(p=2.5, eta=4.0, temperature="fit", source=(src, src_y), methods=["mano", "atc_mc", "doc", "cott"])
    want = mano.score(x, **kwargs)
    got = mano.dask.score(da.from_array(x, chunks=2500), client=client, **kwargs)
    assert_same(got, want)
    batch = mano.score(x, methods="mano", batch_size=128)
    got = mano.dask.score(da.from_array(x, chunks=128 * 20), client=client, methods="mano", batch_size=128)
    assert_same(got, batch)


def test_npy_shards(client, tmp_path):
    x, y = logits(12000, 10, 4)
    sizes = [3000, 0, 4500, 4500]
    files, labels, at = [], [], 0
    for i, size in enumerate(sizes):
        f, g = tmp_path / f"part{i}_logits.npy", tmp_path / f"part{i}_labels.npy"
        np.save(f, x[at:at + size])
        np.save(g, y[at:at + size])
        files.append(str(f))
        labels.append(str(g))
        at += size
    want = mano.score(x, labels=y)
    assert_same(mano.dask.score(files, client=client, labels=labels), want)


def test_a_rewritten_file_is_scored_again(client, tmp_path):
    """No result is reused from an earlier call: the path is the same, the content is not."""
    f = tmp_path / "logits.npy"
    for seed in (10, 11):
        x, _ = logits(3000, 6, seed)
        np.save(f, x)
        assert_same(mano.dask.score([str(f)], client=client), mano.score(x))


def test_dataframe_column(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    x, _ = logits(3000, 5, 5)
    frame = pd.DataFrame({"id": np.arange(3000), "logits": list(x.astype(np.float64))})
    ddf = dd.from_pandas(frame, npartitions=4)
    want = mano.score(x.astype(np.float64))
    assert_same(mano.dask.score(ddf, client=client, column="logits"), want)
    wide = dd.from_pandas(pd.DataFrame(x.astype(np.float64), columns=[f"c{i}" for i in range(5)]), npartitions=3)
    assert_same(mano.dask.score(wide, client=client), want)
    # issue 50: the columns' names are read as a CSV header's: ids and a label column are no classes
    named = pd.DataFrame(x.astype(np.float64), columns=[f"c{i}" for i in range(5)]).assign(label=0)
    named.insert(0, "sample_id", np.arange(3000))
    with pytest.warns(UserWarning, match=r"column 1 \('sample_id'\) holds ids") as said:
        assert_same(mano.dask.score(dd.from_pandas(named, npartitions=3), client=client), want)
    assert any("column 7 ('label') holds labels" in str(w.message) for w in said)
    counted = named.rename(columns={"sample_id": "frame"})
    with pytest.raises(mano.InputError, match=r"column 1 \('frame'\) holds an index or ids"):
        mano.dask.score(dd.from_pandas(counted, npartitions=3), client=client)


def test_predict_of_the_whole_set(client):
    cal = mano.calibrate(os.path.join(os.path.dirname(__file__), "..", "data", "example", "manifest.json"))
    x = mano.read(os.path.join(os.path.dirname(__file__), "..", "data", "example", "blend_3_logits.npy"))
    want = mano.predict(cal, x)
    got = mano.dask.predict(cal, da.from_array(x, chunks=(600, -1)), client=client)
    assert_same(got, want)


def test_partitions_of_identical_rows_are_all_counted(client, tmp_path):
    """Constant outputs or duplicated chunks are distinct partitions, as mano.score counts them."""
    x = np.tile(logits(100, 4, 7)[0], (6, 1))
    want = mano.score(x)
    assert_same(mano.dask.score(da.from_array(x, chunks=100), client=client), want)
    zeros = np.zeros((3000, 5), np.float32)
    assert_same(mano.dask.score(da.from_array(zeros, chunks=500), client=client), mano.score(zeros))
    f = tmp_path / "part.npy"
    np.save(f, x[:100])
    assert_same(mano.dask.score([str(f)] * 3, client=client), mano.score(x[:300]))
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    frame = dd.from_pandas(pd.DataFrame(np.tile(x[:50].astype(np.float64), (4, 1))), npartitions=4)
    assert_same(mano.dask.score(frame, client=client), mano.score(np.tile(x[:50].astype(np.float64), (4, 1))))


def test_a_state_merged_twice_is_refused():
    x, _ = logits(500, 4, 6)
    state = mano.dask._state_of_block(x, 4, mano._core.resolve_options(importlib.import_module("mano._scoring")._prepare(), 500, 4, False, False), 0)
    with pytest.raises(mano.InputError, match="already in this accumulator"):
        mano.dask._merge_states(state, state)


def test_bad_input_is_refused_before_any_work(client, tmp_path):
    with pytest.raises(mano.InputError, match="not one mano reads"):
        mano.dask.score(da.zeros((10, 3), dtype=np.int64, chunks=5), client=client)
    with pytest.raises(mano.InputError, match="2-D"):
        mano.dask.score(da.zeros((10, 3, 2), chunks=5), client=client)
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, np.zeros((4, 3), np.float32))
    np.save(b, np.zeros((4, 5), np.float32))
    with pytest.raises(mano.InputError, match="different class counts"):
        mano.dask.score([str(a), str(b)], client=client)
    with pytest.raises(mano.InputError, match="no such file|cannot open|not exist"):
        mano.dask.score([str(tmp_path / "missing.npy")], client=client)
    with pytest.raises(mano.InputError, match="split_every"):
        mano.dask.score(da.zeros((10, 3), chunks=5), client=client, split_every=1)
    bad = np.zeros((100, 3), np.float32)
    bad[77, 1] = np.nan
    with pytest.raises(mano.InputError, match="row 77"):  # the row within the whole array, not the partition
        mano.dask.score(da.from_array(bad, chunks=30), client=client, methods="mano")


def _worker_killer(marker):
    """A block function that kills its worker process the first time any worker runs it (the
    marker file says it happened), or every time when marker is None."""
    def kill(block):
        if marker is None or not os.path.exists(marker):
            if marker is not None:
                open(marker, "w").close()
            os._exit(1)
        return block
    return kill


@pytest.fixture
def fragile_client():
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                     silence_logs=50) as cluster, distributed.Client(cluster) as c:
        yield c


def test_a_worker_lost_mid_job_still_gives_the_exact_result(fragile_client, tmp_path):
    x, y = logits(16000, 10, 7)
    want = mano.score(x, labels=y)
    d = da.from_array(x, chunks=2000)
    kill_once = _worker_killer(str(tmp_path / "killed"))
    # the third partition's task kills its worker the first time: Dask reruns it on a new worker
    d = da.map_blocks(lambda b, block_info=None: kill_once(b) if block_info[0]["chunk-location"][0] == 2 else b,
                      d, dtype=d.dtype)
    got = mano.dask.score(d, client=fragile_client, labels=y)
    assert os.path.exists(tmp_path / "killed")
    assert_same(got, want)


def test_a_partition_that_keeps_killing_workers_gives_no_result(fragile_client):
    x, _ = logits(4000, 5, 8)
    kill_always = _worker_killer(None)
    d = da.map_blocks(lambda b, block_info=None: kill_always(b) if block_info[0]["chunk-location"][0] == 1 else b,
                      da.from_array(x, chunks=1000), dtype=np.float32)
    with pytest.raises(mano.dask.PartitionError, match="died"):
        mano.dask.score(d, client=fragile_client, methods="mano")


def test_binary_model_equals_one_process(client):
    """K = 2, as one column (input='binary-logit') and as two: softrun on the softmax branch,
    every partition's state merged to the one-process result."""
    rng = np.random.default_rng(52)
    y = rng.integers(0, 2, 6000)
    z = ((2 * y - 1) * rng.gamma(2, 1.5, 6000) + rng.normal(0, 1.5, 6000)).astype(np.float32)
    methods = ["mano", "confscore", "entropy", "nuclear", "mde", "cot", "confscore_softrun", "nuclear_softrun"]
    for x, kind in ((z[:, None], "binary-logit"), (np.stack([np.zeros_like(z), z], 1), None)):
        want = mano.score(x, methods, labels=y, input=kind)
        assert want["methods"]["mano"]["normalization"] == "softmax"
        chunks = ((1500, 0, 2500, 2000), (x.shape[1],))
        got = mano.dask.score(da.from_array(x, chunks=chunks), methods, client=client, labels=y, input=kind)
        assert_same(got, want)

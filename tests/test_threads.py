"""Member threads: a batch whose members advance on k threads at once is
bit-identical to the serial loop for any k, batch composition and chunking (engine.Batch.run);
a sweep on one worker with 2 threads writes the same store as on 2 single-threaded workers;
bad thread counts are refused in one line."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec import dtypes as D
from extoll_vec.config import from_dict
from extoll_vec.engine import Batch
from extoll_vec.errors import ConfigError, SimulationError

BASE = {"topology": {"kind": "mesh", "dims": [2, 2]}, "mpi": {"ranks_per_node": 4},
        "workload": {"kind": "alltoall", "ranks": 16, "message_bytes": 512}}


def mixed(chunk: int | None = None, deadlock: bool = True):
    """Members of one batch: four protocols, a member that ends early (one small message per
    pair), and one that deadlocks (backpressure with 16 mailbox slots: ERR_DEADLOCK)."""
    c = from_dict(BASE)
    cfgs = [c,
            c.replace(**{"protocol.name": "window", "protocol.mailbox_slots": 128, "seed": 3}),
            c.replace(**{"protocol.name": "dynamic", "protocol.credit_slots": 2,
                         "protocol.mailbox_slots": 256, "workload.message_bytes": 2048}),
            c.replace(**{"workload.message_bytes": 8, "network.link_latency": 7}),   # early end
            c.replace(**{"protocol.name": "static", "protocol.mailbox_slots": 512,
                         "workload.iterations": 3})]
    if deadlock:
        cfgs.insert(2, c.replace(**{"protocol.name": "backpressure", "protocol.mailbox_slots": 16,
                                    "workload.message_bytes": 2048}))
    if chunk is not None:
        cfgs = [x.replace(**{"limits.chunk_cycles": chunk}) for x in cfgs]
    return cfgs


def run_state(cfgs, threads: int, profile: bool = False):
    """Every State array after Batch.run(threads=...), with the error it raised (or None)."""
    batch = Batch(cfgs)
    prof = np.zeros((len(cfgs), D.N_PROF, 2), np.int64) if profile else None
    err = None
    try:
        batch.run(threads=threads, profile=prof)
    except SimulationError as exc:
        err = (str(exc), exc.flags, exc.point)
    arrays = {}
    for name in batch.S._fields:
        a = getattr(batch.S, name)
        # the packet record's padding bytes are np.full's uninitialised memory, unequal from
        # run to run whatever the threads: compare its fields
        for f in a.dtype.names or (None,):
            arrays[name if f is None else f"{name}.{f}"] = (a if f is None else a[f]).tobytes()
    return arrays, err, prof


@pytest.mark.parametrize("chunk", [None, 997])
def test_threads_give_the_serial_state_bit_for_bit(chunk):
    cfgs = mixed(chunk)
    serial, err, _ = run_state(cfgs, 1)
    assert err is not None and err[2] == 2 and "deadlock" in err[0]   # the deadlocking member
    for k in (2, 3):
        arrays, err_k, _ = run_state(cfgs, k)
        assert err_k == err, k
        bad = [name for name in serial if arrays[name] != serial[name]]
        assert not bad, (k, bad)


def test_threads_and_chunking_give_the_same_results():
    """Without the failing member the batch completes: its results equal for 1 thread in one
    chunk and 2 or 3 threads in chunks of 1,234 cycles (members finish in different chunks)."""
    ref = Batch(mixed(deadlock=False))
    ref.run()
    want = ref.results()
    for k in (2, 3):
        b = Batch(mixed(1234, deadlock=False))
        b.run(threads=k)
        assert (b.S.finished == 1).all()
        got = b.results()
        for name, v in want.items():
            np.testing.assert_array_equal(got[name], v, err_msg=f"{name}, {k} threads")


def test_profile_mode_works_on_threads():
    cfgs = mixed(deadlock=False)
    serial, _, prof1 = run_state(cfgs, 1, profile=True)
    threaded, _, prof2 = run_state(cfgs, 2, profile=True)
    assert threaded == serial
    np.testing.assert_array_equal(prof2[:, :, 0], prof1[:, :, 0])   # events per kind
    np.testing.assert_array_equal(prof1[:, :, 0].sum(1), np.frombuffer(serial["events"],
                                                                        np.int64))


@pytest.mark.parametrize("bad", [0, -1, 1025, 2.0, True, "2"])
def test_a_bad_thread_count_is_refused(bad):
    b = Batch(mixed(deadlock=False)[:1])
    with pytest.raises(ConfigError, match=r"^threads: got .*; allowed: an integer 1\.\.1024 "
                                          r"threads$"):
        b.run(threads=bad)


def test_threads_per_worker_is_checked_in_the_cluster_file_and_the_flag(tmp_path):
    from extoll_vec.cli import main
    from extoll_vec.errors import SpecError
    from extoll_vec.sweep.cluster import load_cluster_spec
    f = tmp_path / "c.yaml"
    f.write_text("cluster:\n  kind: local\n  local: {n_workers: 1, threads_per_worker: 0}\n")
    with pytest.raises(SpecError, match="cluster.local.threads_per_worker: got 0; allowed: an "
                                        "integer 1..1024 threads"):
        load_cluster_spec(str(f))
    f.write_text("cluster:\n  kind: ssh\n  ssh: {hosts: [a, b], worker_options: {nthreads: x}}\n")
    with pytest.raises(SpecError, match="cluster.ssh.worker_options.nthreads: got 'x'"):
        load_cluster_spec(str(f))
    assert load_cluster_spec(threads=4).threads_per_worker == 4
    with pytest.raises(ConfigError, match="--threads-per-worker: got 0"):
        load_cluster_spec(threads=0)
    f.write_text("cluster:\n  kind: address\n  address: tcp://h:8786\n")
    with pytest.raises(ConfigError, match="--threads-per-worker: applies to a local cluster"):
        load_cluster_spec(str(f), threads=2)
    assert main(["sweep", "nonexistent.yaml", "--threads-per-worker", "0", "--dry-run"]) == 2


def test_plan_gives_each_threaded_worker_batches_of_at_least_its_threads():
    from extoll_vec.sweep.plan import plan_batches
    cfgs = mixed(deadlock=False)[:2]
    assert [b.points for b in plan_batches(cfgs, [0, 1], 2)] in ([(0,), (1,)], [(1,), (0,)])
    assert [b.points for b in plan_batches(cfgs, [0, 1], 1, threads=2)] == [(0, 1)]


# ---- a real cluster ----------------------------------------------------------------------------
def _last_threads() -> int:
    from extoll_vec.sweep import tasks
    return tasks.last_threads


@pytest.mark.slow
def test_one_worker_with_2_threads_writes_the_store_of_2_single_threaded_workers(tmp_path):
    from extoll_vec.sweep import build_sweep
    from extoll_vec.sweep.cluster import connect, load_cluster_spec
    from extoll_vec.sweep.runner import run_sweep
    from test_sweep_dask import assert_same_store
    spec = {"name": "threads", "base": {"example": "tiny", "protocol": {"mailbox_slots": 512}},
            "axes": {"protocol.name": ["backpressure", "window"]}}
    sw = build_sweep(spec)
    one, two = tmp_path / "one.zarr", tmp_path / "two.zarr"
    cluster = load_cluster_spec(workers=1, threads=2)
    with connect(cluster, quiet=True) as client:
        info = list(client.scheduler_info()["workers"].values())
        assert [(w["nthreads"], w["resources"]) for w in info] == [(2, {"batch": 1})]
        res = run_sweep(sw, one, client, quiet=True, workers=1, threads=2)
        assert (res.computed, res.batches) == (2, 1)              # one 2-member batch
        assert list(client.run(_last_threads).values()) == [2]     # ... on 2 threads
    with connect(load_cluster_spec(workers=2), quiet=True) as client:
        client.wait_for_workers(2)
        res = run_sweep(sw, two, client, quiet=True, workers=2, threads=1)
        assert (res.computed, res.batches) == (2, 2)
        assert set(client.run(_last_threads).values()) == {1}
    assert_same_store(one, two)

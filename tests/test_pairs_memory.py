"""The compact pair table (engine/pairs.py, kernels/pairs.py) and the memory refusal before
anything is allocated (engine/sizing.check_memory)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from extoll_vec import dtypes as D
from extoll_vec.config import from_dict
from extoll_vec.engine import Batch
from extoll_vec.errors import SimulationError
from extoll_vec.engine.pairs import pair_table
from extoll_vec.protocols.audit import lookup, pairs_of
from extoll_vec.workloads import ProgramBuilder, build_program

BIG = """topology: {kind: mesh, dims: [16, 16, 16]}
mpi: {ranks_per_node: 16}
protocol: {name: static, mailbox_slots: 262144, credit_slots: 2}
workload: {kind: alltoall, groups: 4, ranks: 65536}
"""


def _cli(*args, env=None):
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "extoll_vec.cli", *args], capture_output=True,
                       text=True, env=env, timeout=120)
    return p, time.perf_counter() - t0


def test_65536_ranks_are_refused_before_allocation_in_one_line(tmp_path):
    cfg = tmp_path / "big.yaml"
    cfg.write_text(BIG)
    spec = tmp_path / "big_sweep.yaml"
    spec.write_text("name: big\nbase:\n" + "".join(f"  {ln}\n" for ln in BIG.splitlines())
                    + "axes:\n  seed: [1]\n")
    env = dict(os.environ, EXTOLL_VEC_MEMORY_LIMIT="4GiB")
    for args in (["run", str(cfg)], ["sweep", str(spec), "--dry-run"],
                 ["sweep", str(spec), "-o", str(tmp_path / "o.zarr")]):
        p, secs = _cli(*args, env=env)
        assert p.returncode == 2, p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
        assert "the run would need at least" in lines[0] and "4 GiB" in lines[0], lines[0]
        assert secs < 60


def test_barrier_pairs_are_sparse_and_alltoall_rows_dense():
    cfg = from_dict({"topology": {"kind": "mesh", "dims": [2, 2]}, "mpi": {"ranks_per_node": 16},
                     "protocol": {"name": "static", "mailbox_slots": 256},
                     "workload": {"kind": "imb", "benchmark": "Barrier", "ranks": 64}})
    ptr, peer, real = pair_table(cfg, build_program(cfg))
    assert (real == np.diff(ptr)).all()               # no spares: static keeps no idle senders
    assert ptr[-1] < 64 * 63 // 2                     # far fewer than ranks**2
    for x in range(64):                               # rows ascending, symmetric
        row = peer[ptr[x]:ptr[x + 1]]
        assert (np.diff(row) > 0).all()
        for y in row:
            assert x in peer[ptr[y]:ptr[y + 1]]
    a2a = cfg.replace(**{"workload.kind": "alltoall"})
    ptr, peer, _ = pair_table(a2a, build_program(a2a))
    assert (np.diff(ptr) == 64).all() and (peer[:64] == np.arange(64)).all()
    dyn = cfg.replace(**{"protocol.name": "dynamic", "protocol.mailbox_slots": 1024})
    ptr, peer, real = pair_table(dyn, build_program(dyn), packets_in=np.full(64, 3))
    assert (np.diff(ptr) - real == np.minimum(63 - (real - 0), 2 * 3 // 3 + 2)).all()
    assert (peer[ptr[1] - 1] == -1) and ptr[-1] < 64 * 64    # spares for the idle senders
    ptr, _, _ = pair_table(dyn, build_program(dyn), snapshots=1)
    assert ptr[-1] == 64 * 64                         # snapshots: dense


def test_a_missing_pair_is_an_error_not_another_pairs_state():
    cfg = from_dict({"topology": {"kind": "mesh", "dims": [4]}, "mpi": {"ranks_per_node": 1},
                     "protocol": {"name": "static", "mailbox_slots": 64},
                     "workload": {"kind": "program", "ranks": 4}})
    pb = ProgramBuilder(4)
    pb.send(0, 1, 64).recv(1, 0, 64).send(2, 3, 64).recv(3, 2, 64)
    b = Batch([cfg], [pb.build("two pairs")])
    x, y = pairs_of(b.S, 0)
    assert sorted(zip(x.tolist(), y.tolist())) == [(0, 1), (1, 0), (2, 3), (3, 2)]
    assert lookup(b.S, 0, np.array([0]), np.array([2]))[0] == -1
    # rank 0's pair with 2 is not in the table: remove (0, 1) from row 0, so the send fails
    b.S.pair_peer[0, 0] = 3
    with pytest.raises(SimulationError, match="pair of ranks missing from the pair table"):
        b.run()
    assert b.S.status[0] & D.ERR_PAIR


def _dyn_two_groups(slots, credit_slots):
    """The golden `extoll` set's 2-group alltoall: half the senders of every receiver idle, and
    the dynamic protocol steals from them (engine/pairs.py: idle senders)."""
    return from_dict({"topology": {"kind": "mesh", "dims": [2, 2]}, "mpi": {"ranks_per_node": 4},
                      "protocol": {"name": "dynamic", "mailbox_slots": slots * 16,
                                   "credit_slots": credit_slots},
                      "workload": {"kind": "alltoall", "ranks": 16, "groups": 2,
                                   "message_bytes": 2030, "iterations": 2}})


def _same(a, b):
    for name in a:
        assert np.array_equal(a[name], b[name], equal_nan=True), name


def test_idle_senders_without_entries_give_the_dense_tables_results():
    for slots, cs in ((4, 1), (12, 2), (40, 2)):
        cfg = _dyn_two_groups(slots, cs)
        compact, dense = Batch([cfg]), Batch([cfg], exact=True)
        assert compact.S.pair_ptr[0, -1] < 16 * 16 == dense.S.pair_ptr[0, -1]
        # the dense table is found by arithmetic alone, the compact one by its rows
        assert dense.S.pair_dense[0] == 1 and compact.S.pair_dense[0] == 0
        compact.run()
        dense.run()
        assert not compact.exact                      # no rerun: the spares sufficed
        taken = (compact.S.pair_peer[0] >= 0).sum() - compact.S.pair_real[0].sum()
        if slots == 12:
            assert taken > 0                          # idle senders were stolen from
        _same(compact.results(), dense.results())


def test_a_table_that_runs_out_reruns_at_full_size(monkeypatch):
    from extoll_vec.engine import batch as batch_mod
    cfg = _dyn_two_groups(12, 2)
    want = Batch([cfg])
    want.run()
    monkeypatch.setattr(batch_mod, "ring_slots", lambda packets_in: 1)   # a ring of one slot
    b = Batch([cfg])
    assert b.S.mb_q.shape[2] == 1
    b.run()
    assert b.exact and b.S.mb_q.shape[2] == 12 * 16
    _same(b.results(), want.results())

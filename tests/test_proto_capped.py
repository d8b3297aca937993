"""The seams' test protocol `capped` (extoll_vec/protocols/capped/__init__.py, kernels/capped/hooks.py):
written against the hooks only; real runs, its audit, its outputs, a negative control."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec import dtypes as D
from extoll_vec import kernels
from extoll_vec.config import ADDED_FIELDS, from_dict
from extoll_vec.dataset import SCHEMA, schema_for
from extoll_vec.engine import Batch, check_invariants, simulate
from extoll_vec.errors import ConfigError, SimulationError
from extoll_vec.protocols import capped, registry


def cfg(**proto):
    return from_dict({"topology": {"kind": "mesh", "dims": [4, 4]},
                      "workload": {"kind": "uniform", "injection_rate": proto.pop("rate", 0.4),
                                   "warmup_cycles": 500, "measure_cycles": 3000,
                                   "drain_cycles": 1000},
                      "protocol": {"name": "capped", **proto}})


def test_runs_with_its_audit_and_outputs():
    b = Batch([cfg(cap=4, cap_every=3, period=300)])
    b.run()                       # check_invariants runs the protocol's audit
    S = b.S
    caps = S.npar[0, :, 0]
    assert list(caps) == [2 if n % 3 == 0 else 4 for n in range(16)]   # per-node parameters
    assert not capped.audit(b, 0)
    assert (capped.conservation(S, 0) == caps).all()
    # every node's timer ran every period until the end of the run (4500 cycles)
    assert (S.fcn[0, :, capped.CN_TICKS] == 4500 // 300 - (4500 % 300 == 0)).all()
    assert (S.fcn[0, :, capped.CN_SENT] > 0).all()
    res = b.results()
    assert res["capped_marks_received"].shape == (1, 16)


def test_a_cap_of_one_lowers_throughput():
    ds = simulate([cfg(cap=1), cfg(cap=64), from_dict({
        "topology": {"kind": "mesh", "dims": [4, 4]},
        "workload": {"kind": "uniform", "injection_rate": 0.4, "warmup_cycles": 500,
                     "measure_cycles": 3000, "drain_cycles": 1000}})])
    acc = ds.accepted_flits_per_node_cycle.values
    assert acc[0] < 0.5 * acc[1]
    # a cap larger than the network holds changes little against no protocol at all
    assert abs(acc[1] - acc[2]) < 0.1 * acc[2]
    assert "capped_marks_received" in ds and np.all(ds.capped_marks_received.values[2] == -1)


def test_marks_appear_only_above_the_threshold():
    ds = simulate([cfg(cap=64, mark_queue=0), cfg(cap=64, mark_queue=10**6),
                   cfg(cap=64, mark_queue=0, rate=0.01)])
    marks = ds.capped_marks_received.values.sum(axis=1)
    assert marks[0] > 0 and marks[1] == 0
    assert marks[2] < marks[0] / 10   # light load: queues rarely hold a second packet


def test_alone_or_in_a_batch_with_another_protocol():
    a, other = cfg(cap=3, cap_every=2), from_dict({
        "topology": {"kind": "mesh", "dims": [4, 4]},
        "workload": {"kind": "uniform", "injection_rate": 0.2, "warmup_cycles": 500,
                     "measure_cycles": 3000, "drain_cycles": 1000}})
    alone = simulate([a])
    both = simulate([other, a], max_batch=8)
    for v in ("accepted_flits_per_node_cycle", "packet_latency_cycles_mean",
              "events_processed", "capped_marks_received", "capped_timer_ticks"):
        np.testing.assert_array_equal(alone[v].values[0], both[v].values[1])


def test_negative_control_a_lost_credit_breaks_the_audit():
    b = Batch([cfg(cap=4)])
    b.run()
    b.S.fcn[0, 5, capped.CN_CREDITS] -= 1    # a credit lost, as a broken kernel would
    assert any("node 5" in p for p in capped.audit(b, 0))
    with pytest.raises(SimulationError, match="capped: node 5"):
        check_invariants(b, 0)


def test_registered_through_the_seams_only():
    rec = registry.protocol("capped")
    assert registry.hook_mask(rec) == D.H_NIC_INJECT | D.H_NIC_EJECT | D.H_ROUTER | D.H_TIMER
    assert {"protocols/capped/__init__.py", "kernels/capped/hooks.py"} <= {
        "/".join(p.parts[-3:]) for p in kernels._SOURCES}
    assert "proto == 5:" in registry.dispatch_source()
    # its config fields: declared with bounds, added later (old stores stay readable)
    assert "protocol.cap" in ADDED_FIELDS
    with pytest.raises(ConfigError, match="protocol.cap: got 0; allowed: an integer 1"):
        from_dict({"protocol": {"name": "capped", "cap": 0}, "workload": {"kind": "uniform"}})
    with pytest.raises(ConfigError, match="capped only for network-only traffic"):
        from_dict({"protocol": {"name": "capped"}})
    assert set(schema_for([cfg()])) == set(SCHEMA) | set(rec.outputs)

"""The topology plug-in ring (topology/ring.py): p nodes on each of n routers in a cycle, the
shorter way round, a dateline on 2 VCs. Its checks, sizes, routes, channel dependency graph,
and runs of network-only and MPI traffic."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec.config import TopologyConfig, from_dict
from extoll_vec.engine import run_batch, simulate
from extoll_vec.engine.sizing import topology_shape
from extoll_vec.errors import ConfigError
from extoll_vec.routing.deadlock import channel_cycle
from extoll_vec.topology import build, router_hops


@pytest.mark.parametrize("dims,field", [([2], "topology.dims"), ([4, 4], "topology.dims"),
                                         ([5], None)])
def test_one_radix_of_at_least_three_routers(dims, field):
    d = {"topology": {"kind": "ring", "dims": dims, "p": 2}, "workload": {"kind": "uniform"}}
    if field is None:
        assert from_dict(d).topology.n_nodes == 10
        return
    with pytest.raises(ConfigError) as exc:
        from_dict(d)
    assert exc.value.field == field


@pytest.mark.parametrize("n,p", [(3, 1), (6, 2), (7, 3)])
def test_routes_take_the_shorter_way_and_the_dateline_is_acyclic(n, p):
    cfg = TopologyConfig(kind="ring", dims=(n,), p=p)
    topo = build(cfg)
    assert topology_shape(cfg) == (topo.n_routers, topo.n_ports, topo.n_nodes) == (n, p + 2, n * p)
    for s in range(topo.n_nodes):
        for d in range(topo.n_nodes):
            fwd = (d // p - s // p) % n
            assert router_hops(topo, s, d) == min(fwd, n - fwd)
    assert channel_cycle(topo, "table", False) is None
    if n >= 4:   # routes of two hops or more: on one VC the ring closes
        assert channel_cycle(topo, "table", True) is not None


def _ring(**over):
    d = {"topology": {"kind": "ring", "dims": [6], "p": 2}, "network": {"vcs": 2}}
    d.update(over)
    return from_dict(d)


def test_permutations_at_full_load_do_not_deadlock_and_conserve():
    cfgs = [_ring(seed=s, workload={"kind": "permutation", "injection_rate": 1.0,
                                    "packet_flits": 4, "warmup_cycles": 300,
                                    "measure_cycles": 2000, "drain_cycles": 0},
                  limits={"no_progress_us": 10.0}) for s in range(4)]
    res = run_batch(cfgs)           # invariants are checked after every run
    assert np.all(res["accepted_flits_per_node_cycle"] > 0.05)


def test_an_mpi_alltoall_under_static_credits_runs_on_a_ring():
    ds = simulate([_ring(mpi={"ranks_per_node": 2},
                        workload={"kind": "alltoall", "ranks": 24, "message_bytes": 2048},
                        protocol={"name": "static", "mailbox_slots": 24 * 8})])
    assert float(ds["exec_time_us"][0]) > 0

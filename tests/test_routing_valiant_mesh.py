"""The routing plug-in valiant_mesh (routing/valiant_mesh.py, kernels/routing_valiant_mesh.py):
Valiant's random intermediate node on a mesh, phase one on VC 0 and phase two on VC 1. Its
configuration checks, its channel dependency graph, the routes the kernel takes, and runs."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec.config import from_dict
from extoll_vec.engine import Batch, run_batch
from extoll_vec.errors import ConfigError
from extoll_vec.kernels.routing import trace_route
from extoll_vec.routing.deadlock import channel_cycle
from extoll_vec.topology import build, router_hops

MESH = {"kind": "mesh", "dims": [4, 4]}


def synth(routing="valiant_mesh", kind="uniform", rate=1.0, vcs=2, **work):
    return from_dict({"topology": dict(MESH), "network": {"routing": routing, "vcs": vcs},
                      "workload": {"kind": kind, "injection_rate": rate, "packet_flits": 4,
                                   "warmup_cycles": 500, "measure_cycles": 2000,
                                   "drain_cycles": 0, **work}})


@pytest.mark.parametrize("over,field,text", [
    ({"topology": {"kind": "torus", "dims": [4, 4]}}, "network.routing", "routes mesh"),
    ({"topology": {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}}, "network.routing",
     "a routing of a dragonfly"),
    ({"network": {"vcs": 1}}, "network.vcs", ">= 2"),
    ({"workload": {"kind": "alltoall", "ranks": 16}, "mpi": {"ranks_per_node": 1}},
     "network.routing", "MPI workloads"),
    ({"topology": {"kind": "mesh", "dims": [2]}}, "network.routing", "fewer than 3 nodes"),
])
def test_configurations_it_cannot_route_are_refused(over, field, text):
    d = {"topology": dict(MESH), "network": {"routing": "valiant_mesh", "vcs": 2},
         "workload": {"kind": "uniform"}}
    for k, v in over.items():
        d[k] = {**d.get(k, {}), **v} if k != "topology" else v
    with pytest.raises(ConfigError, match=text) as exc:
        from_dict(d)
    assert exc.value.field == field


@pytest.mark.parametrize("dims", [(4, 4), (5, 3), (3, 3, 3)])
def test_two_phases_on_two_vcs_are_acyclic_and_one_vc_is_not(dims):
    t = build(synth().topology.__class__(kind="mesh", dims=dims))
    assert channel_cycle(t, "valiant_mesh", False) is None
    assert channel_cycle(t, "valiant_mesh", True) is not None   # both phases on VC 0


def test_routes_go_through_an_intermediate_node_then_to_the_destination():
    batch = Batch([synth()])
    topo, S = batch.topology, batch.S
    seen = set()
    for src in range(topo.n_nodes):
        for dst in range(topo.n_nodes):
            if dst == src:
                continue
            S.pk["dnode"][0, 0] = dst
            out = np.zeros((64, 4), np.int64)
            n = trace_route(S, batch.T, batch.par, 0, 0, src, out)
            path = out[:n]
            r, _, po, vo = path[-1]
            assert n > 0 and topo.terminal_node[r, po] == dst and vo == 0
            vcs = [int(v) for v in path[:-1, 3]]
            assert vcs == sorted(vcs) and set(vcs) <= {0, 1}, vcs   # VC 0, then VC 1
            k = vcs.count(0)              # hops of phase one: dimension order to the middle
            mid = int(path[k, 0])         # the router where phase two starts
            im = int(topo.terminal_node[mid, 0]) if topo.terminal_node[mid, 0] >= 0 else -1
            assert im not in (-1, src, dst)
            assert k == router_hops(topo, src, im) and n - 1 - k == router_hops(topo, im, dst)
            seen.add(im)
    assert len(seen) == topo.n_nodes     # every node serves as an intermediate somewhere


def test_runs_conserve_packets_and_take_about_twice_the_hops():
    """Light uniform load: Valiant's paths are a source-to-random plus a random-to-destination
    walk, about twice the minimal ones, and the latency grows with them; the offered traffic
    is the same packets (the routing draws from a stream of its own)."""
    res = run_batch([synth("table", rate=0.05, vcs=2), synth(rate=0.05)])
    off = res["offered_flits_per_node_cycle"]
    assert off[0] == off[1]
    lat = res["packet_latency_cycles_mean"]
    assert 1.3 * lat[0] < lat[1] < 3.0 * lat[0]


@pytest.mark.slow
def test_no_deadlock_in_random_permutations_at_full_load():
    cfgs = [from_dict({**synth(kind="permutation").to_dict(), "seed": s,
                       "limits": {"no_progress_us": 10.0}}) for s in range(6)]
    res = run_batch(cfgs)        # raises SimulationError on a deadlock
    assert np.all(res["accepted_flits_per_node_cycle"] > 0.05)

"""Routing functions (routing/, kernels/routing.py), link-class latencies, the channel
dependency check (routing/deadlock.py) and the runtime deadlock report, on small dragonflies."""
from __future__ import annotations

import numpy as np
import pytest

from extoll_vec import dtypes as D
from extoll_vec.config import TopologyConfig, from_dict
from extoll_vec.engine import Batch, run_batch
from extoll_vec.errors import ConfigError, SimulationError
from extoll_vec.kernels.routing import trace_route
from extoll_vec.topology import build, node_pair_at_hops, route_path
from extoll_vec.routing.deadlock import channel_cycle
from extoll_vec.routing.dragonfly import hop_vcs
from extoll_vec.workloads import ProgramBuilder

DF = {"kind": "dragonfly", "p": 2, "a": 4, "h": 2}          # 9 groups, 36 routers, 72 nodes
TABLE_TOPOLOGIES = [dict(kind="mesh", dims=(4, 4, 4)), dict(kind="mesh", dims=(5, 3)),
                    dict(kind="torus", dims=(4, 4)), dict(kind="torus", dims=(5, 3, 3)),
                    dict(kind="crossbar", p=6), dict(kind="hypercube", p=2, cube_dim=4),
                    dict(DF), dict(kind="dragonfly", p=1, a=2, h=1, groups=3),
                    dict(kind="dragonfly", p=3, a=3, h=2, groups=4)]


def synth(routing="table", kind="uniform", topo=DF, vcs=4, **over):
    # 40-flit buffers, not the EXTOLL default of 20: the adaptive routings compare queues
    # against a 30-flit threshold (Schneider et al.), which needs room to build queues beyond it
    d = {"topology": dict(topo), "network": {"routing": routing, "vcs": vcs, "buffer_flits": 40},
         "workload": {"kind": kind, "injection_rate": 1.0, "packet_flits": 4,
                      "warmup_cycles": 500, "measure_cycles": 1500, "drain_cycles": 0}}
    for key, v in over.items():
        if key == "seed":
            d["seed"] = v
            continue
        sec, name = key.split("__")
        d.setdefault(sec, {})[name] = v
    return from_dict(d)


# ---- configuration ---------------------------------------------------------------------------
@pytest.mark.parametrize("over,field", [
    ({"topology": {"kind": "mesh", "p": 1}, "network": {"routing": "valiant", "vcs": 4}},
     "network.routing"),
    ({"network": {"routing": "par", "vcs": 3}}, "network.vcs"),
    ({"network": {"routing": "ugal", "vcs": 2}}, "network.vcs"),
    ({"network": {"routing": "valiant", "vcs": 3},
      "workload": {"kind": "alltoall", "ranks": 72}, "mpi": {"ranks_per_node": 1}},
     "network.routing"),
    ({"topology": {**DF, "groups": 2}, "network": {"routing": "ugal", "vcs": 3}},
     "network.routing"),
    ({"network": {"routing": "minimal"}}, "network.routing"),
    ({"network": {"adaptive_bias": -1.0}}, "network.adaptive_bias"),
    ({"network": {"vc_assignment": "none"}}, "network.vc_assignment"),
    ({"topology": {**DF, "global_latency": 0}}, "topology.global_latency"),
    ({"workload": {"kind": "shift", "shift": 72}}, "workload.shift"),
])
def test_config_errors_name_the_field(over, field):
    d = {"topology": dict(DF), "workload": {"kind": "uniform"}}
    for k, v in over.items():
        d[k] = {**d.get(k, {}), **v}
    with pytest.raises(ConfigError) as exc:
        from_dict(d)
    assert exc.value.field == field


def test_vcs_needed_by_each_routing_are_accepted():
    for routing, vcs in (("valiant", 3), ("ugal", 3), ("par", 4)):
        assert synth(routing, vcs=vcs).network.routing_vcs == vcs


# ---- channel dependency graph ------------------------------------------------------------------
@pytest.mark.parametrize("topo", TABLE_TOPOLOGIES, ids=lambda t: t["kind"] + str(len(str(t))))
def test_table_routing_of_every_topology_is_acyclic(topo):
    assert channel_cycle(build(TopologyConfig(**topo)), "table", False) is None


@pytest.mark.parametrize("routing", ["valiant", "ugal", "par"])
def test_adaptive_vc_assignments_are_acyclic_and_flat_is_not(routing):
    t = build(TopologyConfig(**DF))
    assert channel_cycle(t, routing, False) is None
    assert channel_cycle(t, routing, True) is not None


def test_flat_dragonfly_is_refused_naming_a_cycle():
    cfg = synth(network__vc_assignment="flat", vcs=1)
    with pytest.raises(ConfigError) as exc:
        Batch([cfg])
    assert exc.value.field == "network.vc_assignment"
    msg = str(exc.value)
    assert "cycle router" in msg and " VC 0 -> router " in msg and "deadlock_check" in msg
    flat_torus = from_dict({"topology": {"kind": "torus", "dims": [4, 4]},
                            "network": {"vc_assignment": "flat"},
                            "workload": {"kind": "uniform"}})
    with pytest.raises(ConfigError, match="network.vc_assignment"):
        Batch([flat_torus])


# ---- routes taken by the kernels ---------------------------------------------------------------
def trace(batch, src, dst):
    S, h = batch.S, 0
    S.pk["dnode"][0, h] = dst
    out = np.zeros((16, 4), np.int64)
    n = trace_route(S, batch.T, batch.par, 0, h, src, out)
    assert n > 0, f"route {src}->{dst} does not terminate"
    return out[:n]


def classes_of(topo, path):
    return tuple("g" if topo.port_class[r, po] == D.PORT_GLOBAL else "l"
                 for r, _, po, _ in path[:-1])


@pytest.mark.parametrize("routing", ["valiant", "ugal", "par"])
def test_routes_reach_the_destination_with_the_documented_vcs(routing):
    batch = Batch([synth(routing)])
    topo = batch.topology
    gsize = DF["p"] * DF["a"]
    for src in range(0, topo.n_nodes, 5):
        for dst in range(topo.n_nodes):
            if dst == src:
                continue
            path = trace(batch, src, dst)
            r, _, po, vo = path[-1]
            assert topo.terminal_node[r, po] == dst and vo == 0
            shape = classes_of(topo, path)
            vcs = [v for _, v in hop_vcs(routing, shape, False)]
            assert [int(x) for x in path[:-1, 3]] == vcs, (src, dst, shape)
            same = src // gsize == dst // gsize
            if routing == "valiant" and not same:
                assert shape.count("g") == 2    # via a random intermediate group
            else:                               # idle network: UGAL and PAR route minimally
                assert shape == classes_of(topo, route_path(topo, src, dst)) or same


def test_ugal_and_par_divert_when_the_minimal_output_is_full():
    """Credits of the minimal output taken away: UGAL diverts at the source router; PAR, whose
    first hop is local, diverts at the second router when only the global output is full."""
    for routing in ("ugal", "par"):
        batch = Batch([synth(routing)])
        topo, S = batch.topology, batch.S
        src = 0
        # a destination whose minimal route starts with a local hop, then the global one
        dst = next(d for d in range(8, topo.n_nodes)
                   if classes_of(topo, route_path(topo, src, d))[:2] == ("l", "g"))
        minimal = route_path(topo, src, dst)
        r1, _, pg, _ = minimal[1]
        S.cr[0, r1, pg, :] = 0                  # the gateway's global output looks full
        path = trace(batch, src, dst)
        shape = classes_of(topo, path)
        vcs = [int(x) for x in path[:-1, 3]]
        assert vcs == [v for _, v in hop_vcs(routing, shape, False)]
        if routing == "par":                   # minimal first hop, then diverted
            assert shape.count("g") == 2 and path[1, 0] == r1
        else:                                  # UGAL-L saw nothing at the source: minimal
            assert shape == classes_of(topo, minimal)
        r0, _, pl, _ = minimal[0]
        S.cr[0, r0, pl, :] = 0                  # now the source router's minimal output too
        assert classes_of(topo, trace(batch, src, dst)).count("g") == 2


# ---- link classes ------------------------------------------------------------------------------
@pytest.mark.parametrize("local,glob", [(2, 10), (3, 17), (4, 4)])
def test_local_and_global_latency_closed_form(local, glob):
    """One packet over terminal, local, global, local, terminal links and 4 routers."""
    rd, lat, flit = 5, 3, 8
    topo_d = {"kind": "dragonfly", "p": 1, "a": 4, "h": 2, "local_latency": local,
              "global_latency": glob}
    topo = build(TopologyConfig(**topo_d))
    src, dst = node_pair_at_hops(topo, 3)
    assert classes_of(topo, route_path(topo, src, dst)) == ("l", "g", "l")
    n = topo.n_nodes
    cfg = from_dict({"topology": topo_d, "mpi": {"ranks_per_node": 1},
                     "network": {"link_latency": lat, "router_delay": rd, "flit_bytes": flit,
                                 "buffer_flits": 40, "cycle_ns": 1.0},
                     "host": {"pio_ns": 0.0, "retrieve_ns": 0.0, "match_ns": 0.0,
                              "credit_ns": 0.0, "limic_ns": 0.0, "limic_ns_per_kb": 0.0},
                     "workload": {"kind": "program", "ranks": n}})
    pb = ProgramBuilder(n)
    pb.send(src, dst, 0)
    pb.recv(dst, src, 0)
    res = run_batch([cfg], programs=[pb.build("one packet")])
    L = -(-(16 + 0 + 8 + cfg.network.packet_header_bytes) // flit)
    expected = 4 * rd + 2 * lat + 2 * local + glob + L - 1
    assert round(res["rank_time_us"][0, dst] * 1000) == expected


# ---- runtime -----------------------------------------------------------------------------------
def test_flat_assignment_deadlocks_at_run_time_and_names_the_cycle():
    cfg = synth("valiant", vcs=1, network__vc_assignment="flat", network__deadlock_check=False,
                network__buffer_flits=17, workload__packet_flits=16,
                workload__measure_cycles=10**6, limits__no_progress_us=2.0)
    with pytest.raises(SimulationError) as exc:
        run_batch([cfg])
    msg = str(exc.value)
    assert "no progress" in msg and "routing deadlock" in msg
    assert "router" in msg and "VC 0 -> router" in msg


def test_a_deadlock_that_leaves_no_event_is_an_error_not_a_finished_run():
    """The sources stop at the end of the measured window; a deadlocked network then has no
    event left. With the watchdog far away, the run must still end in an error, with the
    packets still alive, not as finished."""
    cfg = synth("valiant", vcs=1, network__vc_assignment="flat", network__deadlock_check=False,
                network__buffer_flits=17, workload__packet_flits=16,
                workload__measure_cycles=3000, workload__drain_cycles=10**7,
                limits__no_progress_us=1e6)
    with pytest.raises(SimulationError) as exc:
        run_batch([cfg])
    assert "deadlock" in str(exc.value)


def test_shift_destinations_are_one_group_over():
    cfg = synth(kind="shift")
    batch = Batch([cfg])
    n = batch.topology.n_nodes
    np.testing.assert_array_equal(batch.S.syn_dest[0], (np.arange(n) + 8) % n)


def test_routing_draws_leave_the_traffic_alone_and_are_deterministic():
    cfgs = [synth(r) for r in ("table", "valiant", "ugal", "par")]
    res = run_batch(cfgs)
    off = res["offered_flits_per_node_cycle"]
    assert np.all(off == off[0])                   # same generated packets whatever the routing
    again = run_batch(cfgs[::-1])
    np.testing.assert_array_equal(again["accepted_flits_per_node_cycle"][::-1],
                                  res["accepted_flits_per_node_cycle"])


def test_throughput_valiant_below_minimal_on_uniform_adaptive_above_on_shift():
    uni = run_batch([synth(r) for r in ("table", "valiant", "ugal", "par")])
    acc = dict(zip(("table", "valiant", "ugal", "par"), uni["accepted_flits_per_node_cycle"]))
    assert acc["valiant"] < acc["table"]
    assert acc["ugal"] > acc["valiant"] and acc["par"] > acc["valiant"]
    sh = run_batch([synth(r, kind="shift") for r in ("table", "valiant", "ugal", "par")])
    acc = dict(zip(("table", "valiant", "ugal", "par"), sh["accepted_flits_per_node_cycle"]))
    assert acc["ugal"] > 1.5 * acc["table"] and acc["par"] > 1.5 * acc["table"]
    assert acc["valiant"] > 1.5 * acc["table"]


@pytest.mark.slow
@pytest.mark.parametrize("routing", ["table", "valiant", "ugal", "par"])
def test_no_deadlock_in_20_random_permutations_at_full_load(routing):
    """Tight buffers (17 flits), and a watchdog far shorter than the run (10 us = 367
    cycles without a delivery anywhere), so that a deadlock would stop the run."""
    cfgs = [synth(routing, kind="permutation", seed=s, network__buffer_flits=17,
                  workload__measure_cycles=5000, limits__no_progress_us=10.0)
            for s in range(20)]
    for k in range(0, 20, 10):
        res = run_batch(cfgs[k:k + 10])      # raises SimulationError on any deadlock
        assert np.all(res["accepted_flits_per_node_cycle"] > 0.1)

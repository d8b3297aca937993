"""The input-queued router (network.router "iq", kernels/router_iq.py), the crossbar speedup,
and the packet and event pools sized by the least packet (engine/sizing.pool_packets).

Real runs throughout: head-of-line blocking seen directly on a crossbar, saturation on the
4x4x4 mesh, determinism alone and in batches mixed with VOQ members, the pools at saturation
with the least packets."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extoll_vec import dtypes as D
from extoll_vec.config import from_dict
from extoll_vec.engine.batch import Batch, simulate
from extoll_vec.engine.sizing import estimate_parts, least_packet_flits, topology_shape
from extoll_vec.errors import ConfigError
from extoll_vec.examples import get_example
from extoll_vec.kernels.nic import SY_LAT_CNT, SY_LAT_SUM, SY_MADE


def _mesh(router="voq", speedup=1.0, rate=0.5, flits=4, dims=(4, 4, 4), **net):
    return from_dict({"topology": {"kind": "mesh", "dims": list(dims)},
                      "network": {"router": router, "speedup": speedup, **net},
                      "workload": {"kind": "uniform", "injection_rate": rate,
                                   "packet_flits": flits, "warmup_cycles": 500,
                                   "measure_cycles": 3000}})


# ---- configuration ------------------------------------------------------------------------------
def test_router_fields_and_their_bounds():
    cfg = from_dict({})
    assert cfg.network.router == "voq" and cfg.network.speedup == 1.0
    with pytest.raises(ConfigError, match="network.router"):
        from_dict({"network": {"router": "oq"}})
    with pytest.raises(ConfigError, match="network.speedup"):
        from_dict({"network": {"speedup": 0.5}})
    # at their defaults they leave a sweep's identity unchanged (config.ADDED_FIELDS)
    ident = cfg.identity_dict()["network"]
    assert "router" not in ident and "speedup" not in ident
    assert "router" in cfg.replace(**{"network.router": "iq"}).identity_dict()["network"]


# ---- head-of-line blocking, seen directly ------------------------------------------------------
def _schedule(S, b, t, kind, a):
    """kernels/wheel.schedule, from Python (an event within the wheel's span)."""
    e = int(S.ev_meta[b, 0])
    S.ev_meta[b, 0] = S.ev_next[b, e]
    S.ev_meta[b, 3] += 1
    S.ev_t[b, e], S.ev_k[b, e], S.ev_a[b, e], S.ev_b[b, e], S.ev_c[b, e] = t, kind, a, 0, 0
    w = t & (S.wh_head.shape[1] - 1)
    S.ev_next[b, e] = -1
    if S.wh_tail[b, w] < 0:
        S.wh_head[b, w] = e
    else:
        S.ev_next[b, S.wh_tail[b, w]] = e
    S.wh_tail[b, w] = e
    S.ev_meta[b, 1] += 1


def _inject(batch, b, node, dst, flits):
    """A synthetic packet created at cycle 0 in node's injection FIFO (common.pk_new,
    nic_push from Python)."""
    S = batch.S
    h = int(S.pk_meta[b, 0])
    S.pk_meta[b, 0] = S.pk["next"][b, h]
    S.pk_meta[b, 1] += 1
    S.pk["kind"][b, h], S.pk["src"][b, h], S.pk["dst"][b, h], S.pk["dnode"][b, h] = D.PK_SYNTH, node, dst, dst
    S.pk["flits"][b, h], S.pk["last"][b, h], S.pk["t0"][b, h] = flits, 1, 0
    S.syn[b, SY_MADE] += 1      # as the generator counts it (the engine's conservation audit)
    Q = S.nq.shape[2]
    S.nq[b, node, (S.nq_head[b, node] + S.nq_cnt[b, node]) % Q] = h
    S.nq_cnt[b, node] += 1
    if S.nic_txt[b, node] != 0:
        S.nic_txt[b, node] = 0
        _schedule(S, b, 0, D.EV_NIC_TX, node)


def _crossbar_latencies(routers):
    """A 4-port crossbar (link 4, pipeline 8 cycles) with three hand-placed packets: A (40
    flits, node 1 -> 3) takes output 3 from cycle 12 to 52; B (4 flits, node 0 -> 3) waits
    for it; C (4 flits, node 0 -> 2) enters behind B at cycle 4, ready at 16, for the free
    output 2. Returns the latency sum of the three per member."""
    cfgs = [from_dict({"topology": {"kind": "crossbar", "p": 4},
                       "network": {"router": r, "speedup": s, "link_latency": 4,
                                   "router_delay": 8, "buffer_flits": 64,
                                   "nic_ejection_flits": 64},
                       "workload": {"kind": "uniform", "injection_rate": 1e-9,
                                    "packet_flits": 4, "warmup_cycles": 0,
                                    "measure_cycles": 1000, "drain_cycles": 1000}})
            for r, s in routers]
    batch = Batch(cfgs)
    for b in range(len(cfgs)):
        assert int(batch.S.ev_meta[b, 1] + batch.S.ev_meta[b, 2]) == 0   # no generated packet
        _inject(batch, b, 1, 3, 40)
        _inject(batch, b, 0, 3, 4)
        _inject(batch, b, 0, 2, 4)
    batch.run()
    S = batch.S
    assert list(S.syn[:, SY_LAT_CNT]) == [3] * len(cfgs)
    assert list(S.delivered) == [3] * len(cfgs)
    return [int(x) for x in S.syn[:, SY_LAT_SUM]]


def test_head_of_line_blocking_delays_a_packet_for_a_free_output():
    voq, iq, iq24 = _crossbar_latencies([("voq", 1.0), ("iq", 1.0), ("iq", 2.4)])
    # A leaves at 12 (arrives 12 + 4 + 39 = 55), B at 52 (52 + 4 + 3 = 59). VOQ: C has its own
    # queue and leaves at 16 (arrives 23). IQ: C waits behind B, which holds input 0's FIFO
    # until 52 and its crossbar input until 56 (speedup 1: 4 cycles) or 54 (2.4: ceil(4 / 2.4)
    # = 2 cycles; B's tail arrived at 8)
    assert voq == 55 + 59 + 23
    assert iq == 55 + 59 + (56 + 7)
    assert iq24 == 55 + 59 + (54 + 7)


# ---- saturation on the 4x4x4 mesh --------------------------------------------------------------
def test_iq_saturates_below_voq_on_the_mesh():
    cfgs = [_mesh("voq", rate=0.95), _mesh("iq", rate=0.95), _mesh("iq", 2.4, rate=0.95)]
    ds = simulate(cfgs, max_batch=3)
    voq, iq, iq24 = (float(x) for x in ds.accepted_flits_per_node_cycle)
    assert iq < voq - 0.05          # head-of-line blocking costs throughput
    assert iq < iq24 <= voq + 0.02  # speedup recovers part of it


def test_speedup_one_is_the_voq_model_and_speedup_changes_it():
    base = simulate([_mesh(rate=0.7)])
    same = simulate([_mesh(speedup=1.0, rate=0.7)])
    fast = simulate([_mesh(speedup=2.0, rate=0.7)])
    lat = float(base.packet_latency_cycles_mean[0])
    assert float(same.packet_latency_cycles_mean[0]) == lat
    assert float(fast.packet_latency_cycles_mean[0]) != lat


# ---- determinism --------------------------------------------------------------------------------
def _values(ds, i):
    return (float(ds.accepted_flits_per_node_cycle[i]), float(ds.packet_latency_cycles_mean[i]),
            float(ds.offered_flits_per_node_cycle[i]))


def test_iq_is_deterministic_alone_and_in_mixed_batches():
    iq = _mesh("iq", rate=0.8, dims=(4, 4))
    voq = _mesh("voq", rate=0.8, dims=(4, 4))
    iq24 = _mesh("iq", 2.4, rate=0.8, dims=(4, 4))
    alone = simulate([iq])
    again = simulate([iq])
    mixed = simulate([voq, iq, iq24, voq.replace(seed=3), iq], max_batch=5)
    assert _values(alone, 0) == _values(again, 0)
    assert _values(mixed, 1) == _values(alone, 0) == _values(mixed, 4)
    assert _values(mixed, 0) == _values(simulate([voq]), 0)
    assert _values(mixed, 2) == _values(simulate([iq24]), 0)
    assert _values(mixed, 1) != _values(mixed, 0)


# ---- invariants ----------------------------------------------------------------------------------
@pytest.mark.parametrize("router", ["voq", "iq"])
def test_buffers_never_above_capacity_and_packets_conserved(router):
    """Sampled every 50 cycles at saturation with the least packets: no VC buffer above its
    capacity, each FIFO's chain as long as its packet count, every packet in the pool in a
    FIFO, a buffer, on its way to a NIC or in a NIC; Batch.run's check_invariants does the
    end of the run (nothing alive, every credit back)."""
    cfg = _mesh(router, 2.4 if router == "iq" else 1.0, rate=1.0, flits=1, dims=(4, 4),
                buffer_flits=20).replace(**{"limits.chunk_cycles": 50})
    batch = Batch([cfg])
    S, t = batch.S, 0
    cap = cfg.network.buffer_flits
    while t < 3000:
        t += 50
        batch.advance_to(t)
        assert S.status[0] == 0
        assert S.ib_flits[0].max() <= cap and S.ib_cnt[0].min() >= 0
        if router == "iq":
            R, P, V = S.iq_head.shape[1:]
            for r in range(R):
                for p in range(P):
                    for v in range(V):
                        n, h = 0, S.iq_head[0, r, p, v]
                        while h >= 0:
                            n, h = n + 1, S.pk["next"][0, h]
                        assert n == S.ib_cnt[0, r, p, v]
        in_net = int(S.ib_cnt[0].sum()) + int(S.nq_cnt[0].sum()) + int(S.ej_cnt[0].sum())
        assert in_net <= int(S.pk_meta[0, 1])     # the rest are on their way to a NIC
    batch.run()
    assert int(S.pk_meta[0, 1]) == 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dims=st.sampled_from([(3, 3), (4, 4), (2, 2, 2)]), flits=st.integers(6, 16),
       spare=st.integers(0, 10), speedup=st.sampled_from([1.0, 1.5, 2.4]),
       outq=st.sampled_from([0, 8, 1024]), vcs=st.sampled_from([1, 2, 4]),
       seed=st.integers(0, 2**16))
def test_credits_wake_every_head_that_waits_on_them(dims, flits, spare, speedup, outq, vcs,
                                                    seed):
    """A credit event allocates only for an output VC that an allocation found a head waiting
    on (iq_starved, kernels/router_iq.py). In buffers of one to four packets (17 flits, the
    least the config allows, to 27) at load 1.0, where heads wait on credits all the time, a
    wake-up lost would leave a packet behind: every run ends without an error and with every
    packet delivered (the drain after the sources stop), every credit back (Batch.run's
    audit). Negative control, measured once: credit events that never allocate end the first
    example in Batch.run's deadlock error."""
    cfg = _mesh("iq", speedup, rate=1.0, flits=flits, dims=dims, buffer_flits=17 + spare,
                output_queue_flits=outq, vcs=vcs).replace(
        **{"workload.measure_cycles": 1500, "seed": seed})
    batch = Batch([cfg])
    batch.run()
    assert batch.S.status[0] == 0, D.ERR_NAMES.get(int(batch.S.status[0]))
    assert int(batch.S.pk_meta[0, 1]) == 0
    assert int(batch.S.syn[0, SY_MADE]) > 0


def test_iq_keeps_mpi_order_and_results_of_a_program_run():
    """A rank program over the iq router: the NIC checks in-order delivery per rank pair
    (FIFO per input VC); the run completes with every credit back."""
    cfg = get_example("tiny")
    ds = simulate([cfg, cfg.replace(**{"network.router": "iq"}),
                   cfg.replace(**{"network.router": "iq", "network.speedup": 2.4})])
    assert np.all(np.isfinite(ds.exec_time_us.values))


# ---- packet and event pools sized by packets -----------------------------------------------------
def test_least_packet_flits():
    syn = _mesh(flits=16)
    assert least_packet_flits(syn) == 16
    mpi = get_example("tiny")
    assert least_packet_flits(mpi) == mpi.network.flits(1)
    assert least_packet_flits(mpi.replace(**{"mpi.header_bytes": 0})) == mpi.network.flits(0)


def test_dragonfly_5256_pools_fit_2gb():
    cfg = from_dict({"topology": {"kind": "dragonfly", "p": 6, "a": 12, "h": 6, "groups": 0},
                     "network": {"vcs": 2, "buffer_flits": 256},
                     "workload": {"kind": "uniform", "packet_flits": 16, "injection_rate": 1.0}})
    parts, sizes = estimate_parts([cfg])
    t = topology_shape(cfg.topology)
    assert t.n_nodes == 5256
    assert sizes["NPK"] == t.n_routers * t.n_ports * 2 * 16 + t.n_nodes * (256 + 40 // 16) + 1024
    assert sum(parts.values()) < 2 * 2**30


@pytest.mark.parametrize("router", ["voq", "iq"])
def test_pools_never_run_out_with_the_least_packets_at_saturation(router):
    """1-flit packets at load 1.0 into 20-flit buffers: the pools sized by packets hold
    (ERR_POOL would stop the run); the peak use stays within the bound pool_packets argues."""
    cfg = _mesh(router, rate=1.0, flits=1, buffer_flits=20,
                nic_ejection_flits=20).replace(**{"workload.source_queue": 8})
    batch = Batch([cfg])
    NPK, E = batch.sizes["NPK"], batch.sizes["E"]
    assert batch.S.pk["next"].shape[1] == NPK
    S, t, peak_pk, peak_ev = batch.S, 0, 0, 0
    while t < 4000:
        t += 25
        batch.advance_to(t)
        assert S.status[0] == 0, D.ERR_NAMES.get(int(S.status[0]))
        peak_pk = max(peak_pk, int(S.pk_meta[0, 1]))
        peak_ev = max(peak_ev, int(S.ev_meta[0, 3]))
    assert peak_pk <= NPK - 1024
    assert peak_pk > (NPK - 1024) // 4     # saturated: the network is well filled
    assert peak_ev < E


# ---- output buffers (network.output_queue_flits: Booksim's iq_router with speedup) -------------
def test_output_queue_only_for_the_iq_router():
    with pytest.raises(ConfigError, match="network.output_queue_flits") as exc:
        from_dict({"network": {"output_queue_flits": 64}})
    assert "iq" in str(exc.value)
    assert "output_queue_flits" not in from_dict({}).identity_dict()["network"]


def test_output_queues_lift_saturation_and_keep_every_invariant():
    """Beyond saturation on the mesh: with speedup 2 and output buffers the crossbar moves
    packets into an output while its link still sends (an output-queued switch's behaviour:
    less head-of-line blocking), so more is accepted than with outputs that take a packet
    only when their link is free; 0 is that model exactly. The runs audit packets and
    credits (engine), the NIC checks in-order delivery, and no buffer overflows."""
    base = _mesh("iq", speedup=2.0, rate=1.0, flits=4, buffer_flits=20)
    ds = simulate([base, base.replace(**{"network.output_queue_flits": 8}),
                   base.replace(**{"network.output_queue_flits": 1024})])
    acc = ds.accepted_flits_per_node_cycle.values
    assert acc[0] < acc[1] <= acc[2] * 1.02
    assert acc[1] > 1.05 * acc[0]

"""LFC unicast (Bhoedjang et al., section 3.1): NI-level credits between every pair of NIs,
the NI processor's costs, the blocked-sends queues, credit updates and piggybacking, and the
DMA into posted host buffers."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extoll_vec.config import from_dict
from extoll_vec.engine import Batch
from extoll_vec.errors import ConfigError
from extoll_vec.examples import get_example, myrinet_testbed
from extoll_vec.protocols.lfc.lfc import credit_problems
from extoll_vec.workloads import ProgramBuilder


def _cfg(n=4, credits=8, packet=1024, **protocol):
    d = myrinet_testbed(credits, packet)
    d["topology"] = {"kind": "hypercube", "cube_dim": 1, "p": n // 2}
    d["network"]["cycle_ns"] = 1.0            # costs in ns are cycles: closed forms by hand
    d["protocol"].update(protocol)
    d["workload"] = {"kind": "program", "ranks": n}
    return from_dict(d)


def _run(cfg, build, chunk=None):
    n = cfg.n_ranks
    pb = ProgramBuilder(n)
    build(pb)
    if chunk:
        cfg = cfg.replace(**{"limits.chunk_cycles": chunk})
    b = Batch([cfg], [pb.build("lfc test")])
    seen: list[str] = []
    b.run(progress=lambda f: seen.extend(credit_problems(b.S, 0, cfg.protocol.lfc_credits)))
    assert seen == []
    return b.results()


def _one_way(cfg, nbytes=0):
    res = _run(cfg, lambda pb: pb.send(0, 1, nbytes).recv(1, 0, nbytes))
    return round(res["rank_time_us"][0, 1] * 1000)


@pytest.mark.parametrize("field,delta,per_kb", [
    ("lfc_poll_ns", 37.0, False), ("lfc_tx_ns", 53.0, False), ("lfc_rx_ns", 71.0, False),
    ("lfc_tx_ns_per_kb", 1024.0, True)])
def test_each_ni_step_lies_on_the_one_way_path_once(field, delta, per_kb):
    """The receiver's time grows by exactly the added cost: the NI polls, transmits and
    receives each packet once on its way (per KiB: one cycle per byte of the 1 KB packet on
    the wire, header included)."""
    base = _cfg()
    nbytes = 1000
    more = base.replace(**{f"protocol.{field}": getattr(base.protocol, field) + delta})
    grown = _one_way(more, nbytes) - _one_way(base, nbytes)
    assert grown == (base.network.flits(nbytes) * 4 if per_kb else delta)


def test_a_credit_update_costs_its_round_trip_when_one_credit_is_all():
    """C = 1: every packet after the first waits for the update of the one before it; with
    C = 8 and 8 packets nothing waits. Under the default low-water mark (0) an update goes
    whenever the receiver, counting the packets it got, knows the sender to hold no credit:
    after every packet for C = 1, once (after the eighth) for C = 8."""
    def blast(c):
        return _run(_cfg(credits=c), lambda pb: pb.send(0, 1, 8 * 1024).recv(1, 0, 8 * 1024))
    one, eight = blast(1), blast(8)
    assert one["lfc_blocked"][0, 0] == 7 and eight["lfc_blocked"][0, 0] == 0
    assert one["lfc_credit_updates"][0, 1] == 8
    assert eight["lfc_credit_updates"][0, 1] == 1
    assert one["rank_time_us"][0, 1] > eight["rank_time_us"][0, 1]
    assert one["lfc_max_partition"][0, 1] == 1 and eight["lfc_max_partition"][0, 1] <= 8


def test_credits_ride_back_on_packets_of_the_other_direction():
    """8 packets with 8 credits: the receiver sends one update when the eighth arrives (the
    sender is then out, as it counts), with every credit freed so far; the eighth packet's
    own buffer frees after that and its credit rides on the reply."""
    res = _run(_cfg(credits=8), lambda pb: (pb.send(0, 1, 8192).recv(0, 1, 1024)
                                            .recv(1, 0, 8192).send(1, 0, 1024)))
    assert res["lfc_credit_updates"][0, 1] == 1
    assert res["lfc_piggybacked"][0, 1] >= 1


def test_a_receiver_that_posts_no_buffer_stalls_its_senders_and_loses_nothing():
    """Two host buffers and a receiver busy for 200 us: its NI moves two packets into them,
    keeps the next four in the sender's partition (full), the sender runs out of credits and
    its other packets (16 - 4 - 2 at least) wait in the blocked-sends queue until the host
    takes its first packets."""
    cfg = _cfg(credits=4, mailbox_slots=2)
    res = _run(cfg, lambda pb: pb.send(0, 1, 16 * 1024).compute(1, 200_000)
               .recv(1, 0, 16 * 1024), chunk=5000)
    assert res["messages_received"][0, 1] == 1
    assert res["lfc_max_partition"][0, 1] == 4
    assert res["lfc_blocked"][0, 0] >= 16 - 4 - 2
    assert res["rank_time_us"][0, 1] > 200


def test_the_example_runs_and_its_latency_is_microseconds():
    b = Batch([get_example("lfc-unicast")])
    b.run()
    lat = b.results()["rank_time_us"][0, 1]
    assert 5 < lat / 44 < 100     # 22 one-way trips, 2 warm-ups included (placeholder costs)


def test_lfc_refuses_what_it_does_not_model():
    d = myrinet_testbed()
    d["workload"] = {"kind": "program", "ranks": 128}
    d["mpi"]["ranks_per_node"] = 2
    with pytest.raises(ConfigError, match="mpi.ranks_per_node: got 2; allowed: 1 under lfc"):
        from_dict(d)
    d = myrinet_testbed()
    d["mpi"]["eager_threshold"] = 2048
    d["workload"] = {"kind": "program", "ranks": 64}
    with pytest.raises(ConfigError, match="mpi.eager_threshold: got 2048"):
        from_dict(d)


@st.composite
def scenario(draw):
    n = draw(st.sampled_from([2, 4, 8]))
    msgs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.sampled_from([0, 1, 700, 1024, 3000, 9000])),
                         min_size=1, max_size=40))
    msgs = [(s, t, m) for s, t, m in msgs if s != t] or [(0, 1, 4)]
    proto = dict(lfc_low_water=draw(st.integers(0, 3)), lfc_update_owed=draw(st.integers(0, 4)),
                 mailbox_slots=draw(st.sampled_from([1, 4, 256])))
    cfg = _cfg(n, draw(st.integers(1, 8)), draw(st.sampled_from([256, 1024, 2048])), **proto)
    cfg = cfg.replace(**{"network.nic_fifo_packets": draw(st.sampled_from([1, 4, 32]))})
    return cfg, msgs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_every_packet_arrives_once_in_order_and_credits_are_conserved(sc):
    """The engine raises on overtaking within a pair, on packets not accounted for at the end
    and on LFC's audit (no partition above C, credits conserved, queues and buffers empty);
    between chunks of 300 cycles every pair's credits add up to C."""
    cfg, msgs = sc
    res = _run(cfg, lambda pb: pb.exchange(msgs), chunk=300)
    expected = np.bincount([t for _, t, _ in msgs], minlength=cfg.n_ranks)
    assert res["messages_received"][0].tolist() == expected.tolist()
    assert res["lfc_max_partition"][0].max() <= cfg.protocol.lfc_credits

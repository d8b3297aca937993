"""FM/MC (Bhoedjang et al., section 2.2): the host-level window for unicast, multicast
credits from a central manager NI cached by the hosts and returned by a rotating token, one
NI receive queue swapping to host memory when full, binary trees, 256-byte packets."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extoll_vec.config import from_dict
from extoll_vec.engine import Batch
from extoll_vec.errors import ConfigError
from extoll_vec.examples import fmmc_testbed
from extoll_vec.protocols.lfc import fmmc as F
from extoll_vec.workloads import ProgramBuilder

from test_lfc_multicast import _all_multicast, _bcast


def _cfg(n=8, **protocol):
    d = fmmc_testbed()
    d["topology"] = {"kind": "hypercube", "cube_dim": 1, "p": n // 2}
    d["protocol"]["mailbox_slots"] = (n - 1) * 8 + protocol.get("fmmc_mc_buffers", 18)
    d["protocol"].update(protocol)
    d["workload"] = {"kind": "program", "ranks": n}
    return from_dict(d)


def _run(cfg, build, chunk=5000):
    """Run the program, checking the credits at every chunk; the member's Batch."""
    pb = ProgramBuilder(cfg.n_ranks)
    build(pb)
    b = Batch([cfg.replace(**{"limits.chunk_cycles": chunk})], [pb.build("fmmc test")])
    seen: list[str] = []
    b.run(progress=lambda f: seen.extend(F.credit_problems(b.S, 0, cfg)))
    assert seen == []
    return b


def test_a_multicast_reaches_every_member_once_and_the_token_parks():
    cfg = _cfg(8).replace(**{"workload.group_size": 6})
    b = _run(cfg, lambda pb: _bcast(pb, 2, 6, 3000, times=5))
    res = b.results()
    got = res["messages_received"][0].tolist()
    assert got == [5, 5, 0, 5, 5, 5, 0, 0]
    m = F.manager(cfg)
    assert m == 7 and b.S.fcn[0, m, F.CN_TOKEN] == 0 and b.S.fcn[0, m, F.CN_ROUNDS] > 0
    # 3000 B in 256-byte packets whose first carries a 4-byte handler word: 12 packets each
    assert b.S.mseq_tx[0, 2] == 5 * 12
    assert res["fmmc_requests"][0, m] >= 5 * 12 // 8
    # every credit the root spent was reclaimed once every other member had taken its packet
    assert b.S.fcn[0, m, F.CN_RECLAIMED] == 5 * 12


def test_a_256_byte_message_takes_two_packets():
    cfg = _cfg(4).replace(**{"workload.group_size": 4})
    b = _run(cfg, lambda pb: _bcast(pb, 0, 4, 256))
    assert b.S.mseq_tx[0, 0] == 2


def test_the_root_on_the_manager_node_asks_locally():
    cfg = _cfg(4, fmmc_manager=0, fmmc_request=2, fmmc_mc_buffers=4)
    b = _run(cfg.replace(**{"workload.group_size": 4}), lambda pb: _bcast(pb, 0, 4, 2000, 3))
    assert b.results()["messages_received"][0].tolist() == [0, 3, 3, 3]
    assert b.S.fcn[0, 0, F.CN_GRANTED] >= 3 * 8


def test_few_credits_all_to_all_completes_hosts_done_give_theirs_back():
    """Four credits in all, four asked at a time, every member multicasting: the token takes
    back the cached credits of hosts with nothing left to multicast, or the others starve."""
    cfg = _cfg(8, fmmc_request=4, fmmc_mc_buffers=4).replace(**{"workload.group_size": 8})
    b = _run(cfg, lambda pb: _all_multicast(pb, 8, 1500, 2))
    assert b.results()["messages_received"][0].tolist() == [14] * 8
    assert b.S.fcr[0, :, F.R_MC_BACK].sum() > 0


def test_a_full_ni_queue_swaps_and_the_run_completes():
    small = _cfg(8, fmmc_queue=2).replace(**{"workload.group_size": 8})
    big = _cfg(8, fmmc_queue=100_000).replace(**{"workload.group_size": 8})
    prog = lambda pb: _all_multicast(pb, 8, 4000, 2)  # noqa: E731
    a, c = _run(small, prog), _run(big, prog)
    assert a.results()["fmmc_swaps"][0].sum() > 0 and c.results()["fmmc_swaps"][0].sum() == 0
    assert (a.results()["fmmc_queue_max"][0] > 2).any()
    # swapping costs bus and processor time: the all-to-all takes longer
    assert a.results()["rank_time_us"][0].max() > c.results()["rank_time_us"][0].max()


def test_unicast_runs_under_the_host_window():
    cfg = _cfg(4, window=2, threshold=1, mailbox_slots=3 * 2 + 18)
    b = _run(cfg, lambda pb: [pb.send(0, 1, 5000).recv(1, 0, 5000),
                              pb.send(3, 1, 100).recv(1, 3, 100)])
    assert b.results()["messages_received"][0].tolist() == [0, 2, 0, 0]


def test_bad_fmmc_settings_are_refused_in_one_line():
    d = fmmc_testbed()
    d["workload"] = {"kind": "mcast_blast", "ranks": 64, "group_size": 8, "message_bytes": 64,
                     "iterations": 2}
    d["protocol"]["mailbox_slots"] = 100
    with pytest.raises(ConfigError, match=r"protocol.mailbox_slots: got 100; allowed: >= 522"):
        from_dict(d)
    d["protocol"]["mailbox_slots"] = 522
    d["protocol"]["fmmc_manager"] = 64
    with pytest.raises(ConfigError, match=r"protocol.fmmc_manager: got 64; allowed: a node"):
        from_dict(d)


@st.composite
def scenarios(draw):
    n = draw(st.sampled_from([4, 8]))
    group = draw(st.integers(2, n))
    cfg = _cfg(n, fmmc_tree=draw(st.sampled_from(["binary", "binomial", "chain", "random"])),
               fmmc_tree_seed=draw(st.integers(0, 50)),
               fmmc_request=draw(st.integers(1, 8)), fmmc_mc_buffers=draw(st.integers(1, 16)),
               fmmc_queue=draw(st.sampled_from([1, 4, 1000])),
               fmmc_manager=draw(st.sampled_from([-1, 0])))
    return (cfg.replace(**{"workload.group_size": group}), group,
            draw(st.sampled_from([0, 300, 2500])), draw(st.booleans()))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_any_tree_and_pool_deliver_every_packet_once_in_order(sc):
    """Whatever the tree, the pool, the request size, the queue and the manager: every member
    gets every multicast once, in order per sender (the NIC's check), credits are conserved
    at every chunk and at the end (the engine's audit), and the token parks."""
    cfg, group, nbytes, everyone = sc
    if everyone:
        b = _run(cfg, lambda pb: _all_multicast(pb, group, nbytes, 2), chunk=3000)
        want = [2 * (group - 1)] * group
    else:
        b = _run(cfg, lambda pb: _bcast(pb, group - 1, group, nbytes, times=3), chunk=3000)
        want = [3] * (group - 1) + [0]
    got = b.results()["messages_received"][0].tolist()
    assert got[:group] == want
    assert b.S.fcn[0, F.manager(cfg), F.CN_TOKEN] == 0
    assert np.all(b.S.fcn[0, :, F.CN_QUSED] == 0)

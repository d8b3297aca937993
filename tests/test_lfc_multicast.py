"""Multicast (Bhoedjang et al., section 3.2): the programs' multicast op, its analysis and its
refusal by protocols that do not multicast, and LFC's NI-level forwarding along each sender's
spanning tree, hop by hop under the same credits as unicast."""
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
from extoll_vec.protocols.lfc.trees import dependency_cycle, tree_parents
from extoll_vec.workloads import ProgramBuilder, check_balanced, message_counts, max_outstanding
from extoll_vec.workloads.program import sends

from test_lfc import _cfg, _run


def _bcast(pb, root, group, nbytes, times=1, blocking=True):
    for _ in range(times):
        pb.mcast(root, group, nbytes, blocking)
        for m in range(group):
            if m != root:
                pb.recv(m, root, nbytes)
    if not blocking:
        pb.waitall(root)
    return pb


def test_a_multicast_counts_as_a_message_to_every_other_member():
    pb = ProgramBuilder(6)
    _bcast(pb, 2, 4, 100, times=3, blocking=False)
    prog = pb.build("bcast")
    check_balanced(prog)
    src, dst, sent, recv, _ = message_counts(prog)
    assert list(zip(src.tolist(), dst.tolist(), sent.tolist())) == [(2, 0, 3), (2, 1, 3),
                                                                    (2, 3, 3)]
    rank, to, nbytes, mult = sends(prog)
    assert sorted(to.tolist()) == [0, 0, 0, 1, 1, 1, 3, 3, 3] and set(nbytes.tolist()) == {100}
    assert max_outstanding(prog) == (1, 3)      # three multicasts posted: three descriptors
    with pytest.raises(ValueError, match="the sender is not in its multicast group"):
        ProgramBuilder(6).mcast(5, 4, 0).build()
    with pytest.raises(ValueError, match="multicast group of 1 ranks"):
        ProgramBuilder(6).mcast(0, 1, 0).build()
    bad = ProgramBuilder(4)
    bad.mcast(0, 4, 8).recv(1, 0, 8).recv(2, 0, 8)      # rank 3 posts no receive
    with pytest.raises(ValueError, match="rank 0 sends 1 message.* to rank 3, which posts 0"):
        check_balanced(bad.build())


def test_a_protocol_that_does_not_multicast_refuses_the_program():
    cfg = from_dict({"topology": {"kind": "mesh", "dims": [4]}, "mpi": {"ranks_per_node": 1},
                     "workload": {"kind": "program", "ranks": 4},
                     "protocol": {"name": "static", "mailbox_slots": 64}})
    prog = _bcast(ProgramBuilder(4), 0, 4, 8).build()
    with pytest.raises(ConfigError, match="protocol.name: got static; allowed: a protocol that "
                                          "multicasts \\(lfc, fmmc\\)"):
        Batch([cfg], [prog])


def test_the_group_must_be_the_tables_group():
    cfg = _cfg(8).replace(**{"workload.group_size": 4})
    with pytest.raises(ConfigError, match="workload.group_size: got 4; allowed: the group"):
        Batch([cfg], [_bcast(ProgramBuilder(8), 0, 8, 8).build()])


def _member_times(cfg, nbytes=0):
    res = _run(cfg, lambda pb: _bcast(pb, 0, cfg.n_ranks, nbytes))
    return [round(t * 1000) for t in res["rank_time_us"][0]]


@pytest.mark.parametrize("field,steps", [
    # binomial on 4 NIs of one switch, root 0: children 2 (subtree {2, 3}) then 1; 2 -> 3.
    # Per member, how often the added cost lies on its packet's path:
    ("lfc_fwd_ns", [0, 2, 1, 2]),    # the root's descriptor for 2, then for 1; 2's for 3
    ("lfc_tx_ns", [0, 2, 1, 2]),     # the root's transmit to 2, then to 1; 2's to 3
    ("lfc_rx_ns", [0, 1, 1, 2]),     # received once at 1 and 2, twice on the way to 3
    ("lfc_poll_ns", [0, 1, 1, 1])])  # the root polls its host's packet once
def test_forwarding_follows_the_tree_one_step_at_a_time(field, steps):
    base = _cfg(4)
    delta = 101.0
    more = base.replace(**{f"protocol.{field}": getattr(base.protocol, field) + delta})
    grown = np.subtract(_member_times(more), _member_times(base))
    assert grown[1:].tolist() == [delta * k for k in steps[1:]]


def test_a_blast_reaches_every_member_in_order_with_credits_conserved():
    cfg = _cfg(8, credits=2)
    res = _run(cfg, lambda pb: _bcast(pb, 3, 8, 5000, times=6, blocking=False), chunk=500)
    assert res["messages_received"][0].tolist() == [6] * 3 + [0] + [6] * 4
    assert res["lfc_blocked"][0].sum() > 0          # two credits: forwards wait for updates


def _all_multicast(pb, group, nbytes, times):
    for r in range(group):
        for s in range(group):
            if s != r:
                for _ in range(times):
                    pb.irecv(r, s, nbytes)
    for r in range(group):
        for _ in range(times):
            pb.mcast(r, group, nbytes, blocking=False)
        pb.waitall(r)
    return pb


def draw_trees(draw):
    """NIs, a tree kind (any seed for `random`) and a group: the trees part of a scenario."""
    n = draw(st.sampled_from([4, 8]))
    kind = draw(st.sampled_from(["binomial", "binary", "chain", "random"]))
    return n, kind, draw(st.integers(0, 50)), draw(st.integers(2, n))


@st.composite
def trees_and_traffic(draw):
    n, kind, seed, group = draw_trees(draw)
    credits = draw(st.integers(1, 4))
    packet = draw(st.sampled_from([256, 1024]))
    nbytes = draw(st.sampled_from([0, 300, 2500]))
    trees = {s: tree_parents(kind, range(group), s, seed=seed, n_nodes=n) for s in range(group)}
    everyone = dependency_cycle(trees) is None and draw(st.booleans())
    cfg = _cfg(n, credits, packet, lfc_tree=kind, lfc_tree_seed=seed,
               mailbox_slots=draw(st.sampled_from([2, 256])))
    return cfg.replace(**{"workload.group_size": group}), group, nbytes, everyone


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees_and_traffic())
def test_any_tree_delivers_every_packet_once_in_order(sc):
    """Any tree, one sender; every member at once on trees whose NI-buffer dependencies are
    acyclic (lfc_trees.dependency_cycle): every member gets every packet once, in order (the
    core's check), the credit sums are exact between chunks, no partition overruns."""
    cfg, group, nbytes, everyone = sc
    if everyone:
        res = _run(cfg, lambda pb: _all_multicast(pb, group, nbytes, 2), chunk=400)
        want = [2 * (group - 1) if r < group else 0 for r in range(cfg.n_ranks)]
    else:
        res = _run(cfg, lambda pb: _bcast(pb, group - 1, group, nbytes, times=3), chunk=400)
        want = [3 if r < group - 1 else 0 for r in range(cfg.n_ranks)]
    assert res["messages_received"][0].tolist() == want
    assert res["lfc_max_partition"][0].max() <= cfg.protocol.lfc_credits


@pytest.mark.parametrize("name", ["lfc-latency", "lfc-blast", "lfc-alltoall"])
def test_the_multicast_benchmarks_run_and_time_what_they_say(name):
    """The workloads of section 5 (workloads/multicast.py): marks where the readings put them,
    every member served, the paper's order of magnitude (costs not yet calibrated)."""
    cfg = get_example(name)
    P, w = cfg.workload.group_size, cfg.workload
    b = Batch([cfg])
    b.run()
    res = b.results()
    marks = res["mark_time_us"][0]
    got = res["messages_received"][0]
    if name == "lfc-latency":
        # the multicasts and the warm-ups' barriers (the same messages at every member)
        assert len(set(got[1:P].tolist())) == 1 and got[1] > w.warmup and not got[P:].any()
        latency = np.nanmax(marks[1:P, 1]) - marks[0, 0]
        assert 10 < latency < 200
    elif name == "lfc-blast":
        assert got[1:P].tolist() == [w.warmup + w.iterations] * (P - 1)
        assert got[0] == 2 * (P - 1)                     # the acknowledgements
        mbs = w.iterations * w.message_bytes / (marks[0, 1] - marks[0, 0])
        assert 1 < mbs < 160
    else:
        assert got[:P].tolist() == [w.iterations * (P - 1)] * P
        assert np.all(marks[:P, 1] > marks[:P, 0])


def test_a_chain_under_all_to_all_deadlocks_and_the_error_names_the_ni_cycle():
    """Negative control of section 4's premise (recovery off): with every NI's buffers split
    per sender, chain trees make NI i wait for i+1's buffers, all around (lfc_trees'
    dependency check finds the cycle); every member multicasting at once fills them and the
    run stops, naming the blocked queues and the cycle. The same traffic on binomial trees,
    whose dependencies are acyclic, completes."""
    from extoll_vec.errors import SimulationError

    def run(tree):
        cfg = _cfg(8, 1, 1024, lfc_tree=tree)
        b = Batch([cfg], [_all_multicast(ProgramBuilder(8), 8, 4096, 4).build()])
        b.run()
        return b.results()
    with pytest.raises(SimulationError) as err:
        run("chain")
    text = str(err.value)
    assert "deadlock" in text and "lfc: 8 blocked-sends queues: NI 0 -> NI 1 (" in text
    assert "0 credits, 1/1 buffers" in text
    assert ("NIs waiting for each other's credits: NI 0 -> NI 1 -> NI 2 -> NI 3 -> NI 4 -> "
            "NI 5 -> NI 6 -> NI 7 -> NI 0") in text
    assert "protocol.lfc_recovery: true" in text        # what resolves it (test_lfc_recovery)
    assert run("binomial")["messages_received"][0].tolist() == [28] * 8

"""LFC's deadlock recovery (Bhoedjang et al., section 4): local detection, the deadlocked
subtree grown by flagged packets on the initiator's deadlock channel (Figure 3), merged
acknowledgements, and the chain all-to-all that deadlocks without it and completes with it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extoll_vec.engine import Batch
from extoll_vec.protocols.lfc import lfc as L
from extoll_vec.protocols.lfc.trees import dependency_cycle, tree_parents
from extoll_vec.workloads import ProgramBuilder

from test_lfc import _cfg, _run
from test_lfc_multicast import _all_multicast, draw_trees


def test_figure_3_the_subtree_grows_only_where_credits_are_missing():
    """Binary tree of root R = 0 over 5 NIs: R -> {D = 1, 2}, D -> {E = 3, F = 4}. E's host
    computes while D's unicasts fill its mailbox and D's partition at E (D's own recovery,
    of a unicast, is then in progress, so D cannot start another), so R's first two
    multicasts stay at D, queued for E, and R's third finds no credit for D: R's recovery
    sends it flagged into R's deadlock buffer at D. D, with credits for F by then, sends F
    nothing more, but sends E the first packet of R's tree queued for it, flagged (4.2: "D
    sets the deadlock flag in the packet sent to E, but not in the packet sent to F"). R's
    buffer at D frees as soon as that packet is done there (the flagged one takes its
    buffer), D acknowledges once E has, and R's recovery ends."""
    R, D, E, F = 0, 1, 3, 4
    cfg = _cfg(6, 2, 1024, lfc_tree="binary", lfc_recovery=True, mailbox_slots=1)
    cfg = cfg.replace(**{"workload.group_size": 5, "limits.chunk_cycles": 500})
    pb = ProgramBuilder(6)
    pb.compute(E, 300_000)
    for _ in range(4):
        pb.send(D, E, 1000).recv(E, D, 1000)
    pb.mcast(R, 5, 1000, False).mcast(R, 5, 1000, False).compute(R, 50_000)
    pb.mcast(R, 5, 1000, False).waitall(R)
    for m in range(1, 5):
        for _ in range(3):
            pb.recv(m, R, 1000)
    b = Batch([cfg], [pb.build("Figure 3")])
    states = set()

    def look(_):
        nn, fcn = b.S.nn[0], b.S.fcn[0]
        assert nn[F, R, L.NN_DL_FROM] == 0 and nn[2, R, L.NN_DL_FROM] == 0
        if fcn[R, L.CN_REC]:
            states.add((int(nn[D, R, L.NN_DL_PKT] > 0), int(nn[D, R, L.NN_DL_ACKS]),
                        int(nn[E, R, L.NN_DL_PKT] > 0)))
        assert not L.credit_problems(b.S, 0, 2)
    b.run(progress=look)
    res = b.results()
    # R's packet in its buffer at D, D waiting for E; then D's buffer free, E's taken
    assert {(1, 1, 0), (0, 1, 1)} <= states
    assert res["lfc_recoveries"][0, R] == 1 and res["lfc_dl_packets"][0, R] == 1
    assert res["lfc_dl_packets"][0, F] == 0
    assert res["messages_received"][0].tolist() == [0, 3, 3, 7, 3, 0]


def test_a_chain_all_to_all_that_deadlocks_without_recovery_completes_with_it():
    """The negative control of test_lfc_multicast (chain trees, one credit, every member
    multicasting) with recovery: every member gets every packet in order, the credit sums
    are exact between chunks, and at the end no deadlock buffer is in use and no recovery in
    progress (the audit)."""
    cfg = _cfg(8, 1, 1024, lfc_tree="chain", lfc_recovery=True)
    res = _run(cfg, lambda pb: _all_multicast(pb, 8, 4096, 4), chunk=2000)
    assert res["messages_received"][0].tolist() == [28] * 8
    assert res["lfc_recoveries"][0].min() > 0
    assert res["lfc_max_partition"][0].max() <= 1


def test_a_blocked_unicast_starts_a_recovery_too():
    """Gap G16: a unicast packet's tree is its one edge. The receiver's host is late and has
    one mailbox slot, one credit: the first of three packets waits in its buffer for the
    slot, the second finds no credit and goes flagged into the sender's deadlock buffer at
    the receiver; when the first is in the mailbox, the second takes over its buffer (its
    credit stays spent: gap G14) and the deadlock buffer is free, the recovery acknowledged.
    The third then finds no credit either: a second recovery, which lasts until the host
    takes the first message."""
    cfg = _cfg(2, 1, 1024, lfc_recovery=True, mailbox_slots=1)
    res = _run(cfg, lambda pb: pb.send(0, 1, 3000).compute(1, 100_000).recv(1, 0, 3000),
               chunk=300)
    assert res["lfc_recoveries"][0].tolist() == [2, 0]
    assert res["lfc_dl_packets"][0].tolist() == [2, 0]
    assert res["rank_time_us"][0, 1] > 100


@st.composite
def any_trees(draw):
    n, kind, seed, group = draw_trees(draw)
    cfg = _cfg(n, draw(st.integers(1, 3)), draw(st.sampled_from([256, 1024])),
               lfc_tree=kind, lfc_tree_seed=seed, lfc_recovery=True,
               lfc_low_water=draw(st.integers(0, 1)),
               mailbox_slots=draw(st.sampled_from([2, 256])))
    return (cfg.replace(**{"workload.group_size": group}), group,
            draw(st.sampled_from([0, 300, 2500])), draw(st.integers(1, 3)))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_trees())
def test_with_recovery_every_member_multicasting_completes_on_any_tree(sc):
    """Any tree set, cyclic NI-buffer dependencies or not, every member multicasting at once:
    with recovery the run completes, every member gets every packet once and in order (the
    core's check), credits are conserved between chunks, no partition overruns, and a
    recovery's subtree holds at most the other members (flagged packets per recovery)."""
    cfg, group, nbytes, times = sc
    res = _run(cfg, lambda pb: _all_multicast(pb, group, nbytes, times), chunk=400)
    want = [times * (group - 1) if r < group else 0 for r in range(cfg.n_ranks)]
    assert res["messages_received"][0].tolist() == want
    assert res["lfc_max_partition"][0].max() <= cfg.protocol.lfc_credits
    rec, flagged = res["lfc_recoveries"][0].sum(), res["lfc_dl_packets"][0].sum()
    assert flagged <= rec * (group - 1)


def test_binomial_trees_have_only_false_alarms():
    """Binomial trees' dependencies are acyclic (lfc_trees.dependency_cycle): recovery may
    start (a queue is blocked) but the run would complete without it, and does, in the same
    order; recovery costs only the NI's extra steps."""
    trees = {s: tree_parents("binomial", range(8), s, n_nodes=8) for s in range(8)}
    assert dependency_cycle(trees) is None
    got = {}
    for on in (False, True):
        cfg = _cfg(8, 1, 1024, lfc_recovery=on)
        got[on] = _run(cfg, lambda pb: _all_multicast(pb, 8, 4096, 4))
    assert got[True]["lfc_recoveries"][0].sum() > 0
    assert got[False]["messages_received"][0].tolist() == [28] * 8
    assert got[True]["messages_received"][0].tolist() == [28] * 8
    assert np.all(got[True]["rank_time_us"][0] > 0)


def _user_cfg(rows, group=4, **kw):
    cfg = _cfg(4, 1, 1024, lfc_tree="user", lfc_tree_parents=tuple(rows), **kw)
    return cfg.replace(**{"workload.group_size": group})


def test_any_user_given_trees_run_and_bad_tables_are_refused():
    """lfc_tree user (section 3.2: "any" tree): each member's parent in each member's tree.
    Here node 3 forwards every other root's packets (trees no built-in kind makes): the
    forwarding tables follow the table, every member gets every message once and in order
    (the core's check), and a table that is not a tree set is refused naming the field and
    the root and member at fault."""
    from extoll_vec.errors import ConfigError
    rows = [-1, 0, 3, 0,      # root 0: 0 -> 1, 0 -> 3 -> 2
            3, -1, 3, 1,      # root 1: 1 -> 3 -> {0, 2}
            3, 3, -1, 2,      # root 2: 2 -> 3 -> {0, 1}
            3, 3, 3, -1]      # root 3: 3 -> {0, 1, 2}
    cfg = _user_cfg(rows, lfc_recovery=True)
    kids = L.trees(cfg)
    assert kids[1][1] == (3,) and kids[1][3] == (0, 2) and kids[0][0] == (3, 1)   # largest subtree first
    assert kids[3][3] == (0, 1, 2) and kids[2][0] == ()
    res = _run(cfg,
               lambda pb: _all_multicast(pb, 4, 3000, 2), chunk=300)
    assert res["messages_received"][0].tolist() == [6] * 4
    bad = list(rows)
    bad[5] = 0                                       # root 1's tree without its root
    with pytest.raises(ConfigError) as err:
        _user_cfg(bad)
    assert "protocol.lfc_tree_parents" in str(err.value) and "root 1's tree: member 1" in str(err.value)
    cyc = list(rows)
    cyc[2], cyc[3] = 3, 2                            # root 0: 2 -> 3 -> 2, a cycle
    with pytest.raises(ConfigError, match="root 0's tree: .*cycle"):
        _user_cfg(cyc)
    with pytest.raises(ConfigError, match="16 parents"):
        _user_cfg(rows[:-1])
    with pytest.raises(ConfigError, match="unless protocol.lfc_tree is user"):
        _cfg(4, 1, 1024, lfc_tree_parents=tuple(rows))

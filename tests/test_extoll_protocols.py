"""EXTOLL static and dynamic credit-based flow control in the kernels (paper sections 5 and 6).

Hand-checked credit flows (Figure 3's quota 20, 2 credit slots, threshold 7), piggybacking, the
dynamic protocol's reallocation, compulsory requests and their responses, deadlock freedom on
every workload at the smallest legal mailbox, and credit conservation audited between kernel
calls on random traffic (hypothesis). The kernels themselves flag a credit region or data
region holding more than it may (ERR_INVARIANT) and any write into a full mailbox.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extoll_vec import dtypes as D
from extoll_vec.config import IMB_BENCHMARKS, from_dict
from extoll_vec.engine import Batch, run_batch, simulate
from extoll_vec.errors import ConfigError
from extoll_vec.kernels import fc_fields as F
from extoll_vec.protocols.audit import audit_args, dense_fc
from extoll_vec.protocols.extoll import params as XP
from extoll_vec.protocols.extoll.audit import credit_problems, quiescent_problems
from extoll_vec.workloads import ProgramBuilder

CT = {name: i for i, name in enumerate(D.CTRL_CLASSES)}


def two_ranks(protocol: dict, **sections) -> dict:
    d = {"topology": {"kind": "mesh", "dims": [2]}, "mpi": {"ranks_per_node": 1,
                                                             "eager_threshold": 4096},
         "protocol": protocol, "workload": {"kind": "program", "ranks": 2}}
    d.update(sections)
    return d


def one_message(npk: int, busy_ns: int = 0) -> ProgramBuilder:
    """Rank 0 sends one eager message of npk VELO packets to rank 1, which computes for
    busy_ns before it receives (and so before it retrieves anything)."""
    pb = ProgramBuilder(2)
    nbytes = npk * 56 - 16
    pb.send(0, 1, nbytes)
    if busy_ns:
        pb.compute(1, busy_ns)
    pb.recv(1, 0, nbytes)
    return pb


def test_static_figure_3_credit_flow():
    """Quota 20, 2 credit slots: threshold 7 (Eq. 1). A 40-packet message: the receiver returns
    a credit packet of 7 credits after 7, 14, 21, 28 and 35 packets; the sender, short of
    credits after 20, waits for them; 5 credits stay unreturned below the threshold."""
    cfg = from_dict(two_ranks({"name": "static", "mailbox_slots": 44, "credit_slots": 2}))
    b = Batch([cfg], [one_message(40, busy_ns=5000).build("one message")])
    assert int(b.par[0, XP.P_QUOTA]) == 20 and int(b.par[0, XP.P_RETURN_THRESHOLD]) == 7
    b.run()
    res = b.results()
    fc = dense_fc(b.S, 0)
    assert res["control_sent"][0, 1].tolist() == [5, 0, 0, 0]
    assert res["control_sent"][0, 0].sum() == 0
    assert res["sends_delayed"][0].tolist() == [1, 0]
    # the sender ran dry after 20 packets and waited for the busy receiver's first credits
    assert 3.0 < res["stall_us"][0, 0] < 5.0
    assert int(fc[1, 0, F.F_RETRIEVED]) == 40 - 5 * 7
    assert int(fc[0, 1, F.F_OWNED]) == 20 - 40 + 5 * 7
    # the credit region of rank 0 never held more than its 2 credit slots (kernel check) and
    # the mailbox of rank 1 never more than rank 0's quota
    assert res["mailbox_max_slots"][0, 1] <= 20


def test_counters_at_marks_leave_out_what_happens_before_and_after_the_measured_part():
    """Figure 3's flow three times, the middle message between marks 0 and 1: the 40-packet
    messages before and after the marks wait for credits and stall the sender, the 6-packet one
    between them does not (15 credits: the sender waits 20 us for the last credit packets before
    it marks). The counters at the marks, and the measured part the targets read
    (analysis.extoll.common.measured, delayed_pct), hold the middle only; run_delayed_pct
    counts the whole run."""
    from extoll_vec.analysis.extoll.common import delayed_pct, measured, run_delayed_pct
    from extoll_vec.dataset import build_dataset
    pb = ProgramBuilder(2)
    for phase, npk in enumerate((40, 6, 40)):
        if phase == 1:
            pb.compute(0, 20000).mark(0, 0).mark(1, 0)
        nbytes = npk * 56 - 16
        pb.send(0, 1, nbytes)
        pb.compute(1, 5000)
        pb.recv(1, 0, nbytes)
        if phase == 1:
            pb.mark(0, 1).mark(1, 1)
    cfg = from_dict(two_ranks({"name": "static", "mailbox_slots": 44, "credit_slots": 2}))
    res = run_batch([cfg], programs=[pb.build("three messages, the middle one measured")])
    assert res["sends_delayed"][0].tolist() == [2, 0]
    assert res["sends_delayed_at_mark"][0, 0, :2].tolist() == [1, 1]
    assert res["messages_received_at_mark"][0, 1, :2].tolist() == [1, 2]
    assert (res["sends_delayed_at_mark"][0, :, 2:] == -1).all()     # marks never passed
    stall0, stall1 = res["stall_us_at_mark"][0, 0, :2]
    assert stall0 > 3.0 and stall1 == stall0 and res["stall_us"][0, 0] > stall1 + 3.0
    ds = build_dataset([cfg], res)
    assert measured(ds, "sends_delayed", 0).tolist() == [0, 0]
    assert measured(ds, "messages_received", 0).tolist() == [0, 1]
    cpu = measured(ds, "flow_control_cpu_us", 0)
    assert 0 < cpu[0] < res["flow_control_cpu_us"][0, 0] / 5   # 6 of 86 packets
    assert delayed_pct(ds, 0) == 0.0
    assert run_delayed_pct(ds, 0) == pytest.approx(200 / 3)  # 2 of 3 messages waited
    # without marks the whole run is the measured part
    res["sends_delayed_at_mark"][:] = -1
    res["messages_received_at_mark"][:] = -1
    assert delayed_pct(build_dataset([cfg], res), 0) == pytest.approx(200 / 3)


def test_credit_operations_cost_fractions_of_a_cycle():
    """host.credit_ns is kept in fixed point, not rounded up to a whole 27 ns cycle: a quarter
    cycle per operation costs each rank a quarter of what one cycle costs (up to the fraction
    it still carries), and the default of one cycle costs exactly one cycle per operation."""
    def cpu_cycles(credit_ns):
        d = two_ranks({"name": "static", "mailbox_slots": 44, "credit_slots": 2})
        d["host"] = {"credit_ns": credit_ns}
        cfg = from_dict(d)
        res = run_batch([cfg], programs=[one_message(40, busy_ns=5000).build("one message")])
        return res["flow_control_cpu_us"][0] * 1000.0 / cfg.network.cycle_ns
    cyc = from_dict(two_ranks({"name": "none"})).network.cycle_ns
    free, whole, quarter = cpu_cycles(0.0), cpu_cycles(cyc), cpu_cycles(cyc / 4)
    ops = whole - free                   # one cycle per operation: the operations per rank
    assert ops[0] >= 40 and ops[1] >= 40  # a packet sent / retrieved is at least one each
    np.testing.assert_allclose(ops, np.round(ops), atol=1e-6)
    assert np.all(np.abs((quarter - free) - ops / 4) <= 1.0 + 1e-6)


def test_static_without_shortage_sends_no_credit_early():
    cfg = from_dict(two_ranks({"name": "static", "mailbox_slots": 44, "credit_slots": 2}))
    res = run_batch([cfg], programs=[one_message(6).build("6 packets")])
    assert res["control_sent"][0].sum() == 0 and res["sends_delayed"][0].tolist() == [0, 0]


def test_piggyback_rides_on_the_reply_when_there_is_room():
    """A ping-pong of 10-packet messages: the reply carries the ping's credits in its last
    packet (it has room: 16 + 530 - 9 * 56 = 42 bytes used of 56), so no credit packet."""
    pb = ProgramBuilder(2)
    for _ in range(3):
        pb.send(0, 1, 530).recv(0, 1, 530)
        pb.recv(1, 0, 530).send(1, 0, 530)
    prog = pb.build("ping-pong")
    base = {"name": "static", "mailbox_slots": 44, "credit_slots": 1}   # quota 21, threshold 11
    plain = run_batch([from_dict(two_ranks(base))], programs=[prog])
    piggy = run_batch([from_dict(two_ranks({**base, "piggyback": True}))], programs=[prog])
    assert plain["control_sent"][0, :, CT["piggyback"]].sum() == 0
    assert plain["control_sent"][0, :, CT["credit"]].sum() > 0
    assert piggy["control_sent"][0, 1, CT["piggyback"]] == 3      # every reply
    assert piggy["control_sent"][0, :, CT["credit"]].sum() < plain["control_sent"][0, :, 0].sum()


def test_piggyback_needs_room_in_the_last_packet():
    """A message filling its last packet completely (37 * 56 = 16 + 2056 bytes) has no room for
    the two bytes of credit information."""
    pb = ProgramBuilder(2)
    for _ in range(3):
        pb.send(0, 1, 2056).recv(0, 1, 2056)
        pb.recv(1, 0, 2056).send(1, 0, 2056)
    res = run_batch([from_dict(two_ranks({"name": "static", "mailbox_slots": 200,
                                          "piggyback": True}))], programs=[pb.build("full")])
    assert res["control_sent"][0, :, CT["piggyback"]].sum() == 0


@pytest.mark.parametrize("nbytes,rides", [(2048, False), (2044, True), (8, True)])
def test_piggyback_room_counts_the_tag_of_a_multi_packet_message(nbytes, rides):
    """Section 5.4: a 2 KB message leaves no room for piggybacked credits, a 2044-byte one
    does (Figure 9). 16 + 2048 bytes leave 8 free in the 37th packet: the 8-byte tag of a
    multi-packet message fills them (docs/model.md, "Piggybacking room"); a one-packet
    message has no tag."""
    pb = ProgramBuilder(2)
    for _ in range(3):
        pb.send(0, 1, nbytes).recv(0, 1, nbytes)
        pb.recv(1, 0, nbytes).send(1, 0, nbytes)
    res = run_batch([from_dict(two_ranks({"name": "static", "mailbox_slots": 200,
                                          "credit_slots": 1, "piggyback": True}))],
                    programs=[pb.build(f"{nbytes} B")])
    assert (res["control_sent"][0, :, CT["piggyback"]].sum() > 0) == rides


def exchange(npk: int, rounds: int = 2) -> ProgramBuilder:
    """Both ranks send each other npk-packet messages at once, `rounds` times."""
    pb = ProgramBuilder(2)
    nbytes = npk * 56 - 16
    for _ in range(rounds):
        for r in (0, 1):
            pb.isend(r, 1 - r, nbytes).recv(r, 1 - r, nbytes).waitall(r)
    return pb


def test_the_credit_search_costs_cpu_time_per_slot_examined():
    """EXTOLL 5.2: a sender without credits searches its mailbox, where the peer's data and
    credit packets are mixed, for a credit packet. Quota 20 against 60-packet messages both
    ways: every message waits. The waits are the protocol's (the same delayed sends and
    control packets at any cost); the search's CPU time grows with its cost per slot and,
    with nothing else to overlap it here, so does the run."""
    prog = exchange(60).build("exchange")
    base = {"name": "static", "mailbox_slots": 44, "credit_slots": 2}
    runs = [run_batch([from_dict(two_ranks({**base, "credit_search_ns": ns}))], programs=[prog])
            for ns in (0.0, 10.0, 100.0)]
    assert runs[0]["sends_delayed"][0].sum() > 0
    for key in ("sends_delayed", "control_sent"):
        assert all((r[key][0] == runs[0][key][0]).all() for r in runs)
    for key in ("flow_control_cpu_us", "exec_time_us"):
        a, b, c = (float(r[key][0].sum()) for r in runs)
        assert a < b < c, key


def test_the_credit_search_belongs_to_the_credit_protocols():
    with pytest.raises(ConfigError, match="protocol.credit_search_ns.*static and dynamic"):
        from_dict(two_ranks({"name": "window", "mailbox_slots": 8, "credit_search_ns": 5.0}))
    with pytest.raises(ConfigError, match="protocol.credit_search_ns"):
        from_dict(two_ranks({"name": "static", "mailbox_slots": 44, "credit_search_ns": -1.0}))


def test_config_checks_eq2_and_piggyback():
    with pytest.raises(ConfigError, match=r"protocol.mailbox_slots.*>= 8 = 4 slots per process"):
        from_dict(two_ranks({"name": "static", "mailbox_slots": 7, "credit_slots": 2}))
    with pytest.raises(ConfigError, match="protocol.piggyback"):
        from_dict(two_ranks({"name": "window", "mailbox_slots": 7, "piggyback": True}))
    with pytest.raises(ConfigError, match="protocol.credit_slots"):
        from_dict(two_ranks({"name": "dynamic", "mailbox_slots": 70, "credit_slots": 0}))


# ---- dynamic ---------------------------------------------------------------------------------

def star_program(n: int, active: list[int], rounds: int) -> ProgramBuilder:
    """Every rank in `active` sends `rounds` 2 KB messages to rank 0; then rank 0 records the
    credits it owns towards every peer."""
    pb = ProgramBuilder(n)
    for s in active:
        for _ in range(rounds):
            pb.send(s, 0, 2048)
    for s in active:
        for _ in range(rounds):
            pb.recv(0, s, 2048)
    return pb


def test_dynamic_gives_an_active_sender_more_than_the_static_quota():
    """Rank 2 (another node: ranks 0 and 1 share one and use LiMIC) alone keeps sending to rank
    0: at its monitoring points it steals the intended quota of idle senders (Eq. 6), so rank
    0's receiver side grants it well above the static partition."""
    n = 8
    d = {"topology": {"kind": "mesh", "dims": [2, 2]}, "mpi": {"ranks_per_node": 2},
         "protocol": {"name": "dynamic", "mailbox_slots": 8 * 16, "credit_slots": 2},
         "workload": {"kind": "program", "ranks": n}}
    cfg = from_dict(d)
    b = Batch([cfg], [star_program(n, [2], 40).build("star")])
    quota = int(b.par[0, XP.P_QUOTA])
    b.run()
    intended = dense_fc(b.S, 0)[0, :, F.F_INTENDED]
    assert intended[2] > 2 * quota
    assert (np.delete(intended[1:], 1) < quota).any()           # someone was robbed
    assert (np.delete(intended[1:], 1) >= 2).all()              # never below the static slots
    assert intended[1:].sum() <= int(b.par[0, XP.P_DATA_REGION])
    static = run_batch([cfg.replace(**{"protocol.name": "static"})],
                       programs=[star_program(n, [2], 40).build("star")])
    dynamic = b.results()
    # section 7.1: with the whole mailbox granted to one sender, thresholds are reached far less
    # often, so the receiver writes far fewer credit packets and finishes sooner
    assert dynamic["exec_time_us"][0] < static["exec_time_us"][0]
    assert 2 * dynamic["control_sent"][0, 0, CT["credit"]] < static["control_sent"][0, 0, CT["credit"]]


def test_dynamic_steady_state_shares_the_data_region_among_the_active_senders():
    """Two groups of 16 of 32 ranks, 4 per node (LiMIC): a receiver gets VELO data from 12
    senders. After 40 alltoalls the stealing has taken every idle sender down to its static
    slots and the active ones hold the rest of the data region (the premise of
    protocols/extoll/dynamic.py), and the timed alltoalls delay no send from 3 slots above its
    bound (25 slots per process) on, while 5 below it they do (the bound is necessary)."""
    from extoll_vec.analysis.extoll.dynamic import active_senders
    from extoll_vec.protocols.extoll import dynamic as ed
    from extoll_vec.protocols.extoll import static as es

    def cfg(slots):
        return from_dict({"topology": {"kind": "mesh", "dims": [2, 2, 2]},
                          "mpi": {"ranks_per_node": 4},
                          "protocol": {"name": "dynamic", "mailbox_slots": slots * 32,
                                       "credit_slots": 2},
                          "workload": {"kind": "alltoall", "ranks": 32, "groups": 2,
                                       "group_size": 16, "iterations": 2, "warmup": 40}})
    n, c = 32, 2
    assert active_senders(cfg(28)) == 12 and ed.stabilizing_slots(n, 12, c) == 25
    rank = np.arange(n)
    same_group = rank[:, None] // 16 == rank[None, :] // 16
    active = same_group & (rank[:, None] // 4 != rank[None, :] // 4)
    idle = ~active & ~np.eye(n, dtype=bool)
    for slots, delays in ((28, False), (20, True)):
        b = Batch([cfg(slots)])
        b.run()
        intended = dense_fc(b.S, 0)[:, :, F.F_INTENDED]
        assert (intended[idle] == c).all()
        assert (np.where(active, intended, 0).sum(1) ==
                ed.active_quota_total(slots, n, 12, c)).all()
        marks = b.results()["sends_delayed_at_mark"][0]
        delayed = int((marks[:, 1] - marks[:, 0]).sum())
        assert (delayed > 0) == delays, (slots, delayed)
        if delays:    # an even share of 43.3 is short of 55: someone holds less
            assert intended[active].min() < es.eq4_min_quota(c)


def small(kind: str, protocol: str, **workload) -> dict:
    return {"topology": {"kind": "mesh", "dims": [2, 2]}, "mpi": {"ranks_per_node": 4},
            "protocol": {"name": protocol, "mailbox_slots": 4 * 16, "credit_slots": 2,
                         "piggyback": True},
            "workload": {"kind": kind, "ranks": 16, "iterations": 2, **workload}}


def test_compulsory_requests_are_all_answered():
    """A multi-phase run moves the activity between groups: receivers steal from senders that
    went idle and ask them for their excess credits; every request gets its response (the
    engine's end-of-run audit also checks that no sender is left blocked)."""
    d = small("multiphase", "dynamic", phases=[16, 4, 16, 8], iterations=3)
    d["protocol"]["mailbox_slots"] = 12 * 16
    res = simulate([from_dict(d)])
    sent = res.control_sent.isel(point=0).sum("rank")
    assert int(sent.sel(ctrl="request")) > 0
    assert int(sent.sel(ctrl="request")) == int(sent.sel(ctrl="response"))


def test_credit_evolution_moves_credits_only_where_a_receiver_steals():
    """Figure 19's two directions (section 7.3), 16 ranks: 20 alltoalls of all ranks, then 20 of
    ranks 0-7. Rank 0 as receiver steals from the senders that went idle (8-15) for its active
    ones (4-7; 1-3 share its node and use LiMIC), so their credits towards rank 0 fall and the
    active ones' grow; as a sender, rank 0 keeps what it owns towards the idle ranks, since a
    receiver moves credits only at its own monitoring points (Eq. 6), i.e. when it retrieves."""
    n = 20
    d = small("multiphase", "dynamic", message_bytes=2048, iterations=n, phases=[16, 8])
    d["protocol"].update(mailbox_slots=30 * 16, piggyback=False)
    res = simulate([from_dict(d)])
    out, into = res.credit_snapshot.values[0], res.credit_snapshot_in.values[0]
    assert (out[0, 1:] == 2).all() and (into[0, 1:] == 2).all()    # only the static slots
    assert (out[:, 1:4] == 2).all() and (into[:, 1:4] == 2).all()  # LiMIC: never a VELO packet
    end0, end1 = n - 1, 2 * n - 1   # before the last alltoall of each phase
    assert np.median(into[end1, 4:8]) > 1.5 * np.median(into[end0, 4:8])
    assert np.median(into[end1, 8:]) < 0.5 * np.median(into[end0, 8:])
    # stealing goes one monitoring point at a time: some idle sender is within one credit of
    # the static slots by the end of the phase
    assert into[end1, 8:].min() <= 2 + 1
    # rank 0 only sends to 8 in the barriers: the others' share is left as phase 0 left it
    assert np.abs(out[end1, 9:] - out[n, 9:]).max() <= 2
    assert np.median(out[end1, 4:8]) > 1.5 * np.median(out[end0, 4:8])


PATTERNS = ([("alltoall", {"groups": g}) for g in (1, 2, 4)]
            + [("alltoall", {"group_size": 8}), ("multiphase", {})]
            + [("imb", {"benchmark": bm}) for bm in IMB_BENCHMARKS])


@pytest.mark.parametrize("protocol", ["static", "dynamic"])
def test_no_deadlock_on_any_pattern_at_the_smallest_mailbox(protocol):
    """Every workload of the experiments, 16 ranks, 2 credit slots and 4 slots per process
    (Eq. 2's minimum), piggybacking on: all complete, credits are conserved (the engine audits
    every point at the end) and the regions never overflow (kernel checks)."""
    cfgs = [from_dict(small(kind, protocol, **extra)) for kind, extra in PATTERNS]
    ds = simulate(cfgs)
    assert (ds.exec_time_us.values > 0).all()
    assert (ds.sends_delayed.sum("rank").values > 0).any()


# ---- random traffic, audited between kernel calls ----------------------------------------------

@st.composite
def credit_scenario(draw):
    topo = draw(st.sampled_from([{"kind": "mesh", "dims": [2, 2]}, {"kind": "crossbar", "p": 3},
                                 {"kind": "torus", "dims": [3]}]))
    rpn = draw(st.integers(1, 3))
    n = {"mesh": 4, "crossbar": 3, "torus": 3}[topo["kind"]] * rpn
    msgs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.sampled_from([0, 40, 500, 2048, 3000])),
                         min_size=1, max_size=60))
    msgs = [m for m in msgs if m[0] != m[1]] or [(0, 1, 2048)]
    c = draw(st.integers(1, 3))
    share = draw(st.integers(2 * c, 2 * c + 45))
    d = {"topology": topo, "mpi": {"ranks_per_node": rpn, "limic": draw(st.booleans())},
         "protocol": {"name": draw(st.sampled_from(["static", "dynamic"])), "credit_slots": c,
                      "mailbox_slots": share * n + draw(st.integers(0, n - 1)),
                      "piggyback": draw(st.booleans())},
         "network": {"buffer_flits": draw(st.sampled_from([17, 40]))},
         "workload": {"kind": "program", "ranks": n}}
    return from_dict(d), n, msgs


def run_audited(cfg, prog, chunk: int):
    """Run in chunks of `chunk` cycles (odd: audits land in the middle of credit exchanges),
    auditing credit conservation between kernel calls; returns the results."""
    b = Batch([cfg], [prog])
    t = 0
    while True:
        t += chunk
        running = b.advance_to(t)
        assert b.S.status[0] == 0, (int(b.S.status[0]), b.S.err_info[0].tolist())
        problems = credit_problems(*audit_args(b.S, 0), b.S.fcr[0], b.par[0])
        assert not problems, problems
        if running == 0:
            break
    assert not quiescent_problems(*audit_args(b.S, 0), b.S.fcr[0], b.par[0])
    return b.results()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(credit_scenario())
def test_random_traffic_conserves_credits_at_every_step(sc):
    cfg, n, msgs = sc
    res = run_audited(cfg, ProgramBuilder(n).exchange(msgs).build("random"), 97)
    assert res["messages_received"][0].sum() == len(msgs)


@st.composite
def phased_scenario(draw):
    """Phases of many senders hammering one receiver, then a few replies: activity moves, so
    the dynamic protocol steals, blocks senders and sends compulsory requests."""
    rpn = draw(st.integers(1, 2))
    n = 4 * rpn
    c = draw(st.integers(1, 3))
    phases = []
    for _ in range(draw(st.integers(1, 4))):
        senders = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
        dst = draw(st.integers(0, n - 1))
        k = draw(st.integers(1, 12))
        size = draw(st.sampled_from([100, 1000, 2048, 2030]))
        phases.append([(s, dst, size) for s in senders if s != dst for _ in range(k)])
    d = {"topology": {"kind": "mesh", "dims": [2, 2]},
         "mpi": {"ranks_per_node": rpn, "limic": draw(st.booleans())},
         "protocol": {"name": draw(st.sampled_from(["dynamic", "static"])), "credit_slots": c,
                      "mailbox_slots": draw(st.integers(2 * c, 2 * c + 30)) * n,
                      "piggyback": draw(st.booleans())},
         "workload": {"kind": "program", "ranks": n}}
    return from_dict(d), n, phases


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(phased_scenario())
def test_shifting_activity_conserves_credits_and_answers_every_request(sc):
    cfg, n, phases = sc
    pb = ProgramBuilder(n)
    for ph in phases:
        pb.exchange(ph)
        pb.exchange([(t, s, nb) for s, t, nb in ph[:3]])   # replies, for piggybacking
    res = run_audited(cfg, pb.build("phased"), 61)
    assert res["control_sent"][0, :, CT["request"]].sum() == \
        res["control_sent"][0, :, CT["response"]].sum()

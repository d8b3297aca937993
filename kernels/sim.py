"""The time loop of a batch: `advance` moves every member forward to t_stop (one kernel call
per chunk of cycles, Python checks flags in between).

Within a member, time jumps from one pending event to the next (nothing can change between
events); events of one cycle run in insertion order. Members never share state, so a member's
results are bit-identical whether it runs alone or in any batch.
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from extoll_vec.dtypes import (CV_END, CV_PREV, CV_START, ERR_DEADLOCK, ERR_MAX_CYCLES,
                               ERR_NO_PROGRESS, EV_ARB, EV_CREDIT, EV_PROTO_TIMER, EV_EJ_CREDIT,
                               EV_GEN, EV_NIC_CREDIT, EV_NIC_DRAIN, EV_NIC_RX, EV_NIC_TX, EV_RANK,
                               EV_HOST_DMA, EV_NIC_POLL, EV_SAMPLE, P_DRAIN, P_MAX_CYCLES, P_MEASURE, P_NO_PROGRESS,
                               P_ROUTER, P_SYNTH, P_WARMUP, P_SAMPLE,
                               PROF_RANK_IDLE, PROF_RANK_OTHER, PROF_RANK_RETRIEVE,
                               PROF_RANK_WRITE, ROUTER_VOQ)
from extoll_vec.kernels import flowctl
from extoll_vec.kernels.byref import by_ref
from extoll_vec.kernels.host import rank_step
from extoll_vec.kernels.jit import entry, inner
from extoll_vec.kernels.network import arbitrate, credit_arrived
from extoll_vec.kernels.router_iq import iq_event
from extoll_vec.kernels.nic import (host_dma, next_gap, nic_drain, nic_poll, nic_rx, nic_tx, on_ej_credit, on_gen,
                                   on_sample)
from extoll_vec.kernels.wheel import next_time, pending, pop_at, pull_far, release, schedule


@inner
def _start(S, T, par, starts, b):
    """Member b's initial events: each rank's CPU runs at cycle 0 (program counter at its
    program's first row), or each node's synthetic source draws its first packet."""
    flowctl.fc_init(S, T, par, b)
    if par[b, P_SYNTH] != 0:
        w0 = par[b, P_WARMUP]
        S.syn_cv[b, CV_START] = w0
        S.syn_cv[b, CV_END] = w0 + par[b, P_MEASURE]
        S.syn_cv[b, CV_PREV] = -1
        if par[b, P_SAMPLE] > 0:
            schedule(S, b, w0 + par[b, P_SAMPLE], EV_SAMPLE, 0, 0, 0)
        for n in range(T.node_router.shape[0]):
            t = next_gap(par, S, b, n) - 1
            if t < S.syn_cv[b, CV_END]:
                schedule(S, b, t, EV_GEN, n, 0, 0)
    else:
        for r in range(S.rk_pc.shape[1]):
            S.rk_pc[b, r] = starts[b, r]
            S.rk_run[b, r] = 1
            schedule(S, b, 0, EV_RANK, r, 0, 0)


@inner
def _dispatch(S, T, par, ops, b, k, a, bb, c, now):
    # Every kernel is inlined into `advance`, and each call site is a full copy: the large
    # handlers (arbitrate, nic_tx, nic_drain) have one call site each, to keep the event
    # loop's body small (docs/design.md).
    # request_arb/request_tx suppress duplicate requests for one cycle; once that cycle's
    # event runs, a later request for the same cycle (a credit arriving after the failed
    # arbitration) must schedule a new one, or the output would sleep forever
    if k == EV_ARB or k == EV_CREDIT:
        if par[b, P_ROUTER] != ROUTER_VOQ:
            iq_event(S, T, par, b, k, a, bb, c, now)   # input-queued router (router_iq.py)
        else:
            if k == EV_ARB:
                po = bb
                if S.op_arbt[b, a, po] == now:
                    S.op_arbt[b, a, po] = -1
            else:
                po = credit_arrived(S, b, a, bb, c)
            arbitrate(S, T, par, b, a, po, now)
    elif k == EV_NIC_TX or k == EV_NIC_CREDIT:
        if k == EV_NIC_TX:
            if S.nic_txt[b, a] == now:
                S.nic_txt[b, a] = -1
        else:
            S.nic_cr[b, a] += c
        nic_tx(S, T, par, b, a, now)
    elif k == EV_NIC_RX or k == EV_NIC_DRAIN:
        if k == EV_NIC_DRAIN or nic_rx(S, par, b, a, bb):
            nic_drain(S, T, par, b, a, now)
    elif k == EV_RANK:
        rank_step(S, T, par, ops, b, a, now)
    elif k == EV_GEN:
        on_gen(S, T, par, b, a, now)
    elif k == EV_EJ_CREDIT:
        on_ej_credit(S, T, b, a, c, now)
    elif k == EV_PROTO_TIMER:
        flowctl.on_timer(S, T, par, b, a, bb, now)
    elif k == EV_SAMPLE:
        on_sample(S, par, b, now)
    elif k == EV_HOST_DMA:
        host_dma(S, T, par, b, a, now)
    elif k == EV_NIC_POLL:
        nic_poll(S, T, par, b, a, now)


@intrinsic
def _cycle_counter(typingctx):
    """The CPU's time-stamp counter (LLVM readcyclecounter: rdtsc on x86)."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


@inner
def _rank_marks(S, b, a):
    """What a rank's turn is filed by in a profile: its mailbox count and its sends so far."""
    return S.mb_cnt[b, a], S.st_sent[b, a, 0] + S.st_sent[b, a, 1] + S.st_sent[b, a, 2]


@inner
def _profile_event(S, prof, b, k, a, mb, sent, dt):
    """prof[b, kind] += (1 event, dt time-stamp cycles). A rank's turn is filed by what it did
    (dtypes.PROF_RANK_*), since a retrieval and an idle poll cost unequal."""
    if k == EV_RANK:
        now_mb, now_sent = _rank_marks(S, b, a)
        if now_mb < mb:
            k = PROF_RANK_RETRIEVE
        elif now_sent > sent:
            k = PROF_RANK_WRITE
        elif S.rk_run[b, a] == 0:
            k = PROF_RANK_IDLE
        else:
            k = PROF_RANK_OTHER
    prof[b, k, 0] += 1
    prof[b, k, 1] += dt


@inner
def _member_finished(S, par, b):
    # no event left: finished only if nothing is stuck (a synthetic run whose packets wait in
    # a deadlocked network has no event either; S.pk_meta[b, 1] counts the packets alive)
    if par[b, P_SYNTH] != 0:
        return S.pk_meta[b, 1] == 0
    return S.ranks_done[b] == S.rk_pc.shape[1]


@entry
def advance(state, topo, par, ops, starts, t_stop, prof, lo, hi):
    """Run every unfinished, error-free member b in lo <= b < hi until t_stop or completion.
    Returns the number of those members still running. prof: int64 [B, N_PROF, 2] accumulating
    events and time-stamp cycles per event kind (benchmarks/profile_events.py), or of length 0
    for no profile: one compiled loop serves both, the timing behind a branch on it (a loop
    compiled apart for profiles cost as much compile time again as the build). starts: int32
    [B, NR], each rank's first program row: a call with starts of length > 0 only sets the
    members up at cycle 0 (_start) and returns 0; of length 0 it runs them. One entry point
    for both: each entry point compiles its own wrapper that unboxes the State's arrays.
    A call writes only rows lo..hi-1 of S and prof (T, par, ops and starts are read-only),
    so calls on disjoint ranges may run at once on threads (nogil; engine/batch.py,
    docs/design.md)."""
    S, T = by_ref(state), by_ref(topo)   # the kernels take the tuples by reference (byref.py)
    if starts.shape[0] != 0:
        for b in range(lo, hi):
            _start(S, T, par, starts, b)
        return 0
    timed = prof.shape[0] != 0
    running = 0
    for b in range(lo, hi):
        if S.finished[b] != 0 or S.status[b] != 0:
            continue
        while True:
            if pending(S, b) == 0:
                if _member_finished(S, par, b):
                    S.finished[b] = 1
                else:
                    S.status[b] |= ERR_DEADLOCK
                break
            t = next_time(S, b, t_stop)
            if t >= t_stop:
                running += 1
                break
            # (the measurement may end early: workload.sample_cycles, nic.on_sample)
            if par[b, P_SYNTH] != 0 and t >= S.syn_cv[b, CV_END] + par[b, P_DRAIN]:
                S.finished[b] = 1   # drain limit: the network is past saturation
                break
            if t >= par[b, P_MAX_CYCLES]:
                S.status[b] |= ERR_MAX_CYCLES
                break
            if t - S.last_progress[b] > par[b, P_NO_PROGRESS]:
                S.status[b] |= ERR_NO_PROGRESS
                break
            S.now[b] = t
            pull_far(S, b, t)
            while S.status[b] == 0:
                e = pop_at(S, b, t)
                if e < 0:
                    break
                k = S.ev_k[b, e]
                a = S.ev_a[b, e]
                bb = S.ev_b[b, e]
                c = S.ev_c[b, e]
                release(S, b, e)
                S.events[b] += 1
                mb, sent, t0 = 0, 0, 0   # (_dispatch inlined once: its size is the compile time)
                if timed:
                    if k == EV_RANK:
                        mb, sent = _rank_marks(S, b, a)
                    t0 = _cycle_counter()
                _dispatch(S, T, par, ops, b, k, a, bb, c, t)
                if timed:
                    _profile_event(S, prof, b, k, a, mb, sent, _cycle_counter() - t0)
            if S.status[b] != 0:
                break
    return running

"""The NIC of each node: injection (PIO FIFO and RMA engine) and ejection (mailbox writes).

Injection: one link to the node's router, at link rate or at the NIC's packet rate if that is
slower (network.nic_packet_ns). The NIC alternates between the PIO FIFO (VELO packets the ranks
wrote) and the RMA engine (rendezvous data it streams on its own), sending a packet when the
router's input buffer has credits for all of it (virtual cut-through).
Ejection: packets whose tail arrived wait in the ejection buffer, in arrival order. At a slow
receiver (network.slow_factor, Schneider et al.) the head packet leaves only once the memory has
written it, ceil(flits x factor) cycles after it became the head (the next one is written after it),
so the buffer fills and its credits hold the router's ejection port. A VELO packet
is written to its rank's mailbox if a slot is free; otherwise it stays, and with it every
packet behind it (EXTOLL section 2: the NIC stops accepting, the router holds the packets,
back-pressure spreads to the senders). The buffer's credits go back to the router as it drains.
With a DMA stage (network.pci_mb_s, Bhoedjang et al.'s PCI bus) the head packet then crosses the bus
into the free slot before it leaves the buffer; packets a protocol kept reach their host
through host_dma's queue instead (common.to_host), sharing the bus.

Shapes: nq int32 [B, N, FQ] (+ nq_head, nq_cnt [B, N]); nic_busy, nic_cpu, pci_free int64 [B, N];
hq int32 [B, N, HQ] (+ hq_head, hq_cnt, hq_done, hq_blk [B, N]); nic_cr, nic_rr int32
[B, N]; ej_q int32 [B, N, EQ] (+ ej_head, ej_cnt, ej_flits, ej_blk [B, N]); rq int32 [B, N, RQ, 6]
rows (destination node, destination rank, source rank, bytes left, send slot, receive slot).
"""
import math

import numpy as np
from extoll_vec.dtypes import (EJ_ACCEPT, EJ_HOLD, EJ_KEPT, INJ_TAKEN, ERR_BUFFER_OVERFLOW, ERR_INVARIANT,
                               ERR_MAILBOX_OVERFLOW, ERR_QUEUE, EV_GEN, H_NIC_EJECT, H_NIC_HOST,
                               H_NIC_INJECT, H_NIC_POLL, H_NIC_SENT, EV_HOST_DMA, EV_NIC_TX, P_DMA,
                               P_HOOKS, P_EJ_FLITS, P_NIC_GAP, P_GEN_P32, P_LINK_LAT, P_MAILBOX,
                               P_MAILBOX_HARD, P_RMA_BYTES, P_SEED, P_SYN_FLITS,
                               P_SYNTH, PK_CTRL, PK_DATA, PK_REPLY, PK_RMA_DATA, PK_RMA_GET,
                               PK_RNDV, PK_SYNTH, EV_EJ_CREDIT, EV_NIC_DRAIN, EV_SAMPLE,
                               P_CHUNK, P_CONV_TOL, P_RNDV_WRITE, P_ROUTER, P_SAMPLE, ROUTER_VOQ, SINK_FRAC_BITS,
                               TOL_FRAC_BITS, CV_CONVERGED, CV_END, CV_PREV, CV_START,
                               CV_SAMPLES)
from extoll_vec.kernels.common import (dma_start, flits_of, nic_full, nic_push, nic_release_one,
                                      pk_free, pk_new, progress, request_poll, request_tx,
                                      wake_rank, splitmix64)
from extoll_vec.kernels import flowctl
from extoll_vec.kernels import rendezvous as rndv
from extoll_vec.kernels.fc_fields import F_SEQ_RX
from extoll_vec.kernels.host import complete_recv, complete_send, mailbox_write, write_half_done
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.pairs import pair
from extoll_vec.kernels.network import request_arb, router_accept
from extoll_vec.kernels.router_iq import iq_accept
from extoll_vec.kernels.wheel import schedule

SINK_ONE = 1 << SINK_FRAC_BITS

# synthetic statistics, int64 [B, 8]
SY_OFFERED = 0    # flits generated in the measurement window (refused ones included)
SY_ACCEPTED = 1   # flits delivered in the measurement window
SY_LAT_SUM = 2    # latency sum of packets created in the window
SY_LAT_CNT = 3
SY_CREATED = 4    # packets created in the window
SY_REFUSED = 5    # packets not generated because the source queue was full
SY_MADE = 6       # packets created over the whole run (the audit: engine/diagnostics.py)
SY_TAKEN = 7      # of them, taken out of the network by their destination's NIC


@inner
def _fin_waits(S, b, n):
    """Is the FIFO's head a rendezvous finish message whose RDMA write (the RMA queue's entry
    aux2) has not all left? A queue pair sends in order (Liu and Panda, sec. 3.1: the finish message
    follows the data); the RMA queue serves entries in order, so it runs meanwhile."""
    h = S.nq[b, n, S.nq_head[b, n]]
    return S.pk[b, h].kind == PK_REPLY and S.pk[b, h].last == 0 and S.pk[b, h].aux2 >= S.rq_pops[b, n]


@inner
def nic_poll(S, T, par, b, n, now):
    """EV_NIC_POLL: a protocol that takes every FIFO packet (Protocol.nic_polls) looks at the
    head when its processor polls, whatever the link does: it takes it (INJ_TAKEN) or says
    when to look again. Its link (nic_tx) then only sends the protocol queue and RMA."""
    if S.nic_pollt[b, n] == now:
        S.nic_pollt[b, n] = -1
    Q = S.nq.shape[2]
    while S.nq_cnt[b, n] > 0:
        t = flowctl.nic_may_inject_polled(S, T, par, b, n, S.nq[b, n, S.nq_head[b, n]], now)
        if t != INJ_TAKEN:
            if t > now:
                request_poll(S, b, n, t)
            return
        S.nq_head[b, n] = (S.nq_head[b, n] + 1) % Q
        S.nq_cnt[b, n] -= 1


@inner
def nic_tx(S, T, par, b, n, now):
    if S.nic_busy[b, n] > now:
        request_tx(S, b, n, S.nic_busy[b, n])
        return
    hooks = par[b, P_HOOKS]
    polls = hooks & H_NIC_POLL   # a polling NIC's processor takes the FIFO's packets itself
    has_pio = S.nq_cnt[b, n] > 0 and polls == 0 and not _fin_waits(S, b, n)
    has_rma = S.rq_cnt[b, n] > 0
    # a protocol's own packets (common.proto_send) go first: they return credits or answer,
    # and nic_may_inject never holds them
    use_pq = hooks != 0 and S.pq_cnt[b, n] > 0
    if not has_pio and not has_rma and not use_pq:
        return
    use_rma = has_rma and (not has_pio or S.nic_rr[b, n] == 1)
    RQ = S.rq.shape[2]
    if use_pq:
        PQ = S.pq.shape[2]
        h = S.pq[b, n, S.pq_head[b, n]]
        if S.pk[b, h].ready > now:   # its NIC processor has not finished it (common.nic_work)
            request_tx(S, b, n, S.pk[b, h].ready)
            return
        L = S.pk[b, h].flits
        if S.nic_cr[b, n] < L:
            return
        S.pq_head[b, n] = (S.pq_head[b, n] + 1) % PQ
        S.pq_cnt[b, n] -= 1
    elif use_rma and S.rq[b, n, S.rq_head[b, n], 6] == rndv.RQ_GET:   # a triggered chunk GET
        k = S.rq_head[b, n]
        L = flits_of(par, b, rndv.GET_BYTES)
        if S.nic_cr[b, n] < L:
            return
        h = pk_new(S, b, PK_RMA_GET, S.rq[b, n, k, 2], S.rq[b, n, k, 1], S.rq[b, n, k, 0], L,
                   1, S.rq[b, n, k, 3], S.rq[b, n, k, 4], S.rq[b, n, k, 5], now)
        if h < 0:
            return
        S.st_sent[b, S.rq[b, n, k, 2], 2] += 1
        S.rq_head[b, n] = (k + 1) % RQ
        S.rq_cnt[b, n] -= 1
        S.rq_pops[b, n] += 1
    elif use_rma:
        k = S.rq_head[b, n]
        this = min(par[b, P_RMA_BYTES], S.rq[b, n, k, 3])
        L = flits_of(par, b, this)
        if S.nic_cr[b, n] < L:
            return
        left = S.rq[b, n, k, 3] - this
        # the chunk's (or whole message's) last packet; the first chunk's packets carry the
        # send slot, for the bounce buffer (kernels/rendezvous.py)
        h = pk_new(S, b, PK_RMA_DATA, S.rq[b, n, k, 2], S.rq[b, n, k, 1], S.rq[b, n, k, 0], L,
                   1 if left == 0 else 0, this, S.rq[b, n, k, 4], S.rq[b, n, k, 5], now)
        if h < 0:
            return
        S.st_sent[b, S.rq[b, n, k, 2], 2] += 1
        S.rq[b, n, k, 3] = left
        if left == 0:
            S.rq_head[b, n] = (k + 1) % RQ
            S.rq_cnt[b, n] -= 1
            S.rq_pops[b, n] += 1
        if rndv.data_sent(S, b, S.rq[b, n, k, 2], S.rq[b, n, k, 4], this):
            complete_send(S, b, S.rq[b, n, k, 2], S.rq[b, n, k, 4], now)
    else:
        Q = S.nq.shape[2]
        h = S.nq[b, n, S.nq_head[b, n]]
        L = S.pk[b, h].flits
        if S.nic_cr[b, n] < L:
            return
        if hooks & H_NIC_INJECT:   # the protocol may throttle, hold or take the FIFO head
            t = flowctl.nic_may_inject(S, T, par, b, n, h, now)
            if t == INJ_TAKEN:     # kept for a retransmission: it keeps its FIFO capacity
                S.nq_head[b, n] = (S.nq_head[b, n] + 1) % Q
                S.nq_cnt[b, n] -= 1
                request_tx(S, b, n, now + 1)
                return
            if t != 0:
                if t > now:
                    request_tx(S, b, n, t)
                return
        S.nq_head[b, n] = (S.nq_head[b, n] + 1) % Q
        S.nq_cnt[b, n] -= 1
        nic_release_one(S, b, n, now)
    if not use_pq:
        S.nic_rr[b, n] = 0 if use_rma else 1
    S.nic_cr[b, n] -= L
    if hooks & H_NIC_SENT:   # e.g. a buffer whose last copy has now left is free again
        flowctl.nic_on_sent(S, T, par, b, n, h, now)
    # the next packet may start when this one has left at link rate and, if the NIC's packet
    # rate is the slower (network.nic_packet_ns), when its engine is ready again
    busy = now + max(L, par[b, P_NIC_GAP])
    S.nic_busy[b, n] = busy
    if (S.nq_cnt[b, n] > 0 and polls == 0) or S.rq_cnt[b, n] > 0 or S.pq_cnt[b, n] > 0:
        request_tx(S, b, n, busy)
    if par[b, P_ROUTER] != ROUTER_VOQ:
        iq_accept(S, T, par, b, T.node_router[n], T.node_port[n], 0, h, now)
    else:
        router_accept(S, T, par, b, T.node_router[n], T.node_port[n], 0, h, now)


@inner
def nic_rx(S, par, b, n, h):
    """The tail of packet h reached node n's NIC: it joins the ejection buffer, which the
    caller then drains (nic_drain). Returns False on overflow (an error flag is set)."""
    EQ = S.ej_q.shape[2]
    L = S.pk[b, h].flits
    if S.ej_cnt[b, n] >= EQ or S.ej_flits[b, n] + L > par[b, P_EJ_FLITS]:
        S.status[b] |= ERR_BUFFER_OVERFLOW
        return False
    S.ej_q[b, n, (S.ej_head[b, n] + S.ej_cnt[b, n]) % EQ] = h
    S.ej_cnt[b, n] += 1
    S.ej_flits[b, n] += L
    return True


@inner
def _host_buffer(S, par, b, n, r, blk):
    """Is a slot of rank r's mailbox free (a posted host buffer)? If not, node n's NIC waits
    for one, flagged in blk (the ejection buffer's ej_blk or the DMA queue's hq_blk: the
    rank's retrieval resumes it), or it is an error if the protocol promises room."""
    if S.mb_cnt[b, r] < par[b, P_MAILBOX]:
        return True
    if par[b, P_MAILBOX_HARD] != 0:
        S.status[b] |= ERR_MAILBOX_OVERFLOW
        S.err_info[b, 0] = r
        return False
    blk[b, n] = 1
    return False


@inner
def _to_mailbox(S, par, b, r, h, now):
    """Write packet h into rank r's mailbox (a slot is free), after the per-pair in-order
    check; False if h overtook an earlier packet of its pair (an error flag is set)."""
    src = S.pk[b, h].src
    i = pair(S, b, r, src)
    if S.pk[b, h].kind == PK_DATA and S.pk[b, h].aux2 > 0:
        # a multicast packet: the sender's multicasts reach each member in order, once
        if S.pk[b, h].seq != S.mseq_rx[b, i]:
            S.status[b] |= ERR_INVARIANT
            S.err_info[b, 0] = r
            S.err_info[b, 1] = src
            return False
        S.mseq_rx[b, i] += 1
    elif S.pk[b, h].seq != S.fc[b, i, F_SEQ_RX]:
        S.status[b] |= ERR_INVARIANT   # overtaking between one pair of ranks
        S.err_info[b, 0] = r
        S.err_info[b, 1] = src
        return False
    else:
        S.fc[b, i, F_SEQ_RX] += 1
    mailbox_write(S, par, b, r, h)
    wake_rank(S, b, r, now)
    return True


@inner
def host_dma(S, T, par, b, n, now):
    """Node n's DMA engine moves the packets its protocol handed to the host (common.to_host)
    into their ranks' mailboxes, in order, each once the NIC's processor is done with it
    (pk.ready), a slot is free (Bhoedjang et al., sec. 3.1: without a posted host buffer the NI does
    not copy, and keeps the packet) and the bus has carried it (common.dma_start)."""
    HQ = S.hq.shape[2]
    while S.hq_cnt[b, n] > 0:
        h = S.hq[b, n, S.hq_head[b, n]]
        r = S.pk[b, h].dst
        done = S.hq_done[b, n]
        if done < 0 and S.pk[b, h].ready > now:
            schedule(S, b, S.pk[b, h].ready, EV_HOST_DMA, n, 0, 0)
            return
        if not _host_buffer(S, par, b, n, r, S.hq_blk):
            return
        if done < 0:
            done = dma_start(S, par, b, n, h, now)
            S.hq_done[b, n] = done
            if done > now:
                schedule(S, b, done, EV_HOST_DMA, n, 0, 0)
        if now < done:
            return
        if not _to_mailbox(S, par, b, r, h, now):
            return
        S.hq_done[b, n] = -1
        S.hq_head[b, n] = (S.hq_head[b, n] + 1) % HQ
        S.hq_cnt[b, n] -= 1
        if par[b, P_HOOKS] & H_NIC_HOST:   # e.g. the NI buffer this copy came from is free
            flowctl.nic_on_host(S, T, par, b, n, h, now)
        progress(S, b, now)
        S.delivered[b] += 1
        pk_free(S, b, h)


@inner
def nic_drain(S, T, par, b, n, now):
    EQ = S.ej_q.shape[2]
    hooks = par[b, P_HOOKS]
    while S.ej_cnt[b, n] > 0:
        h = S.ej_q[b, n, S.ej_head[b, n]]
        if S.ej_sink[b, n] != 0:   # a slow receiver: the head waits for its memory write
            done = S.ej_done[b, n]
            if done < 0:
                done = now + ((np.int64(S.pk[b, h].flits) * S.ej_sink[b, n] + SINK_ONE - 1)
                              >> SINK_FRAC_BITS)
                S.ej_done[b, n] = done
                schedule(S, b, done, EV_NIC_DRAIN, n, 0, 0)
            if now < done:
                return
        kind = S.pk[b, h].kind
        r = S.pk[b, h].dst
        act = EJ_ACCEPT
        if hooks & H_NIC_EJECT:   # the protocol may hold, consume (drop, NAK, forward) or count
            act = flowctl.nic_on_eject(S, T, par, b, n, h, now)
            if act == EJ_HOLD:
                return   # back-pressure until the protocol calls common.drain_at
        if act != EJ_ACCEPT:
            pass         # EJ_CONSUMED, EJ_KEPT: the protocol took it; it leaves the buffer below
        elif kind == PK_DATA or kind == PK_RNDV or kind == PK_CTRL or kind == PK_REPLY:
            if not _host_buffer(S, par, b, n, r, S.ej_blk):
                return   # head-of-line: wait for rank r to free a slot
            if par[b, P_DMA] != 0:   # it crosses the I/O bus into the free slot first
                done = S.ej_done[b, n]
                if done < 0:
                    done = dma_start(S, par, b, n, h, now)
                    S.ej_done[b, n] = done
                    schedule(S, b, done, EV_NIC_DRAIN, n, 0, 0)
                if now < done:
                    return
            if not _to_mailbox(S, par, b, r, h, now):
                return
        elif kind == PK_RMA_GET:   # the RMA engine serves it: data back to the getter
            src = S.pk[b, h].src
            rndv.rq_push(S, b, n, T.rank_node[src], src, r, S.pk[b, h].pay, S.pk[b, h].aux,
                         S.pk[b, h].aux2, rndv.RQ_DATA, now)
        elif kind == PK_RMA_DATA:
            if par[b, P_CHUNK] == 0:
                if S.pk[b, h].last == 1:
                    if par[b, P_RNDV_WRITE] != 0:
                        write_half_done(S, b, r, S.pk[b, h].aux2, now)
                    else:
                        complete_recv(S, b, r, S.pk[b, h].aux2, 0, now)
            else:
                src = S.pk[b, h].src
                slot = S.pk[b, h].aux
                j, sent = rndv.on_data(S, T, par, b, r, src, slot, S.pk[b, h].aux2,
                                       S.pk[b, h].pay, S.pk[b, h].last, now)
                if sent:                         # the first chunk: the send completes too
                    complete_send(S, b, src, slot, now)
                if j >= 0:
                    complete_recv(S, b, r, j, 0, now)
        elif kind == PK_SYNTH:
            t0 = S.pk[b, h].t0
            w0 = S.syn_cv[b, CV_START]
            w1 = S.syn_cv[b, CV_END]
            if w0 <= t0 < w1:
                S.syn[b, SY_LAT_SUM] += now - t0
                S.syn[b, SY_LAT_CNT] += 1
            if w0 <= now < w1:
                S.syn[b, SY_ACCEPTED] += S.pk[b, h].flits
            S.syn[b, SY_TAKEN] += 1
        L = S.pk[b, h].flits
        S.ej_done[b, n] = -1
        S.ej_head[b, n] = (S.ej_head[b, n] + 1) % EQ
        S.ej_cnt[b, n] -= 1
        S.ej_flits[b, n] -= L
        schedule(S, b, now + par[b, P_LINK_LAT], EV_EJ_CREDIT, n, 0, L)
        progress(S, b, now)
        if act == EJ_KEPT:
            continue     # to be sent again (common.proto_resend): delivered when accepted
        S.delivered[b] += 1
        pk_free(S, b, h)


@inner
def on_ej_credit(S, T, b, n, flits, now):
    r = T.node_router[n]
    p = T.node_port[n]
    S.cr[b, r, p, 0] += flits
    request_arb(S, b, r, p, now)


@inner
def draw(par, S, b, n):
    """Counter-based random stream of node n: (seed, node, counter) -> uint64. No hidden state
    beyond the counter, so a member's draws do not depend on its batch."""
    c = S.syn_ctr[b, n]
    S.syn_ctr[b, n] = c + 1
    key = splitmix64(np.uint64(par[b, P_SEED]) ^ (np.uint64(n) * np.uint64(0xD1B54A32D192ED03)))
    return splitmix64(key ^ np.uint64(c))


@inner
def next_gap(par, S, b, n):
    """Cycles to the next Bernoulli success (geometric law) of the node's packet source."""
    p32 = par[b, P_GEN_P32]
    if p32 >= (1 << 32):
        return 1
    u = (float(draw(par, S, b, n) >> np.uint64(11)) + 1.0) * (1.0 / 9007199254740992.0)  # (0, 1]
    p = p32 / 4294967296.0
    return 1 + int(math.floor(math.log(u) / math.log1p(-p)))


@inner
def on_gen(S, T, par, b, n, now):
    """Synthetic source of node n creates one packet (uniform random or permutation)."""
    N = T.node_router.shape[0]
    L = par[b, P_SYN_FLITS]
    w0 = S.syn_cv[b, CV_START]
    w1 = S.syn_cv[b, CV_END]
    if now >= w1:
        return      # the measurement ended early (on_sample): the sources stop
    if par[b, P_SYNTH] == 2:
        dst = S.syn_dest[b, n]
    else:
        dst = int(draw(par, S, b, n) % np.uint64(N - 1))
        if dst >= n:
            dst += 1
    in_window = w0 <= now < w1
    if in_window:
        S.syn[b, SY_OFFERED] += L
    if nic_full(S, par, b, n):
        S.syn[b, SY_REFUSED] += 1
    else:
        h = pk_new(S, b, PK_SYNTH, n, dst, dst, L, 1, 0, 0, 0, now)
        if h >= 0:
            nic_push(S, par, b, n, h, now)
            S.syn[b, SY_MADE] += 1
            if in_window:
                S.syn[b, SY_CREATED] += 1
    t = now + next_gap(par, S, b, n)
    if t < w1:
        schedule(S, b, t, EV_GEN, n, 0, 0)


@inner
def on_sample(S, par, b, now):
    """The end of a measurement window (workload.sample_cycles; Schneider et al., section 4.1: run
    until the throughput of successive windows varies by less than the tolerance). Converged:
    the measurement ends here, the statistics cover this window, the sources stop. Otherwise
    the next window starts with zeroed statistics, unless this was the last one allowed
    (measure_cycles), whose statistics are kept."""
    acc = S.syn[b, SY_ACCEPTED]
    prev = S.syn_cv[b, CV_PREV]
    S.syn_cv[b, CV_SAMPLES] += 1
    if prev >= 0 and (abs(acc - prev) << TOL_FRAC_BITS) <= par[b, P_CONV_TOL] * prev:
        S.syn_cv[b, CV_CONVERGED] = 1
        S.syn_cv[b, CV_END] = now
        return
    if now >= S.syn_cv[b, CV_END]:
        return
    S.syn_cv[b, CV_PREV] = acc
    S.syn_cv[b, CV_START] = now
    for k in range(6):          # SY_OFFERED .. SY_REFUSED: this window's statistics
        S.syn[b, k] = 0
    schedule(S, b, now + par[b, P_SAMPLE], EV_SAMPLE, 0, 0, 0)

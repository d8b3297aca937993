"""Routers and links: virtual cut-through, credit-based link-level flow control, virtual output
queues with round-robin output arbitration, deterministic table routing.

Model (one cycle = one flit on a link):
- A packet of L flits leaving an output at cycle t occupies the output until t + L. Its head
  reaches the next router at t + link_latency and may be switched after the router pipeline,
  at t + link_latency + router_delay; its tail reaches a NIC at t + link_latency + L - 1.
  So one packet over k routers arrives at k*router_delay + (k+1)*link_latency + L - 1 after
  the NIC started injecting it (the closed form of the acceptance test).
- Virtual cut-through: a packet may leave only if the downstream buffer of its VC has room for
  the whole packet (credits >= L). Credits come back link_latency cycles after its tail left.
  Nothing is ever dropped: a packet without credits waits in its input buffer.
- Virtual output queuing (EXTOLL section 2: "a variant of Virtual Output Queuing (VOQ) at switch
  level to reduce head-of-line blocking"): each input buffer (port, VC) holds one queue per
  output, chained through the packets; the buffer's space (and so the link credits) is shared
  by its queues. A packet waits only for its own output, never behind a packet for another.
- Each crossbar input reads one packet at a time; each output sends one at a time and picks the
  next queue head round-robin over (input port, VC), so no input starves.
- Routing: kernels/routing.py route_out. Table routing (the default): route_port[router,
  destination node] and vc_next[router, in port, out port, in VC] come from the topology
  builder; in-order delivery between two nodes follows from one path, one VC sequence and FIFO
  queues per output. Adaptive routings (dragonfly) do not keep packets in order.
- Link latency by port class (routing.link_lat): terminal links network.link_latency,
  router links the topology's local / global latency (dragonfly), link_latency elsewhere.
- Events only where a packet may move: an arbitration that finds no winner reschedules itself
  at the earliest cycle a head becomes ready or its input free (and not before the output
  frees: an arbitration while the output is still sending would only reschedule itself); a
  head short of credits is served by the credit's arrival (credit_arrived, then arbitrate);
  an output with packets left arbitrates again when it frees.

Array shapes: voq int32 [B, R, P, V, P, 2] (head and tail packet ids side by side, -1:
empty; packets chain through pk_next), outq int32 [B, R, P] (packets queued for each output), voq_mask int64
[B, R, P, MW] (per output, bit q = pi * MAX_VCS + vi set while queue (pi, vi) is not empty;
MW = ceil(P * MAX_VCS / 64) words: arbitration visits only non-empty queues, and q decodes
without a division), ib_cnt/ib_flits int32 [B, R, P, V] (input buffer occupancy), cr int32
[B, R, P, V] (credits of output p for the downstream VC buffer), op_busy/op_arbt/op_util int64
[B, R, P], op_rr int32 [B, R, P] (last winner q), ip_busy int64 [B, R, P].
"""
from numba.cpython.unsafe.numbers import trailing_zeros   # LLVM cttz: the lowest set bit

from extoll_vec.dtypes import EV_ARB, EV_NIC_RX, H_ROUTER, MAX_VCS, P_HOOKS, P_LINK_LAT, VC_SHIFT
from extoll_vec.kernels import flowctl
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.router_iq import credits_upstream, enter_input, xbar_free
from extoll_vec.kernels.wheel import schedule


@inner
def router_accept(S, T, par, b, r, p, v, h, now):
    """Packet h starts crossing the link into input (p, v) of router r at cycle now. Its
    buffer space was reserved by the upstream credits, so FIFO order on the link is kept by
    queueing it here already; it becomes eligible after the link and the pipeline."""
    t = enter_input(S, T, par, b, r, p, v, h, now)
    if t < 0:
        return
    out = S.pk[b, h].out
    tail = S.voq[b, r, p, v, out, 1]
    S.voq[b, r, p, v, out, 1] = h
    S.outq[b, r, out] += 1
    if tail >= 0:
        S.pk[b, tail].next = h   # behind others for the same output: served in turn
    else:
        S.voq[b, r, p, v, out, 0] = h
        q = (p << VC_SHIFT) | v
        S.voq_mask[b, r, out, q >> 6] |= 1 << (q & 63)
        # the head of its queue competes once it is ready and its input is free (which may be
        # later: the input may still be reading a packet that waited for its own output)
        request_arb(S, b, r, out, max(t, S.ip_busy[b, r, p]))


@inner
def request_arb(S, b, r, po, t):
    """Ask output po to arbitrate at cycle t, or when it frees if it is still sending then
    (once per cycle: later requests are duplicates)."""
    if S.op_busy[b, r, po] > t:
        t = S.op_busy[b, r, po]
    if S.op_arbt[b, r, po] != t:
        S.op_arbt[b, r, po] = t
        schedule(S, b, t, EV_ARB, r, po, 0)


@inner
def credit_arrived(S, b, r, idx, flits):
    """Link credits for VC buffer idx = port * MAX_VCS + vc (as arbitrate sends them) reach
    router r; returns the output port, which the caller lets arbitrate at once."""
    po = idx >> VC_SHIFT
    S.cr[b, r, po, idx & (MAX_VCS - 1)] += flits
    return po


@inner
def arbitrate(S, T, par, b, r, po, now):
    """Output po of router r sends the next queue head for it, round-robin over (input port, VC)
    from the last winner; see the module docstring for when it runs again."""
    if S.op_busy[b, r, po] > now:
        request_arb(S, b, r, po, S.op_busy[b, r, po])
        return
    if S.outq[b, r, po] == 0:
        return
    PV = S.voq.shape[2] << VC_SHIFT
    start = S.op_rr[b, r, po]
    retry = -1
    win = -1
    h = pi = vi = -1
    # candidates (input port, VC) = q = pi * MAX_VCS + vi in round-robin order from the last
    # winner: q in (start, PV) first, then q in [0, start]; only non-empty queues (voq_mask)
    for sweep in range(2):
        lo = start + 1 if sweep == 0 else 0
        hi = PV if sweep == 0 else start + 1
        for w in range(lo >> 6, ((hi - 1) >> 6) + 1 if hi > lo else 0):
            m = S.voq_mask[b, r, po, w]
            base = w << 6
            if lo > base:
                m &= ~((1 << (lo - base)) - 1)
            if hi < base + 64:
                m &= (1 << (hi - base)) - 1
            while m != 0:
                q = base + trailing_zeros(m)
                m &= m - 1
                pi = q >> VC_SHIFT
                vi = q & (MAX_VCS - 1)
                h = S.voq[b, r, pi, vi, po, 0]
                t = max(S.pk[b, h].ready, S.ip_busy[b, r, pi])
                if t > now:
                    if retry < 0 or t < retry:
                        retry = t
                    continue
                if S.cr[b, r, po, S.pk[b, h].ovc] < S.pk[b, h].flits:
                    continue   # the credit's arrival brings it back
                win = q
                break
            if win >= 0:
                break
        if win >= 0:
            break
    if win < 0:
        if retry >= 0:
            request_arb(S, b, r, po, retry)
        return
    # --- winner: the head of queue (pi, vi, po) leaves on VC vo ---
    vo = S.pk[b, h].ovc
    L = S.pk[b, h].flits
    S.op_rr[b, r, po] = win
    nxt = S.pk[b, h].next
    S.voq[b, r, pi, vi, po, 0] = nxt
    if nxt < 0:
        S.voq[b, r, pi, vi, po, 1] = -1
        S.voq_mask[b, r, po, win >> 6] &= ~(1 << (win & 63))
    S.outq[b, r, po] -= 1
    S.ib_cnt[b, r, pi, vi] -= 1
    S.ib_flits[b, r, pi, vi] -= L
    S.cr[b, r, po, vo] -= L
    lat = par[b, P_LINK_LAT]
    t_free = now + L
    # the crossbar reads the packet at network.speedup (kernels/router_iq.py xbar_free; with
    # speedup 1 the input is free at t_free, as before)
    t_in = xbar_free(par, b, S.pk[b, h].ready, L, now)
    S.ip_busy[b, r, pi] = t_in
    S.op_busy[b, r, po] = t_free
    S.op_util[b, r, po] += L
    S.hops[b] += 1
    if par[b, P_HOOKS] & H_ROUTER:   # the protocol's router hook (marking, Schneider et al.'s FECN)
        flowctl.router_on_forward(S, T, par, b, r, pi, po, h, now)
    if S.outq[b, r, po] > 0:
        request_arb(S, b, r, po, t_free)
    credits_upstream(S, T, par, b, r, pi, vi, L, t_in)
    dn = T.terminal_node[r, po]
    if dn >= 0:
        schedule(S, b, now + lat + L - 1, EV_NIC_RX, dn, h, 0)
    else:
        router_accept(S, T, par, b, T.neighbor[r, po], T.neighbor_port[r, po], vo, h, now)

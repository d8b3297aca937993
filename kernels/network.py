"""Routers and links: virtual cut-through, credit-based link-level flow control, round-robin
output arbitration, deterministic table routing.

Model (one cycle = one flit on a link):
- A packet of L flits leaving an output at cycle t occupies the output until t + L. Its head
  reaches the next router at t + link_latency and may be switched after the router pipeline,
  at t + link_latency + router_delay; its tail reaches a NIC at t + link_latency + L - 1.
  So one packet over k routers arrives at k*router_delay + (k+1)*link_latency + L - 1 after
  the NIC started injecting it (the closed form of the acceptance test).
- Virtual cut-through: a packet may leave only if the downstream buffer of its VC has room for
  the whole packet (credits >= L). Credits come back link_latency cycles after its tail left.
  Nothing is ever dropped: a packet without credits waits in its input buffer.
- Each crossbar input reads one packet at a time; each output sends one at a time and picks the
  next packet round-robin over (input port, VC), so no input starves.
- Routing: route_port[router, destination node] and vc_next[router, in port, out port, in VC]
  come from the topology builder; in-order delivery between two nodes follows from one path,
  one VC sequence and FIFO buffers.

Array shapes: ib_q int32 [B, R, P, V, Q] (packet ids), ib_head/ib_cnt/ib_flits int32 [B, R, P, V],
cr int32 [B, R, P, V] (credits of output p for the downstream VC buffer), op_busy/op_arbt/op_util
int64 [B, R, P], op_rr int32 [B, R, P], ip_busy int64 [B, R, P].
"""
from extoll_vec.kernels.jit import inner

from extoll_vec.dtypes import (ERR_BUFFER_OVERFLOW, EV_ARB, EV_CREDIT, EV_NIC_CREDIT, EV_NIC_RX, P_BUF_FLITS, P_LINK_LAT,
                               P_ROUTER_DELAY)
from extoll_vec.kernels.wheel import schedule


@inner
def router_accept(S, T, par, b, r, p, v, h, now):
    """Packet h starts crossing the link into input (p, v) of router r at cycle now. Its
    buffer space was reserved by the upstream credits, so FIFO order on the link is kept by
    appending it here already; it becomes eligible after the link and the pipeline."""
    Q = S.ib_q.shape[4]
    L = S.pk_flits[b, h]
    if S.ib_cnt[b, r, p, v] >= Q or S.ib_flits[b, r, p, v] + L > par[b, P_BUF_FLITS]:
        S.status[b] |= ERR_BUFFER_OVERFLOW
        return
    was_empty = S.ib_cnt[b, r, p, v] == 0
    S.ib_q[b, r, p, v, (S.ib_head[b, r, p, v] + S.ib_cnt[b, r, p, v]) % Q] = h
    S.ib_cnt[b, r, p, v] += 1
    S.ib_flits[b, r, p, v] += L
    out = T.route_port[r, S.pk_dnode[b, h]]
    S.pk_out[b, h] = out
    S.pk_inp[b, h] = p
    S.pk_vc[b, h] = v
    if T.terminal_node[r, out] >= 0:
        S.pk_ovc[b, h] = 0  # the NIC has one ejection buffer
    else:
        S.pk_ovc[b, h] = T.vc_next[r, p, out, v]
    t = now + par[b, P_LINK_LAT] + par[b, P_ROUTER_DELAY]
    S.pk_ready[b, h] = t
    if was_empty:
        # the head of its queue competes as soon as it is ready and the input has finished
        # reading its predecessor (which may have left only just now, after waiting at the
        # head: then ip_busy is later than t, and an arbitration at t would fail on the busy
        # input with nobody to retry it); a packet behind others is brought forward when the
        # input finishes reading its predecessor (arbitrate)
        request_arb(S, b, r, out, max(t, S.ip_busy[b, r, p]))


@inner
def request_arb(S, b, r, po, t):
    """Ask output po to arbitrate at cycle t (once per cycle: later requests are duplicates)."""
    if S.op_arbt[b, r, po] != t:
        S.op_arbt[b, r, po] = t
        schedule(S, b, t, EV_ARB, r, po, 0)


@inner
def on_credit(S, T, par, b, r, idx, flits, now):
    V = S.cr.shape[3]
    po = idx // V
    S.cr[b, r, po, idx % V] += flits
    arbitrate(S, T, par, b, r, po, now)


@inner
def arbitrate(S, T, par, b, r, po, now):
    """Output po of router r picks the next packet, round-robin over (input port, VC).

    Events are raised only where a packet may be waiting: a request while the output is busy is
    deferred to the cycle it frees, as is any other head that wanted this output; heads of the
    input just read get one when the input finishes; a head short of credits is served by the
    credit's arrival (on_credit)."""
    if S.op_busy[b, r, po] > now:
        request_arb(S, b, r, po, S.op_busy[b, r, po])
        return
    P = S.ib_q.shape[2]
    V = S.ib_q.shape[3]
    Q = S.ib_q.shape[4]
    PV = P * V
    start = S.op_rr[b, r, po]
    win = -1
    others = False
    pi = start // V
    vi = start % V
    for k in range(PV):
        # walk (pi, vi) round-robin from the last winner without divisions in the loop
        vi += 1
        if vi == V:
            vi = 0
            pi += 1
            if pi == P:
                pi = 0
        idx = pi * V + vi
        if S.ib_cnt[b, r, pi, vi] == 0:
            continue
        h = S.ib_q[b, r, pi, vi, S.ib_head[b, r, pi, vi]]
        if S.pk_out[b, h] != po or S.pk_ready[b, h] > now:
            continue
        if (win < 0 and S.ip_busy[b, r, pi] <= now
                and S.cr[b, r, po, S.pk_ovc[b, h]] >= S.pk_flits[b, h]):
            win = idx
        else:
            others = True
    if win < 0:
        return
    # --- winner: the head of input (pi, vi) leaves through po on VC vo ---
    pi = win // V
    vi = win % V
    h = S.ib_q[b, r, pi, vi, S.ib_head[b, r, pi, vi]]
    vo = S.pk_ovc[b, h]
    L = S.pk_flits[b, h]
    S.op_rr[b, r, po] = win
    S.ib_head[b, r, pi, vi] = (S.ib_head[b, r, pi, vi] + 1) % Q
    S.ib_cnt[b, r, pi, vi] -= 1
    S.ib_flits[b, r, pi, vi] -= L
    S.cr[b, r, po, vo] -= L
    lat = par[b, P_LINK_LAT]
    t_free = now + L
    S.ip_busy[b, r, pi] = t_free
    S.op_busy[b, r, po] = t_free
    S.op_util[b, r, po] += L
    S.hops[b] += 1
    if others:
        request_arb(S, b, r, po, t_free)
    # the input reads its next packets from t_free on
    for v in range(V):
        if S.ib_cnt[b, r, pi, v] > 0:
            hn = S.ib_q[b, r, pi, v, S.ib_head[b, r, pi, v]]
            request_arb(S, b, r, S.pk_out[b, hn], max(t_free, S.pk_ready[b, hn]))
    # the tail leaves the input buffer at now + L - 1; its credits travel back one link
    t_cr = now + L - 1 + lat
    up_node = T.terminal_node[r, pi]
    if up_node >= 0:
        schedule(S, b, t_cr, EV_NIC_CREDIT, up_node, 0, L)
    else:
        schedule(S, b, t_cr, EV_CREDIT, T.neighbor[r, pi], T.neighbor_port[r, pi] * V + vi, L)
    dn = T.terminal_node[r, po]
    if dn >= 0:
        schedule(S, b, now + lat + L - 1, EV_NIC_RX, dn, h, 0)
    else:
        router_accept(S, T, par, b, T.neighbor[r, po], T.neighbor_port[r, po], vo, h, now)

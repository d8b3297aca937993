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
from numba import njit

from extoll_vec.dtypes import (ERR_BUFFER_OVERFLOW, EV_ARB, EV_ARRIVE, EV_CREDIT, EV_INFREE,
                               EV_NIC_CREDIT, EV_NIC_RX, P_BUF_FLITS, P_LINK_LAT,
                               P_ROUTER_DELAY)
from extoll_vec.kernels.wheel import schedule


@njit(cache=True)
def router_accept(S, T, par, b, r, p, v, h, now):
    """Packet h starts crossing the link into input (p, v) of router r at cycle now. Its
    buffer space was reserved by the upstream credits, so FIFO order on the link is kept by
    appending it here already; it becomes eligible after the link and the pipeline."""
    Q = S.ib_q.shape[4]
    L = S.pk_flits[b, h]
    if S.ib_cnt[b, r, p, v] >= Q or S.ib_flits[b, r, p, v] + L > par[b, P_BUF_FLITS]:
        S.status[b] |= ERR_BUFFER_OVERFLOW
        return
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
    schedule(S, b, t, EV_ARRIVE, r, h, 0)


@njit(cache=True)
def request_arb(S, b, r, po, t):
    """Ask output po to arbitrate at cycle t (once per cycle: later requests are duplicates)."""
    if S.op_arbt[b, r, po] != t:
        S.op_arbt[b, r, po] = t
        schedule(S, b, t, EV_ARB, r, po, 0)


@njit(cache=True)
def on_arrive(S, b, r, h, now):
    p = S.pk_inp[b, h]
    v = S.pk_vc[b, h]
    Q = S.ib_q.shape[4]
    if S.ib_q[b, r, p, v, S.ib_head[b, r, p, v] % Q] == h and S.ip_busy[b, r, p] <= now:
        request_arb(S, b, r, S.pk_out[b, h], now)


@njit(cache=True)
def on_infree(S, b, r, p, now):
    """Input p finished reading a packet: the heads of its VCs may compete again."""
    V = S.ib_q.shape[3]
    Q = S.ib_q.shape[4]
    for v in range(V):
        if S.ib_cnt[b, r, p, v] > 0:
            h = S.ib_q[b, r, p, v, S.ib_head[b, r, p, v]]
            if S.pk_ready[b, h] <= now:
                request_arb(S, b, r, S.pk_out[b, h], now)


@njit(cache=True)
def on_credit(S, b, r, idx, flits, now):
    V = S.cr.shape[3]
    po = idx // V
    S.cr[b, r, po, idx % V] += flits
    request_arb(S, b, r, po, now)


@njit(cache=True)
def arbitrate(S, T, par, b, r, po, now):
    """Output po of router r picks the next packet, round-robin over (input port, VC)."""
    if S.op_busy[b, r, po] > now:
        return
    P = S.ib_q.shape[2]
    V = S.ib_q.shape[3]
    Q = S.ib_q.shape[4]
    PV = P * V
    start = S.op_rr[b, r, po]
    for k in range(1, PV + 1):
        idx = (start + k) % PV
        pi = idx // V
        vi = idx % V
        if S.ib_cnt[b, r, pi, vi] == 0 or S.ip_busy[b, r, pi] > now:
            continue
        h = S.ib_q[b, r, pi, vi, S.ib_head[b, r, pi, vi]]
        if S.pk_out[b, h] != po or S.pk_ready[b, h] > now:
            continue
        vo = S.pk_ovc[b, h]
        L = S.pk_flits[b, h]
        if S.cr[b, r, po, vo] < L:
            continue
        # --- winner: h leaves input (pi, vi) through po on VC vo ---
        S.op_rr[b, r, po] = idx
        S.ib_head[b, r, pi, vi] = (S.ib_head[b, r, pi, vi] + 1) % Q
        S.ib_cnt[b, r, pi, vi] -= 1
        S.ib_flits[b, r, pi, vi] -= L
        S.cr[b, r, po, vo] -= L
        lat = par[b, P_LINK_LAT]
        S.ip_busy[b, r, pi] = now + L
        schedule(S, b, now + L, EV_INFREE, r, pi, 0)
        S.op_busy[b, r, po] = now + L
        S.op_util[b, r, po] += L
        request_arb(S, b, r, po, now + L)
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
        return

"""Hooks of protocol `fecn` (extoll_vec/protocols/portals/fecn.py says what it models and why): written
only against the hooks, the core helpers of kernels/common.py and the protocol state (fcn,
pk_pf)."""
import numpy as np

from extoll_vec.dtypes import (EJ_ACCEPT, EJ_CONSUMED, P_BUF_FLITS, P_EJ_FLITS, P_SEED, PK_PROTO,
                               PK_SYNTH)
from extoll_vec.kernels.common import proto_send, splitmix64
from extoll_vec.kernels.jit import inner
from extoll_vec.protocols.portals.fecn import (CN_BECN, CN_BECN_RX, CN_BECN_T, CN_BECN_TX, CN_EXPLICIT,
                                       CN_FECN_RX, CN_NEXT, CN_OWED, CN_THROTTLED, FRAC_BITS,
                                       P_DEC, P_DECAY, P_GAIN, P_INC, P_MAX, P_THRESH, PF_BECN,
                                       PF_FECN)


@inner
def _becn(S, par, b, n, now):
    """Node n's BECN counter at cycle now: the decay steps since the last one counted, applied
    (one per becn_decay_cycles while the counter is above 0)."""
    c = S.fcn[b, n, CN_BECN]
    k = par[b, P_DECAY]
    if c == 0:
        S.fcn[b, n, CN_BECN_T] = now
        return 0
    steps = (now - S.fcn[b, n, CN_BECN_T]) // k
    if steps > 0:
        c = max(0, c - steps)
        S.fcn[b, n, CN_BECN] = c
        S.fcn[b, n, CN_BECN_T] = now if c == 0 else S.fcn[b, n, CN_BECN_T] + steps * k
    return c


@inner
def nic_may_inject(S, T, par, b, node, h, now):
    if S.pk[b, h].kind != PK_SYNTH:
        return 0
    nxt = S.fcn[b, node, CN_NEXT]
    if now < nxt:
        return nxt
    c = _becn(S, par, b, node, now)
    mx = par[b, P_MAX]
    if c >= mx:   # no injection at the maximum: wait for the next decay step
        S.fcn[b, node, CN_THROTTLED] += 1
        return S.fcn[b, node, CN_BECN_T] + par[b, P_DECAY]
    L = S.pk[b, h].flits
    if c > 0:
        S.fcn[b, node, CN_NEXT] = now + (L * mx + (mx - c) - 1) // (mx - c)
        S.fcn[b, node, CN_THROTTLED] += 1
    if S.fcn[b, node, CN_OWED] > 0:   # one owed BECN rides back on this packet
        S.fcn[b, node, CN_OWED] -= 1
        S.fcn[b, node, CN_BECN_TX] += 1
        S.pk_pf[b, h, PF_BECN] = 1
    return 0


@inner
def nic_on_eject(S, T, par, b, node, h, now):
    kind = S.pk[b, h].kind
    if kind == PK_PROTO:      # an explicit BECN
        _react(S, par, b, node, 1, now)
        return EJ_CONSUMED
    if kind != PK_SYNTH:
        return EJ_ACCEPT
    _react(S, par, b, node, S.pk_pf[b, h, PF_BECN], now)
    if S.pk_pf[b, h, PF_FECN] != 0:
        S.fcn[b, node, CN_FECN_RX] += 1
        src = S.pk[b, h].src
        if S.syn_dest[b, node] == src:    # pairwise: the next packet back carries it
            S.fcn[b, node, CN_OWED] += 1
        elif proto_send(S, par, b, node, src, 1, now) >= 0:
            S.fcn[b, node, CN_EXPLICIT] += 1
    return EJ_ACCEPT


@inner
def _react(S, par, b, node, becn, now):
    """A packet reached node: +increment with a BECN, -decrement without (0..max)."""
    c = _becn(S, par, b, node, now)
    if becn != 0:
        S.fcn[b, node, CN_BECN_RX] += 1
        c = min(par[b, P_MAX], c + par[b, P_INC])
        if S.fcn[b, node, CN_BECN] == 0:
            S.fcn[b, node, CN_BECN_T] = now   # the decay counts from the first BECN
    else:
        c = max(0, c - par[b, P_DEC])
    S.fcn[b, node, CN_BECN] = c


@inner
def router_on_forward(S, T, par, b, r, pi, po, h, now):
    # the remote queue: the downstream VC buffer, or the NIC's ejection buffer on a terminal
    # port; its occupancy before this packet joins it (the core already took its credits)
    cap = par[b, P_EJ_FLITS] if T.terminal_node[r, po] >= 0 else par[b, P_BUF_FLITS]
    occ = cap - S.cr[b, r, po, S.pk[b, h].ovc] - S.pk[b, h].flits
    # share above the threshold, over the rest of the queue, in fixed point: 0 .. 1
    th = par[b, P_THRESH]
    share = (occ << FRAC_BITS) // cap
    if share <= th:
        return
    prob = ((share - th) << FRAC_BITS) // ((1 << FRAC_BITS) - th)
    prob = (prob * par[b, P_GAIN]) >> FRAC_BITS
    key = (np.uint64(par[b, P_SEED]) ^ (np.uint64(r) * np.uint64(0x9E3779B97F4A7C15))
           ^ (np.uint64(h) * np.uint64(0xC2B2AE3D27D4EB4F)) ^ np.uint64(now))
    u = splitmix64(splitmix64(key)) >> np.uint64(64 - FRAC_BITS)
    if np.int64(u) < prob:
        S.pk_pf[b, h, PF_FECN] = 1

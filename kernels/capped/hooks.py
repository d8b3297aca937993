"""Hooks of the seams' test protocol `capped` (extoll_vec/protocols/capped/__init__.py says what it does):
written only against the hooks, the core helpers of kernels/common.py (proto_send,
proto_timer, request_tx) and the protocol state (fcn, npar, pk_pf)."""
from extoll_vec.dtypes import (EJ_ACCEPT, EJ_CONSUMED, INJ_HOLD, P_DRAIN, P_MEASURE, P_WARMUP,
                               PK_PROTO, PK_SYNTH)
from extoll_vec.kernels.common import proto_send, proto_timer, request_tx
from extoll_vec.kernels.jit import inner
from extoll_vec.protocols.capped import (CN_CREDITS, CN_MARKS, CN_RECENT, CN_SENT, CN_TICKS,
                                         CN_WAIT, P_MARK_QUEUE, P_PERIOD, PF_CREDIT, PF_MARK)


@inner
def fc_init(S, T, par, b):
    N = S.fcn.shape[1]
    for n in range(N):
        S.fcn[b, n, CN_CREDITS] = S.npar[b, n, 0]
        proto_timer(S, b, par[b, P_PERIOD], n, 0)


@inner
def nic_may_inject(S, T, par, b, node, h, now):
    if S.pk[b, h].kind != PK_SYNTH:
        return 0
    if S.fcn[b, node, CN_CREDITS] > 0:
        S.fcn[b, node, CN_CREDITS] -= 1
        S.fcn[b, node, CN_SENT] += 1
        S.pk_pf[b, h, PF_CREDIT] = 1
        return 0
    S.fcn[b, node, CN_WAIT] = 1
    return INJ_HOLD


@inner
def nic_on_eject(S, T, par, b, node, h, now):
    if S.pk[b, h].kind == PK_PROTO:   # a credit back at its source
        S.fcn[b, node, CN_CREDITS] += S.pk[b, h].aux
        if S.fcn[b, node, CN_WAIT] != 0:
            S.fcn[b, node, CN_WAIT] = 0
            request_tx(S, b, node, max(now, S.nic_busy[b, node]))
        return EJ_CONSUMED
    if S.pk_pf[b, h, PF_MARK] != 0:
        S.fcn[b, node, CN_MARKS] += 1
        S.fcn[b, node, CN_RECENT] += 1
    if S.pk_pf[b, h, PF_CREDIT] != 0:
        c = proto_send(S, par, b, node, S.pk[b, h].src, 1, now)
        if c >= 0:
            S.pk[b, c].aux = 1
    return EJ_ACCEPT


@inner
def router_on_forward(S, T, par, b, r, pi, po, h, now):
    # packets still queued for this output after this one left it
    if S.outq[b, r, po] > par[b, P_MARK_QUEUE]:
        S.pk_pf[b, h, PF_MARK] = 1


@inner
def on_timer(S, T, par, b, target, arg, now):
    S.fcn[b, target, CN_RECENT] >>= 1
    S.fcn[b, target, CN_TICKS] += 1
    t = now + par[b, P_PERIOD]
    if t < par[b, P_WARMUP] + par[b, P_MEASURE] + par[b, P_DRAIN]:
        proto_timer(S, b, t, target, 0)

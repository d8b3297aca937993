"""Hooks of protocol `rdrp` (extoll_vec/protocols/portals/rdrp.py says what it models and why): written
only against the hooks, the core helpers of kernels/common.py and the protocol state (fcn,
pk_pf)."""
from extoll_vec.dtypes import EJ_ACCEPT, EJ_CONSUMED, INJ_HOLD, PK_PROTO, PK_SYNTH
from extoll_vec.kernels.common import proto_send, request_tx
from extoll_vec.kernels.jit import inner
from extoll_vec.protocols.portals.rdrp import (P_OUTSTANDING, CN_CREDITS, CN_EXPLICIT, CN_HELD, CN_OWED, CN_PIGGY,
                                       CN_WAIT, PF_CREDIT, PF_RETURNED)


@inner
def fc_init(S, T, par, b):
    for n in range(S.fcn.shape[1]):
        S.fcn[b, n, CN_CREDITS] = par[b, P_OUTSTANDING]


@inner
def _flush(S, par, b, node, now):
    """The credits node owes its destination leave now in a one-flit credit packet."""
    k = S.fcn[b, node, CN_OWED]
    if k > 0:
        c = proto_send(S, par, b, node, S.syn_dest[b, node], 1, now)
        if c >= 0:
            S.pk[b, c].aux = k
            S.fcn[b, node, CN_OWED] = 0
            S.fcn[b, node, CN_EXPLICIT] += 1


@inner
def _take_back(S, b, node, k, now):
    if k > 0:
        S.fcn[b, node, CN_CREDITS] += k
        if S.fcn[b, node, CN_WAIT] != 0:
            S.fcn[b, node, CN_WAIT] = 0
            request_tx(S, b, node, max(now, S.nic_busy[b, node]))


@inner
def nic_may_inject(S, T, par, b, node, h, now):
    if S.pk[b, h].kind != PK_SYNTH:
        return 0
    if S.fcn[b, node, CN_CREDITS] <= 0:
        S.fcn[b, node, CN_WAIT] = 1
        S.fcn[b, node, CN_HELD] += 1
        _flush(S, par, b, node, now)   # nothing goes back while it waits: send them now
        return INJ_HOLD
    S.fcn[b, node, CN_CREDITS] -= 1
    S.pk_pf[b, h, PF_CREDIT] = 1
    k = S.fcn[b, node, CN_OWED]
    if k > 0 and S.pk[b, h].dnode == S.syn_dest[b, node]:
        S.pk_pf[b, h, PF_RETURNED] = k
        S.fcn[b, node, CN_OWED] = 0
        S.fcn[b, node, CN_PIGGY] += k
    return 0


@inner
def nic_on_eject(S, T, par, b, node, h, now):
    kind = S.pk[b, h].kind
    if kind == PK_PROTO:   # a credit packet
        _take_back(S, b, node, S.pk[b, h].aux, now)
        return EJ_CONSUMED
    if kind != PK_SYNTH:
        return EJ_ACCEPT
    _take_back(S, b, node, S.pk_pf[b, h, PF_RETURNED], now)
    if S.pk_pf[b, h, PF_CREDIT] != 0:   # reached its destination: its credit goes back
        src = S.pk[b, h].src
        if S.syn_dest[b, node] == src:
            S.fcn[b, node, CN_OWED] += 1
            if S.nq_cnt[b, node] == 0 or S.fcn[b, node, CN_WAIT] != 0:
                _flush(S, par, b, node, now)   # no packet of its own will carry it soon
        else:
            c = proto_send(S, par, b, node, src, 1, now)
            if c >= 0:
                S.pk[b, c].aux = 1
                S.fcn[b, node, CN_EXPLICIT] += 1
    return EJ_ACCEPT

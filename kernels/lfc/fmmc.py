"""Hooks of FM/MC (Bhoedjang et al., sec. 2.2; extoll_vec/protocols/lfc/fmmc.py says what is modelled
and the readings taken). The host holds the flow control: a window per pair for unicast
(kernels/extoll/window.py) and cached multicast credits from the manager NI; the NIs forward
and copy to their hosts without credits, through one receive queue each.

A packet an NI handles is kept (INJ_TAKEN for its host's, EJ_KEPT for a received one) while
copies of it move: one per child in its root's tree and, at a receiver, one for the host
(common.to_host); it is retired when its last copy is done (nic_on_sent, nic_on_host).

State: fcr[b, r, R_*] a host's multicast credits; fcn[b, x, CN_*] the NI's queue and, at
the manager, the credit pool, the waiting requests and the token; npar[b, x, NP_*] the NI
processor's costs, the token's route and the forwarding table.
"""
from extoll_vec.dtypes import (EJ_ACCEPT, EJ_CONSUMED, EJ_KEPT, INJ_TAKEN, P_CREDIT, P_FLIT_BYTES,
                               P_PIO, P_PIO_KB, PK_CTRL, PK_DATA, PK_PROTO)
from extoll_vec.kernels.extoll import window as fc_window
from extoll_vec.kernels.common import (dma_start, nic_release_one, nic_work, packet_payload,
                                      pk_clone, proto_resend_at, proto_retire, proto_send,
                                      to_host, wake_rank)
from extoll_vec.kernels.jit import inner
from extoll_vec.protocols.lfc.fmmc import (CN_AVAIL, CN_GRANTED, CN_PEND, CN_PHEAD, CN_QMAX,
                                       CN_QUSED, CN_RECLAIMED, CN_REQUESTS, CN_RETURNED, CN_RING,
                                       CN_ROUNDS, CN_SWAPS, CN_TOKEN, CN_VISITS, NODE_PARAMS,
                                       NP_CREDIT, NP_FANOUT, NP_FWD, NP_MEMBER, NP_NEXT, NP_POLL,
                                       NP_RX, NP_SWAP, NP_TOKEN, NP_TX, NP_TX_KB, P_BUFFERS,
                                       P_CTRL_FLITS, P_MANAGER, P_QUEUE, P_REQUEST, PF_BACK,
                                       PF_HOST, PF_MASTER, PF_POLLED, PF_REFS, PF_SENT, R_MC_BACK,
                                       R_MC_CRED, R_MC_GOT, R_MC_REQ, R_MC_TAKEN, T_GRANT,
                                       T_REQUEST, T_TOKEN, T_WANT)


# ---- the host: unicast window, cached multicast credits ------------------------------------
@inner
def fc_init(S, T, par, b):
    fc_window.fc_init(S, T, par, b)
    S.fcn[b, par[b, P_MANAGER], CN_AVAIL] = par[b, P_BUFFERS]


@inner
def may_send(S, par, b, r, dst):
    """A multicast packet needs a cached credit; without one the host asks the manager once
    (a request descriptor its NI sends on) and waits for the grant (gap G20)."""
    if dst >= 0:
        return fc_window.may_send(S, par, b, r, dst)
    if S.fcr[b, r, R_MC_CRED] > 0:
        return True
    if S.fcr[b, r, R_MC_REQ] == 0:
        S.fcr[b, r, R_MC_REQ] = 1
        now = S.now[b]
        t = nic_work(S, b, r, now + par[b, P_PIO], S.npar[b, r, NP_CREDIT])
        m = par[b, P_MANAGER]
        if r == m:   # the manager is this host's own NI: a grant may come at once
            _request(S, par, b, m, r, t)
            return S.fcr[b, r, R_MC_CRED] > 0
        else:
            u = proto_send(S, par, b, r, m, par[b, P_CTRL_FLITS], now)
            if u >= 0:
                S.pk[b, u].pay = T_REQUEST
                S.pk[b, u].aux = par[b, P_REQUEST]
                S.pk[b, u].ready = t
    return False


@inner
def on_sent(S, par, b, r, dst, h, delayed):
    if dst >= 0:
        return fc_window.on_sent(S, par, b, r, dst, h, delayed)
    S.fcr[b, r, R_MC_CRED] -= 1
    return par[b, P_CREDIT]


@inner
def on_retrieved(S, par, b, r, src):
    return fc_window.on_retrieved(S, par, b, r, src)


@inner
def on_mc_retrieved(S, par, b, r, root):
    """The host took a multicast packet out of its buffer: the buffer is free, which the
    manager learns when the token passes."""
    S.fcr[b, r, R_MC_TAKEN] += 1
    return par[b, P_CREDIT]


@inner
def ctrl_payload(S, par, b, r, dst, ctype):
    return fc_window.ctrl_payload(S, par, b, r, dst, ctype)


@inner
def on_control(S, par, b, r, src, ctype, payload):
    return fc_window.on_control(S, par, b, r, src, ctype, payload)


@inner
def snapshot_field(S, par, b):
    return fc_window.snapshot_field(S, par, b)


# ---- the manager NI ------------------------------------------------------------------------
@inner
def _deliver(S, par, b, m, r, g, t):
    """Grant g credits to host r: in a grant packet, or straight into host memory if r is
    the manager's own host."""
    S.fcn[b, m, CN_AVAIL] -= g
    S.fcn[b, m, CN_GRANTED] += g
    if r == m:
        _granted(S, b, r, g, t)
        return
    u = proto_send(S, par, b, m, r, par[b, P_CTRL_FLITS], t)
    if u >= 0:
        S.pk[b, u].pay = T_GRANT
        S.pk[b, u].aux = g
        S.pk[b, u].ready = t


@inner
def _granted(S, b, r, g, t):
    S.fcr[b, r, R_MC_CRED] += g
    S.fcr[b, r, R_MC_GOT] += g
    S.fcr[b, r, R_MC_REQ] = 0
    wake_rank(S, b, r, t)


@inner
def _serve(S, par, b, m, t):
    """Grant the waiting requests in order while credits are free (a partial grant too)."""
    N = S.fcn.shape[1]
    while S.fcn[b, m, CN_PEND] > 0 and S.fcn[b, m, CN_AVAIL] > 0:
        r = S.fcn[b, m, CN_RING + S.fcn[b, m, CN_PHEAD]]
        S.fcn[b, m, CN_PHEAD] = (S.fcn[b, m, CN_PHEAD] + 1) % N
        S.fcn[b, m, CN_PEND] -= 1
        t = nic_work(S, b, m, t, S.npar[b, m, NP_CREDIT])
        _deliver(S, par, b, m, r, min(par[b, P_REQUEST], S.fcn[b, m, CN_AVAIL]), t)


@inner
def _request(S, par, b, m, r, t):
    """Host r asks for credits: it queues behind the waiting ones; the token starts if it is
    parked (credits are about to be spent, and only the token brings them back)."""
    N = S.fcn.shape[1]
    S.fcn[b, m, CN_REQUESTS] += 1
    S.fcn[b, m, CN_RING + (S.fcn[b, m, CN_PHEAD] + S.fcn[b, m, CN_PEND]) % N] = r
    S.fcn[b, m, CN_PEND] += 1
    _serve(S, par, b, m, t)
    if S.fcn[b, m, CN_TOKEN] == 0:
        S.fcn[b, m, CN_TOKEN] = 1
        _visit(S, par, b, m, -1, 0, 0, S.fcn[b, m, CN_PEND] > 0, t)


@inner
def _round_over(S, par, b, m, least, sent, back, t):
    """The token is back: credits spent by every member and freed by every other are free
    again, as are the cached credits it took back; the next round starts while spent ones
    are not reclaimed or requests wait."""
    S.fcn[b, m, CN_ROUNDS] += 1
    S.fcn[b, m, CN_AVAIL] += least - S.fcn[b, m, CN_RECLAIMED] + back
    S.fcn[b, m, CN_RECLAIMED] = least
    S.fcn[b, m, CN_RETURNED] += back
    _serve(S, par, b, m, t)
    if S.fcn[b, m, CN_PEND] > 0 or least < sent:
        _visit(S, par, b, m, -1, 0, 0, S.fcn[b, m, CN_PEND] > 0, t)
    else:
        S.fcn[b, m, CN_TOKEN] = 0


# ---- the token -----------------------------------------------------------------------------
@inner
def _idle(S, b, r):
    """Host r has no multicast send queued (it publishes this in NI-visible memory)."""
    for i in range(S.sq_cnt[b, r]):
        if S.sd_dst[b, r, S.sq[b, r, i]] < 0:
            return False
    return True


@inner
def _visit(S, par, b, x, least, sent, back, want, now):
    """The token at NI x (least -1: the round starts here): it reads x's host's counters,
    takes back its cached credits if requests wait and the host has no multicast to send,
    and goes on to the next NI of its route."""
    t = nic_work(S, b, x, now, S.npar[b, x, NP_TOKEN])
    S.fcn[b, x, CN_VISITS] += 1
    if S.npar[b, x, NP_MEMBER] != 0:
        mine = S.fcr[b, x, R_MC_TAKEN] + S.mseq_tx[b, x]
        if least < 0 or mine < least:
            least = mine
        sent += S.mseq_tx[b, x]
        k = S.fcr[b, x, R_MC_CRED]
        if want and k > 0 and _idle(S, b, x):
            S.fcr[b, x, R_MC_CRED] = 0
            S.fcr[b, x, R_MC_BACK] += k
            back += k
    nxt = S.npar[b, x, NP_NEXT]   # (the route has two NIs at least: fmmc.py _check_run)
    u = proto_send(S, par, b, x, nxt, par[b, P_CTRL_FLITS], t)
    if u >= 0:
        S.pk[b, u].pay = T_TOKEN | (T_WANT if want else 0)
        S.pk[b, u].aux = least
        S.pk_pf[b, u, PF_SENT] = sent
        S.pk_pf[b, u, PF_BACK] = back
        S.pk[b, u].ready = t


# ---- the NI's send side --------------------------------------------------------------------
@inner
def _copy_to(S, par, b, x, m, c, t):
    """A copy of kept packet m for NI c, transmitted once the processor has prepared it."""
    h = pk_clone(S, b, m, t)
    if h < 0:
        return
    S.pk[b, h].dnode = c
    S.pk[b, h].dst = c     # the rank of node c (one process per NI)
    S.pk_pf[b, h, PF_MASTER] = m + 1
    S.pk_pf[b, h, PF_REFS] = 0
    S.pk_pf[b, h, PF_HOST] = 0
    S.pk_pf[b, m, PF_REFS] += 1
    nbytes = S.pk[b, h].flits * par[b, P_FLIT_BYTES]
    cost = S.npar[b, x, NP_TX] + ((nbytes * S.npar[b, x, NP_TX_KB]) >> 10)
    proto_resend_at(S, par, b, x, h, nic_work(S, b, x, t, cost))


@inner
def _forward(S, par, b, x, m, root, t):
    """Kept packet m of root's tree goes on to x's children in that tree (no credit check:
    FM/MC's NIs forward as packets arrive, section 2.2), a send descriptor each."""
    base = NODE_PARAMS + root * (S.npar[b, x, NP_FANOUT] + 1)
    for k in range(S.npar[b, x, base]):
        t = nic_work(S, b, x, t, S.npar[b, x, NP_FWD])
        _copy_to(S, par, b, x, m, S.npar[b, x, base + 1 + k], t)


@inner
def nic_may_inject(S, T, par, b, node, h, now):
    """The NI polls its send pool's head: once the host's PIO write is complete it spends
    its poll step, then keeps the packet and sends a copy to the destination, or, for a
    multicast, to each of the root's children."""
    if S.pk_pf[b, h, PF_POLLED] == 0:
        nbytes = packet_payload(par, b, S.pk[b, h].pay, S.pk[b, h].last)
        if S.pk[b, h].kind != PK_DATA:
            nbytes = 0
        seen = S.pk[b, h].t0 + par[b, P_PIO] + ((nbytes * par[b, P_PIO_KB]) >> 10)
        t = nic_work(S, b, node, max(now, seen), S.npar[b, node, NP_POLL])
        S.pk_pf[b, h, PF_POLLED] = 1
        S.pk[b, h].ready = t   # (a host packet never enters a router: ready is free to use)
        return max(t, now + 1)
    if S.pk[b, h].ready > now:
        return S.pk[b, h].ready
    S.nic_kept[b, node] += 1
    S.pk_pf[b, h, PF_REFS] = 0
    S.pk_pf[b, h, PF_MASTER] = 0
    if S.pk[b, h].kind == PK_DATA and S.pk[b, h].aux2 > 0:
        _forward(S, par, b, node, h, node, now)
    else:
        _copy_to(S, par, b, node, h, S.pk[b, h].dnode, now)
    return INJ_TAKEN


@inner
def _copy_done(S, par, b, x, h, now):
    m1 = S.pk_pf[b, h, PF_MASTER]
    if m1 == 0 or S.pk[b, h].kind == PK_PROTO:
        return
    m = m1 - 1
    S.pk_pf[b, m, PF_REFS] -= 1
    if S.pk_pf[b, m, PF_REFS] > 0:
        return
    if S.pk_pf[b, m, PF_HOST] == 2:   # a received packet: it leaves the receive queue
        S.fcn[b, x, CN_QUSED] -= 1
    else:                             # the host's packet: its send-pool packet is free
        S.nic_kept[b, x] -= 1
        nic_release_one(S, b, x, now)
        wake_rank(S, b, x, now)
    proto_retire(S, b, m)


@inner
def nic_on_sent(S, T, par, b, node, h, now):
    _copy_done(S, par, b, node, h, now)


@inner
def nic_on_host(S, T, par, b, node, h, now):
    _copy_done(S, par, b, node, h, now)


# ---- the receiving NI ----------------------------------------------------------------------
@inner
def _on_proto(S, par, b, y, h, now):
    typ = S.pk[b, h].pay
    if typ == T_REQUEST:
        _request(S, par, b, y, S.pk[b, h].src, nic_work(S, b, y, now, S.npar[b, y, NP_CREDIT]))
    elif typ == T_GRANT:
        _granted(S, b, y, S.pk[b, h].aux, nic_work(S, b, y, now, S.npar[b, y, NP_CREDIT]))
    else:
        least, sent, back = S.pk[b, h].aux, S.pk_pf[b, h, PF_SENT], S.pk_pf[b, h, PF_BACK]
        if y == par[b, P_MANAGER]:
            _round_over(S, par, b, y, max(least, 0), sent, back,
                        nic_work(S, b, y, now, S.npar[b, y, NP_TOKEN]))
        else:
            _visit(S, par, b, y, least, sent, back, (typ & T_WANT) != 0, now)


@inner
def nic_on_eject(S, T, par, b, y, h, now):
    kind = S.pk[b, h].kind
    if kind == PK_PROTO:
        _on_proto(S, par, b, y, h, now)
        return EJ_CONSUMED
    if kind != PK_DATA and kind != PK_CTRL:
        return EJ_ACCEPT
    # the NI receive queue (one for all senders): a packet finding it full goes to host
    # memory and comes back later (G25): the bus twice, the processor's DMA set-ups
    t = nic_work(S, b, y, now, S.npar[b, y, NP_RX])
    used = S.fcn[b, y, CN_QUSED] + 1
    S.fcn[b, y, CN_QUSED] = used
    if used > S.fcn[b, y, CN_QMAX]:
        S.fcn[b, y, CN_QMAX] = used
    if used > par[b, P_QUEUE]:
        S.fcn[b, y, CN_SWAPS] += 1
        dma_start(S, par, b, y, h, t)
        t = max(nic_work(S, b, y, t, S.npar[b, y, NP_SWAP]), dma_start(S, par, b, y, h, t))
    S.pk_pf[b, h, PF_MASTER] = 0
    S.pk_pf[b, h, PF_REFS] = 1
    S.pk_pf[b, h, PF_HOST] = 2      # kept by the receiving NI (its receive queue)
    h3 = pk_clone(S, b, h, t)
    if h3 >= 0:
        S.pk_pf[b, h3, PF_MASTER] = h + 1
        S.pk_pf[b, h3, PF_HOST] = 1
        S.pk[b, h3].dst = y
        to_host(S, par, b, y, h3, t)
    if kind == PK_DATA and S.pk[b, h].aux2 > 0:
        _forward(S, par, b, y, h, S.pk[b, h].src, t)
    return EJ_KEPT

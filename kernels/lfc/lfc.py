"""Hooks of LFC (Bhoedjang et al., sec. 3.1; extoll_vec/protocols/lfc/lfc.py says what is modelled and
the readings taken). Everything happens on the NIs: the host only writes packets into its NI's
send pool (may_send: a free packet in it) and takes delivered ones out of its mailbox.

A packet the NI handles is kept (INJ_TAKEN at the sender, EJ_KEPT at the receiver) while
copies of it do the moving: one per destination it is transmitted to (pk_clone, sent from the
protocol queue once the NI processor has prepared it: proto_resend_at) and one for the local
host (common.to_host). A kept packet is retired, and its buffer freed, when its last copy is
done (nic_on_sent, nic_on_host): a host's packet frees its send-pool packet, a received one
its buffer in the sender's partition, whose credit then goes back (or, in a deadlock
recovery, the deadlock buffer it came in: kernels/lfc/recovery.py).

State: nn[b, x, y, NN_*] x's credits for y, y's partition at x and x's blocked-sends queue to
y (kernels/lfc/queues.py), x's part in y's recovery; fcn[b, x, CN_*] counters and x's own
recovery; npar[b, x, NP_*] the NI processor's costs and forwarding table.
"""
from extoll_vec.dtypes import (EJ_ACCEPT, EJ_CONSUMED, EJ_KEPT, ERR_INVARIANT, INJ_TAKEN,
                               P_PIO, P_PIO_KB, PK_DATA, PK_PROTO)
from extoll_vec.kernels.common import (nic_full, nic_release_one, nic_work, packet_payload,
                                      pk_clone, proto_retire, proto_send, to_host, wake_rank)
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.lfc.queues import block, transmit, unblock
from extoll_vec.kernels.lfc.recovery import (detect, dl_packet_done, dl_take_buffer, on_ack,
                                            on_flagged)
from extoll_vec.protocols.lfc.lfc import (CN_POLLS, CN_UPDATES, NN_A_GIVEN, NN_A_GOT, NN_A_RECVD,
                                      NN_BQ_CNT, NN_BQ_HEAD, NN_BQ_TAIL, NN_CRED, NN_MAX_USED,
                                      NN_OWED, NN_RECV, NN_USED, NODE_PARAMS, NP_CREDIT, NP_FANOUT,
                                      NP_FWD, NP_POLL, NP_RX, P_CREDITS, P_LOW_WATER,
                                      P_UPDATE_FLITS, P_UPDATE_OWED, PF_CREDITS, PF_FLAG, PF_HOP,
                                      PF_HOST, PF_MASTER, PF_POLLED, PF_REFS)


@inner
def fc_init(S, T, par, b):
    N = S.nn.shape[1]
    C = par[b, P_CREDITS]
    for x in range(N):
        for y in range(N):
            S.nn[b, x, y, NN_BQ_HEAD] = -1
            S.nn[b, x, y, NN_BQ_TAIL] = -1
            if x != y:
                S.nn[b, x, y, NN_CRED] = C


@inner
def may_send(S, par, b, r, dst):
    """A free packet in the NI's send pool (rank r is node r): otherwise the host waits,
    polling its mailbox, rather than block in a PIO write (3.1: LFC's send routine polls;
    a host that stopped draining could deadlock an exchange)."""
    return not nic_full(S, par, b, r)


# ---- the sending NI ---------------------------------------------------------------------------
@inner
def _copy_to(S, par, b, x, m, c, now):
    """A copy of kept packet m for NI c: transmitted if x has a credit for c and nothing for c
    waits before it, else queued."""
    h = pk_clone(S, b, m, now)
    if h < 0:
        return
    S.pk[b, h].dnode = c
    S.pk[b, h].dst = c     # the rank of node c (one process per NI)
    S.pk_pf[b, h, PF_HOP] = x + 1
    S.pk_pf[b, h, PF_MASTER] = m + 1
    S.pk_pf[b, h, PF_REFS] = 0
    S.pk_pf[b, h, PF_POLLED] = 0
    S.pk_pf[b, h, PF_HOST] = 0
    S.pk_pf[b, h, PF_CREDITS] = 0
    S.pk_pf[b, h, PF_FLAG] = 0
    S.pk_pf[b, m, PF_REFS] += 1
    if S.nn[b, x, c, NN_BQ_CNT] == 0 and S.nn[b, x, c, NN_CRED] > 0:
        transmit(S, par, b, x, h, c, now, 0)
    else:
        block(S, b, x, h, c)


@inner
def nic_may_inject(S, T, par, b, node, h, now):
    """The NI polls its send pool's head (3.1, Figure 1): it sees the packet once the host's
    PIO write is complete, spends its poll step on it, then keeps it and sends a copy."""
    if S.pk[b, h].kind != PK_DATA:
        return 0
    if S.pk_pf[b, h, PF_POLLED] == 0:
        nbytes = packet_payload(par, b, S.pk[b, h].pay, S.pk[b, h].last)
        seen = S.pk[b, h].t0 + par[b, P_PIO] + ((nbytes * par[b, P_PIO_KB]) >> 10)
        t = nic_work(S, b, node, max(now, seen), S.npar[b, node, NP_POLL])
        S.pk_pf[b, h, PF_POLLED] = 1
        S.pk[b, h].ready = t   # (a host packet never enters a router: ready is free to use)
        return max(t, now + 1)
    if S.pk[b, h].ready > now:
        return S.pk[b, h].ready
    S.nic_kept[b, node] += 1   # it keeps its send-pool packet until its copies are done
    S.pk_pf[b, h, PF_REFS] = 0
    S.fcn[b, node, CN_POLLS] += 1
    if S.pk[b, h].aux2 > 0:    # a multicast: a copy to each of the root's children (3.2)
        _forward(S, par, b, node, h, node, now)
    else:
        _copy_to(S, par, b, node, h, S.pk[b, h].dnode, now)
    detect(S, par, b, node, now)
    return INJ_TAKEN


@inner
def _forward(S, par, b, x, m, root, now):
    """Kept packet m of root's tree goes on to x's children in that tree, in the table's order
    (first-packet-first-served: as it arrives, section 6), a send descriptor each (NP_FWD)."""
    base = NODE_PARAMS + root * (S.npar[b, x, NP_FANOUT] + 1)
    t = now
    for k in range(S.npar[b, x, base]):
        t = nic_work(S, b, x, t, S.npar[b, x, NP_FWD])
        _copy_to(S, par, b, x, m, S.npar[b, x, base + 1 + k], t)


# ---- buffers freed, credits back ----------------------------------------------------------------
@inner
def _maybe_update(S, par, b, y, x, now):
    """y owes x credits: an explicit update goes once x is low (3.1: "receivers know when
    senders are low on credits"), as y counts it, or once enough are owed."""
    owed = S.nn[b, y, x, NN_OWED]
    if owed == 0:
        return
    low = par[b, P_CREDITS] - S.nn[b, y, x, NN_RECV] <= par[b, P_LOW_WATER]
    if not low and (par[b, P_UPDATE_OWED] == 0 or owed < par[b, P_UPDATE_OWED]):
        return
    u = proto_send(S, par, b, y, x, par[b, P_UPDATE_FLITS], now)
    if u < 0:
        return
    S.pk[b, u].aux = owed
    S.pk[b, u].ready = nic_work(S, b, y, now, S.npar[b, y, NP_CREDIT])
    S.nn[b, y, x, NN_OWED] = 0
    S.nn[b, y, x, NN_RECV] -= owed
    S.nn[b, y, x, NN_A_GIVEN] += owed
    S.fcn[b, y, CN_UPDATES] += 1


@inner
def _release(S, par, b, x, m, now):
    """Every copy of kept packet m is done: its buffer is free and m is retired."""
    hop = S.pk_pf[b, m, PF_HOP] - 1
    if hop < 0:   # the host's packet: its send-pool packet is free for the host again
        S.nic_kept[b, x] -= 1
        nic_release_one(S, b, x, now)
        wake_rank(S, b, x, now)
    elif S.pk_pf[b, m, PF_FLAG] > 0:   # it came without a credit: a deadlock buffer is free
        dl_packet_done(S, par, b, x, m, now)
    elif not dl_take_buffer(S, par, b, x, hop, now):   # else: hop's partition, credit owed
        S.nn[b, x, hop, NN_USED] -= 1
        S.nn[b, x, hop, NN_OWED] += 1
        _maybe_update(S, par, b, x, hop, now)
    proto_retire(S, b, m)


@inner
def _copy_done(S, par, b, x, h, now):
    m1 = S.pk_pf[b, h, PF_MASTER]
    if S.pk[b, h].kind == PK_DATA and m1 > 0:
        m = m1 - 1
        S.pk_pf[b, m, PF_REFS] -= 1
        if S.pk_pf[b, m, PF_REFS] == 0:
            _release(S, par, b, x, m, now)


@inner
def nic_on_sent(S, T, par, b, node, h, now):
    _copy_done(S, par, b, node, h, now)


@inner
def nic_on_host(S, T, par, b, node, h, now):
    _copy_done(S, par, b, node, h, now)


# ---- the receiving NI --------------------------------------------------------------------------
@inner
def nic_on_eject(S, T, par, b, y, h, now):
    kind = S.pk[b, h].kind
    if kind == PK_PROTO and S.pk_pf[b, h, PF_FLAG] > 0:   # a recovery's acknowledgement
        on_ack(S, par, b, y, S.pk[b, h].aux, now)
        return EJ_CONSUMED
    if kind == PK_PROTO:   # a credit update from NI x
        x = S.pk[b, h].src
        k = S.pk[b, h].aux
        S.nn[b, y, x, NN_CRED] += k
        S.nn[b, y, x, NN_A_GOT] += k
        unblock(S, par, b, y, x, nic_work(S, b, y, now, S.npar[b, y, NP_CREDIT]))
        return EJ_CONSUMED
    if kind != PK_DATA:
        return EJ_ACCEPT
    x = S.pk_pf[b, h, PF_HOP] - 1
    if x < 0:   # every data packet on the wire is a copy an NI sent (_copy_to)
        S.status[b] |= ERR_INVARIANT
        S.err_info[b, 0] = y
        return EJ_ACCEPT
    flagged = S.pk_pf[b, h, PF_FLAG] > 0   # on a deadlock channel: into its owner's buffer
    if not flagged:
        used = S.nn[b, y, x, NN_USED] + 1
        if used > par[b, P_CREDITS]:   # a packet without a buffer: the credits were miscounted
            S.status[b] |= ERR_INVARIANT
            S.err_info[b, 0] = y
            S.err_info[b, 1] = x
            return EJ_ACCEPT
        S.nn[b, y, x, NN_USED] = used
        if used > S.nn[b, y, x, NN_MAX_USED]:
            S.nn[b, y, x, NN_MAX_USED] = used
        S.nn[b, y, x, NN_RECV] += 1
        S.nn[b, y, x, NN_A_RECVD] += 1
    t = nic_work(S, b, y, now, S.npar[b, y, NP_RX])
    k = S.pk_pf[b, h, PF_CREDITS]
    S.pk_pf[b, h, PF_CREDITS] = 0
    S.pk_pf[b, h, PF_MASTER] = 0
    S.pk_pf[b, h, PF_REFS] = 1
    # its copy for the host, by DMA once a host buffer is posted (3.1); the DMA engine works
    # while the processor forwards (gap G8: both started in the receive step)
    h3 = pk_clone(S, b, h, now)
    if h3 >= 0:
        S.pk_pf[b, h3, PF_MASTER] = h + 1
        S.pk_pf[b, h3, PF_HOST] = 1
        S.pk_pf[b, h3, PF_FLAG] = 0
        S.pk[b, h3].dst = y
        to_host(S, par, b, y, h3, t)
    if k > 0:   # credits for x rode on the packet
        S.nn[b, y, x, NN_CRED] += k
        S.nn[b, y, x, NN_A_GOT] += k
        unblock(S, par, b, y, x, t)
    if S.pk[b, h].aux2 > 0:   # a multicast packet: on to y's children in its root's tree
        _forward(S, par, b, y, h, S.pk[b, h].src, t)
    if flagged:
        on_flagged(S, par, b, y, x, h, t)
    _maybe_update(S, par, b, y, x, t)
    detect(S, par, b, y, t)
    return EJ_KEPT

"""An LFC NI's send side (Bhoedjang et al., sec. 3.1): its credits per destination NI and its
blocked-sends queues, one per destination, of copies chained through pk.next
(extoll_vec/protocols/lfc/lfc.py has the state's layout). A copy goes with a credit, or, during a
deadlock recovery (section 4.2), without one on a deadlock channel: flagged with the channel's
owner."""
from extoll_vec.dtypes import ERR_QUEUE, P_FLIT_BYTES
from extoll_vec.kernels.common import nic_work, proto_resend_at
from extoll_vec.kernels.jit import inner
from extoll_vec.protocols.lfc.lfc import (CN_BLOCKED, CN_FLAGGED, CN_NQ, NN_A_GIVEN, NN_A_SENT,
                                      NN_BQ_CNT, NN_BQ_HEAD, NN_BQ_TAIL, NN_CRED, NN_OWED,
                                      NN_RECV, CN_PIGGY, NP_DL, NP_TX, NP_TX_KB, PF_BLOCKED,
                                      PF_CREDITS, PF_FLAG)


@inner
def transmit(S, par, b, x, h, c, now, flag):
    """Copy h goes to NI c, with every credit x owes c, and with one of x's credits for c
    (flag 0) or on the deadlock channel of NI flag - 1 (no credit: one of that NI's deadlock
    buffers at c takes it, 4.2)."""
    cost = S.npar[b, x, NP_TX]
    if flag == 0:
        S.nn[b, x, c, NN_CRED] -= 1
        S.nn[b, x, c, NN_A_SENT] += 1
    else:
        S.fcn[b, x, CN_FLAGGED] += 1
        cost += S.npar[b, x, NP_DL]
        # Table 1's fraction: a multicast packet (its root's sequence number; aux2 > 0 marks
        # a multicast) that took part in a recovery, however many times (fcr[b, root, seq])
        if S.pk[b, h].aux2 > 0 and S.pk[b, h].seq < S.fcr.shape[2]:
            S.fcr[b, S.pk[b, h].src, S.pk[b, h].seq] = 1
    S.pk_pf[b, h, PF_FLAG] = flag
    k = S.nn[b, x, c, NN_OWED]
    if k > 0:   # piggybacked (3.1: "when a packet happens to travel back to the sender")
        S.pk_pf[b, h, PF_CREDITS] = k
        S.nn[b, x, c, NN_OWED] = 0
        S.nn[b, x, c, NN_RECV] -= k
        S.nn[b, x, c, NN_A_GIVEN] += k
        S.fcn[b, x, CN_PIGGY] += k
    S.pk_pf[b, h, PF_BLOCKED] = 0
    nbytes = S.pk[b, h].flits * par[b, P_FLIT_BYTES]
    cost += (nbytes * S.npar[b, x, NP_TX_KB]) >> 10
    if not proto_resend_at(S, par, b, x, h, nic_work(S, b, x, now, cost)):
        S.status[b] |= ERR_QUEUE


@inner
def block(S, b, x, h, c):
    """No credit for c, or packets for c already wait: h joins the blocked-sends queue."""
    S.pk_pf[b, h, PF_BLOCKED] = 1
    S.pk[b, h].next = -1
    if S.nn[b, x, c, NN_BQ_CNT] == 0:
        S.nn[b, x, c, NN_BQ_HEAD] = h
        S.fcn[b, x, CN_NQ] += 1
    else:
        S.pk[b, S.nn[b, x, c, NN_BQ_TAIL]].next = h
    S.nn[b, x, c, NN_BQ_TAIL] = h
    S.nn[b, x, c, NN_BQ_CNT] += 1
    S.fcn[b, x, CN_BLOCKED] += 1


@inner
def take(S, b, x, c, prev, h):
    """Copy h leaves x's blocked-sends queue to c; prev is the copy before it (-1: h is the
    head)."""
    nxt = S.pk[b, h].next
    if prev < 0:
        S.nn[b, x, c, NN_BQ_HEAD] = nxt
    else:
        S.pk[b, prev].next = nxt
    if S.nn[b, x, c, NN_BQ_TAIL] == h:
        S.nn[b, x, c, NN_BQ_TAIL] = prev
    S.pk[b, h].next = -1
    S.nn[b, x, c, NN_BQ_CNT] -= 1
    if S.nn[b, x, c, NN_BQ_CNT] == 0:
        S.fcn[b, x, CN_NQ] -= 1


@inner
def first_of_tree(S, b, x, c, root):
    """The first copy of root's multicast tree in x's blocked-sends queue to c, and the copy
    before it (-1: none): (prev, h), h = -1 if the queue holds none."""
    prev = -1
    h = S.nn[b, x, c, NN_BQ_HEAD]
    while h >= 0:
        if S.pk[b, h].aux2 > 0 and S.pk[b, h].src == root:
            return prev, h
        prev = h
        h = S.pk[b, h].next
    return prev, -1


@inner
def unblock(S, par, b, x, c, now):
    """Credits for c came back: the blocked packets for c go first, in order (3.1: FIFO)."""
    while S.nn[b, x, c, NN_BQ_CNT] > 0 and S.nn[b, x, c, NN_CRED] > 0:
        h = S.nn[b, x, c, NN_BQ_HEAD]
        take(S, b, x, c, -1, h)
        transmit(S, par, b, x, h, c, now, 0)

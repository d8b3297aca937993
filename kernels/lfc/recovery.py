"""LFC's deadlock recovery (Bhoedjang et al., section 4): detection from local information only, one
recovery per NI at a time, the deadlocked subtree grown by flagged packets on the initiator's
deadlock channel and closed by merged acknowledgements. extoll_vec/protocols/lfc/lfc.py says
which readings the paper leaves open (gaps G14-G19 of docs/reproduction/lfc.md).

State: fcn[b, x, CN_REC] 1 while x's own recovery runs, CN_RR the queue it served last;
nn[b, x, o, NN_DL_*] x's part in owner o's recovery: the packet in o's deadlock buffer at x,
the NI that flagged it to x, the acknowledgements x still waits for; nn[b, x, y, NN_DL_IN]
deadlock packets at x that came from y (waiting for a buffer of y's partition)."""
from extoll_vec.dtypes import ERR_INVARIANT
from extoll_vec.kernels.common import nic_work, proto_send
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.lfc.queues import first_of_tree, take, transmit
from extoll_vec.protocols.lfc.lfc import (CN_ACKS, CN_NQ, CN_REC, CN_RECOVERIES, CN_RR, NN_BQ_CNT,
                                      NN_BQ_HEAD, NN_DL_ACKS, NN_DL_FROM, NN_DL_IN, NN_DL_PKT,
                                      NODE_PARAMS, NP_DL, NP_FANOUT, P_RECOVERY,
                                      P_UPDATE_FLITS, PF_FLAG, PF_HOP)


@inner
def detect(S, par, b, x, now):
    """4.1: "nonempty blocked-sends queues signal deadlock immediately", but no new recovery
    while x's previous one is in progress."""
    if par[b, P_RECOVERY] != 0 and S.fcn[b, x, CN_REC] == 0 and S.fcn[b, x, CN_NQ] != 0:
        _start(S, par, b, x, now)


@inner
def _start(S, par, b, x, now):
    """The queues are served round-robin (no livelock). The initiator flags the head of the
    queue and sends it without a credit into its own deadlock buffer at the destination, the
    root of the deadlocked subtree (4.2)."""
    N = S.nn.shape[1]
    c = S.fcn[b, x, CN_RR]
    for _ in range(N):
        c = (c + 1) % N
        if S.nn[b, x, c, NN_BQ_CNT] > 0:
            break
    S.fcn[b, x, CN_RR] = c
    S.fcn[b, x, CN_REC] = 1
    S.fcn[b, x, CN_RECOVERIES] += 1
    h = S.nn[b, x, c, NN_BQ_HEAD]
    take(S, b, x, c, -1, h)
    transmit(S, par, b, x, h, c, now, x + 1)


@inner
def on_flagged(S, par, b, y, x, h, now):
    """Packet h came from NI x flagged (4.2): it sits in its owner o's deadlock buffer at y,
    and y, now in o's deadlocked subtree, has already queued h's copies for its children in
    the tree (the multicast's forwarding). To each child it sends the first queued packet of
    that tree, flagged again where it has no credit (the copies that found one went already):
    the subtree grows, and y acknowledges once its children it flagged have."""
    o = S.pk_pf[b, h, PF_FLAG] - 1
    if S.nn[b, y, o, NN_DL_PKT] != 0 or S.nn[b, y, o, NN_DL_FROM] != 0:
        S.status[b] |= ERR_INVARIANT   # one recovery of o at a time, y in its subtree once
        S.err_info[b, 0] = y
        S.err_info[b, 1] = o
        return
    S.nn[b, y, o, NN_DL_PKT] = h + 1
    S.nn[b, y, o, NN_DL_FROM] = x + 1
    S.nn[b, y, x, NN_DL_IN] += 1
    if S.pk[b, h].aux2 > 0:
        root = S.pk[b, h].src
        base = NODE_PARAMS + root * (S.npar[b, y, NP_FANOUT] + 1)
        for k in range(S.npar[b, y, base]):
            c = S.npar[b, y, base + 1 + k]
            if S.nn[b, y, c, NN_BQ_CNT] == 0:
                continue
            prev, q = first_of_tree(S, b, y, c, root)
            if q < 0:   # h's copy for c is queued, if no older one of the tree is
                S.status[b] |= ERR_INVARIANT
                S.err_info[b, 0] = y
                continue
            take(S, b, y, c, prev, q)
            transmit(S, par, b, y, q, c, now, o + 1)
            S.nn[b, y, o, NN_DL_ACKS] += 1


@inner
def _ack_up(S, par, b, x, o, now):
    """x's part of o's recovery is done once o's deadlock buffer at x is free and every
    child x flagged has acknowledged: it acknowledges to the NI that flagged it (4.2, "merged
    in reverse direction"); a control packet, no buffer, no credit (gap G15)."""
    if (S.nn[b, x, o, NN_DL_FROM] == 0 or S.nn[b, x, o, NN_DL_PKT] != 0
            or S.nn[b, x, o, NN_DL_ACKS] != 0):
        return
    up = S.nn[b, x, o, NN_DL_FROM] - 1
    S.nn[b, x, o, NN_DL_FROM] = 0
    u = proto_send(S, par, b, x, up, par[b, P_UPDATE_FLITS], now)
    if u < 0:
        return
    S.pk[b, u].aux = o
    S.pk_pf[b, u, PF_FLAG] = o + 1
    S.pk[b, u].ready = nic_work(S, b, x, now, S.npar[b, x, NP_DL])
    S.fcn[b, x, CN_ACKS] += 1


@inner
def on_ack(S, par, b, y, o, now):
    """An acknowledgement of o's recovery reached y: the initiator's recovery is over (its
    deadlock buffers everywhere are free) and it looks for the next blocked queue; an NI
    inside the subtree passes it on once all of its children's are in."""
    t = nic_work(S, b, y, now, S.npar[b, y, NP_DL])
    if o == y:
        S.fcn[b, y, CN_REC] = 0
        detect(S, par, b, y, t)
    else:
        S.nn[b, y, o, NN_DL_ACKS] -= 1
        _ack_up(S, par, b, y, o, t)


@inner
def dl_packet_done(S, par, b, x, m, now):
    """Kept packet m, in its owner's deadlock buffer at x, is done: the buffer is free."""
    o = S.pk_pf[b, m, PF_FLAG] - 1
    S.nn[b, x, o, NN_DL_PKT] = 0
    S.nn[b, x, S.pk_pf[b, m, PF_HOP] - 1, NN_DL_IN] -= 1
    _ack_up(S, par, b, x, o, now)


@inner
def dl_take_buffer(S, par, b, x, hop, now):
    """A buffer of hop's partition at x is free while a deadlock packet from hop waits at x:
    the packet moves into it (it keeps the credit the freed one would have returned: gap G14)
    and its owner's deadlock buffer is free. Returns False if none waits."""
    return S.nn[b, x, hop, NN_DL_IN] != 0 and _take_buffer(S, par, b, x, hop, now)


@inner
def _take_buffer(S, par, b, x, hop, now):
    for o in range(S.nn.shape[1]):
        if S.nn[b, x, o, NN_DL_PKT] > 0 and S.nn[b, x, o, NN_DL_FROM] == hop + 1:
            S.pk_pf[b, S.nn[b, x, o, NN_DL_PKT] - 1, PF_FLAG] = 0
            S.nn[b, x, o, NN_DL_PKT] = 0
            S.nn[b, x, hop, NN_DL_IN] -= 1
            _ack_up(S, par, b, x, o, now)
            return True
    S.status[b] |= ERR_INVARIANT
    S.err_info[b, 0] = x
    return False

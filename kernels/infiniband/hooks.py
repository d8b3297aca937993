"""Hooks of the MPI-over-InfiniBand schemes ib_hardware, ib_static and ib_dynamic (Liu and Panda;
extoll_vec/protocols/infiniband/__init__.py says what they model and the readings taken). One module
for the three: par[P_SCHEME] is 0 (hardware), 1 (static) or 2 (dynamic).

Per connection (the pair table's entries, protocols/infiniband/__init__.py I_*): the sender's credits
and its RNR state; the receiver's posted buffers, those in use and the credits it owes. The
receiving HCA checks for a free posted buffer (nic_on_eject) for every message: data,
rendezvous requests and ECMs alike; the schemes differ in whether MPI keeps a sender from
finding none.
"""
from extoll_vec.dtypes import (CT_CREDIT, EJ_ACCEPT, EJ_CONSUMED, EJ_KEPT, INJ_TAKEN, P_CREDIT,
                               PK_CTRL, PK_DATA, PK_PROTO, PK_REPLY, PK_RMA_GET, PK_RNDV)
from extoll_vec.kernels.common import (nic_release_one, proto_resend, proto_send, proto_timer,
                                      wake_rank)
from extoll_vec.kernels.fc_fields import F_SEQ_RX, queue_ctrl
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.pairs import pair, row
from extoll_vec.protocols.infiniband import (I_A_GIVEN, I_A_GOT, I_A_RETR, I_A_SENT, I_CH_HEAD,
                                            I_CH_TAIL, I_CREDITS, I_DROPPED, I_ECM, I_ECM_Q,
                                            I_FLAGGED, I_INUSE, I_MAXPOSTED, I_MSGS, I_NAKS,
                                            I_OWED, I_POSTED, I_RNR_WAIT, I_SWITCHED, NAK_RNR,
                                            NAK_SEQ, P_ECM, P_ECM_CLAMP, P_MAXBUF, P_PREPOST,
                                            P_RNR, P_SCHEME, P_STEP, PF_BACKLOG, PF_CREDITS)


@inner
def fc_init(S, T, par, b):
    k = par[b, P_PREPOST]
    for r in range(S.rk_pc.shape[1]):
        first, end = row(S, b, r)
        for i in range(first, end):
            S.fc[b, i, I_CREDITS] = k
            S.fc[b, i, I_POSTED] = k
            S.fc[b, i, I_MAXPOSTED] = k
            S.fc[b, i, I_CH_HEAD] = -1
            S.fc[b, i, I_CH_TAIL] = -1


# ---- the sender's MPI (4.2, 4.3) --------------------------------------------------------------
@inner
def may_send(S, par, b, r, dst):
    if par[b, P_SCHEME] == 0:
        return True
    return S.fc[b, pair(S, b, r, dst), I_CREDITS] > 0


@inner
def eager_ok(S, par, b, r, dst):
    """4.2: "when there are no credits, only Rendezvous protocol is used": eager only if a
    credit is left for this message after the sends to dst already queued."""
    if par[b, P_SCHEME] == 0:
        return True
    queued = 0
    for k in range(S.sq_cnt[b, r]):
        if S.sd_dst[b, r, S.sq[b, r, k]] == dst:
            queued += 1
    i = pair(S, b, r, dst)
    if S.fc[b, i, I_CREDITS] > queued:
        return True
    S.fc[b, i, I_SWITCHED] += 1     # the credit shortage is the dynamic scheme's feedback too
    return False


@inner
def on_sent(S, par, b, r, dst, h, delayed):
    if par[b, P_SCHEME] == 0:
        return 0
    i = pair(S, b, r, dst)
    S.fc[b, i, I_CREDITS] -= 1
    S.fc[b, i, I_A_SENT] += 1
    flag = delayed != 0
    if S.pk[b, h].kind == PK_RNDV and S.fc[b, i, I_SWITCHED] > 0:
        S.fc[b, i, I_SWITCHED] -= 1
        flag = True
    S.pk_pf[b, h, PF_BACKLOG] = 1 if flag else 0
    k = S.fc[b, i, I_OWED]          # every message carries the credits r owes dst (4.2)
    if k > 0:
        S.pk_pf[b, h, PF_CREDITS] = k
        S.fc[b, i, I_OWED] = 0
        S.fc[b, i, I_A_GIVEN] += k
    return par[b, P_CREDIT]


# ---- the receiver's MPI: buffers re-posted after processing, credits owed -------------------
@inner
def on_arrival(S, par, b, r, src, kind, ctype):
    S.fc[b, pair(S, b, r, src), I_INUSE] += 1


@inner
def _carrier(S, par, b, r, dst, i):
    """Will a message r writes soon carry its credits to dst (a queued send with a credit)?
    i: the entry of pair (r, dst)."""
    if S.fc[b, i, I_CREDITS] <= 0:
        return False
    for k in range(S.sq_cnt[b, r]):
        if S.sd_dst[b, r, S.sq[b, r, k]] == dst:
            return True
    return False


@inner
def _maybe_ecm(S, par, b, r, src, i):
    """An explicit credit message when r owes src the threshold (or, with protocol.ecm_clamp,
    every buffer it posted for src, so that fewer buffers than the threshold cannot deadlock)
    and nothing goes back. i: the entry of pair (r, src), looked up once by the hook (an entry
    never moves, kernels/pairs.py)."""
    need = par[b, P_ECM]
    if par[b, P_ECM_CLAMP] != 0 and S.fc[b, i, I_POSTED] < need:
        need = S.fc[b, i, I_POSTED]
    if S.fc[b, i, I_OWED] >= need and S.fc[b, i, I_ECM_Q] == 0 and not _carrier(S, par, b, r, src, i):
        S.fc[b, i, I_ECM_Q] = 1
        queue_ctrl(S, b, r, src, CT_CREDIT)


@inner
def on_retrieved(S, par, b, r, src):
    i = pair(S, b, r, src)
    S.fc[b, i, I_INUSE] -= 1        # processed: the buffer is posted again (3.1)
    if par[b, P_SCHEME] == 0:
        return 0
    S.fc[b, i, I_A_RETR] += 1
    S.fc[b, i, I_OWED] += 1
    _maybe_ecm(S, par, b, r, src, i)
    return par[b, P_CREDIT]


@inner
def ctrl_payload(S, par, b, r, dst, ctype):
    i = pair(S, b, r, dst)
    S.fc[b, i, I_ECM_Q] = 0
    k = S.fc[b, i, I_OWED]
    if k <= 0:
        return -1                   # a message took them meanwhile
    S.fc[b, i, I_OWED] = 0
    S.fc[b, i, I_A_GIVEN] += k
    S.fc[b, i, I_ECM] += 1
    return k


@inner
def on_control(S, par, b, r, src, ctype, payload):
    """An ECM or a rendezvous reply (payload 0) was processed."""
    i = pair(S, b, r, src)
    S.fc[b, i, I_INUSE] -= 1        # its buffer, posted again; it took no credit
    S.fc[b, i, I_CREDITS] += payload
    S.fc[b, i, I_A_GOT] += payload
    return par[b, P_CREDIT]


@inner
def snapshot_field(S, par, b):
    return I_CREDITS


# ---- the HCAs ---------------------------------------------------------------------------------
@inner
def _take_credits(S, b, x, i, k, now):
    """Rank x receives k credits for its connection i (piggybacked on a message or on the
    rendezvous reply): its blocked sends may go."""
    S.fc[b, i, I_CREDITS] += k
    S.fc[b, i, I_A_GOT] += k
    wake_rank(S, b, x, now)


@inner
def _keep(S, b, i, h):
    """Packet h of connection i waits to be sent again, in sequence order."""
    seq = S.pk[b, h].seq
    head = S.fc[b, i, I_CH_HEAD]
    S.pk[b, h].next = -1
    if head < 0:
        S.fc[b, i, I_CH_HEAD] = h
        S.fc[b, i, I_CH_TAIL] = h
        return
    tail = S.fc[b, i, I_CH_TAIL]
    if S.pk[b, tail].seq < seq:
        S.pk[b, tail].next = h
        S.fc[b, i, I_CH_TAIL] = h
        return
    if seq < S.pk[b, head].seq:
        S.pk[b, h].next = head
        S.fc[b, i, I_CH_HEAD] = h
        return
    p = head
    while S.pk[b, S.pk[b, p].next].seq < seq:
        p = S.pk[b, p].next
    S.pk[b, h].next = S.pk[b, p].next
    S.pk[b, p].next = h


@inner
def _resend(S, T, par, b, i, now):
    """Connection i's kept packets leave again from their sender's HCA, in order. Returns
    True if all left (False: its protocol queue was full)."""
    h = S.fc[b, i, I_CH_HEAD]
    while h >= 0:
        node = T.rank_node[S.pk[b, h].src]
        nxt = S.pk[b, h].next
        if not proto_resend(S, par, b, node, h, now):
            break
        S.nic_kept[b, node] -= 1
        nic_release_one(S, b, node, now)
        h = nxt
    S.fc[b, i, I_CH_HEAD] = h
    if h < 0:
        S.fc[b, i, I_CH_TAIL] = -1
    return h < 0


@inner
def _nak(S, par, b, node, dnode, i, kind, now):
    c = proto_send(S, par, b, node, dnode, 1, now)
    if c >= 0:
        S.pk[b, c].aux = i
        S.pk[b, c].pay = kind


@inner
def _grow(S, par, b, r, src, j, now):
    """4.3: a message that went through the backlog makes r post more buffers for src."""
    cur = S.fc[b, j, I_POSTED]
    add = cur if par[b, P_STEP] == 0 else par[b, P_STEP]
    add = min(add, par[b, P_MAXBUF] - cur)
    if add <= 0:
        return
    S.fc[b, j, I_POSTED] = cur + add
    if cur + add > S.fc[b, j, I_MAXPOSTED]:
        S.fc[b, j, I_MAXPOSTED] = cur + add
    S.fc[b, j, I_OWED] += add
    _maybe_ecm(S, par, b, r, src, j)
    wake_rank(S, b, r, now)


@inner
def _into_buffer(kind):
    """Does a packet of this kind take a pre-posted buffer (a send/receive message)?"""
    return kind == PK_DATA or kind == PK_RNDV or kind == PK_CTRL or kind == PK_REPLY


@inner
def nic_may_inject(S, T, par, b, node, h, now):
    kind = S.pk[b, h].kind
    into = _into_buffer(kind)
    owes = (kind == PK_RMA_GET or kind == PK_REPLY) and par[b, P_SCHEME] != 0
    if not into and not owes:
        return 0
    i = pair(S, b, S.pk[b, h].src, S.pk[b, h].dst)
    if into and S.fc[b, i, I_RNR_WAIT] != 0:   # the connection waits for its retry: behind
        _keep(S, b, i, h)                      # the packets to send again
        S.nic_kept[b, node] += 1
        return INJ_TAKEN
    if owes:
        # the rendezvous reply carries the receiver's credits to the data's sender (4.2)
        k = S.fc[b, i, I_OWED]
        if k > 0:
            S.pk_pf[b, h, PF_CREDITS] += k
            S.fc[b, i, I_OWED] = 0
            S.fc[b, i, I_A_GIVEN] += k
    return 0


@inner
def nic_on_eject(S, T, par, b, node, h, now):
    kind = S.pk[b, h].kind
    if kind == PK_PROTO:                    # a NAK for connection i of this node
        i = S.pk[b, h].aux
        if S.pk[b, h].pay == NAK_RNR:
            S.fc[b, i, I_NAKS] += 1
            if S.fc[b, i, I_RNR_WAIT] == 0:
                S.fc[b, i, I_RNR_WAIT] = 1
                proto_timer(S, b, now + par[b, P_RNR], i, 0)
        elif S.fc[b, i, I_RNR_WAIT] == 0:   # NAK_SEQ: go back N now
            _resend(S, T, par, b, i, now)
        return EJ_CONSUMED
    if kind == PK_RMA_GET:
        k = S.pk_pf[b, h, PF_CREDITS]
        if k > 0:
            x = S.pk[b, h].dst
            _take_credits(S, b, x, pair(S, b, x, S.pk[b, h].src), k, now)
        return EJ_ACCEPT
    if not _into_buffer(kind):
        return EJ_ACCEPT
    src = S.pk[b, h].src
    r = S.pk[b, h].dst
    j = pair(S, b, r, src)                  # receiver side
    i = pair(S, b, src, r)                  # sender side
    if S.pk[b, h].seq != S.fc[b, j, F_SEQ_RX]:
        # behind a dropped packet of its connection: dropped too (go back N)
        S.fc[b, j, I_DROPPED] += 1
        _keep(S, b, i, h)
        S.nic_kept[b, T.rank_node[src]] += 1
        return EJ_KEPT
    if S.fc[b, j, I_POSTED] - S.fc[b, j, I_INUSE] <= 0:
        # no posted buffer: dropped, RNR NAK, the sender retries after its timeout (4.1)
        S.fc[b, j, I_DROPPED] += 1
        _keep(S, b, i, h)
        S.nic_kept[b, T.rank_node[src]] += 1
        _nak(S, par, b, node, T.rank_node[src], i, NAK_RNR, now)
        return EJ_KEPT
    S.fc[b, i, I_MSGS] += 1
    k = S.pk_pf[b, h, PF_CREDITS]
    if k > 0:
        _take_credits(S, b, r, j, k, now)
    if S.pk_pf[b, h, PF_BACKLOG] != 0:
        S.fc[b, j, I_FLAGGED] += 1
        if par[b, P_SCHEME] == 2:
            _grow(S, par, b, r, src, j, now)
    if S.fc[b, i, I_CH_HEAD] >= 0 and S.fc[b, i, I_RNR_WAIT] == 0:
        # packets of the connection dropped after its retry had left: a sequence NAK
        _nak(S, par, b, node, T.rank_node[src], i, NAK_SEQ, now)
    return EJ_ACCEPT


@inner
def on_timer(S, T, par, b, target, arg, now):
    """Connection `target`'s RNR retry timeout ran out: its kept packets leave again."""
    if S.fc[b, target, I_RNR_WAIT] == 0:
        return
    if _resend(S, T, par, b, target, now):
        S.fc[b, target, I_RNR_WAIT] = 0
    else:
        proto_timer(S, b, now + 1, target, 0)

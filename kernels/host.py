"""Ranks: a CPU per rank interpreting its program, MPI matching, and the VELO mailbox.

The CPU is either busy until a scheduled EV_RANK, or idle in a wait state (dtypes.W_*). At each
turn it does the first of these that applies (EXTOLL MPI over VELO, paper section 3):
1. write a queued flow-control packet (credits owed; priority over data),
2. write a queued RMA GET descriptor (rendezvous receives that matched),
3. write the next VELO packet of the oldest pending send whose destination flow control allows,
4. advance its program (post sends/receives, compute, loops, wait for completions); before
   every MPI call the progress engine retrieves the packets present in the mailbox (at most
   host.progress_packets; a modelling choice, not Open MPI ob1's order, which polls only
   inside waits: docs/calibration.md, "The progress engine's order"),
5. poll: retrieve one packet from its mailbox (while waiting inside MPI); a sender waiting
   for credits first searches it for a credit packet (_search_credits),
6. otherwise go idle; a mailbox arrival, a completion or NIC space wakes it.
A PIO write into a full NIC FIFO blocks the CPU (hardware back-pressure): it cannot poll.

Flow control (kernels/flowctl.py) decides whether a data packet may be written (a send without
credits writes what it can and waits, polling its mailbox: EXTOLL 5.2), queues control packets
(written first, step 1) and may piggyback credits on the last packet of an eager message when
it has room for them (5.4). CPU cycles spent on flow control (credit operations, writing and
retrieving control packets) are counted in st_fccpu; control packets by type in st_ctrl.

Messages (formulas.message_packets): eager (<= threshold) = ceil((16 + bytes) / 56) VELO packets
into the receiver's mailbox; rendezvous = one VELO request, then the receiver's NIC pulls RMA
data that bypasses the mailbox; LiMIC (same node) = no packet, the receiver pays a copy cost
when it matches.
Matching is MPI's: a receive takes the oldest unmatched message of its source (one FIFO per
source); ANY_SOURCE takes the oldest over all sources (by arrival sequence number).
"""
from extoll_vec.dtypes import (ANY_SOURCE, CREDIT_FRAC_BITS, P_CHUNK, CT_PIGGYBACK, ERR_PROGRAM,
                               ERR_QUEUE, ERR_SPARE, EV_HOST_DMA, EV_NIC_DRAIN, EV_RANK,
                               MAX_LOOP_DEPTH, MAX_MARKS, MC_DELAYED, MC_FCCPU, MC_MSGS, MC_STALL,
                               OP_COMPUTE, OP_END, OP_ENDLOOP, OP_IRECV, OP_ISEND, OP_LOOP,
                               OP_MARK, OP_MCAST, OP_RECV, OP_SEND, OP_SNAPSHOT, OP_WAITALL,
                               P_EAGER, P_LIMIC, P_LIMIC_ON, P_COPY_KB, P_LIMIC_PER_KB, P_MATCH,
                               P_MPI_HDR, P_PIGGY, P_PIO, P_PIO_KB, P_POSTED_NODE, P_PROGRESS,
                               P_RETRIEVE, P_RNDV_WRITE, P_SEARCH, P_SEND_MEMO, P_VELO_PAYLOAD,
                               PIGGYBACK_BYTES, PK_CTRL, PK_DATA, VELO_MSG_TAG_BYTES, PK_REPLY,
                               PK_RMA_GET, PK_RNDV, W_CREDIT, W_DONE, W_NIC, W_NONE, W_RECV,
                               W_SEND, W_WAITALL)
from extoll_vec.kernels import flowctl
from extoll_vec.kernels import rendezvous as rndv
from extoll_vec.kernels.common import (flits_of, message_packets, nic_block_rank, nic_full,
                                      nic_push, nic_release_one, packet_payload, pk_new, progress,
                                      wake_rank)
from extoll_vec.kernels.fc_fields import CQ_TYPE, F_SEQ_TX
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.pairs import pair, row
from extoll_vec.kernels.wheel import schedule

# message kinds in the unexpected queue (ux_slot >= 0 means rendezvous: the sender's send slot)
UX_EAGER = -1
UX_LIMIC = -2

# progress pass before an MPI call (rk_pass >= 0: packets still to retrieve in it)
PASS_NONE = -1
PASS_DONE = -2

# send-descriptor states
SD_FREE = 0
SD_WRITING = 1
SD_RMA = 2

# mailbox entry packing (int64), from the top: src 20 bits | kind 3 | last 1 | 40 bits (aux,
# payload) that are, by kind: eager data: piggybacked credits 16 | message bytes 24 (config.py
# keeps the eager threshold < 2**24); rendezvous: send slot 12 | bytes 28; control: type 8 |
# credits 32. engine.Batch refuses programs beyond these widths (MB_* limits).
MB_SRC_SHIFT = 44
# a multicast packet's entry: its piggybacked-credit field all ones (a multicast carries no
# credits: it has no one destination), so the rank calls on_mc_retrieved for it
MB_MCAST = (1 << 16) - 1
MB_RNDV_SLOTS = 1 << 12
MB_RNDV_BYTES = 1 << 28


@inner
def _mb_aux_bits(kind):
    if kind == PK_DATA:
        return 16
    if kind == PK_RNDV or kind == PK_REPLY:
        return 12
    return 8


@inner
def mb_pack(src, kind, last, aux, pay):
    pay_bits = 40 - _mb_aux_bits(kind)
    return ((src << MB_SRC_SHIFT) | (kind << 41) | (last << 40)
            | ((aux & ((1 << _mb_aux_bits(kind)) - 1)) << pay_bits) | (pay & ((1 << pay_bits) - 1)))


@inner
def mailbox_write(S, par, b, r, h):
    """The NIC writes packet h into rank r's mailbox; the caller checked there is room."""
    MC = S.mb_q.shape[2]
    if S.mb_cnt[b, r] >= MC:   # the ring is sized from the program (engine/sizing.py): rerun
        S.status[b] |= ERR_SPARE
        S.err_info[b, 0] = r
        return
    flowctl.on_arrival(S, par, b, r, S.pk[b, h].src, S.pk[b, h].kind, S.pk[b, h].aux)
    aux = S.pk[b, h].aux
    if S.pk[b, h].kind == PK_DATA and S.pk[b, h].aux2 > 0:
        aux = MB_MCAST
    S.mb_q[b, r, (S.mb_head[b, r] + S.mb_cnt[b, r]) % MC] = mb_pack(
        S.pk[b, h].src, S.pk[b, h].kind, S.pk[b, h].last, aux, S.pk[b, h].pay)
    S.mb_cnt[b, r] += 1
    if S.mb_cnt[b, r] > S.st_mbmax[b, r]:
        S.st_mbmax[b, r] = S.mb_cnt[b, r]


# ---------------------------------------------------------------- completions and matching
@inner
def complete_send(S, b, r, d, now):
    """Send d of rank r is complete (eager: last packet written; rendezvous: RMA data left)."""
    S.sd_state[b, r, d] = SD_FREE
    S.rk_osend[b, r] -= 1
    if S.rk_blk_s[b, r] == d:
        S.rk_blk_s[b, r] = -1
    progress(S, b, now)
    wake_rank(S, b, r, now)


@inner
def complete_recv(S, b, r, j, extra, now):
    """Receive j of rank r is done; `extra` CPU cycles (a LiMIC copy) are charged to r."""
    S.rd_state[b, r, j] = 0
    S.rk_orecv[b, r] -= 1
    S.st_msgs[b, r] += 1
    S.rk_cost[b, r] += extra
    if S.rk_blk_r[b, r] == j:
        S.rk_blk_r[b, r] = -1
    progress(S, b, now)
    wake_rank(S, b, r, now)


RD_HALF = 3   # rd_state of a "write" rendezvous receive: its data or its finish message is in


@inner
def write_half_done(S, b, r, j, now):
    """mpi.rendezvous "write": receive j of rank r is done when both its RDMA data has arrived
    and its finish message was processed (Liu and Panda, sec. 3.1: the data's arrival raises no
    event at the receiver; the finish message follows it on the connection, nic._fin_waits). Counted
    in either order, so that the completion never depends on that ordering."""
    if S.rd_state[b, r, j] == RD_HALF:
        complete_recv(S, b, r, j, 0, now)
    else:
        S.rd_state[b, r, j] = RD_HALF


@inner
def _queue_get(S, b, r, src, slot, nbytes, j):
    rndv.gq_push(S, b, r, src, slot, nbytes, j)
    S.rd_state[b, r, j] = 2


@inner
def _deliver_to(S, par, b, r, j, src, nbytes, slot, now):
    """Message (src, nbytes, slot) meets posted receive j of rank r."""
    if slot >= 0 and par[b, P_CHUNK] != 0:    # Schneider et al.'s chunked rendezvous
        done = rndv.matched(S, par, b, r, j, src, slot, nbytes, now)
        if done >= 1:
            complete_recv(S, b, r, j, 0, now)
        if done == 2:
            complete_send(S, b, src, slot, now)
    elif slot >= 0:
        _queue_get(S, b, r, src, slot, nbytes, j)
        wake_rank(S, b, r, now)
    elif slot == UX_LIMIC:
        complete_recv(S, b, r, j, par[b, P_LIMIC] + (par[b, P_LIMIC_PER_KB] * nbytes) // 1024, now)
    else:
        complete_recv(S, b, r, j, 0, now)


@inner
def message_arrived(S, par, b, r, src, nbytes, slot, now):
    """A whole message from src is available to rank r: match the oldest posted receive that
    accepts it, or keep it in the unexpected queue of its source."""
    n = S.pr_cnt[b, r]
    for i in range(n):
        j = S.pr_ring[b, r, i]
        s = S.rd_src[b, r, j]
        if s == src or s == ANY_SOURCE:
            for k in range(i, n - 1):
                S.pr_ring[b, r, k] = S.pr_ring[b, r, k + 1]
            S.pr_cnt[b, r] = n - 1
            _deliver_to(S, par, b, r, j, src, nbytes, slot, now)
            return
    e = S.ux_meta[b, r, 0]
    if e < 0:
        S.status[b] |= ERR_QUEUE
        return
    S.ux_meta[b, r, 0] = S.ux_next[b, r, e]
    S.ux_src[b, r, e] = src
    S.ux_bytes[b, r, e] = nbytes
    S.ux_slot[b, r, e] = slot
    S.ux_seq[b, r, e] = S.ux_meta[b, r, 1]
    S.ux_meta[b, r, 1] += 1
    S.ux_meta[b, r, 2] += 1
    S.ux_next[b, r, e] = -1
    i = pair(S, b, r, src)
    if S.ux_tail[b, i] < 0:
        S.ux_head[b, i] = e
    else:
        S.ux_next[b, r, S.ux_tail[b, i]] = e
    S.ux_tail[b, i] = e
    wake_rank(S, b, r, now)


@inner
def _post_recv(S, par, b, r, src, now):
    """Post a receive; returns its descriptor (or -1 on overflow)."""
    RQ = S.rd_state.shape[2]
    j = -1
    for k in range(RQ):
        if S.rd_state[b, r, k] == 0:
            j = k
            break
    if j < 0:
        S.status[b] |= ERR_QUEUE
        return -1
    S.rd_state[b, r, j] = 1
    S.rd_src[b, r, j] = src
    S.rk_orecv[b, r] += 1
    s = src
    i = -1                                # s's pair entry (its unexpected queue)
    if src == ANY_SOURCE and S.ux_meta[b, r, 2] > 0:
        first, end = row(S, b, r)         # the oldest unexpected message of any sender
        for k in range(first, end):
            e = S.ux_head[b, k]
            if e >= 0 and (i < 0 or S.ux_seq[b, r, e] < S.ux_seq[b, r, S.ux_head[b, i]]):
                i = k
        s = S.pair_peer[b, i] if i >= 0 else -1
    elif src != ANY_SOURCE:
        i = pair(S, b, r, s)
    e = S.ux_head[b, i] if i >= 0 else -1
    if e >= 0:
        S.ux_head[b, i] = S.ux_next[b, r, e]
        if S.ux_head[b, i] < 0:
            S.ux_tail[b, i] = -1
        S.ux_next[b, r, e] = S.ux_meta[b, r, 0]
        S.ux_meta[b, r, 0] = e
        S.ux_meta[b, r, 2] -= 1
        _deliver_to(S, par, b, r, j, s, S.ux_bytes[b, r, e], S.ux_slot[b, r, e], now)
    else:
        S.pr_ring[b, r, S.pr_cnt[b, r]] = j
        S.pr_cnt[b, r] += 1
    return j


@inner
def _post_send(S, T, par, b, r, dst, nbytes, now):
    """Post a send; returns its descriptor, -2 when LiMIC delivered it at once, -1 on overflow."""
    if par[b, P_LIMIC_ON] != 0 and dst >= 0 and T.rank_node[dst] == T.rank_node[r] and dst != r:
        message_arrived(S, par, b, dst, r, nbytes, UX_LIMIC, now)
        return -2
    SQ = S.sd_state.shape[2]
    d = -1
    for k in range(SQ):
        if S.sd_state[b, r, k] == SD_FREE:
            d = k
            break
    if d < 0 or S.sq_cnt[b, r] >= SQ:
        S.status[b] |= ERR_QUEUE
        return -1
    # a small message goes by rendezvous when the protocol says so (Liu and Panda, sec. 4.2: without
    # credits, MPI over IB uses rendezvous, whose handshake brings credits back)
    rv = nbytes > par[b, P_EAGER] or not flowctl.eager_ok(S, par, b, r, dst)
    npk = 1 if rv else message_packets(nbytes, par[b, P_MPI_HDR], par[b, P_VELO_PAYLOAD],
                                       par[b, P_EAGER])
    S.sd_rndv[b, r, d] = 1 if rv else 0
    S.sd_state[b, r, d] = SD_WRITING
    S.sd_dst[b, r, d] = dst
    S.sd_bytes[b, r, d] = nbytes
    S.sd_left[b, r, d] = npk
    S.sd_tot[b, r, d] = npk
    S.sd_dly[b, r, d] = 0
    S.sq[b, r, S.sq_cnt[b, r]] = d
    S.sq_cnt[b, r] += 1
    S.rk_osend[b, r] += 1
    return d


# ---------------------------------------------------------------- packet writing (PIO)
@inner
def _write(S, T, par, b, r, h, cls, now):
    if S.pk[b, h].kind == PK_DATA and S.pk[b, h].aux2 > 0:
        # a multicast packet: one sequence per sender, checked at every member (mseq_rx)
        S.pk[b, h].seq = S.mseq_tx[b, r]
        S.mseq_tx[b, r] += 1
        S.mc_due[b, r] += S.pk[b, h].aux2 - 1
    elif S.pk[b, h].kind != PK_RMA_GET:
        # mailbox packets carry a per-pair sequence number: the NIC checks in-order delivery
        dst = S.pk[b, h].dst
        i = pair(S, b, r, dst)
        S.pk[b, h].seq = S.fc[b, i, F_SEQ_TX]
        S.fc[b, i, F_SEQ_TX] += 1
    nic_push(S, par, b, T.rank_node[r], h, now)
    S.st_sent[b, r, cls] += 1


@inner
def fc_cycles(S, b, r, units):
    """Whole CPU cycles of `units` of flow-control time (fixed point, dtypes.CREDIT_FRAC_BITS);
    the rank carries the fraction to its next credit operation, so a 5 ns operation costs 5 ns
    on average instead of a whole 27 ns cycle."""
    acc = S.rk_fcfrac[b, r] + units
    S.rk_fcfrac[b, r] = acc & ((1 << CREDIT_FRAC_BITS) - 1)
    return acc >> CREDIT_FRAC_BITS


@inner
def _write_data(S, T, par, b, r, d, now):
    """Write the next VELO packet of send d; returns extra flow-control cycles."""
    dst = S.sd_dst[b, r, d]
    nbytes = S.sd_bytes[b, r, d]
    i = S.sd_tot[b, r, d] - S.sd_left[b, r, d]
    last = 1 if S.sd_left[b, r, d] == 1 else 0
    pio_bytes = 0   # the payload's PIO beyond the fixed cost per packet (host.pio_ns_per_kb)
    if S.sd_rndv[b, r, d] != 0:
        h = pk_new(S, b, PK_RNDV, r, dst, T.rank_node[dst], flits_of(par, b, par[b, P_MPI_HDR] + 16),
                   1, nbytes, d, 0, now)
        rndv.request_written(S, T, par, b, r, d, dst, nbytes, now)
    else:
        pay = par[b, P_VELO_PAYLOAD]
        total = par[b, P_MPI_HDR] + nbytes
        this = min(pay, total - i * pay)
        # a multicast's packet goes to the sender's own NIC, which sends it on (dst < 0: to
        # ranks 0..-dst-1), marked by aux2 = the group size
        to = r if dst < 0 else dst
        h = pk_new(S, b, PK_DATA, r, to, T.rank_node[to], flits_of(par, b, this), last, nbytes,
                   0, -dst if dst < 0 else 0, now)
        pio_bytes = (this * par[b, P_PIO_KB]) >> 10
        # section 5.4: credits for dst ride on the last packet if two bytes are free in it,
        # counting a multi-packet message's tag (dtypes.VELO_MSG_TAG_BYTES): a 2 KB message
        # fills its 37 packets, "the VELO packetization does not provide any space"
        room = this + PIGGYBACK_BYTES + (VELO_MSG_TAG_BYTES if i > 0 else 0)
        if last == 1 and par[b, P_PIGGY] != 0 and h >= 0 and room <= pay:
            k = flowctl.piggyback(S, par, b, r, dst)
            if k > 0:
                S.pk[b, h].aux = k
                S.st_ctrl[b, r, CT_PIGGYBACK] += 1
    if h < 0:
        return 0
    _write(S, T, par, b, r, h, 0, now)
    cost = fc_cycles(S, b, r, flowctl.on_sent(S, par, b, r, dst, h, S.sd_dly[b, r, d]))
    S.st_fccpu[b, r] += cost
    S.sd_left[b, r, d] -= 1
    return cost + pio_bytes


@inner
def _sendable(S, par, b, r):
    """Index in the send queue of the oldest send that flow control lets through, -2 if every
    queued send waits for credits, -1 if none is queued. Sends to one destination share its
    credits, so skipping a blocked one keeps MPI order.

    A rank polls at every turn, and with a send posted to every peer (IMB's Alltoall, 1023
    of them) a scan of blocked sends made each turn cost O(ranks). When the protocol declares
    unblocks_on_control (P_SEND_MEMO), a send found blocked stays blocked until the rank takes
    a control packet (_retrieve resets rk_sqblk), so the scan resumes after the sends already
    found blocked: the same answer, the same delayed-send counts. Removing the send chosen
    at i and appending new ones leave the first i known blocked."""
    start = S.rk_sqblk[b, r] if par[b, P_SEND_MEMO] != 0 else 0
    blocked = start > 0
    for i in range(start, S.sq_cnt[b, r]):
        d = S.sq[b, r, i]
        if flowctl.may_send(S, par, b, r, S.sd_dst[b, r, d]):
            S.rk_sqblk[b, r] = i
            return i
        if S.sd_dly[b, r, d] == 0:
            S.sd_dly[b, r, d] = 1
            S.st_delayed[b, r] += 1
        blocked = True
    S.rk_sqblk[b, r] = S.sq_cnt[b, r]
    return -2 if blocked else -1


# ---------------------------------------------------------------- polling
@inner
def _search_credits(S, par, b, r):
    """A sender waiting for credits searches its mailbox for a credit packet (EXTOLL section
    5.2: data and credit packets are mixed in the mailbox; section 5.3: "the time spent in the
    search for returned credits is large when the mailbox is full"). It examines the slots
    from the oldest on until it finds a control packet, at par[P_SEARCH] per slot examined,
    and takes that packet first (it is moved to the head; the data packets keep their
    order). Slots it examined in an earlier turn of the same wait are not examined again
    (rk_seen: the packets there do not change); the poll that follows takes the head out.
    Returns CPU cycles used."""
    MC = S.mb_q.shape[2]
    head = S.mb_head[b, r]
    n = S.mb_cnt[b, r]
    first = min(S.rk_seen[b, r], n)
    found = -1
    for j in range(first, n):
        w = S.mb_q[b, r, (head + j) % MC]
        if ((w >> 41) & 7) == PK_CTRL:
            found = j
            for k in range(j, 0, -1):
                S.mb_q[b, r, (head + k) % MC] = S.mb_q[b, r, (head + k - 1) % MC]
            S.mb_q[b, r, head] = w
            break
    seen = (found + 1 if found >= 0 else n) - first
    # the poll takes the head out: the examined slots behind it stay examined
    S.rk_seen[b, r] = found if found >= 0 else n - 1
    cost = fc_cycles(S, b, r, seen * par[b, P_SEARCH])
    S.st_fccpu[b, r] += cost
    return cost


@inner
def _retrieve(S, T, par, b, r, now):
    """Take the oldest packet out of r's mailbox; returns CPU cycles used."""
    MC = S.mb_q.shape[2]
    w = S.mb_q[b, r, S.mb_head[b, r]]
    S.mb_head[b, r] = (S.mb_head[b, r] + 1) % MC
    S.mb_cnt[b, r] -= 1
    src = w >> MB_SRC_SHIFT
    kind = (w >> 41) & 7
    last = (w >> 40) & 1
    pay_bits = 40 - _mb_aux_bits(kind)
    aux = (w >> pay_bits) & ((1 << _mb_aux_bits(kind)) - 1)
    pay = w & ((1 << pay_bits) - 1)
    cost = par[b, P_RETRIEVE]
    if kind == PK_CTRL:
        S.rk_sqblk[b, r] = 0     # credits may have come back: rescan every queued send
        fc = fc_cycles(S, b, r, flowctl.on_control(S, par, b, r, src, aux, pay))
        cost += fc
        S.st_fccpu[b, r] += par[b, P_RETRIEVE] + fc
    elif kind == PK_REPLY:
        # a rendezvous handshake message: it held a posted buffer and no credit (piggybacked
        # credits: 0); aux: the sender's send slot, pay: the receiver's receive
        S.rk_sqblk[b, r] = 0
        cost += fc_cycles(S, b, r, flowctl.on_control(S, par, b, r, src, CT_PIGGYBACK, 0))
        if last == 1:
            # the reply to r's request: r finds the send and posts one RDMA write of the whole
            # message (Liu and Panda, sec. 3.1), then its finish message (host turn, step 2)
            cost += par[b, P_MATCH] + par[b, P_PIO]
            n = T.rank_node[r]
            ticket = S.rq_pops[b, n] + S.rq_cnt[b, n]    # the RMA queue entry of the write
            rndv.rq_push(S, b, n, T.rank_node[src], src, r, S.sd_bytes[b, r, aux], aux, pay,
                         rndv.RQ_DATA, now)
            rndv.gq_push(S, b, r, src, aux, -1 - ticket, pay)
        else:
            # the finish message of src's RDMA write into r's receive `pay`
            cost += par[b, P_MATCH]
            write_half_done(S, b, r, pay, now)
    else:
        if kind == PK_DATA and aux == MB_MCAST:   # a multicast packet (its root: src)
            fc = flowctl.on_mc_retrieved(S, par, b, r, src)
        else:
            fc = flowctl.on_retrieved(S, par, b, r, src)
        if kind == PK_DATA and 0 < aux < MB_MCAST:   # piggybacked credits (5.4, 6.5.3)
            S.rk_sqblk[b, r] = 0
            fc += flowctl.on_control(S, par, b, r, src, CT_PIGGYBACK, aux)
        fc = fc_cycles(S, b, r, fc)
        cost += fc
        S.st_fccpu[b, r] += fc
        if kind == PK_DATA:   # the payload's copy out of the slot (host.copy_ns_per_kb)
            cost += (packet_payload(par, b, pay, last) * par[b, P_COPY_KB]) >> 10
        if last == 1:
            cost += par[b, P_MATCH]
            if kind == PK_RNDV:
                message_arrived(S, par, b, r, src, pay, aux, now)
            else:
                message_arrived(S, par, b, r, src, pay, UX_EAGER, now)
    progress(S, b, now)
    node = T.rank_node[r]
    if S.ej_blk[b, node] != 0:
        S.ej_blk[b, node] = 0
        schedule(S, b, now, EV_NIC_DRAIN, node, 0, 0)
    if S.hq_blk[b, node] != 0:
        S.hq_blk[b, node] = 0
        schedule(S, b, now, EV_HOST_DMA, node, 0, 0)
    return cost


# ---------------------------------------------------------------- the CPU's turn
@inner
def _busy(S, b, r, t):
    S.rk_run[b, r] = 1
    schedule(S, b, t, EV_RANK, r, 0, 0)
    progress(S, b, t)


@inner
def _release_waits(S, par, b, node, r, done, now):
    """host.posted_writes "node": the retrieval's slot release is a posted write in the node's
    one in-order stream, so it waits while the requester FIFO is full, as a PIO write does, and
    the rank cannot poll meanwhile (docs/calibration.md). Returns True if r blocked. A rank
    past MPI_Finalize (done) drains its mailbox unblocked: its timing is over, and its wait
    state must stay W_DONE."""
    if par[b, P_POSTED_NODE] == 0 or done:
        return False
    if nic_full(S, par, b, node):
        nic_block_rank(S, b, node, r, now)
        return True
    # the release takes no FIFO slot: a rank blocked behind it may try the one it found free
    if S.nw_cnt[b, node] > 0:
        nic_release_one(S, b, node, now)
    return False


@inner
def rank_step(S, T, par, ops, b, r, now):
    # rk_run stays 1 during the turn so that completions it causes do not wake it twice;
    # it drops to 0 only where the CPU goes idle or blocks.
    S.rk_run[b, r] = 1
    if S.rk_wait[b, r] == W_CREDIT:
        S.st_stall[b, r] += now - S.rk_stall0[b, r]
    done = S.rk_wait[b, r] == W_DONE
    if not done:
        S.rk_wait[b, r] = W_NONE
    if S.rk_cost[b, r] > 0:
        c = S.rk_cost[b, r]
        S.rk_cost[b, r] = 0
        _busy(S, b, r, now + c)
        return
    node = T.rank_node[r]
    pio = par[b, P_PIO]
    # 1. flow-control packets first: the protocols rely on them never waiting for data
    while S.cq_cnt[b, r] > 0:
        if nic_full(S, par, b, node):
            nic_block_rank(S, b, node, r, now)
            return
        CQ = S.cq.shape[2]
        e = S.cq[b, r, S.cq_head[b, r]]
        S.cq_head[b, r] = (S.cq_head[b, r] + 1) % CQ
        S.cq_cnt[b, r] -= 1
        dst = e % CQ_TYPE
        ctype = e // CQ_TYPE
        pay = flowctl.ctrl_payload(S, par, b, r, dst, ctype)
        if pay < 0:
            continue   # withheld until a credit arrives (the protocol queues it again)
        h = pk_new(S, b, PK_CTRL, r, dst, T.rank_node[dst], flits_of(par, b, 8), 1, pay, ctype,
                   0, now)
        if h >= 0:
            _write(S, T, par, b, r, h, 1, now)
            S.st_ctrl[b, r, ctype] += 1
        S.st_fccpu[b, r] += pio
        _busy(S, b, r, now + pio)
        return
    # 2. RMA GET descriptors of matched rendezvous receives (mpi.rendezvous "write": the
    # reply into the sender's mailbox instead, whose CPU posts the RDMA write)
    if S.gq_cnt[b, r] > 0:
        if nic_full(S, par, b, node):
            nic_block_rank(S, b, node, r, now)
            return
        G = S.gq.shape[2]
        k = S.gq_head[b, r]
        src = S.gq[b, r, k, 0]
        if par[b, P_RNDV_WRITE] != 0:
            # the reply (its descriptor: the receive buffer's address, for the RDMA write),
            # or, with bytes -1 - t, the sender's finish message, which leaves its NIC once
            # the RMA queue has finished entry t, its RDMA write (nic._fin_waits)
            fin = S.gq[b, r, k, 2] < 0
            h = pk_new(S, b, PK_REPLY, r, src, T.rank_node[src],
                       flits_of(par, b, par[b, P_MPI_HDR] + (0 if fin else rndv.GET_BYTES)),
                       0 if fin else 1, S.gq[b, r, k, 3], S.gq[b, r, k, 1],
                       -1 - S.gq[b, r, k, 2] if fin else 0, now)
        else:
            h = pk_new(S, b, PK_RMA_GET, r, src, T.rank_node[src],
                       flits_of(par, b, rndv.GET_BYTES), 1, S.gq[b, r, k, 2], S.gq[b, r, k, 1],
                       S.gq[b, r, k, 3], now)
        S.gq_head[b, r] = (k + 1) % G
        S.gq_cnt[b, r] -= 1
        if h >= 0:
            _write(S, T, par, b, r, h, 2, now)
        _busy(S, b, r, now + pio)
        return
    # 3. the next packet of a pending send
    fc_blocked = False
    if not done and S.sq_cnt[b, r] > 0:
        i = _sendable(S, par, b, r)
        if i >= 0:
            if nic_full(S, par, b, node):
                nic_block_rank(S, b, node, r, now)
                return
            d = S.sq[b, r, i]
            S.rk_seen[b, r] = 0
            cost = _write_data(S, T, par, b, r, d, now)
            if S.sd_left[b, r, d] == 0:
                for k in range(i, S.sq_cnt[b, r] - 1):
                    S.sq[b, r, k] = S.sq[b, r, k + 1]
                S.sq_cnt[b, r] -= 1
                if S.sd_rndv[b, r, d] != 0:
                    S.sd_state[b, r, d] = SD_RMA   # completes when the RMA data has left
                else:
                    complete_send(S, b, r, d, now)
            _busy(S, b, r, now + pio + cost)
            return
        fc_blocked = i == -2
    # 4. the program
    if not done:
        while True:
            if S.rk_blk_s[b, r] >= 0 or S.rk_blk_r[b, r] >= 0:
                break
            pc = S.rk_pc[b, r]
            op = ops[b, pc, 0]
            a = ops[b, pc, 1]
            if op >= OP_MCAST:   # a multicast is a send whose destination is -(group size)
                op = OP_SEND if op == OP_MCAST else OP_ISEND
                a = -a
            if OP_SEND <= op <= OP_WAITALL and S.rk_pass[b, r] != PASS_DONE:
                # the MPI progress engine runs at every MPI call: it retrieves the packets
                # present in the mailbox (at most host.progress_packets) before the call
                if S.rk_pass[b, r] == PASS_NONE:
                    S.rk_pass[b, r] = min(S.mb_cnt[b, r], par[b, P_PROGRESS])
                if S.rk_pass[b, r] > 0 and S.mb_cnt[b, r] > 0:
                    if _release_waits(S, par, b, node, r, done, now):
                        return
                    S.rk_pass[b, r] -= 1
                    S.rk_seen[b, r] = 0
                    _busy(S, b, r, now + _retrieve(S, T, par, b, r, now))
                    return
                S.rk_pass[b, r] = PASS_DONE
            if OP_SEND <= op <= OP_IRECV:
                S.rk_pass[b, r] = PASS_NONE   # this call is made: the next one polls again
            if op == OP_SEND or op == OP_ISEND:
                d = _post_send(S, T, par, b, r, a, ops[b, pc, 2], now)
                S.rk_pc[b, r] = pc + 1
                if op == OP_SEND and d >= 0:
                    S.rk_blk_s[b, r] = d
                extra = par[b, P_LIMIC] if d == -2 else 0
                _busy(S, b, r, now + par[b, P_MATCH] + extra)
                return
            elif op == OP_RECV or op == OP_IRECV:
                S.rk_pc[b, r] = pc + 1
                if op == OP_RECV:
                    S.rk_blk_r[b, r] = -2  # set before posting: the match may complete at once
                j = _post_recv(S, par, b, r, a, now)
                if j < 0:
                    return
                if op == OP_RECV:
                    S.rk_blk_r[b, r] = j if S.rd_state[b, r, j] != 0 else -1
                _busy(S, b, r, now + par[b, P_MATCH])
                return
            elif op == OP_WAITALL:
                if S.rk_osend[b, r] == 0 and S.rk_orecv[b, r] == 0:
                    S.rk_pc[b, r] = pc + 1
                    S.rk_pass[b, r] = PASS_NONE
                    continue
                break
            elif op == OP_COMPUTE:
                S.rk_pc[b, r] = pc + 1
                ns_cycles = ops[b, pc, 2]  # the engine stores cycles in column 2
                _busy(S, b, r, now + ns_cycles)
                return
            elif op == OP_LOOP:
                sp = S.rk_sp[b, r]
                if sp >= MAX_LOOP_DEPTH or a < 1:
                    S.status[b] |= ERR_PROGRAM
                    return
                S.rk_lpc[b, r, sp] = pc + 1
                S.rk_lcnt[b, r, sp] = a
                S.rk_sp[b, r] = sp + 1
                S.rk_pc[b, r] = pc + 1
            elif op == OP_ENDLOOP:
                sp = S.rk_sp[b, r] - 1
                if sp < 0:
                    S.status[b] |= ERR_PROGRAM
                    return
                S.rk_lcnt[b, r, sp] -= 1
                if S.rk_lcnt[b, r, sp] > 0:
                    S.rk_pc[b, r] = S.rk_lpc[b, r, sp]
                else:
                    S.rk_sp[b, r] = sp
                    S.rk_pc[b, r] = pc + 1
            elif op == OP_MARK:
                if 0 <= a < MAX_MARKS:
                    S.marks[b, r, a] = now
                    # the counters too, so that a measured part excludes the warm-ups; the rank
                    # is in its turn, so its stall time is closed
                    S.mark_cnt[b, r, a, MC_DELAYED] = S.st_delayed[b, r]
                    S.mark_cnt[b, r, a, MC_MSGS] = S.st_msgs[b, r]
                    S.mark_cnt[b, r, a, MC_STALL] = S.st_stall[b, r]
                    S.mark_cnt[b, r, a, MC_FCCPU] = S.st_fccpu[b, r]
                S.rk_pc[b, r] = pc + 1
            elif op == OP_SNAPSHOT:
                k = S.rk_snap[b, r]
                if k < S.snap.shape[1]:
                    # both directions: what r owns towards q (the paper's Figure 19) and what
                    # q owns towards r (where r's own Eq. 6 steals move credits)
                    f = flowctl.snapshot_field(S, par, b)   # -1: the protocol has none
                    for q in range(S.snap.shape[2]):
                        if f >= 0:
                            S.snap[b, k, q] = S.fc[b, pair(S, b, r, q), f]
                            S.snap_in[b, k, q] = S.fc[b, pair(S, b, q, r), f]
                S.rk_snap[b, r] = k + 1
                S.rk_pc[b, r] = pc + 1
            elif op == OP_END:
                S.rk_wait[b, r] = W_DONE
                S.rk_tfin[b, r] = now
                progress(S, b, now)
                S.ranks_done[b] += 1
                done = True
                break
            else:
                S.status[b] |= ERR_PROGRAM
                return
    # 5. poll the mailbox (the MPI progress engine); a sender waiting for credits searches
    # it for a credit packet first
    if S.mb_cnt[b, r] > 0:
        if _release_waits(S, par, b, node, r, done, now):
            return
        cost = 0
        if fc_blocked and par[b, P_SEARCH] > 0:
            cost = _search_credits(S, par, b, r)
        else:
            S.rk_seen[b, r] = 0
        cost += _retrieve(S, T, par, b, r, now)
        _busy(S, b, r, now + cost)
        return
    # 6. idle until something arrives
    S.rk_run[b, r] = 0
    if done:
        return
    if fc_blocked and (S.rk_blk_s[b, r] >= 0 or ops[b, S.rk_pc[b, r], 0] == OP_WAITALL):
        S.rk_wait[b, r] = W_CREDIT
        S.rk_stall0[b, r] = now
    elif S.rk_blk_r[b, r] >= 0:
        S.rk_wait[b, r] = W_RECV
    elif S.rk_blk_s[b, r] >= 0:
        S.rk_wait[b, r] = W_SEND
    else:
        S.rk_wait[b, r] = W_WAITALL

"""Schneider et al.'s chunked receiver-driven rendezvous (section 3.2) for rank programs
(mpi.rendezvous "chunked"), beside EXTOLL MPI's one GET of the whole message ("get").

- The sender writes the rendezvous request (a VELO packet into the receiver's mailbox, as for
  "get") and its NIC puts the message's first chunk (mpi.chunk_bytes) at once, with RMA data
  packets, into a bounce buffer at the receiver (Portals' truncating overflow-list entry):
  `request_written`.
- When the request matches a receive (`matched`), the receiver's CPU posts the gets of the
  next chunks, at most mpi.outstanding_gets (c) of them; the rest are triggered gets: when a
  chunk's last packet has arrived, the receiver's NIC sends the next GET itself (`on_data`),
  so that never more than c gets are outstanding. The first chunk counts once both the
  match and its arrival happened, in either order (the unexpected and expected cases of
  Figure 3).
- The receive completes when every byte has arrived. The send completes when every byte has
  left the sender's NIC and its first chunk has been consumed at the receiver (the send slot,
  which the bounce buffer's state is kept at, is not reused before).

Byte accounting: sd_rma[r, d] counts the bytes of send d its NIC has still to send (chunk
GETs served and the first chunk); rd_left[r, j] the bytes receive j still waits for. With
"get" (P_CHUNK = 0) the same fields hold one GET of the whole message and no bounce buffer
(sd_bounce RNDV_DONE from the start), so both modes share nic.py's RMA engine.

rq entries (per node, int32 [7]): destination node, destination rank, source rank, bytes
left, send slot, receive (-1: the first chunk, into the bounce buffer), kind (RQ_DATA: RMA
data the NIC sends; RQ_GET: a triggered GET request it sends).
"""
from extoll_vec.dtypes import ERR_QUEUE, P_CHUNK, P_GETS
from extoll_vec.kernels.common import request_tx, wake_rank
from extoll_vec.kernels.jit import inner

RQ_DATA = 0
RQ_GET = 1
GET_BYTES = 16      # an RMA GET request's payload (its descriptor), whoever writes it
# sd_bounce: the first chunk of a chunked rendezvous send
RNDV_FLYING = 0     # put, not yet arrived at the receiver
RNDV_WAITING = 1    # arrived in the bounce buffer, the request not matched yet
RNDV_DONE = 2       # consumed (or no bounce buffer: mode "get")


@inner
def rq_push(S, b, n, dnode, dst, src, nbytes, slot, j, kind, now):
    """Queue an RMA operation at node n's NIC (module docstring); False if its queue is full
    (an error flag is set)."""
    RQ = S.rq.shape[2]
    if S.rq_cnt[b, n] >= RQ:
        S.status[b] |= ERR_QUEUE
        return False
    k = (S.rq_head[b, n] + S.rq_cnt[b, n]) % RQ
    S.rq[b, n, k, 0] = dnode
    S.rq[b, n, k, 1] = dst
    S.rq[b, n, k, 2] = src
    S.rq[b, n, k, 3] = nbytes
    S.rq[b, n, k, 4] = slot
    S.rq[b, n, k, 5] = j
    S.rq[b, n, k, 6] = kind
    S.rq_cnt[b, n] += 1
    request_tx(S, b, n, max(now, S.nic_busy[b, n]))
    return True


@inner
def gq_push(S, b, r, src, slot, nbytes, j):
    """Rank r's CPU is to write a GET of nbytes of src's send slot for its receive j (host.py's
    turn, step 2); False if its GET queue is full (an error flag is set)."""
    G = S.gq.shape[2]
    if S.gq_cnt[b, r] >= G:
        S.status[b] |= ERR_QUEUE
        return False
    k = (S.gq_head[b, r] + S.gq_cnt[b, r]) % G
    S.gq[b, r, k, 0] = src
    S.gq[b, r, k, 1] = slot
    S.gq[b, r, k, 2] = nbytes
    S.gq[b, r, k, 3] = j
    S.gq_cnt[b, r] += 1
    return True


@inner
def request_written(S, T, par, b, r, d, dst, nbytes, now):
    """Rank r wrote the request of rendezvous send d (nbytes to dst): its RMA bytes are all to
    send; chunked, its NIC puts the first chunk now."""
    S.sd_rma[b, r, d] = nbytes
    S.sd_rj[b, r, d] = -1
    chunk = par[b, P_CHUNK]
    if chunk == 0:
        S.sd_bounce[b, r, d] = RNDV_DONE
        return
    S.sd_bounce[b, r, d] = RNDV_FLYING
    rq_push(S, b, T.rank_node[r], T.rank_node[dst], dst, r, min(chunk, nbytes), d, -1,
            RQ_DATA, now)


@inner
def _next_get(S, par, b, r, j):
    """Bytes of receive j's next chunk get (and the offset moves past it), 0 when none is left."""
    rest = S.rd_total[b, r, j] - S.rd_next[b, r, j]
    if rest <= 0:
        return 0
    this = min(par[b, P_CHUNK], rest)
    S.rd_next[b, r, j] += this
    return this


@inner
def matched(S, par, b, r, j, src, slot, nbytes, now):
    """Chunked rendezvous message (src, send slot, nbytes) met receive j of rank r: the CPU
    queues its first c chunk gets (written by host.py's turn, step 2). Returns 1 if the
    receive is complete at once (a one-chunk message whose chunk had arrived), 2 if the
    sender's send completes too, else 0."""
    chunk = min(par[b, P_CHUNK], nbytes)
    S.rd_total[b, r, j] = nbytes
    S.rd_next[b, r, j] = chunk
    S.rd_left[b, r, j] = nbytes
    S.rd_state[b, r, j] = 2
    done = 0
    if S.sd_bounce[b, src, slot] == RNDV_WAITING:    # unexpected: copied from the bounce buffer
        S.sd_bounce[b, src, slot] = RNDV_DONE
        S.rd_left[b, r, j] -= chunk
        if S.sd_rma[b, src, slot] == 0:
            done = 2
    else:
        S.sd_rj[b, src, slot] = j                    # expected: its arrival will count
    for _ in range(par[b, P_GETS]):
        this = _next_get(S, par, b, r, j)
        if this == 0:
            break
        if not gq_push(S, b, r, src, slot, this, j):
            return 0
    wake_rank(S, b, r, now)
    if S.rd_left[b, r, j] == 0:
        return max(done, 1)
    return 0


@inner
def on_data(S, T, par, b, r, src, slot, j, nbytes, last, now):
    """An RMA data packet of a chunked rendezvous (nbytes of it) reached rank r from src's send
    slot; j: the receive, -1 for the first chunk (bounce buffer). Returns (the receive to
    complete, -1 for none; True if the sender's send completes too). The two are separate:
    the first chunk can be the last of the send's bytes to arrive while the receive still
    waits for chunks that left the sender after it."""
    if j < 0:
        if last == 0:
            return -1, False
        jj = S.sd_rj[b, src, slot]
        if jj < 0:                                   # not matched yet: it waits in the buffer
            S.sd_bounce[b, src, slot] = RNDV_WAITING
            return -1, False
        S.sd_bounce[b, src, slot] = RNDV_DONE
        S.sd_rj[b, src, slot] = -1
        S.rd_left[b, r, jj] -= min(par[b, P_CHUNK], S.rd_total[b, r, jj])
        out = jj if S.rd_left[b, r, jj] == 0 else -1
        return out, S.sd_rma[b, src, slot] == 0
    S.rd_left[b, r, j] -= nbytes
    if last == 1:                                    # a chunk is complete: trigger the next get
        this = _next_get(S, par, b, r, j)
        if this > 0:
            rq_push(S, b, T.rank_node[r], T.rank_node[src], src, r, this, slot, j, RQ_GET, now)
    if S.rd_left[b, r, j] == 0:
        return j, False
    return -1, False


@inner
def data_sent(S, b, r, d, nbytes):
    """Send d of rank r sent nbytes more RMA data; True if it is complete now (every byte left
    and its first chunk, if any, was consumed)."""
    S.sd_rma[b, r, d] -= nbytes
    return S.sd_rma[b, r, d] == 0 and S.sd_bounce[b, r, d] == RNDV_DONE

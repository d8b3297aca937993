"""Small pieces shared by the network, NIC and host kernels: the packet pool, the NIC
injection FIFO, waking a rank, and the packet arithmetic of extoll_vec/formulas.py compiled
for them. The functions on state take (S, b) = state and batch member."""
import numpy as np

from extoll_vec import formulas
from extoll_vec.dtypes import (ERR_BUFFER_OVERFLOW, ERR_POOL, ERR_QUEUE, EV_HOST_DMA, EV_NIC_DRAIN,
                               EV_NIC_POLL, EV_NIC_TX, EV_PROTO_TIMER, EV_RANK, H_NIC_POLL, P_DMA_SETUP,
                               P_FLIT_BYTES, P_HOOKS,
                               P_MPI_HDR, P_NIC_FIFO, P_PCI_FP, P_PKT_OVERHEAD, P_SEED, P_SYNTH, P_VELO_PAYLOAD, PCI_FRAC_BITS,
                               PK_PROTO, W_NIC)
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.wheel import schedule

# the configuration's checks and sizes call the same functions uncompiled
message_packets = inner(formulas.message_packets)
packet_flits = inner(formulas.packet_flits)


@inner
def splitmix64(x):
    """SplitMix64 finalizer on uint64 (wrapping arithmetic): the mixing step of the kernels'
    counter-based random streams (nic.draw for traffic, draw_other for routes)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@inner
def route_draw(rt_ctr, par, b, node):
    """The next uint64 of node's routing stream (state rt_ctr): (seed, node, counter) hashed
    with a salt that the traffic generator does not use, so routes never change the traffic's
    destinations. Routings draw their intermediate groups or nodes from it
    (routing/registry.py)."""
    c = rt_ctr[b, node]
    rt_ctr[b, node] = c + 1
    key = splitmix64(np.uint64(par[b, P_SEED]) ^ np.uint64(0x52A0E7C1D3B9F046)
                     ^ (np.uint64(node) * np.uint64(0xD1B54A32D192ED03)))
    return splitmix64(key ^ np.uint64(c))


@inner
def draw_other(rt_ctr, par, b, node, n, x0, x1):
    """A value uniformly from 0..n-1 without x0 and x1 (x0 != x1, n >= 3), from the routing
    stream of node (route_draw)."""
    x = np.int64(route_draw(rt_ctr, par, b, node) % np.uint64(n - 2))
    lo = np.int64(min(x0, x1))
    hi = np.int64(max(x0, x1))
    if x >= lo:
        x += 1
    if x >= hi:
        x += 1
    return x


@inner
def flits_of(par, b, payload_bytes):
    """Flits of a packet on the wire: payload plus VELO and network headers (one cycle each)."""
    return packet_flits(payload_bytes, par[b, P_PKT_OVERHEAD], par[b, P_FLIT_BYTES])


@inner
def packet_payload(par, b, nbytes, last):
    """Payload bytes of an eager packet of an nbytes message: full but for the last, which
    carries the rest of the header and message (the host's PIO and copy per byte)."""
    pay = par[b, P_VELO_PAYLOAD]
    if last == 0:
        return pay
    total = par[b, P_MPI_HDR] + nbytes
    return total - ((total - 1) // pay) * pay if total > 0 else 0


@inner
def pk_alloc(S, b):
    h = S.pk_meta[b, 0]
    if h < 0:
        S.status[b] |= ERR_POOL
        return -1
    S.pk_meta[b, 0] = S.pk[b, h].next
    S.pk_meta[b, 1] += 1
    return h


@inner
def pk_free(S, b, h):
    # a free slot's protocol packet fields are 0, so a new packet starts with 0 (cleared here:
    # pk_free has few call sites, pk_new four in rank_step, each an inlined copy; PF = 0: none)
    for i in range(S.pk_pf.shape[2]):
        S.pk_pf[b, h, i] = 0
    S.pk[b, h].next = S.pk_meta[b, 0]
    S.pk_meta[b, 0] = h
    S.pk_meta[b, 1] -= 1


@inner
def pk_new(S, b, kind, src, dst, dnode, flits, last, pay, aux, aux2, t):
    h = pk_alloc(S, b)
    if h < 0:
        return -1
    S.pk[b, h].kind = kind
    S.pk[b, h].src = src
    S.pk[b, h].dst = dst
    S.pk[b, h].dnode = dnode
    S.pk[b, h].flits = flits
    S.pk[b, h].last = last
    S.pk[b, h].pay = pay
    S.pk[b, h].aux = aux
    S.pk[b, h].aux2 = aux2
    S.pk[b, h].t0 = t
    return h


@inner
def progress(S, b, t):
    """Something completed, or a rank is busy until t: the no-progress watchdog
    (limits.no_progress_us, kernels/sim.py) counts from the latest such time, so a rank in a
    long compute phase is progress until its end, whatever completes meanwhile."""
    if t > S.last_progress[b]:
        S.last_progress[b] = t


@inner
def nic_capacity(S, par, b):
    if par[b, P_SYNTH] != 0:
        return S.nq.shape[2]  # synthetic traffic: the source queue
    return par[b, P_NIC_FIFO]


@inner
def nic_full(S, par, b, node):
    # packets a protocol keeps for retransmission hold FIFO capacity (state.py nic_kept)
    return S.nq_cnt[b, node] + S.nic_kept[b, node] >= nic_capacity(S, par, b)


@inner
def nic_push(S, par, b, node, h, now):
    """A PIO write (or a generated packet) lands in the node's injection FIFO."""
    if nic_full(S, par, b, node):
        S.status[b] |= ERR_BUFFER_OVERFLOW
        return
    Q = S.nq.shape[2]
    S.nq[b, node, (S.nq_head[b, node] + S.nq_cnt[b, node]) % Q] = h
    S.nq_cnt[b, node] += 1
    if par[b, P_HOOKS] & H_NIC_POLL:   # its processor looks now, whatever its link does
        request_poll(S, b, node, now)
    else:
        request_tx(S, b, node, max(now, S.nic_busy[b, node]))


@inner
def request_tx(S, b, node, t):
    """Ask the NIC to inject at cycle t (once per cycle)."""
    if S.nic_txt[b, node] != t:
        S.nic_txt[b, node] = t
        schedule(S, b, t, EV_NIC_TX, node, 0, 0)


@inner
def request_poll(S, b, node, t):
    """Ask a polling NIC's processor to look at its FIFO at cycle t (Protocol.nic_polls),
    unless it will look earlier anyway (each look asks for the next one it needs)."""
    if S.nic_pollt[b, node] < 0 or t < S.nic_pollt[b, node]:
        S.nic_pollt[b, node] = t
        schedule(S, b, t, EV_NIC_POLL, node, 0, 0)


@inner
def wake_rank(S, b, r, now):
    """Give the rank's CPU a turn now unless it already has one. Finished ranks are woken
    too: they keep draining their mailbox (credits still arrive after MPI_Finalize starts)."""
    if S.rk_run[b, r] == 0 and S.rk_wait[b, r] != W_NIC:
        S.rk_run[b, r] = 1
        schedule(S, b, now, EV_RANK, r, 0, 0)


@inner
def nic_block_rank(S, b, node, r, now):
    """Hardware back-pressure reached the CPU: the PIO write of rank r cannot complete."""
    Q = S.nw.shape[2]
    S.nw[b, node, (S.nw_head[b, node] + S.nw_cnt[b, node]) % Q] = r
    S.nw_cnt[b, node] += 1
    S.rk_wait[b, r] = W_NIC
    S.rk_run[b, r] = 0
    S.rk_stall0[b, r] = now


@inner
def nic_release_one(S, b, node, now):
    """A FIFO slot was freed: the longest-waiting blocked rank of the node retries."""
    if S.nw_cnt[b, node] > 0:
        Q = S.nw.shape[2]
        r = S.nw[b, node, S.nw_head[b, node]]
        S.nw_head[b, node] = (S.nw_head[b, node] + 1) % Q
        S.nw_cnt[b, node] -= 1
        S.st_stall[b, r] += now - S.rk_stall0[b, r]
        S.rk_wait[b, r] = 0
        wake_rank(S, b, r, now)


# ---- for protocols (the hooks of kernels/flowctl.py) ------------------------------------------
@inner
def proto_send(S, par, b, node, dnode, flits, now):
    """Node's NIC sends a protocol packet (PK_PROTO: a credit, a NAK, a forwarded copy) to node
    dnode; the destination's nic_on_eject receives it. It waits in the node's protocol queue,
    which the NIC serves before its FIFO and RMA engine and which nic_may_inject never holds.
    Returns the packet id (the protocol writes pk_aux, pk_pay, pk_pf) or -1 (queue or pool
    full: an error flag is set)."""
    Q = S.pq.shape[2]
    if S.pq_cnt[b, node] >= Q:
        S.status[b] |= ERR_QUEUE
        return -1
    h = pk_new(S, b, PK_PROTO, node, dnode, dnode, flits, 1, 0, 0, 0, now)
    if h < 0:
        return -1
    S.pk[b, h].ready = now   # leaves as soon as the NIC can (nic_tx's not-before)
    S.proto_made[b] += 1
    S.pq[b, node, (S.pq_head[b, node] + S.pq_cnt[b, node]) % Q] = h
    S.pq_cnt[b, node] += 1
    request_tx(S, b, node, max(now, S.nic_busy[b, node]))
    return h


@inner
def proto_resend(S, par, b, node, h, now):
    """Node's NIC sends packet h again (one a protocol kept: INJ_TAKEN, EJ_KEPT), from its
    protocol queue, ahead of its FIFO. Returns False if the queue is full (nothing changed)."""
    return proto_resend_at(S, par, b, node, h, now)


@inner
def proto_resend_at(S, par, b, node, h, t):
    """proto_resend, but the packet may not leave before cycle t (its NIC processor prepares
    it until then: nic_work). The protocol queue is served in order, so a packet queued
    behind it waits too, as behind one processor. Returns False if the queue is full."""
    Q = S.pq.shape[2]
    if S.pq_cnt[b, node] >= Q:
        return False
    S.pk[b, h].ready = t   # nic_tx's not-before; a router sets it anew when the packet enters
    S.pq[b, node, (S.pq_head[b, node] + S.pq_cnt[b, node]) % Q] = h
    S.pq_cnt[b, node] += 1
    request_tx(S, b, node, max(t, S.nic_busy[b, node]))
    return True


@inner
def nic_work(S, b, node, t, cost):
    """The NIC's processor of node does `cost` cycles of work requested at cycle t (a
    programmable NI's per-packet steps: Bhoedjang et al.'s LANai polls, sends, receives, forwards).
    One processor, serving requests in order: the work starts when it is free. Returns the
    cycle the work is done."""
    end = max(t, S.nic_cpu[b, node]) + cost
    S.nic_cpu[b, node] = end
    return end


@inner
def pk_clone(S, b, h, now):
    """A copy of packet h (its record and protocol fields), made at this NIC: one of several
    copies of a packet an NI forwards (Bhoedjang et al.'s multicast) or hands to its host. Counted
    as a protocol packet made (the conservation check: every packet made is delivered or
    retired). Returns the copy, or -1 (pool exhausted: an error flag is set)."""
    h2 = pk_alloc(S, b)
    if h2 < 0:
        return -1
    S.pk[b, h2].dnode = S.pk[b, h].dnode
    S.pk[b, h2].flits = S.pk[b, h].flits
    S.pk[b, h2].ovc = S.pk[b, h].ovc
    S.pk[b, h2].ready = now
    S.pk[b, h2].route = S.pk[b, h].route
    S.pk[b, h2].kind = S.pk[b, h].kind
    S.pk[b, h2].src = S.pk[b, h].src
    S.pk[b, h2].dst = S.pk[b, h].dst
    S.pk[b, h2].last = S.pk[b, h].last
    S.pk[b, h2].aux = S.pk[b, h].aux
    S.pk[b, h2].aux2 = S.pk[b, h].aux2
    S.pk[b, h2].seq = S.pk[b, h].seq
    S.pk[b, h2].out = S.pk[b, h].out
    S.pk[b, h2].pay = S.pk[b, h].pay
    S.pk[b, h2].t0 = S.pk[b, h].t0
    S.pk[b, h2].next = -1
    for i in range(S.pk_pf.shape[2]):
        S.pk_pf[b, h2, i] = S.pk_pf[b, h, i]
    S.proto_made[b] += 1
    return h2


@inner
def proto_retire(S, b, h):
    """A packet a protocol kept (EJ_KEPT, INJ_TAKEN) has done its work at this NIC (every
    copy of it has left): it counts as delivered and its slot is freed."""
    S.delivered[b] += 1
    pk_free(S, b, h)


@inner
def proto_timer(S, b, t, target, arg):
    """The member's protocol gets on_timer(target, arg) at cycle t (per node, per pair, ...:
    target and arg mean what the protocol says). A periodic timer must stop rescheduling itself
    once the run is over, or an MPI run never runs out of events."""
    schedule(S, b, t, EV_PROTO_TIMER, target, arg, 0)


@inner
def drain_at(S, b, node, t):
    """The NIC of node resumes draining its ejection buffer at t (after nic_on_eject HOLD)."""
    schedule(S, b, t, EV_NIC_DRAIN, node, 0, 0)


@inner
def dma_start(S, par, b, node, h, now):
    """Packet h (header and payload) crosses node's I/O bus into host memory, after the
    transfers before it (network.pci_mb_s, dma_setup_ns: one DMA engine per NIC). Returns
    the cycle it is in."""
    nbytes = np.int64(S.pk[b, h].flits) * par[b, P_FLIT_BYTES]
    end = (max(now, S.pci_free[b, node]) + par[b, P_DMA_SETUP]
           + ((nbytes * par[b, P_PCI_FP] + (1 << PCI_FRAC_BITS) - 1) >> PCI_FRAC_BITS))
    S.pci_free[b, node] = end
    return end


@inner
def to_host(S, par, b, node, h, t):
    """Node's NIC hands packet h (one it kept, or a copy of it: pk_clone) to its rank's host
    from cycle t on: the DMA engine (kernels/nic.py host_dma) writes it into the rank's
    mailbox in order, once a slot is free and the bus has moved it, then calls nic_on_host
    and counts it delivered. Returns False if the queue (the record's host_queue) is full."""
    Q = S.hq.shape[2]
    if S.hq_cnt[b, node] >= Q:
        S.status[b] |= ERR_QUEUE
        return False
    S.pk[b, h].ready = t
    S.hq[b, node, (S.hq_head[b, node] + S.hq_cnt[b, node]) % Q] = h
    S.hq_cnt[b, node] += 1
    if S.hq_cnt[b, node] == 1:
        schedule(S, b, t, EV_HOST_DMA, node, 0, 0)
    return True

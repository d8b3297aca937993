"""Structure-of-arrays state of a batch, with documented shapes.

Every array has the batch axis first. Sizes (static for a batch; dynamic contents only):
B batch, E event pool, W wheel buckets, NPK packet pool, R routers, P ports, V VCs,
MW words of a VOQ bitmask (ceil(P * MAX_VCS / 64)), N nodes,
FQ NIC FIFO slots, NW ranks per node, EQ ejection slots, RQ RMA queue, HQ DMA queue to host,
NR ranks, MC mailbox ring, SQ send slots, RD receive slots, UQ unexpected-message pool, GQ GET
queue, CQ control queue, NPAIR pair-table entries (communicating pairs + 1, NR1 = NR + 1), K flow-control fields per peer, KR flow-control fields per rank,
NSNAP credit snapshots (OP_SNAPSHOT); the protocol's (protocols/registry.py): KN fields per
node, KNN fields per pair of nodes, KNP per-node parameters, PF packet fields, PQ protocol
packets queued per NIC.
The table FIELDS is the single declaration: name -> (dtype, dims, initial value).
"""
from collections import namedtuple

import numpy as np

from .dtypes import CNT, IDX, MAX_LOOP_DEPTH, MAX_MARKS, N_CT, N_CV, N_MC, TIME

I64 = np.int64
I32 = np.int32
I8 = np.int8

# The packet record: one aligned record per packet, so that a packet's hop (arbitration,
# routing, queueing: next, dnode, flits, ovc, ready, route) touches one cache line instead of one
# line per field array; on a 5,256-node Dragonfly at saturation the pool holds millions of
# packets, each untouched for hundreds of cycles between hops (docs/design.md).
PACKET = np.dtype([
    ("next", I32),     # next packet in its queue or in the free list (-1: none)
    ("dnode", IDX),    # destination node
    ("flits", I32),
    ("ovc", I32),      # VC on the output it is queued for
    ("ready", TIME),   # cycle its head may be switched at its current router
    ("route", I32),    # adaptive routing state (kernels/routing.py)
    ("kind", I32),     # dtypes.PK_*
    ("src", IDX), ("dst", IDX),   # ranks (synthetic traffic: nodes)
    ("last", I32),     # 1: last packet of its message
    ("aux", I32), ("aux2", I32),  # kind-dependent (control type, credits, slots)
    ("seq", I32),      # per-pair sequence number (the NIC's in-order check)
    ("out", I32),      # output port it is queued for
    ("pay", I64),      # kind-dependent payload (message bytes, credits)
    ("t0", TIME),      # creation cycle (synthetic latency)
], align=True)

FIELDS = {
    # per member
    "now": (TIME, ("B",), 0),
    "status": (I64, ("B",), 0),            # error flags (dtypes.ERR_*)
    "err_info": (I64, ("B", 4), -1),       # where an error happened (rank, router, ...)
    "finished": (I8, ("B",), 0),
    "last_progress": (TIME, ("B",), 0),
    "events": (CNT, ("B",), 0),
    "delivered": (CNT, ("B",), 0),         # packets taken out of the network by a NIC
    "proto_made": (CNT, ("B",), 0),        # a protocol's own packets made (common.proto_send)
    "hops": (CNT, ("B",), 0),              # router traversals (packet-hops), for benchmarks
    "ranks_done": (I64, ("B",), 0),
    # event calendar (kernels/wheel.py)
    "ev_t": (TIME, ("B", "E"), 0), "ev_k": (I32, ("B", "E"), 0), "ev_a": (I32, ("B", "E"), 0),
    "ev_b": (I32, ("B", "E"), 0), "ev_c": (I32, ("B", "E"), 0), "ev_next": (I32, ("B", "E"), -1),
    "wh_head": (I32, ("B", "W"), -1), "wh_tail": (I32, ("B", "W"), -1),
    "heap": (I32, ("B", "E"), 0), "ev_meta": (I64, ("B", 4), 0),
    # packet pool: one record per packet in a buffer, on a link or in a NIC
    "pk": (PACKET, ("B", "NPK"), 0),    # one PACKET record per packet slot
    "pk_meta": (I64, ("B", 2), 0),         # (free-list head, packets alive)
    "rt_ctr": (I64, ("B", "N"), 0),        # routing's random stream counter per source node
    # routers (kernels/network.py)
    "voq": (IDX, ("B", "R", "P", "V", "P", 2), -1),   # (head, tail) of each VOQ
    "outq": (I32, ("B", "R", "P"), 0), "voq_mask": (I64, ("B", "R", "P", "MW"), 0),
    "ib_cnt": (I32, ("B", "R", "P", "V"), 0), "ib_flits": (I32, ("B", "R", "P", "V"), 0),
    "cr": (I32, ("B", "R", "P", "V"), 0),
    "op_busy": (TIME, ("B", "R", "P"), 0), "op_rr": (I32, ("B", "R", "P"), 0),
    "op_arbt": (TIME, ("B", "R", "P"), -1), "op_util": (CNT, ("B", "R", "P"), 0),
    "ip_busy": (TIME, ("B", "R", "P"), 0),
    # input-queued routers (kernels/router_iq.py): one FIFO per input VC, a copy of each head's
    # output, output VC, flits and ready cycle, a bit per non-empty FIFO, a bit per output VC a
    # head waits on for credits, the input arbiters' last VC, the pending allocation time, the
    # allocator's scratch
    "iq_head": (IDX, ("B", "R", "P", "V"), -1), "iq_tail": (IDX, ("B", "R", "P", "V"), -1),
    "iq_hout": (I32, ("B", "R", "P", "V"), 0), "iq_hovc": (I32, ("B", "R", "P", "V"), 0),
    "iq_hlen": (I32, ("B", "R", "P", "V"), 0), "iq_hrdy": (TIME, ("B", "R", "P", "V"), 0),
    "iq_mask": (I64, ("B", "R", "MW"), 0), "iq_starved": (I64, ("B", "R", "MW"), 0),
    "ip_rr": (I32, ("B", "R", "P"), 0),
    "ra_t": (TIME, ("B", "R"), -1), "iq_req": (I32, ("B", "P"), 0),
    "iq_best": (I32, ("B", "P"), -1),
    # NICs (kernels/nic.py)
    "nq": (IDX, ("B", "N", "FQ"), -1), "nq_head": (I32, ("B", "N"), 0), "nq_cnt": (I32, ("B", "N"), 0),
    "nic_busy": (TIME, ("B", "N"), 0),
    # the NIC's processor (a programmable NI: Bhoedjang et al.'s LANai) is busy until this cycle:
    # work a protocol charges with common.nic_work, done one step at a time in request order; the
    # earliest pending EV_NIC_POLL of a NIC that polls its FIFO (-1: none)
    "nic_cpu": (TIME, ("B", "N"), 0), "nic_pollt": (TIME, ("B", "N"), -1),
    # packets a protocol keeps for retransmission (INJ_TAKEN, EJ_KEPT): they hold FIFO capacity,
    # as an InfiniBand send-queue entry stays until acknowledged (common.nic_full)
    "nic_kept": (I32, ("B", "N"), 0), "nic_txt": (TIME, ("B", "N"), -1), "nic_cr": (I32, ("B", "N"), 0), "nic_rr": (I32, ("B", "N"), 0),
    "nw": (IDX, ("B", "N", "NW"), -1), "nw_head": (I32, ("B", "N"), 0), "nw_cnt": (I32, ("B", "N"), 0),
    "ej_q": (IDX, ("B", "N", "EQ"), -1), "ej_head": (I32, ("B", "N"), 0), "ej_cnt": (I32, ("B", "N"), 0),
    "ej_flits": (I32, ("B", "N"), 0), "ej_blk": (I32, ("B", "N"), 0),
    # slow receivers: the memory's cycles per flit (fixed point, 0: link rate) and the cycle
    # the head packet of the ejection buffer is written (-1: not started)
    "ej_sink": (I32, ("B", "N"), 0), "ej_done": (TIME, ("B", "N"), -1),
    "rq": (I32, ("B", "N", "RQ", 7), 0), "rq_head": (I32, ("B", "N"), 0), "rq_cnt": (I32, ("B", "N"), 0),
    # the DMA stage into host memory (network.pci_mb_s, kernels/nic.py): the cycle the node's
    # I/O bus is free; the packets a protocol handed to the host (common.to_host), in order;
    # the cycle the head's transfer ends (-1: not started); 1: the head waits for a free
    # mailbox slot (no host buffer posted)
    "pci_free": (TIME, ("B", "N"), 0),
    "hq": (IDX, ("B", "N", "HQ"), -1), "hq_head": (I32, ("B", "N"), 0),
    "hq_cnt": (I32, ("B", "N"), 0), "hq_done": (TIME, ("B", "N"), -1),
    "hq_blk": (I32, ("B", "N"), 0),
    # entries the RMA queue has finished (its tickets: a finish message waits for its RDMA
    # write's, kernels/nic.py)
    "rq_pops": (I64, ("B", "N"), 0),
    "syn": (CNT, ("B", 8), 0), "syn_ctr": (I64, ("B", "N"), 0), "syn_dest": (IDX, ("B", "N"), -1),
    "syn_cv": (TIME, ("B", N_CV), 0),     # the measurement window (dtypes.CV_*)
    # ranks (kernels/host.py)
    "rk_pc": (I32, ("B", "NR"), 0), "rk_wait": (I32, ("B", "NR"), 0), "rk_run": (I32, ("B", "NR"), 0),
    "rk_blk_s": (I32, ("B", "NR"), -1), "rk_blk_r": (I32, ("B", "NR"), -1),
    "rk_sp": (I32, ("B", "NR"), 0), "rk_lpc": (I32, ("B", "NR", MAX_LOOP_DEPTH), 0),
    "rk_lcnt": (I64, ("B", "NR", MAX_LOOP_DEPTH), 0), "rk_cost": (TIME, ("B", "NR"), 0),
    "rk_tfin": (TIME, ("B", "NR"), -1), "rk_stall0": (TIME, ("B", "NR"), 0),
    "rk_osend": (I32, ("B", "NR"), 0), "rk_orecv": (I32, ("B", "NR"), 0),
    "marks": (TIME, ("B", "NR", MAX_MARKS), -1),
    "mark_cnt": (CNT, ("B", "NR", MAX_MARKS, N_MC), -1),   # st_* counters at each mark (MC_*)
    "st_sent": (CNT, ("B", "NR", 3), 0), "st_delayed": (CNT, ("B", "NR"), 0),
    "st_mbmax": (CNT, ("B", "NR"), 0), "st_stall": (TIME, ("B", "NR"), 0),
    "st_msgs": (CNT, ("B", "NR"), 0),
    # multicast packets (OP_MCAST) a rank sent, and per pair (receiver, sender) of the pair
    # table those it received: one sequence per sender, checked at every member (kernels/nic.py)
    "mseq_tx": (I32, ("B", "NR"), 0), "mseq_rx": (I32, ("B", "NPAIR"), 0),
    "mc_due": (CNT, ("B", "NR"), 0),   # copies its multicast packets owe the other members
    "mb_q": (I64, ("B", "NR", "MC"), 0), "mb_head": (I32, ("B", "NR"), 0), "mb_cnt": (I32, ("B", "NR"), 0),
    "sd_state": (I32, ("B", "NR", "SQ"), 0), "sd_dst": (I32, ("B", "NR", "SQ"), 0),
    "sd_bytes": (I64, ("B", "NR", "SQ"), 0), "sd_left": (I32, ("B", "NR", "SQ"), 0),
    "sd_tot": (I32, ("B", "NR", "SQ"), 0), "sd_dly": (I32, ("B", "NR", "SQ"), 0),
    # 1: the send goes by rendezvous (above the eager threshold, or flowctl.eager_ok refused)
    "sd_rndv": (I32, ("B", "NR", "SQ"), 0),
    "sq": (I32, ("B", "NR", "SQ"), 0), "sq_cnt": (I32, ("B", "NR"), 0),
    # the first rk_sqblk[r] sends of the queue are known blocked (host._sendable, P_SEND_MEMO)
    "rk_sqblk": (I32, ("B", "NR"), 0),
    # slots from the mailbox head a sender waiting for credits has examined in its search and
    # found no control packet in (host._search_credits): the next search starts after them
    "rk_seen": (I32, ("B", "NR"), 0),
    # a receive slot: 0 free, 1 posted, 2 matched a rendezvous (GET or reply queued, data
    # awaited), 3 (host.RD_HALF) "write" rendezvous: its data or its finish message is in
    "rd_state": (I32, ("B", "NR", "RD"), 0), "rd_src": (I32, ("B", "NR", "RD"), 0),
    # a matched chunked rendezvous receive (kernels/rendezvous.py): bytes still to arrive,
    # offset of the next chunk to get, the message bytes
    "rd_left": (I64, ("B", "NR", "RD"), 0), "rd_next": (I64, ("B", "NR", "RD"), 0),
    "rd_total": (I64, ("B", "NR", "RD"), 0),
    # a rendezvous send: RMA bytes not yet sent, the receive it matched at the destination
    # (-1: not yet), its first chunk's bounce state (kernels/rendezvous.py RNDV_*)
    "sd_rma": (I64, ("B", "NR", "SQ"), 0), "sd_rj": (I32, ("B", "NR", "SQ"), -1),
    "sd_bounce": (I32, ("B", "NR", "SQ"), 0),
    "pr_ring": (I32, ("B", "NR", "RD"), 0), "pr_cnt": (I32, ("B", "NR"), 0),
    "ux_src": (I32, ("B", "NR", "UQ"), 0), "ux_bytes": (I64, ("B", "NR", "UQ"), 0),
    "ux_slot": (I32, ("B", "NR", "UQ"), 0), "ux_seq": (I64, ("B", "NR", "UQ"), 0),
    "ux_next": (I32, ("B", "NR", "UQ"), -1), "ux_meta": (I64, ("B", "NR", 3), 0),  # free head, seq, count
    # per communicating pair (the pair table below): its unexpected-message queue
    "ux_head": (I32, ("B", "NPAIR"), -1), "ux_tail": (I32, ("B", "NPAIR"), -1),
    "gq": (I32, ("B", "NR", "GQ", 4), 0), "gq_head": (I32, ("B", "NR"), 0), "gq_cnt": (I32, ("B", "NR"), 0),
    "cq": (I32, ("B", "NR", "CQ"), 0), "cq_head": (I32, ("B", "NR"), 0), "cq_cnt": (I32, ("B", "NR"), 0),
    # the pair table (kernels/pairs.py, engine/pairs.py): the pairs (x, y) of ranks that
    # exchange packets, as a CSR index per rank: row x is pair_peer[pair_ptr[x]:pair_ptr[x+1]],
    # peers ascending; a row holding every rank is the dense row (pair_ptr[x] + y). Entry
    # NPAIR - 1 is a sink that a lookup of a missing pair returns (with ERR_PAIR raised)
    "pair_ptr": (I32, ("B", "NR1"), 0), "pair_peer": (I32, ("B", "NPAIR"), -1),
    # a row's first pair_real[x] entries are its communicating peers, ascending; the rest are
    # spare entries (peer -1) for the idle senders the dynamic protocol steals from, taken by
    # kernels/pairs.take_idle in descending id order below the cursor pair_idle[x] (-1: none)
    "pair_real": (I32, ("B", "NR"), 0), "pair_idle": (I32, ("B", "NR"), -1),
    # 1: every row of the member's table is dense (pair_ptr[x] = x * NR), the lookup's
    # arithmetic alone (alltoall programs): one byte per member instead of three loads a lookup
    "pair_dense": (I8, ("B",), 0),
    # per pair (x, y): the in-order check's sequence numbers, then the flow-control fields
    "fc": (I32, ("B", "NPAIR", "K"), 0),        # protocols/fc_layout.py
    "fcr": (I32, ("B", "NR", "KR"), 0),         # per rank: protocols/fc_layout.py
    "st_ctrl": (CNT, ("B", "NR", N_CT), 0),     # control packets written, by type (CT_*)
    "st_fccpu": (TIME, ("B", "NR"), 0),         # CPU cycles spent on flow control
    "rk_fcfrac": (I64, ("B", "NR"), 0),         # credit-operation time not yet a whole cycle
    "snap": (I32, ("B", "NSNAP", "NR"), -1),    # OP_SNAPSHOT: credits owned towards each peer
    "snap_in": (I32, ("B", "NSNAP", "NR"), -1),  # OP_SNAPSHOT: credits each peer owns towards it
    "rk_snap": (I32, ("B", "NR"), 0),           # snapshots a rank has taken
    "rk_pass": (I32, ("B", "NR"), -1),          # progress pass before an MPI call (host.py)
    # the member's protocol (kernels/flowctl.py): per-node state and parameters, the packet
    # fields it declares, its NIC-level packets waiting at each NIC (common.proto_send)
    "fcn": (I32, ("B", "N", "KN"), 0),
    "nn": (I32, ("B", "N", "N", "KNN"), 0),     # per pair of NICs (x, y): x's state of y
    "npar": (I64, ("B", "N", "KNP"), 0),
    "pk_pf": (I32, ("B", "NPK", "PF"), 0),
    "pq": (IDX, ("B", "N", "PQ"), -1), "pq_head": (I32, ("B", "N"), 0), "pq_cnt": (I32, ("B", "N"), 0),
}

State = namedtuple("State", list(FIELDS))
Topo = namedtuple("Topo", ["neighbor", "neighbor_port", "terminal_node", "node_router", "node_port",
                           "route_port", "vc_next", "rank_node",
                           "port_class",   # int8 [R, P]: dtypes.PORT_* (link latency class)
                           "geo"])         # int32 [4]: dragonfly (p, a, h, groups), else zeros


def allocate(sizes: dict) -> State:
    arrays = {}
    for name, (dtype, dims, fill) in FIELDS.items():
        shape = tuple(sizes[d] if isinstance(d, str) else d for d in dims)
        arrays[name] = np.full(shape, fill, dtype=dtype)
    S = State(**arrays)
    # free lists: next pointers chain every slot
    E, NPK, UQ = sizes["E"], sizes["NPK"], sizes["UQ"]
    S.ev_next[:] = np.arange(1, E + 1, dtype=I32)
    S.ev_next[:, -1] = -1
    S.pk["next"][:] = np.arange(1, NPK + 1, dtype=I32)
    S.pk["next"][:, -1] = -1
    S.ux_next[:] = np.arange(1, UQ + 1, dtype=I32)
    S.ux_next[..., -1] = -1
    return S


def nbytes(S: State) -> int:
    return sum(a.nbytes for a in S)

"""Myrinet LFC as Bhoedjang et al. describe it, sections 3.1-3.2: flow control on the
network interfaces, a sliding window between every pair of NIs, and multicast forwarded by the
NIs along each sender's spanning tree under the same credits.

Each NI splits its receive buffers equally among the other NIs (`lfc_credits` C per sender:
8 buffers of 1 KB in the paper, 0.5 MB per NI) and holds C send credits per destination, one
per buffer reserved for it there. The host writes each packet by PIO into a free packet of
the NI's send buffer pool (network.nic_fifo_packets; a full pool makes the host wait, polling)
and the NI polls it: with a credit for its destination it is transmitted, otherwise its
descriptor joins the destination's blocked-sends queue, which is always served first (FIFO
per pair). A packet lands in one of the buffers its sender owns at the receiving NI, which
copies it by DMA into a posted host buffer (a mailbox slot; none posted: the NI waits,
keeping the buffer, and its senders run out of credits). A multicast packet (ranks
0..workload.group_size-1) goes from the root's NI to its children in the root's tree
(`lfc_tree`, trees.py; `user`: any trees, `lfc_tree_parents`), and each NI forwards it
to its own children as it arrives. The buffer is free once the packet is in host memory and every child's copy has left; its credit
goes back piggybacked on the next packet to that sender, or in a credit update once the
receiver counts the sender at no more than `lfc_low_water` credits or owes `lfc_update_owed`
(the paper gives neither value: gap G5 of docs/reproduction/lfc.md).

Deadlock recovery (section 4, `lfc_recovery`): trees other than binomial can fill a cycle of
partitions (lfc_trees.dependency_cycle). An NI "assumes deadlock as soon as it finds that it
has run out of send credits" (4.1): a packet entering an empty blocked-sends queue, or any
non-empty queue once its last recovery is over, starts a recovery, one at a time per NI,
queues served round-robin. The initiator R sends the queue's head without a credit into the
one buffer R owns at the destination D (its deadlock channel: one buffer per other NI, gap
G12). D clears the flag, forwards as usual, and sends each of its children in the tree the
first queued packet of the tree, flagged again where it has no credit (4.2). Readings (gaps
G14-G19): the flagged packet leaves R's buffer when it is done at D or, sooner, when a buffer
of its sender's partition frees at D (it takes it over, and that buffer's credit stays
spent); an NI acknowledges to the NI that flagged it once R's buffer there is free and its own
flagged children have acknowledged; acknowledgements are control packets, as credit updates
are; unicast packets start recoveries too (their tree is the one edge); a recovery step costs
`lfc_recovery_ns` of the NI's processor on top of the send.

The NI's processor (the 37.5 MHz LANai) spends `lfc_*_ns` per step: polling a host packet,
transmitting a packet (fixed plus per KiB), receiving one, a forwarding destination's
descriptor, a credit update. One processor per NI, one step at a time (kernels/common.nic_work),
polling its send pool whatever its link does (nic_polls).

Kernel: kernels/lfc/lfc.py. One rank per node (the paper's one process per NI); every
message goes in packets of mpi.velo_payload bytes (no rendezvous).
"""
from __future__ import annotations

import functools

import numpy as np

from ... import dtypes as D
from ...formulas import cycles
from ..audit import alive_packets, node_counter
from .trees import TREE_KINDS, tree_children, tree_parents, user_parents
from ..registry import Output, Param, Protocol

# per pair of NIs nn[b, x, y, *]: x's state of y
NN_CRED = 0       # send credits x holds for y
NN_RECV = 1       # packets x received from y whose credits have not gone back yet
NN_OWED = 2       # buffers of y's partition at x freed, their credits not yet back to y
NN_USED = 3       # buffers of y's partition at x holding a packet (<= C: no overrun)
NN_BQ_HEAD = 4    # x's blocked-sends queue to y: copies chained through pk.next (-1: none)
NN_BQ_TAIL = 5
NN_BQ_CNT = 6
NN_A_SENT = 7     # audit: credit-holding packets x transmitted to y
NN_A_GOT = 8      # audit: credits x got back from y
NN_A_GIVEN = 9    # audit: credits x returned to y
NN_A_RECVD = 10   # audit: credit-holding packets x received from y
NN_MAX_USED = 11  # the most buffers of y's partition at x in use at once
NN_DL_PKT = 12    # y's deadlock buffer at x: the packet in it, + 1 (0: free)
NN_DL_FROM = 13   # x in y's deadlocked subtree: the NI that flagged x's packet, + 1 (0: not)
NN_DL_ACKS = 14   # y's recovery: acknowledgements x waits for from children it flagged
NN_DL_IN = 15     # packets in deadlock buffers at x that came from y (for y's partition)
NODE_PAIR_FIELDS = 16
# per NI fcn[b, x, *]
CN_UPDATES = 0    # credit updates x sent
CN_PIGGY = 1      # credits x returned piggybacked on data packets
CN_BLOCKED = 2    # packets that entered one of x's blocked-sends queues
CN_POLLS = 3      # host packets x took from its send pool
CN_RECOVERIES = 4  # deadlock recoveries x initiated (4.1)
CN_FLAGGED = 5    # data packets x sent on a deadlock channel (flagged, without a credit)
CN_ACKS = 6       # recovery acknowledgements x sent
CN_REC = 7        # state: 1 while x's own recovery is in progress
CN_RR = 8         # state: the destination of the blocked-sends queue x's last recovery served
CN_NQ = 9         # state: x's non-empty blocked-sends queues
NODE_FIELDS = 10
# per-node parameters npar[b, x, *]: the NI processor's costs, cycles
NP_POLL = 0       # take a host packet from the send pool, inspect its descriptor
NP_TX = 1         # transmit one packet (fixed part)
NP_TX_KB = 2      # transmit: per KiB of packet, fixed point x 2**10 (cycles per byte)
NP_RX = 3         # receive one packet (take credits, account, start the host DMA)
NP_CREDIT = 4     # build and send one credit update, or take one in
NP_FWD = 5        # create the send descriptor of one forwarding destination (3.2)
NP_FANOUT = 6     # F: the most children any NI has in any tree (the table's width - 1)
NP_DL = 7         # a recovery step: flag a packet, or send or take in an acknowledgement (4.2)
NODE_PARAMS = 8
# then the forwarding table (3.2): per root s, at NODE_PARAMS + s * (F + 1), the number of
# this NI's children in s's tree and the children, largest subtree first (gap G9)
# packet fields pk_pf[b, h, *] (declared below, in this order)
PF_HOP = 0        # NI that transmitted this copy, + 1 (0: a host's packet at its own NI)
PF_MASTER = 1     # on a copy: the packet it was made from, + 1 (0: not a copy)
PF_REFS = 2       # on a kept packet: its copies not yet done (sent, or in host memory)
PF_CREDITS = 3    # credits the copy carries back to its destination (piggybacked)
PF_POLLED = 4     # a host packet at the send pool's head: 1 once the NI has started its poll
PF_HOST = 5       # 1: the copy for the local host (common.to_host)
PF_BLOCKED = 6    # 1: the copy waits in a blocked-sends queue (holds no credit yet)
PF_FLAG = 7       # deadlock flag: NI o + 1 whose deadlock channel the copy travels on (a kept
                  # packet: sits in o's deadlock buffer; a control packet: o's recovery's ack)
PACKET_FIELDS = ("hop", "master", "refs", "credits", "polled", "host", "blocked", "flag")
# its own parameter slots P_<name> (dtypes.protocol_slots)
PARAMS = {
    "CREDITS": "C: buffers per sender at each NI = send credits per destination",
    "LOW_WATER": "an update goes when the sender is known to hold <= this many",
    "UPDATE_OWED": "... or when this many credits are owed (0: off)",
    "UPDATE_FLITS": "flits of a credit update (header and a credit count)",
    "RECOVERY": "1: deadlock recovery on (section 4)",
}
globals().update(D.protocol_slots(PARAMS))
UPDATE_BYTES = 4           # a credit update's payload: the credit count


def check_ni_machine(cfg, name: str, what: str, _check) -> None:
    """Bhoedjang et al.'s machine, LFC's and FM/MC's: MPI-level packets, one process per NI, every
    message in packets (no rendezvous), no single-copy transfers."""
    _check(not cfg.workload.synthetic, "protocol.name",
           f"none, backpressure, capped, fecn or rdrp for network-only traffic ({what} is "
           "flow control of MPI-level packets)", cfg.protocol.name)
    _check(cfg.mpi.ranks_per_node == 1, "mpi.ranks_per_node",
           f"1 under {name} (one process per NI, as in Bhoedjang et al.)", cfg.mpi.ranks_per_node)
    _check(cfg.mpi.eager_threshold == 2**24 - 1, "mpi.eager_threshold",
           f"{2**24 - 1} under {name} (it has no rendezvous: every message goes in packets)",
           cfg.mpi.eager_threshold)
    _check(not cfg.mpi.limic, "mpi.limic", f"false under {name} (one process per node)",
           cfg.mpi.limic)


def _check_run(cfg, _check):
    check_ni_machine(cfg, "lfc", "LFC", _check)
    pc, P = cfg.protocol, group_size(cfg)
    if pc.lfc_tree != USER:
        _check(not pc.lfc_tree_parents, "protocol.lfc_tree_parents",
               "[] unless protocol.lfc_tree is user", list(pc.lfc_tree_parents))
        return
    try:
        trees(cfg)   # every root's tree (cached: the forwarding tables reuse them)
    except ValueError as e:
        _check(False, "protocol.lfc_tree_parents",
               f"for each of the {P} members (workload.group_size) in turn as the root, "
               f"each member's parent in its tree, row by row ({e})",
               f"{len(pc.lfc_tree_parents)} values")


def _cycles(ns, cfg):
    return cycles(ns, cfg.network.cycle_ns)


def group_size(cfg) -> int:
    """Members of the multicast group: nodes 0..P-1 (the paper's 4 to 61 of 64 processors),
    workload.group_size (0: every node; one process per node)."""
    return cfg.workload.group_size or cfg.n_nodes


USER = "user"   # lfc_tree: every member's parent in every member's tree, lfc_tree_parents
USER_MAX = 128  # members of user-given trees


@functools.lru_cache(maxsize=64)
def children_of(kind: str, P: int, n: int, seed: int,
                rows: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """children[s][x]: x's children in root s's tree over nodes 0..P-1, forwarding order
    (rows: lfc_tree_parents, for kind user). FM/MC's forwarding tables too (fmmc.py)."""
    out = []
    for s in range(n):
        if s >= P:
            out.append(tuple(() for _ in range(n)))
            continue
        parents = (user_parents(rows, P, s, n) if kind == USER
                   else tree_parents(kind, range(P), s, seed=seed, n_nodes=n))
        out.append(tuple(tuple(k) for k in tree_children(parents)))
    return tuple(out)


def trees(cfg) -> tuple:
    pc = cfg.protocol
    return children_of(pc.lfc_tree, group_size(cfg), cfg.n_nodes, pc.lfc_tree_seed,
                       pc.lfc_tree_parents)


def fanout(cfg) -> int:
    return max(1, max(len(k) for tree in trees(cfg) for k in tree))


def _node_params(cfg, topo) -> np.ndarray:
    pc = cfg.protocol
    n, F = topo.n_nodes, fanout(cfg)
    out = np.zeros((n, NODE_PARAMS + n * (F + 1)), np.int64)
    out[:, NP_POLL] = _cycles(pc.lfc_poll_ns, cfg)
    out[:, NP_TX] = _cycles(pc.lfc_tx_ns, cfg)
    out[:, NP_TX_KB] = _cycles(pc.lfc_tx_ns_per_kb, cfg)
    out[:, NP_RX] = _cycles(pc.lfc_rx_ns, cfg)
    out[:, NP_CREDIT] = _cycles(pc.lfc_credit_ns, cfg)
    out[:, NP_FWD] = _cycles(pc.lfc_fwd_ns, cfg)
    out[:, NP_DL] = _cycles(pc.lfc_recovery_ns, cfg)
    out[:, NP_FANOUT] = F
    fill_tables(out, NODE_PARAMS, F, trees(cfg))
    return out


def fill_tables(out: np.ndarray, first: int, F: int, children) -> None:
    """The NIs' forwarding tables (3.2) into npar rows `out`: per root s, at first + s * (F + 1),
    the NI's number of children in s's tree, then the children."""
    for s, tree in enumerate(children):
        base = first + s * (F + 1)
        for x, kids in enumerate(tree):
            out[x, base] = len(kids)
            out[x, base + 1:base + 1 + len(kids)] = kids


def check_group_program(cfg, prog, _check) -> None:
    """Multicasts go to the group the forwarding tables were built for."""
    rows = np.isin(prog.ops[:, 0], (D.OP_MCAST, D.OP_IMCAST))
    if rows.any():
        got = sorted(set(prog.ops[rows, 1].tolist()))
        _check(got == [group_size(cfg)], "workload.group_size",
               f"the group the programs multicast to ({', '.join(map(str, got))} ranks; "
               "0: every rank)", cfg.workload.group_size)


def _params(cfg, p):
    pc = cfg.protocol
    p[P_CREDITS] = pc.lfc_credits
    p[P_LOW_WATER] = pc.lfc_low_water
    p[P_UPDATE_OWED] = pc.lfc_update_owed
    p[P_UPDATE_FLITS] = cfg.network.flits(UPDATE_BYTES)
    p[P_RECOVERY] = int(pc.lfc_recovery)


def _nic_queue(cfg) -> int:
    """Packets one NI may have queued to transmit: a copy per child of each kept host packet
    (the send pool) and of each packet received into its buffers, and its credit updates (each
    carries at least one of the C credits it owes another NI); with recovery, a copy per child
    of each packet in its deadlock buffers (one per other NI) and an acknowledgement for each
    other NI's recovery."""
    n, F, c = cfg.n_nodes, fanout(cfg), cfg.protocol.lfc_credits
    return F * (cfg.network.nic_fifo_packets + n * (c + 1)) + n * (c + 1) + 8


def _proto_alive(cfg) -> int:
    """Packets the protocol keeps or makes, alive at once, at most: per NI its kept host
    packets and a copy per child, its received packets with a copy per child and one for the
    host, its credit updates (at most C to each other NI); with recovery, a packet in each
    deadlock buffer (one per other NI) with its copies, and an acknowledgement per other NI."""
    n, c, F = cfg.n_nodes, cfg.protocol.lfc_credits, fanout(cfg)
    return n * ((F + 1) * cfg.network.nic_fifo_packets + (F + 3) * n * (c + 1))


def _mcast_packets(cfg) -> int:
    """Multicast packets one root sends at most (its sequence numbers: kernels/lfc/queues.py
    marks fcr[b, root, seq] when one took part in a recovery): every message of the benchmark,
    warm-ups included, in packets (the multicast benchmarks of workloads/multicast.py; a
    sequence number beyond it is not marked)."""
    w = cfg.workload
    return (w.iterations + w.warmup + 1) * cfg.mpi.packets(w.message_bytes)


def _recovery_mcasts(batch, b):
    """Per root: its multicast packets that took part in at least one recovery (Table 1)."""
    K = _mcast_packets(batch.configs[b])
    return batch.S.fcr[b, :, :K].sum(axis=1).astype(np.int64)


def _nn_max(field):
    return lambda batch, b: batch.S.nn[b, :, :, field].max(axis=1).astype(np.int64)


def credit_problems(S, b, C: int) -> list[str]:
    """Credits conserved for every pair x -> y, at any time between calls: x's credits for
    y + x's copies to y that hold a credit and are not yet in y's buffers + buffers of x's
    partition at y in use + owed to x by y + credits on their way back to x (updates and
    piggybacked) == C; no partition above C; no NI holds fewer than 0 credits."""
    nn = S.nn[b].astype(np.int64)
    n = nn.shape[0]
    total = nn[:, :, NN_CRED] + nn[:, :, NN_USED].T + nn[:, :, NN_OWED].T
    alive = alive_packets(S, b)
    pk, pf = S.pk[b], S.pk_pf[b]
    kind, dnode, src = pk["kind"], pk["dnode"], pk["src"]
    copy = (alive & (kind == D.PK_DATA) & (pf[:, PF_MASTER] > 0) & (pf[:, PF_HOST] == 0)
            & (pf[:, PF_BLOCKED] == 0))
    hop = pf[:, PF_HOP] - 1
    held = copy & (pf[:, PF_FLAG] == 0)   # a flagged copy goes without a credit (4.2)
    np.add.at(total, (hop[held], dnode[held]), 1)                   # a credit x -> y in flight
    np.add.at(total, (dnode[copy], hop[copy]), pf[copy, PF_CREDITS])  # credits y -> x back
    upd = alive & (kind == D.PK_PROTO) & (pf[:, PF_FLAG] == 0)
    np.add.at(total, (dnode[upd], src[upd]), pk["aux"][upd])
    out = []
    off = ~np.eye(n, dtype=bool)
    bad = off & (total != C)
    if bad.any():
        x, y = (int(v) for v in np.argwhere(bad)[0])
        out.append(f"lfc: NI pair {x}->{y} accounts for {int(total[x, y])} credits, "
                   f"{C} buffers are reserved for it")
    if (nn[:, :, NN_USED] > C).any():
        out.append(f"lfc: an NI holds more than {C} packets of one sender (buffer overrun)")
    if (nn[:, :, NN_CRED] < 0).any():
        out.append("lfc: an NI holds fewer than 0 credits")
    out += _deadlock_buffer_problems(nn, pk, pf)
    return out


def _deadlock_buffer_problems(nn, pk, pf) -> list[str]:
    """Every occupied deadlock buffer holds a flagged packet of its owner's recovery, inside
    that recovery's subtree, and the count of deadlock packets per sending NI agrees."""
    x, o = np.nonzero(nn[:, :, NN_DL_PKT])
    m = nn[x, o, NN_DL_PKT] - 1
    if (pf[m, PF_FLAG] != o + 1).any() or (nn[x, o, NN_DL_FROM] == 0).any():
        return ["lfc: a deadlock buffer holds a packet of another recovery"]
    came = np.zeros(nn.shape[:2], np.int64)
    np.add.at(came, (x, nn[x, o, NN_DL_FROM] - 1), 1)
    if (came != nn[:, :, NN_DL_IN]).any():
        return ["lfc: deadlock packets per sending NI miscounted"]
    return []


def audit(batch, b) -> list[str]:
    S = batch.S
    out = credit_problems(S, b, batch.configs[b].protocol.lfc_credits)
    nn = S.nn[b]
    if (nn[:, :, NN_BQ_CNT] != 0).any() or (nn[:, :, NN_USED] != 0).any():
        out.append("lfc: packets left in blocked-sends queues or NI buffers at the end")
    if nn[:, :, NN_DL_PKT:NN_DL_IN + 1].any() or S.fcn[b][:, CN_REC].any():
        out.append("lfc: a deadlock recovery still in progress at the end")
    if int(S.nic_kept[b].sum()):
        out.append(f"lfc: {int(S.nic_kept[b].sum())} host packets still kept at the end")
    sent, recvd = nn[:, :, NN_A_SENT], nn[:, :, NN_A_RECVD].T
    if (sent != recvd).any():
        out.append("lfc: an NI received fewer credit-holding packets than its sender sent")
    return out


def diagnose(batch, b) -> list[str]:
    """Where a stuck LFC run waits: the NIs' non-empty blocked-sends queues with their credits
    and the destination's buffers of that sender, and a cycle of NIs each waiting for credits
    from the next (x -> y: x's queue to y is blocked, 0 credits), if there is one."""
    from ...routing.deadlock import find_cycle
    nn = batch.S.nn[b]
    C = batch.configs[b].protocol.lfc_credits
    q = np.argwhere(nn[:, :, NN_BQ_CNT] > 0)
    if not len(q):
        return ["lfc: no NI holds a blocked packet"]
    desc = [f"NI {x} -> NI {y} ({int(nn[x, y, NN_BQ_CNT])} blocked, "
            f"{int(nn[x, y, NN_CRED])} credits, {int(nn[y, x, NN_USED])}/{C} buffers)"
            for x, y in q[:8].tolist()]
    out = [f"lfc: {len(q)} blocked-sends queues: " + "; ".join(desc)
           + (f" (+{len(q) - 8} more)" if len(q) > 8 else "")]
    waits = q[nn[q[:, 0], q[:, 1], NN_CRED] == 0]
    cycle = find_cycle(waits.astype(np.int64))
    if cycle:
        out.append("lfc: NIs waiting for each other's credits: "
                   + " -> ".join(f"NI {n}" for n in cycle + cycle[:1]))
        if not batch.configs[b].protocol.lfc_recovery:
            out.append("lfc: a buffer deadlock, which section 4's recovery resolves "
                       "(protocol.lfc_recovery: true), or trees without one (binomial)")
    busy = np.nonzero(batch.S.fcn[b][:, CN_REC])[0]
    if len(busy):
        out.append("lfc: NIs whose deadlock recovery waits for its acknowledgement: "
                   + ", ".join(f"NI {int(x)}" for x in busy[:8]))
    return out


_DECLARES = (
    Param("lfc_credits", "int", 8, 1, 4096, "buffers",
          note="NI receive buffers per sender = send credits per destination (Bhoedjang et al.: 8)"),
    Param("lfc_low_water", "int", 0, 0, 4096, "credits",
          note="a credit update goes when the sender holds at most this many (as the "
               "receiver counts them) and credits are owed"),
    Param("lfc_update_owed", "int", 0, 0, 4096, "credits",
          note="a credit update also goes once this many are owed (0: off)"),
    Param("lfc_poll_ns", "float", 1000.0, 0.0, 1e9, "ns",
          note="NI processor: take a host packet from the send pool"),
    Param("lfc_tx_ns", "float", 1000.0, 0.0, 1e9, "ns", note="NI processor: transmit a packet"),
    Param("lfc_tx_ns_per_kb", "float", 6000.0, 0.0, 1e9, "ns",
          note="NI processor: transmit, per KiB of packet"),
    Param("lfc_rx_ns", "float", 5000.0, 0.0, 1e9, "ns", note="NI processor: receive a packet"),
    Param("lfc_credit_ns", "float", 1000.0, 0.0, 1e9, "ns",
          note="NI processor: send or take in a credit update"),
    Param("lfc_fwd_ns", "float", 2000.0, 0.0, 1e9, "ns",
          note="NI processor: a forwarding destination's send descriptor (multicast)"),
    Param("lfc_recovery", "bool", False,
          note="deadlock recovery (section 4): an NI with a blocked packet sends it on its "
               "deadlock channel (Bhoedjang et al. run it for any tree; off in their Figure 4)"),
    Param("lfc_recovery_ns", "float", 1000.0, 0.0, 1e9, "ns",
          note="NI processor: flag a packet, send or take in a recovery's acknowledgement"),
    Param("lfc_tree", "str", "binomial", choices=TREE_KINDS + (USER,),
          note="each sender's multicast spanning tree (3.2, 4)"),
    # a table written by hand: up to 128 members (twice Bhoedjang et al.'s testbed); a longer bound
    # would also make every refused-input check build and parse a list that long
    Param("lfc_tree_parents", "ints", (), -1, USER_MAX - 1, length=USER_MAX * USER_MAX,
          note="lfc_tree user: row s (one per member s, the root) gives each member's parent "
               "in s's tree, -1 at s"),
    Param("lfc_tree_seed", "int", 0, 0, 2**31 - 1, note="random trees: the draw"),
)

_OUTPUTS = {
    "lfc_credit_updates": Output(("point", "node"), np.int64, "packets",
                                 "LFC: credit updates each NI sent", node_counter(CN_UPDATES)),
    "lfc_piggybacked": Output(("point", "node"), np.int64, "credits",
                              "LFC: credits each NI returned piggybacked on data packets",
                              node_counter(CN_PIGGY)),
    "lfc_blocked": Output(("point", "node"), np.int64, "packets",
                          "LFC: packets that waited in each NI's blocked-sends queues",
                          node_counter(CN_BLOCKED)),
    "lfc_recoveries": Output(("point", "node"), np.int64, "recoveries",
                             "LFC: deadlock recoveries each NI initiated",
                             node_counter(CN_RECOVERIES)),
    "lfc_dl_packets": Output(("point", "node"), np.int64, "packets",
                             "LFC: data packets each NI sent on a deadlock channel (flagged)",
                             node_counter(CN_FLAGGED)),
    "lfc_recovery_mcasts": Output(("point", "rank"), np.int64, "packets",
                                  "LFC: multicast packets of each root that took part in at "
                                  "least one deadlock recovery (flagged at some NI)",
                                  _recovery_mcasts),
    "lfc_max_partition": Output(("point", "node"), np.int64, "buffers",
                                "LFC: the most buffers of one sender's partition in use at "
                                "each NI", _nn_max(NN_MAX_USED)),
}

PROTOCOLS = (
    Protocol("lfc", 11, hooks="extoll_vec.kernels.lfc.lfc", mailbox="finite", multicast=True,
             nic_polls=True,
             parameters=("mailbox_slots",) + tuple(d.name for d in _DECLARES),
             declares=_DECLARES,
             check_run=_check_run, node_fields=lambda cfg: NODE_FIELDS,
             rank_fields=_mcast_packets,
             node_pair_fields=lambda cfg: NODE_PAIR_FIELDS, node_params=_node_params,
             node_param_count=lambda cfg: NODE_PARAMS + cfg.n_nodes * (fanout(cfg) + 1),
             nic_queue=_nic_queue, check_program=check_group_program,
             proto_alive=_proto_alive,
             host_queue=lambda cfg: cfg.n_nodes * (cfg.protocol.lfc_credits + 1) + 8,
             packet_fields=PACKET_FIELDS, params=_params, audit=audit, diagnose=diagnose,
             outputs=_OUTPUTS),
)

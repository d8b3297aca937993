"""MPI over InfiniBand flow control after Liu and Panda: pre-posted receive buffers per
Reliable Connection and three ways to keep a sender from overrunning them.

The MPI layer (section 3.1) is the engine's: eager messages and rendezvous requests are sends
into the receiver's pre-posted buffers, one message per buffer (`mpi.velo_payload` is the
buffer size, 2 KB in the paper's implementation, section 5), re-posted once the receiver's
CPU has processed the message; large data goes by RDMA after the rendezvous handshake
(`mpi.rendezvous: write`: the receiver replies, the sender's CPU posts an RDMA write). The
schemes:

- `ib_hardware` (4.1): no flow control in MPI. A message that finds no free posted buffer for
  its connection at the receiving HCA is dropped and answered by an RNR NAK; the sender's HCA
  waits `rnr_timeout_us` and sends it again (retry count infinite). Reliable Connections are
  in order, so the HCA goes back N: packets of the connection that arrive after the dropped
  one are dropped too and sent again after it (a sequence NAK resends them at once when no
  RNR wait is pending), and while the connection waits the sender's HCA takes its next
  packets off its send FIFO. Dropped packets are kept (the HCA re-reads them from the
  sender's memory) and hold their node's FIFO capacity until sent again, as send-queue
  entries stay until acknowledged.
- `ib_static` (4.2): credits per connection = buffers posted for it; a send without credits
  waits in the backlog (the host's send queue, FIFO per destination); credits ride on every
  message back (piggybacked); a receiver that has `ecm_threshold` (5, section 6.3.1) credits
  to return and no send to that peer that could carry them writes an explicit credit message
  (ECM). The optimistic scheme: an ECM needs no credit; it still needs a posted buffer, and
  the hardware's RNR retry delivers it when none is free. A small message posted when its
  connection has no credit left goes by rendezvous (4.2), whose reply carries the receiver's
  credits.
- `ib_dynamic` (4.3): as static, starting from `prepost` buffers per connection; a message
  that went through the backlog carries a flag (so does a small message sent by rendezvous
  for want of a credit: it met the same shortage), and its receiver posts `grow_step` more
  buffers for that sender (or doubles them: `grow_exponential`), up to `max_buffers`, the new
  credits going back as above. No decrease (the paper's choice).

Where the paper is silent, the reading taken (docs/reproduction/infiniband.md):
- piggybacked credits are taken when the HCA delivers the message (the CPU reads the
  completion later; the credit is usable one poll earlier than in the real MPI);
- the dynamic scheme posts its new buffers when the flagged message is delivered, without a
  CPU cost for posting;
- the rendezvous (`mpi.rendezvous: write`, the examples'): the receiver's CPU replies into a
  pre-posted buffer of the sender, whose CPU then posts one RDMA write and a finish message
  into a posted buffer of the receiver, whose receive completes when it has processed the
  finish message (and the data is in); reply and finish message need no credit (as an ECM)
  and carry credits back. A rendezvous is thus three messages (request, reply, finish), as
  Table 1 counts them (docs/reproduction/infiniband.md).

Kernel: kernels/infiniband/hooks.py.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes as D
from ...formulas import cycles
from ..audit import lookup, pairs_of
from ..fc_layout import PAIR_FIELDS
from ..registry import Output, Param, Protocol

# per-pair fields fc[b, pair(x, y), *] after the core's two (fc_layout.PAIR_FIELDS).
# Sender side: x's connection to y.
I_CREDITS = PAIR_FIELDS + 0   # credits x holds for y (static, dynamic)
I_RNR_WAIT = PAIR_FIELDS + 1  # 1: the connection waits for its RNR retry timer
I_CH_HEAD = PAIR_FIELDS + 2   # packets of the connection kept to be sent again, in sequence
I_CH_TAIL = PAIR_FIELDS + 3   # order (linked through pk.next; -1: none)
I_A_SENT = PAIR_FIELDS + 4    # audit: credit-consuming messages x wrote to y
I_A_GOT = PAIR_FIELDS + 5     # audit: credits x received from y
I_NAKS = PAIR_FIELDS + 6      # RNR NAKs the connection received (its retries)
I_ECM = PAIR_FIELDS + 7       # explicit credit messages x wrote to y
# Receiver side: y's connection to x, as x sees it.
I_POSTED = PAIR_FIELDS + 8    # buffers x has posted for y
I_INUSE = PAIR_FIELDS + 9     # of them, holding a message not yet processed
I_OWED = PAIR_FIELDS + 10     # credits x owes y (re-posted buffers, new ones)
I_ECM_Q = PAIR_FIELDS + 11    # 1: an ECM to y waits in x's control queue
I_MAXPOSTED = PAIR_FIELDS + 12  # the most buffers x ever had posted for y (Table 2)
I_A_RETR = PAIR_FIELDS + 13   # audit: credit-consuming messages from y that x processed
I_A_GIVEN = PAIR_FIELDS + 14  # audit: credits x returned to y
I_DROPPED = PAIR_FIELDS + 15  # packets from y that x's HCA dropped (RNR or out of sequence)
I_FLAGGED = PAIR_FIELDS + 16  # messages from y that came through the backlog
I_SWITCHED = PAIR_FIELDS + 17  # sender side: small messages to y sent by rendezvous for want
                               # of a credit, whose request has not left yet
I_MSGS = PAIR_FIELDS + 18     # sender side: messages x wrote that y's HCA took into a posted
                              # buffer (once each, however often sent again): Table 1's count
IB_FIELDS = PAIR_FIELDS + 19
# packet fields pk_pf[b, h, *] (declared below, in this order)
PF_CREDITS = 0    # credits the packet carries back to its destination
PF_BACKLOG = 1    # 1: the message waited in its sender's backlog (the dynamic feedback)
# NAK kinds (PK_PROTO packet pay)
NAK_RNR = 1       # receiver not ready: wait the retry timeout, then send again
NAK_SEQ = 2       # out of sequence after a retry: send the kept packets again now
# its own parameter slots P_<name> (dtypes.protocol_slots)
PARAMS = {
    "PREPOST": "pre-posted buffers per connection",
    "RNR": "RNR retry timeout, cycles",
    "ECM": "ECM threshold, credits",
    "STEP": "dynamic growth step (0: exponential)",
    "MAXBUF": "dynamic: most buffers per connection",
    "SCHEME": "0 hardware, 1 static, 2 dynamic",
    "ECM_CLAMP": "1: an ECM at min(threshold, buffers posted) owed credits; 0: at the threshold",
}
globals().update(D.protocol_slots(PARAMS))
SCHEMES = {"ib_hardware": 0, "ib_static": 1, "ib_dynamic": 2}


def _check_run(cfg, _check):
    _check(not cfg.workload.synthetic, "protocol.name",
           "none, backpressure, capped, fecn or rdrp for network-only traffic (the IB "
           "schemes are MPI flow control)", cfg.protocol.name)
    m = cfg.mpi
    _check(m.header_bytes + m.eager_threshold <= m.velo_payload, "mpi.eager_threshold",
           f"<= {m.velo_payload - m.header_bytes} (an eager message fills one pre-posted "
           f"buffer of mpi.velo_payload {m.velo_payload} bytes with its "
           f"{m.header_bytes}-byte header)", m.eager_threshold)
    _check(m.rendezvous in ("get", "write"), "mpi.rendezvous",
           "write (the paper's) or get under the IB schemes", m.rendezvous)
    _check(cfg.protocol.max_buffers >= cfg.protocol.prepost, "protocol.max_buffers",
           f">= protocol.prepost ({cfg.protocol.prepost})", cfg.protocol.max_buffers)


def _params(cfg, p):
    pc = cfg.protocol
    p[P_PREPOST] = pc.prepost
    p[P_RNR] = max(1, cycles(pc.rnr_timeout_us * 1000.0, cfg.network.cycle_ns))
    p[P_ECM] = pc.ecm_threshold
    p[P_STEP] = 0 if pc.grow_exponential else pc.grow_step
    p[P_MAXBUF] = pc.max_buffers
    p[P_SCHEME] = SCHEMES[pc.name]
    p[P_ECM_CLAMP] = int(pc.ecm_clamp)


def _rank_sum(field):
    """Output extractor: field summed over each rank's connections (its row of the table)."""
    def get(batch, b):
        S = batch.S
        x, y = pairs_of(S, b)
        used = y >= 0
        v = S.fc[b, :len(x), field].astype(np.int64)
        return np.bincount(x[used], weights=v[used], minlength=S.rk_pc.shape[1]).astype(np.int64)
    return get


def _posted(batch, b):
    """Buffers each rank has posted at the end, over its n - 1 connections: the pair table's
    (the peers it exchanged messages with; the dynamic scheme's grown ones included) and
    `prepost` for each connection it never used (MPI over IB connects every pair at
    MPI_Init, section 3.1)."""
    S = batch.S
    x, y = pairs_of(S, b)
    used = (y >= 0) & (x != y)
    nr = S.rk_pc.shape[1]
    posted = np.bincount(x[used], weights=S.fc[b, :len(x), I_POSTED][used], minlength=nr)
    peers = np.bincount(x[used], minlength=nr)
    idle = np.maximum(batch.configs[b].n_ranks - 1 - peers, 0)
    return (posted + batch.configs[b].protocol.prepost * idle).astype(np.int64)


def _rank_max(field):
    def get(batch, b):
        S = batch.S
        x, y = pairs_of(S, b)
        out = np.zeros(S.rk_pc.shape[1], np.int64)
        used = (y >= 0) & (x != y)
        np.maximum.at(out, x[used], S.fc[b, :len(x), field][used].astype(np.int64))
        return out
    return get


def credit_problems(S, b, scheme: int) -> list[str]:
    """Credits conserved per connection s->r (static, dynamic), at any time between calls:
    credits(s) + messages in flight or unprocessed + owed(r) + credits on their way back ==
    buffers r posted for s; no posted buffer overrun (in use <= posted)."""
    x, y = pairs_of(S, b)
    fc = S.fc[b, :len(x)].astype(np.int64)
    rev = lookup(S, b, y, x)
    ok = (y >= 0) & (x != y) & (rev >= 0)
    out = []
    over = ok & (fc[:, I_INUSE] > fc[:, I_POSTED])
    if over.any():
        i = int(np.flatnonzero(over)[0])
        out.append(f"{SCHEME_NAMES[scheme]}: rank {int(x[i])} holds {int(fc[i, I_INUSE])} "
                   f"messages of rank {int(y[i])} in {int(fc[i, I_POSTED])} posted buffers")
    if scheme == 0:
        return out
    s = fc[:, I_CREDITS]
    r = fc[np.maximum(rev, 0)]
    total = (s + fc[:, I_A_SENT] - r[:, I_A_RETR] + r[:, I_OWED]
             + r[:, I_A_GIVEN] - fc[:, I_A_GOT])
    bad = ok & (total != r[:, I_POSTED])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        out.append(f"{SCHEME_NAMES[scheme]}: connection {int(x[i])}->{int(y[i])} accounts "
                   f"for {int(total[i])} credits, its receiver posted "
                   f"{int(r[i, I_POSTED])} buffers")
    if (s < 0).any():
        out.append(f"{SCHEME_NAMES[scheme]}: a sender holds fewer than 0 credits")
    return out


SCHEME_NAMES = {v: k for k, v in SCHEMES.items()}


def diagnose(batch, b) -> list[str]:
    """Where a stuck member's connections wait: senders without a credit whose receiver owes
    them credits it will not return (below the ECM threshold, nothing to carry them)."""
    S = batch.S
    x, y = pairs_of(S, b)
    fc = S.fc[b, :len(x)]
    rev = lookup(S, b, y, x)
    out = []
    for i in np.flatnonzero((y >= 0) & (fc[:, I_CREDITS] <= 0)):
        xs, ys = int(x[i]), int(y[i])
        q = S.sq[b, xs, :int(S.sq_cnt[b, xs])]
        waiting = int(np.count_nonzero(S.sd_dst[b, xs, q] == ys))
        if waiting == 0 or rev[i] < 0:
            continue
        r = S.fc[b, rev[i]]
        out.append(f"connection {xs} -> {ys}: no credit, {waiting} sends waiting; rank {ys} "
                   f"owes {int(r[I_OWED])} credits for {int(r[I_POSTED])} buffers posted "
                   f"(an ECM at {int(batch.par[b, P_ECM])})")
    if len(out) > 4:
        out = out[:4] + [f"(+{len(out) - 4} more connections)"]
    return out


def audit(batch, b) -> list[str]:
    S = batch.S
    scheme = int(batch.par[b, P_SCHEME])
    out = credit_problems(S, b, scheme)
    x, y = pairs_of(S, b)
    fc = S.fc[b, :len(x)]
    if (fc[:, I_INUSE] != 0).any() or (fc[:, I_CH_HEAD][y >= 0] >= 0).any():
        out.append(f"{SCHEME_NAMES[scheme]}: messages left in buffers or kept at the end")
    if int(S.nic_kept[b].sum()):
        out.append(f"{SCHEME_NAMES[scheme]}: {int(S.nic_kept[b].sum())} packets still kept "
                   "for a retransmission")
    return out


_DECLARES = (
    Param("prepost", "int", 10, 1, 2**20, "buffers",
          note="pre-posted receive buffers per connection (dynamic: at the start)"),
    Param("rnr_timeout_us", "float", 60.0, 0.01, 1e6, "us",
          note="RNR NAK retry timeout (IB min_rnr_timer code 5: 0.06 ms)"),
    Param("ecm_threshold", "int", 5, 1, 2**20, "credits",
          note="credits a receiver accumulates before an explicit credit message"),
    Param("ecm_clamp", "bool", True,
          note="an ECM once the receiver owes min(ecm_threshold, buffers posted) credits, so "
               "that fewer buffers than the threshold stay live (false: the paper's literal "
               "rule, section 6.3.1; a connection can then starve)"),
    Param("grow_step", "int", 1, 1, 2**20, "buffers", note="dynamic linear growth step"),
    Param("grow_exponential", "bool", False,
          note="dynamic: double a connection's buffers instead of adding grow_step"),
    Param("max_buffers", "int", 1024, 1, 2**20, "buffers",
          note="dynamic: most buffers posted per connection"),
)
_PARAMETERS = tuple(d.name for d in _DECLARES)

_OUTPUTS = {
    "ib_max_posted": Output(("point", "rank"), np.int64, "buffers",
                            "IB: most buffers each rank had posted for one connection",
                            _rank_max(I_MAXPOSTED)),
    "ib_posted": Output(("point", "rank"), np.int64, "buffers",
                        "IB: buffers each rank has posted at the end, over all its connections "
                        "(the dynamic scheme's grown ones and prepost for each unused "
                        "connection included)", _posted),
    "ib_ecm_sent": Output(("point", "rank"), np.int64, "messages",
                          "IB: explicit credit messages each rank wrote", _rank_sum(I_ECM)),
    "ib_rnr_naks": Output(("point", "rank"), np.int64, "NAKs",
                          "IB: RNR NAKs each rank's connections received (retries)",
                          _rank_sum(I_NAKS)),
    "ib_dropped": Output(("point", "rank"), np.int64, "packets",
                         "IB: packets each rank's HCA dropped (no buffer, out of sequence)",
                         _rank_sum(I_DROPPED)),
    "ib_messages": Output(("point", "rank"), np.int64, "messages",
                          "IB: messages each rank sent into its peers' pre-posted buffers "
                          "(eager data, rendezvous requests, replies and finish messages, "
                          "ECMs; a message sent again counts once)", _rank_sum(I_MSGS)),
    "ib_backlogged": Output(("point", "rank"), np.int64, "messages",
                            "IB: messages each rank received that came through the backlog",
                            _rank_sum(I_FLAGGED)),
}


def _proto_alive(cfg):
    # NAKs: one per dropped packet at most, and dropped packets are bounded by the FIFO
    # capacity they hold (nic_kept); kept packets themselves are counted here too
    return 3 * cfg.n_nodes * cfg.network.nic_fifo_packets


def _record(name, kid):
    return Protocol(name, kid, hooks="extoll_vec.kernels.infiniband.hooks", mailbox="unlimited",
                    mailbox_hard=True, parameters=_PARAMETERS,
                    declares=_DECLARES if kid == 8 else (),
                    check_run=_check_run,
                    describe=lambda pc: (f"protocol {pc.name}, {pc.prepost} buffers per "
                                         "connection"),
                    pair_fields=lambda cfg: IB_FIELDS, every_pair=False,
                    # the HCA's queue of NAKs and packets sent again: what its senders may
                    # have kept (their FIFOs' capacity), for up to 16 senders at once (beyond:
                    # a queue-overflow error names the point)
                    nic_queue=lambda cfg: cfg.network.nic_fifo_packets * min(cfg.n_nodes, 16) + 8,
                    proto_alive=_proto_alive,
                    packet_fields=("credits", "backlog"), params=_params,
                    audit=audit, diagnose=diagnose, outputs=_OUTPUTS)


PROTOCOLS = (_record("ib_hardware", 8), _record("ib_static", 9), _record("ib_dynamic", 10))

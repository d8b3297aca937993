"""FECN/BECN congestion notification as Schneider et al. describe their Booksim version (sec. 4.1;
their code is not published: where the text is silent, the choices below are this model's).

- Marking (router_on_forward): a packet leaving an output whose remote queue (the downstream
  input buffer of its VC, or the NIC's ejection buffer on a terminal port) is more than
  `fecn_threshold` full gets the FECN bit with a probability rising linearly from 0 at the
  threshold to 1 at 100 % (times `fecn_gain`; the paper's aggressive set: 2). The occupancy
  is the queue before this packet joins it. The draw is a hash of (seed, router, packet slot,
  cycle): no random state, deterministic because the event order is.
- Notification (nic_on_eject at the destination): for every FECN packet received, set the BECN
  bit on one packet sent back. Under pairwise traffic (the paper's, "this works due to the
  pairwise nature") the node sends all its traffic to that source, so the BECNs are owed and
  set on its next packets; a FECN from any other source (permutation, uniform) is answered at
  once by a one-flit BECN packet (PK_PROTO), as InfiniBand's congestion notification packet.
- Reaction (at the source): +`becn_increment` (8) per packet received with BECN, -`becn_decrement`
  (1) per packet received without, clamped to 0..`becn_max` (20), and -1 every
  `becn_decay_cycles` (4; aggressive 50) so that nobody stops for good. The decay is applied
  lazily when the counter is read (the same values as a timer every k cycles, without 5,256
  timer events every k cycles).
- Throttle (nic_may_inject): injection slows linearly with the counter: at c the NIC injects
  a packet of L flits at most every L * max / (max - c) cycles (the rate (max - c) / max of the
  link), none at c = max (retried at the next decay step). The paper says "throttled
  linearly ... maximum throttling at the maximum value"; a rate of 0 at the maximum is the
  reading under which its automatic decrement is needed "to avoid converging into a state
  where nobody sends anything".

Network-only traffic only (the paper's study). Kernel: kernels/portals/fecn.py."""
from __future__ import annotations

import numpy as np

from ... import dtypes as D
from ..audit import node_counter
from ..registry import Output, Param, Protocol

# node state fcn[b, node, CN_*]
CN_BECN = 0       # the BECN counter (0..becn_max) as of cycle CN_BECN_T
CN_BECN_T = 1     # cycle of the last decay step counted (int32: _check_run bounds the run)
CN_OWED = 2       # BECN bits owed to the node's destination (pairwise)
CN_NEXT = 3       # cycle from which the NIC may inject again (the throttle)
CN_FECN_RX = 4    # FECN-marked packets received (never reset)
CN_BECN_RX = 5    # packets received with a BECN (never reset)
CN_EXPLICIT = 6   # one-flit BECN packets sent (a FECN from a node it does not send to)
CN_THROTTLED = 7  # injections delayed by the throttle
CN_BECN_TX = 8    # BECN bits the node set on its packets (never reset)
NODE_FIELDS = 9
# packet fields pk_pf[b, h, PF_*] (declared below, in this order)
PF_FECN = 0
PF_BECN = 1
# parameter slots (fixed point: FRAC bits)
FRAC_BITS = 16
# its own parameter slots P_<name> (dtypes.protocol_slots)
PARAMS = {
    "THRESH": "fecn_threshold, fixed point",
    "GAIN": "fecn_gain, fixed point",
    "INC": "becn_increment: the throttle's step up per BECN",
    "DEC": "becn_decrement: its step down per decay period",
    "MAX": "becn_max: the largest throttle",
    "DECAY": "becn_decay_cycles: cycles between its decay steps",
}
globals().update(D.protocol_slots(PARAMS))

AGGRESSIVE = {"protocol.fecn_gain": 2.0, "protocol.becn_decay_cycles": 50}   # section 4.1


def _check_run(cfg, _check):
    w = cfg.workload
    _check(w.synthetic, "protocol.name",
           "fecn only for network-only traffic (workload pairwise, permutation, uniform or "
           "shift)", "fecn")
    total = w.warmup_cycles + w.measure_cycles + w.drain_cycles
    _check(total < 2**31 - 2**24, "workload.drain_cycles",
           "warmup + measure + drain cycles below 2**31 - 2**24 under fecn (its node state "
           "holds cycles in int32)", w.drain_cycles)


def _params(cfg, p):
    pc = cfg.protocol
    one = 1 << FRAC_BITS
    p[P_THRESH] = round(pc.fecn_threshold * one)
    p[P_GAIN] = round(pc.fecn_gain * one)
    p[P_INC] = pc.becn_increment
    p[P_DEC] = pc.becn_decrement
    p[P_MAX] = pc.becn_max
    p[P_DECAY] = pc.becn_decay_cycles


def _check(pc, pre, check):
    check(pc.fecn_threshold < 1.0, f"{pre}.fecn_threshold", "< 1 (a share of the queue below "
          "full: marking rises from it to 1 at 100 %)", pc.fecn_threshold)


def audit(batch, b) -> list[str]:
    S = batch.S
    c = S.fcn[b, :, CN_BECN]
    mx = int(batch.par[b, P_MAX])
    out = []
    if (c < 0).any() or (c > mx).any():
        n = int(np.flatnonzero((c < 0) | (c > mx))[0])
        out.append(f"fecn: node {n}'s BECN counter is {int(c[n])}, outside 0..{mx}")
    if (S.fcn[b, :, CN_OWED] < 0).any():
        out.append("fecn: a node owes fewer than 0 BECNs")
    # every FECN a node received is owed, went back on a packet, or in a BECN packet
    rx, owed = S.fcn[b, :, CN_FECN_RX], S.fcn[b, :, CN_OWED]
    back = S.fcn[b, :, CN_BECN_TX] + S.fcn[b, :, CN_EXPLICIT]
    bad = np.flatnonzero(rx != owed + back)
    if len(bad):
        n = int(bad[0])
        out.append(f"fecn: node {n} received {int(rx[n])} FECNs but owes {int(owed[n])} and "
                   f"returned {int(back[n])}")
    if S.fcn[b, :, CN_BECN_RX].sum() > back.sum():
        out.append("fecn: more BECNs received than sent")
    return out


PROTOCOLS = (
    Protocol("fecn", 6, hooks="extoll_vec.kernels.portals.fecn", mailbox="unused",
             parameters=("fecn_threshold", "fecn_gain", "becn_increment", "becn_decrement",
                         "becn_max", "becn_decay_cycles"),
             declares=(Param("fecn_threshold", "float", 0.5, 0.0, 1.0, "share of the queue"),
                       Param("fecn_gain", "float", 1.0, 0.0, 1e3, "",
                             note="marking probability x gain (aggressive: 2)"),
                       Param("becn_increment", "int", 8, 0, 2**20, "counts"),
                       Param("becn_decrement", "int", 1, 0, 2**20, "counts"),
                       Param("becn_max", "int", 20, 1, 2**20, "counts"),
                       Param("becn_decay_cycles", "int", 4, 1, 10**9, "cycles",
                             note="aggressive: 50")),
             check=_check, check_run=_check_run, node_fields=lambda cfg: NODE_FIELDS,
             nic_queue=lambda cfg: 64,
             # pairwise: every FECN comes from the node it sends to, answered piggybacked
             proto_alive=lambda cfg: 0 if cfg.workload.kind == "pairwise" else None,
             packet_fields=("fecn", "becn"), params=_params,
             audit=audit,
             outputs={
                 "fecn_marked_received": Output(
                     ("point", "node"), np.int64, "packets",
                     "fecn: FECN-marked packets each node received", node_counter(CN_FECN_RX)),
                 "becn_received": Output(
                     ("point", "node"), np.int64, "packets",
                     "fecn: packets with a BECN each node received", node_counter(CN_BECN_RX)),
                 "becn_explicit_sent": Output(
                     ("point", "node"), np.int64, "packets",
                     "fecn: one-flit BECN packets each node sent (FECNs from nodes it does "
                     "not send to)", node_counter(CN_EXPLICIT)),
                 "fecn_throttled": Output(
                     ("point", "node"), np.int64, "injections",
                     "fecn: injections each node's throttle delayed", node_counter(CN_THROTTLED)),
             }),
)

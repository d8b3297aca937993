"""The seams' test protocol, written only against the registry and the hooks: every
node may have at most `cap` synthetic packets outstanding (injected, credit not yet back). The
destination's NIC answers each delivered packet with a one-flit credit packet (PK_PROTO) and
the source's NIC takes the credit back and wakes its injection. Routers mark a packet that
leaves an output with more than `mark_queue` packets still queued for it (a FECN-like mark,
Schneider et al.'s marking by queue occupancy); the destination counts marks per node. A per-node
timer halves a recent-marks counter every `period` cycles (a BECN-like decay).

Per-node parameter: the cap (every `cap_every`-th node gets cap // 2, at least 1, to exercise
per-node parameters). Kernel: kernels/capped/hooks.py. Network-only workloads only."""
from __future__ import annotations

import numpy as np

from ... import dtypes as D
from ..audit import alive_packets
from ..registry import Output, Param, Protocol

# node state fcn[b, node, CN_*]
CN_CREDITS = 0    # credits the node holds
CN_WAIT = 1       # 1: the NIC holds its head packet until a credit comes back
CN_MARKS = 2      # marked packets received (never reset)
CN_RECENT = 3     # marked packets received, halved every period
CN_TICKS = 4      # timer events run at this node
CN_SENT = 5       # packets injected with a credit (never reset)
NODE_FIELDS = 6
# packet fields pk_pf[b, h, PF_*] (declared below, in this order)
PF_CREDIT = 0     # 1: the packet holds one of its source's credits
PF_MARK = 1       # 1: a router marked it
# its own parameter slots P_<name> (dtypes.protocol_slots)
PARAMS = {
    "MARK_QUEUE": "a router marks a packet when its output queue holds more flits",
    "PERIOD": "cycles between a node's credit returns",
}
globals().update(D.protocol_slots(PARAMS))


def _check_run(cfg, _check):
    _check(cfg.workload.synthetic, "protocol.name",
           "capped only for network-only traffic (workload uniform or permutation)", "capped")


def node_caps(cfg, n_nodes: int) -> np.ndarray:
    pc = cfg.protocol
    caps = np.full(n_nodes, pc.cap, np.int64)
    if pc.cap_every:
        caps[::pc.cap_every] = max(1, pc.cap // 2)
    return caps


def _node_params(cfg, topo) -> np.ndarray:
    return node_caps(cfg, topo.n_nodes).reshape(-1, 1)


def _params(cfg, p):
    p[P_MARK_QUEUE] = cfg.protocol.mark_queue
    p[P_PERIOD] = cfg.protocol.period



def conservation(S, b) -> np.ndarray:
    """Per node: credits held + own packets holding a credit + credit packets to it."""
    n = S.fcn.shape[1]
    alive = alive_packets(S, b)
    kind = S.pk["kind"][b]
    data = alive & (kind == D.PK_SYNTH) & (S.pk_pf[b, :, PF_CREDIT] == 1)
    back = alive & (kind == D.PK_PROTO)
    total = S.fcn[b, :, CN_CREDITS].astype(np.int64)
    total += np.bincount(S.pk["src"][b][data], minlength=n)[:n]
    total += np.bincount(S.pk["dnode"][b][back], weights=S.pk["aux"][b][back], minlength=n)[:n].astype(np.int64)
    return total


def audit(batch, b) -> list[str]:
    S = batch.S
    cap = S.npar[b, :, 0]
    total = conservation(S, b)
    out = []
    bad = np.flatnonzero(total != cap)
    if len(bad):
        n = int(bad[0])
        out.append(f"capped: node {n} holds {int(S.fcn[b, n, CN_CREDITS])} credits, "
                   f"{int(total[n])} with those in flight; its cap is {int(cap[n])}")
    if (S.fcn[b, :, CN_CREDITS] < 0).any():
        out.append("capped: a node holds fewer than 0 credits")
    return out


PROTOCOLS = (
    Protocol("capped", 5, hooks="extoll_vec.kernels.capped.hooks",
             mailbox="unused", parameters=("cap", "cap_every", "mark_queue", "period"),
             declares=(Param("cap", "int", 8, 1, 2**20, "packets"),
                       Param("cap_every", "int", 0, 0, unit="nodes",
                             note="0: every node has cap; k: every k-th node cap // 2"),
                       Param("mark_queue", "int", 4, 0, unit="packets"),
                       Param("period", "int", 1000, 1, 10**9, "cycles")),
             check_run=_check_run, node_fields=lambda cfg: NODE_FIELDS,
             node_params=_node_params, node_param_count=lambda cfg: 1,
             nic_queue=lambda cfg: cfg.protocol.cap * cfg.n_nodes,
             # a credit packet returns one credit, and a node's cap are conserved
             proto_alive=lambda cfg: cfg.protocol.cap * cfg.n_nodes,
             packet_fields=("credit", "mark"), params=_params, audit=audit,
             outputs={
                 "capped_marks_received": Output(
                     ("point", "node"), np.int64, "packets",
                     "capped protocol: marked packets each node received",
                     lambda batch, b: batch.S.fcn[b, :, CN_MARKS].astype(np.int64)),
                 "capped_timer_ticks": Output(
                     ("point", "node"), np.int64, "events",
                     "capped protocol: timer events run at each node",
                     lambda batch, b: batch.S.fcn[b, :, CN_TICKS].astype(np.int64)),
             }),
)

"""The receiver-driven rendezvous protocol at network level, as Schneider et al. (section 4.1)
simulate it: "we use the original static permutation traffic pattern but we limit the number of
outstanding packets for each node. Each node maintains a number of credits, where each credit
corresponds to one outstanding packet. As the packets reach their destination, the credits are
returned to the sender explicitly by piggy-backing them onto regular traffic."

- A node holds `protocol.outstanding` credits (the paper's c, outstanding gets of one 16-flit
  chunk each). Its NIC injects a data packet only with a credit (nic_may_inject), else holds
  its FIFO until one comes back.
- A packet reaches its destination when the destination's NIC takes it out of its ejection
  buffer: at a slow receiver, once its memory has written it (network.slow_factor), so a slow
  receiver returns credits at the rate it sinks data.
- The credit goes back on the next packet the destination sends to the source (the partner,
  under pairwise traffic), all owed credits on one packet. The paper does not say what happens
  when no packet goes back; a credit left waiting then would deadlock two partners that have
  both spent their credits, so owed credits leave at once in a one-flit credit packet
  (PK_PROTO) when the destination has no packet to send or is itself waiting for credits, and
  whenever the source is not the node it sends to (permutation, uniform traffic).

Network-only traffic. Kernel: kernels/portals/rdrp.py."""
from __future__ import annotations

import numpy as np

from ... import dtypes as D
from ..audit import alive_packets, node_counter
from ..registry import Output, Param, Protocol

# node state fcn[b, node, CN_*]
CN_CREDITS = 0    # credits the node holds
CN_WAIT = 1       # 1: the NIC holds its FIFO head until a credit comes back
CN_OWED = 2       # credits owed to the node's destination (to go back piggybacked)
CN_PIGGY = 3      # credits it returned piggybacked (never reset)
CN_EXPLICIT = 4   # credit packets it sent (never reset)
CN_HELD = 5       # injections it held for lack of a credit (never reset)
NODE_FIELDS = 6
# packet fields pk_pf[b, h, PF_*] (declared below, in this order)
PF_CREDIT = 0     # 1: the packet holds one of its source's credits
PF_RETURNED = 1   # credits of its destination it carries back
# its own parameter slots P_<name> (dtypes.protocol_slots)
PARAMS = {
    "OUTSTANDING": "credits per node: network-level packets outstanding",
}
globals().update(D.protocol_slots(PARAMS))


def _check_run(cfg, _check):
    _check(cfg.workload.synthetic, "protocol.name",
           "rdrp only for network-only traffic (workload pairwise, permutation, uniform or "
           "shift)", "rdrp")


def _params(cfg, p):
    p[P_OUTSTANDING] = cfg.protocol.outstanding



def credits_of(S, b) -> np.ndarray:
    """Per node: credits held + its packets alive holding one + credits on their way back to
    it (owed by its partners, piggybacked on packets alive, in credit packets alive)."""
    n = S.fcn.shape[1]
    alive = alive_packets(S, b)
    kind, src, dn = S.pk["kind"][b], S.pk["src"][b], S.pk["dnode"][b]
    data = alive & (kind == D.PK_SYNTH)
    total = S.fcn[b, :, CN_CREDITS].astype(np.int64)
    total += np.bincount(src[data & (S.pk_pf[b, :, PF_CREDIT] == 1)], minlength=n)[:n]
    total += np.bincount(dn[data], weights=S.pk_pf[b, :, PF_RETURNED][data],
                         minlength=n)[:n].astype(np.int64)
    back = alive & (kind == D.PK_PROTO)
    total += np.bincount(dn[back], weights=S.pk["aux"][b][back], minlength=n)[:n].astype(np.int64)
    owed = S.fcn[b, :, CN_OWED].astype(np.int64)
    dest = S.syn_dest[b]
    has = owed > 0
    total += np.bincount(dest[has], weights=owed[has], minlength=n)[:n].astype(np.int64)
    return total


def audit(batch, b) -> list[str]:
    S = batch.S
    c = int(batch.par[b, P_OUTSTANDING])
    total = credits_of(S, b)
    out = []
    bad = np.flatnonzero(total != c)
    if len(bad):
        n = int(bad[0])
        out.append(f"rdrp: node {n} holds {int(S.fcn[b, n, CN_CREDITS])} credits, "
                   f"{int(total[n])} with those in flight and owed; it has {c}")
    if (S.fcn[b, :, CN_CREDITS] < 0).any() or (S.fcn[b, :, CN_OWED] < 0).any():
        out.append("rdrp: a node holds or owes fewer than 0 credits")
    return out


PROTOCOLS = (
    Protocol("rdrp", 7, hooks="extoll_vec.kernels.portals.rdrp", mailbox="unused",
             parameters=("outstanding",),
             declares=(Param("outstanding", "int", 30, 1, 2**20, "packets",
                             note="Schneider et al.'s c: outstanding 16-flit transfers per node"),),
             check_run=_check_run, node_fields=lambda cfg: NODE_FIELDS,
             nic_queue=lambda cfg: cfg.protocol.outstanding + 8,
             # a credit packet carries at least one credit, and a node's c are conserved
             proto_alive=lambda cfg: cfg.topology.n_nodes * cfg.protocol.outstanding,
             packet_fields=("credit", "returned"), params=_params, audit=audit,
             outputs={
                 "rdrp_piggybacked": Output(
                     ("point", "node"), np.int64, "credits",
                     "rdrp: credits each node returned piggybacked on its packets",
                     node_counter(CN_PIGGY)),
                 "rdrp_credit_packets": Output(
                     ("point", "node"), np.int64, "packets",
                     "rdrp: one-flit credit packets each node sent", node_counter(CN_EXPLICIT)),
                 "rdrp_held": Output(
                     ("point", "node"), np.int64, "injections",
                     "rdrp: injections each node held for lack of a credit", node_counter(CN_HELD)),
             }),
)

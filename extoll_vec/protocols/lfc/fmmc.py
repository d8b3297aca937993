"""FM/MC, the multicast of Illinois Fast Messages on Myrinet (Bhoedjang et al., section 2.2;
the protocol itself is in the paper's [17]), the comparison of their Figures 7-8: host-level
flow control, with the NIs forwarding multicast packets without any credit of their own.

- Unicast: FM's host-level sliding window (gap G26): `window` credits per pair of processes,
  returned in a control packet every `threshold` packets the receiver took (the window
  protocol's functions, kernels/extoll/window.py).
- Multicast credits: one credit is one multicast buffer on every member's host
  (`fmmc_mc_buffers` per host, the manager's pool). A host caches the credits it was granted
  and spends one per multicast packet; with none left it asks the credit manager, an NI
  (`fmmc_manager`), for `fmmc_request` and waits (gaps G20, G21, G23). The manager grants what
  it knows to be free and queues the rest of the requests.
- The token returns credits (gap G22): it visits the NIs in id order from the manager (the
  members, and the manager's) and carries the least, over the members, of the multicast
  buffers each host has freed plus the multicast packets it sent itself (its own need no
  buffer there); back at the manager, every credit below that minimum is free again. It runs
  while packets are sent and not yet reclaimed or requests wait, and parks otherwise (a
  parked token cannot keep a finished run alive). While requests wait it also takes back the
  cached credits of hosts that have no multicast to send (else a host done multicasting
  would keep credits the others starve for).
- NI forwarding (section 2.2): each NI forwards a multicast packet to its children in the
  sender's tree (`fmmc_tree`, binary as in FM/MC) as it arrives, without a credit check, and
  copies it to its host by DMA. All received packets share one NI receive queue of
  `fmmc_queue` packets; a packet that finds it full is swapped to host memory and back
  (gap G25, the penalty form: two PCI transfers of the packet and `fmmc_swap_ns` of the NI
  processor), counted in fmmc_swaps.
- The NI processor runs FM/MC's control program with its own per-step costs (`fmmc_*_ns`):
  the same LANai as LFC's, without the credit work.
- Packets of 256 bytes whose first word is the handler (section 5.3, footnote 2):
  examples.fmmc_testbed sets mpi.velo_payload 256 and mpi.header_bytes 4, so a 256-byte message
  takes two packets.

Kernel: kernels/lfc/fmmc.py. One rank per node, every message in packets (as LFC).
"""
from __future__ import annotations

import numpy as np

from ... import dtypes as D
from ...formulas import cycles
from .. import fc_layout as L
from ..audit import node_counter
from ..extoll import _check_window, _window_params
from ..extoll import params as XP
from .lfc import check_group_program, check_ni_machine, children_of, fill_tables, group_size
from .trees import TREE_KINDS
from ..registry import Output, Param, Protocol

# per rank fcr[b, r, *] (a host's multicast credits; fc[b, x, y, *] holds the unicast window)
R_MC_CRED = 0      # multicast credits cached at the host
R_MC_REQ = 1       # 1 while the host's request waits at the manager
R_MC_TAKEN = 2     # multicast packets the host took out of its buffers (buffers freed)
R_MC_GOT = 3       # audit: credits granted to the host
R_MC_BACK = 4      # audit: cached credits the token took back from the host
RANK_FIELDS = 5
# per NI fcn[b, x, *]
CN_QUSED = 0       # packets in the NI receive queue (received, not yet forwarded and in host memory)
CN_QMAX = 1        # the most at once
CN_SWAPS = 2       # packets that found the queue full (swapped to host memory and back)
CN_VISITS = 3      # token visits at this NI
CN_REQUESTS = 4    # requests the manager took (at the manager NI)
CN_AVAIL = 5       # manager: credits free to grant
CN_RECLAIMED = 6   # manager: the token's last minimum (credits reclaimed in all)
CN_GRANTED = 7     # manager: credits granted in all
CN_RETURNED = 8    # manager: cached credits the token brought back in all
CN_TOKEN = 9       # manager: 1 while the token is out
CN_ROUNDS = 10     # manager: token rounds
CN_PEND = 11       # manager: requests waiting
CN_PHEAD = 12      # manager: the oldest waiting request's index in the ring
CN_RING = 13       # manager: the waiting requesters' ranks, a ring of N
# per-node parameters npar[b, x, *], cycles
NP_POLL = 0        # take a host packet from the send pool
NP_TX = 1          # transmit one packet (fixed part)
NP_TX_KB = 2       # transmit: per KiB of packet, fixed point x 2**10
NP_RX = 3          # receive one packet (enqueue it, look up its tree, start the host DMA)
NP_FWD = 4         # a forwarding destination's send descriptor
NP_CREDIT = 5      # send a request, take a grant in, or (manager) serve a request
NP_TOKEN = 6       # a token visit (read the host's counters, send the token on)
NP_SWAP = 7        # a packet's swap to host memory and back (the DMA set-ups)
NP_NEXT = 8        # the token's next NI (the ring from the manager, gap G22)
NP_MEMBER = 9      # 1: a member of the multicast group
NP_FANOUT = 10     # F: the most children any NI has in any tree
NODE_PARAMS = 11   # then the forwarding table, as LFC's (protocols/lfc/lfc.py)
# packet fields pk_pf[b, h, *]
PF_MASTER = 0      # on a copy: the packet it was made from, + 1
PF_REFS = 1        # on a kept packet: its copies not yet done
PF_POLLED = 2      # a host packet: 1 once the NI has started its poll
PF_HOST = 3        # 1: the copy for the local host
PF_SENT = 4        # the token: multicast packets the members visited so far sent
PF_BACK = 5        # the token: cached credits taken back so far this round
PACKET_FIELDS = ("master", "refs", "polled", "host", "sent", "back")
# PK_PROTO packets' type (pk.pay); pk.aux: credits (request, grant) or the token's minimum
T_REQUEST = 1
T_GRANT = 2
T_TOKEN = 3
T_WANT = 4         # the token while requests wait: pk.pay = T_TOKEN | T_WANT
# its own parameter slots P_<name> (dtypes.protocol_slots)
PARAMS = {
    # the unicast window's slots first, where kernels/extoll/window.py reads them
    "WINDOW": "window: credits per pair",
    "WINDOW_THRESHOLD": "window: retrieved packets per credit packet",
    "REQUEST": "credits per request",
    "BUFFERS": "multicast buffers per host = credits in all",
    "MANAGER": "the manager's node",
    "QUEUE": "NI receive queue, packets",
    "CTRL_FLITS": "flits of a request, grant or token",
}
globals().update(D.protocol_slots(PARAMS))
assert (P_WINDOW, P_WINDOW_THRESHOLD) == (XP.P_WINDOW, XP.P_WINDOW_THRESHOLD)  # noqa: F821
CTRL_BYTES = 12            # a request's, grant's or token's payload


def manager(cfg) -> int:
    m = cfg.protocol.fmmc_manager
    return cfg.n_nodes - 1 if m < 0 else m


def _trees(cfg):
    pc = cfg.protocol
    return children_of(pc.fmmc_tree, group_size(cfg), cfg.n_nodes, pc.fmmc_tree_seed, ())


def fanout(cfg) -> int:
    return max(1, max(len(k) for tree in _trees(cfg) for k in tree))


def ring(cfg) -> list[int]:
    """The token's route from the manager: the members and the manager's NI in id order."""
    m = manager(cfg)
    nodes = sorted(set(range(group_size(cfg))) | {m})
    i = nodes.index(m)
    return nodes[i:] + nodes[:i]


def _node_params(cfg, topo) -> np.ndarray:
    pc, ns = cfg.protocol, cfg.network.cycle_ns
    n, F = topo.n_nodes, fanout(cfg)
    out = np.zeros((n, NODE_PARAMS + n * (F + 1)), np.int64)
    for col, v in ((NP_POLL, pc.fmmc_poll_ns), (NP_TX, pc.fmmc_tx_ns),
                   (NP_TX_KB, pc.fmmc_tx_ns_per_kb), (NP_RX, pc.fmmc_rx_ns),
                   (NP_FWD, pc.fmmc_fwd_ns), (NP_CREDIT, pc.fmmc_credit_ns),
                   (NP_TOKEN, pc.fmmc_token_ns), (NP_SWAP, pc.fmmc_swap_ns)):
        out[:, col] = cycles(v, ns)
    route = ring(cfg)
    out[:, NP_NEXT] = -1
    for i, x in enumerate(route):
        out[x, NP_NEXT] = route[(i + 1) % len(route)]
    out[:group_size(cfg), NP_MEMBER] = 1
    out[:, NP_FANOUT] = F
    fill_tables(out, NODE_PARAMS, F, _trees(cfg))
    return out


def _check_run(cfg, _check):
    check_ni_machine(cfg, "fmmc", "FM/MC", _check)
    pc, n = cfg.protocol, cfg.n_nodes
    _check(pc.fmmc_manager < n, "protocol.fmmc_manager",
           f"a node 0..{n - 1}, or -1 (the last node)", pc.fmmc_manager)
    _check(len(ring(cfg)) >= 2, "workload.group_size",
           "2 members or more, or a manager outside the group, under fmmc (the token's "
           "route)", cfg.workload.group_size)
    need = host_buffers(n, pc.window, pc.fmmc_mc_buffers)
    _check(pc.mailbox_slots >= need, "protocol.mailbox_slots",
           f">= {need} under fmmc: window ({pc.window}) x {n - 1} senders + fmmc_mc_buffers "
           f"({pc.fmmc_mc_buffers}), the host buffers its credits stand for",
           pc.mailbox_slots)


def _params(cfg, p):
    _window_params(cfg, p)
    pc = cfg.protocol
    p[P_REQUEST] = pc.fmmc_request
    p[P_BUFFERS] = pc.fmmc_mc_buffers
    p[P_MANAGER] = manager(cfg)
    p[P_QUEUE] = pc.fmmc_queue
    p[P_CTRL_FLITS] = cfg.network.flits(CTRL_BYTES)


def host_buffers(n: int, window: int, mc_buffers: int) -> int:
    """A host's receive buffers under FM/MC on n nodes: a window from each other sender and
    the multicast buffers its credits stand for (the least mailbox_slots)."""
    return (n - 1) * window + mc_buffers


def _held(cfg) -> int:
    """Packets an NI keeps at once, at most: its send pool and its receive queue (which,
    swapped, holds any number: every host's window and multicast buffers bound it)."""
    return cfg.network.nic_fifo_packets + cfg.n_nodes * cfg.protocol.window \
        + cfg.protocol.fmmc_mc_buffers


def _nic_queue(cfg) -> int:
    """Packets an NI may queue to transmit: a copy per child of each host packet in its send
    pool and of each packet in its receive queue (_held), requests, grants and the token."""
    return (fanout(cfg) + 1) * _held(cfg) + 2 * cfg.n_nodes + 8


def _proto_alive(cfg) -> int:
    """Per NI: its kept packets (send pool and receive queue) with a copy per child and one
    for the host; a request, a grant per rank, the token."""
    n = cfg.n_nodes
    return n * ((fanout(cfg) + 2) * _held(cfg) + 2) + n + 1


def credit_problems(S, b, cfg) -> list[str]:
    """Multicast credits conserved: free at the manager + cached at hosts + granted in flight
    + spent and not yet reclaimed == fmmc_mc_buffers; no host's multicast buffers over that."""
    m, T, P = manager(cfg), cfg.protocol.fmmc_mc_buffers, group_size(cfg)
    fcr, fcn = S.fcr[b].astype(np.int64), S.fcn[b].astype(np.int64)
    sent = S.mseq_tx[b, :P].astype(np.int64)
    spent = int(sent.sum())
    granted = int(fcn[m, CN_GRANTED])
    got = int(fcr[:, R_MC_GOT].sum())
    back = int(fcr[:, R_MC_BACK].sum())
    out = []
    cached = int(fcr[:, R_MC_CRED].sum())
    if got - back - spent != cached:
        out.append(f"fmmc: hosts were granted {got} credits, gave back {back}, spent {spent} "
                   f"and hold {cached}")
    total = int(fcn[m, CN_AVAIL]) + granted - int(fcn[m, CN_RECLAIMED]) - int(fcn[m, CN_RETURNED])
    if total != T:
        out.append(f"fmmc: the manager accounts for {total} credits, {T} multicast buffers "
                   f"per host exist")
    if granted < got:
        out.append(f"fmmc: hosts got {got} credits, the manager granted {granted}")
    # buffers in use at host r: packets of the others' multicasts it was sent less those it
    # took; no more than the buffers its credits stand for
    used = spent - sent - fcr[:P, R_MC_TAKEN]
    if (used > T).any():
        r = int(np.argmax(used))
        out.append(f"fmmc: host {r} holds {int(used[r])} multicast packets, {T} buffers")
    return out


def audit(batch, b) -> list[str]:
    S, cfg = batch.S, batch.configs[b]
    out = credit_problems(S, b, cfg)
    fcn = S.fcn[b]
    if fcn[:, CN_QUSED].any():
        out.append("fmmc: packets left in an NI receive queue at the end")
    if int(S.nic_kept[b].sum()):
        out.append(f"fmmc: {int(S.nic_kept[b].sum())} host packets still kept at the end")
    m = manager(cfg)
    if fcn[m, CN_PEND] or fcn[m, CN_TOKEN]:
        out.append("fmmc: requests waiting or the token out at the end")
    return out


def diagnose(batch, b) -> list[str]:
    """Where a stuck FM/MC run waits: hosts waiting for credits, the manager's pool, the token."""
    S, cfg = batch.S, batch.configs[b]
    m = manager(cfg)
    fcr, fcn = S.fcr[b], S.fcn[b]
    waiting = np.flatnonzero(fcr[:, R_MC_REQ])
    cached = np.flatnonzero(fcr[:, R_MC_CRED])
    return [f"fmmc: manager NI {m}: {int(fcn[m, CN_AVAIL])} credits free, "
            f"{int(fcn[m, CN_PEND])} requests waiting (hosts {waiting[:8].tolist()}), token "
            f"{'out' if fcn[m, CN_TOKEN] else 'parked'}; credits cached at hosts "
            f"{cached[:8].tolist()}"]


_DECLARES = (
    Param("fmmc_request", "int", 8, 1, 65536, "credits",
          note="multicast credits a host asks the manager for at once (gap G20)"),
    Param("fmmc_mc_buffers", "int", 18, 1, 2**20, "buffers",
          note="multicast host buffers per host: the credits in all (gap G21; 18 fitted on "
               "Bhoedjang et al.'s 7.7 MB/s, docs/reproduction/lfc.md)"),
    Param("fmmc_manager", "int", -1, -1, 2**19, "node",
          note="the credit manager's NI (-1: the last node; gap G23)"),
    Param("fmmc_queue", "int", 256, 1, 2**20, "packets",
          note="the NI receive queue shared by all senders (gap G24)"),
    Param("fmmc_tree", "str", "binary", choices=TREE_KINDS,
          note="each sender's multicast tree (FM/MC: binary)"),
    Param("fmmc_tree_seed", "int", 0, 0, 2**31 - 1, note="random trees: the draw"),
    Param("fmmc_poll_ns", "float", 1000.0, 0.0, 1e9, "ns",
          note="NI processor: take a host packet from the send pool"),
    Param("fmmc_tx_ns", "float", 1000.0, 0.0, 1e9, "ns", note="NI processor: transmit a packet"),
    Param("fmmc_tx_ns_per_kb", "float", 6000.0, 0.0, 1e9, "ns",
          note="NI processor: transmit, per KiB of packet"),
    Param("fmmc_rx_ns", "float", 4000.0, 0.0, 1e9, "ns", note="NI processor: receive a packet"),
    Param("fmmc_fwd_ns", "float", 2000.0, 0.0, 1e9, "ns",
          note="NI processor: a forwarding destination's send descriptor"),
    Param("fmmc_credit_ns", "float", 1000.0, 0.0, 1e9, "ns",
          note="NI processor: send a credit request, take a grant in, serve a request"),
    Param("fmmc_token_ns", "float", 2000.0, 0.0, 1e9, "ns",
          note="NI processor: a token visit (read the host's counters, send the token on)"),
    Param("fmmc_swap_ns", "float", 2000.0, 0.0, 1e9, "ns",
          note="NI processor: swap a packet to host memory and back (the bus time comes "
               "on top, network.pci_mb_s)"),
)

_OUTPUTS = {
    "fmmc_swaps": Output(("point", "node"), np.int64, "packets",
                         "FM/MC: packets that found each NI's receive queue full (swapped)",
                         node_counter(CN_SWAPS)),
    "fmmc_queue_max": Output(("point", "node"), np.int64, "packets",
                             "FM/MC: the most packets in each NI's receive queue at once",
                             node_counter(CN_QMAX)),
    "fmmc_requests": Output(("point", "node"), np.int64, "requests",
                            "FM/MC: credit requests each NI's manager took",
                            node_counter(CN_REQUESTS)),
    "fmmc_token_visits": Output(("point", "node"), np.int64, "visits",
                                "FM/MC: token visits at each NI", node_counter(CN_VISITS)),
}

PROTOCOLS = (
    Protocol("fmmc", 12, hooks="extoll_vec.kernels.lfc.fmmc", mailbox="finite",
             multicast=True, nic_polls=True,
             parameters=("mailbox_slots", "window", "threshold") + tuple(d.name for d in _DECLARES),
             declares=_DECLARES, check=_check_window,
             check_run=_check_run, pair_fields=lambda cfg: L.WINDOW_FIELDS,
             rank_fields=lambda cfg: RANK_FIELDS,
             node_fields=lambda cfg: CN_RING + cfg.n_nodes, node_params=_node_params,
             node_param_count=lambda cfg: NODE_PARAMS + cfg.n_nodes * (fanout(cfg) + 1),
             nic_queue=_nic_queue, check_program=check_group_program, proto_alive=_proto_alive,
             host_queue=lambda cfg: cfg.n_nodes * (cfg.protocol.window + 1)
             + cfg.protocol.fmmc_mc_buffers + 8,
             packet_fields=PACKET_FIELDS, params=_params, audit=audit, diagnose=diagnose,
             outputs=_OUTPUTS),
)

"""Array sizes of a batch: which configs can share one (equal shapes), and how large every
dimension of the state must be for all of its members. The sweep planner calls state_sizes too,
to estimate a batch's memory before building it, so the two cannot drift apart."""
from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from .. import dtypes as D
from ..config import RunConfig
from ..errors import ConfigError
from extoll_vec.kernels import host
from extoll_vec.kernels.fc_fields import RANK_FIELDS, fields_needed

NONE_MAILBOX_CAP = 1 << 16   # slots: the "unlimited" mailbox of protocol none holds this many


def shape_key(cfg: RunConfig) -> tuple:
    """Configs with equal keys have equal array shapes and run in one batch."""
    t = cfg.topology
    return (t.kind, t.dims if t.kind in ("mesh", "torus") else (), t.p, t.a, t.h, t.n_groups,
            t.cube_dim, cfg.n_ranks, cfg.network.vcs, cfg.workload.synthetic)


class ProgramFigures(NamedTuple):
    """What sizing a member's state needs to know of its program."""
    max_isends: int        # sends outstanding at once, at most (any rank)
    max_irecvs: int        # receives posted and not yet completed, at most
    inbound_messages: int  # messages the busiest receiver gets over the run
    inbound_packets: int   # eager packets the busiest receiver gets over the run
    snapshots: int         # OP_SNAPSHOTs of the busiest rank


def mailbox_capacity(cfg: RunConfig, fig: ProgramFigures) -> int:
    """Mailbox slots per rank: the configured size, or for protocol none enough never to fill
    (every eager packet the rank will ever receive, capped at NONE_MAILBOX_CAP)."""
    if cfg.protocol.name == "none":
        return min(fig.inbound_packets + 1, NONE_MAILBOX_CAP)
    return cfg.protocol.mailbox_slots


def state_sizes(configs: Sequence[RunConfig], topo, figs: Sequence[ProgramFigures]) -> dict:
    """The size of every dimension of state.FIELDS for a batch (also the planner's estimate)."""
    c0 = configs[0]
    net = [c.network for c in configs]
    NR = c0.n_ranks
    maxL = max(max(n.max_packet_flits for n in net), max(c.workload.packet_flits for c in configs))
    buf = max(n.buffer_flits for n in net)
    R, P, V, N = topo.n_routers, topo.n_ports, c0.network.vcs, topo.n_nodes
    synth = c0.workload.synthetic
    FQ = max(c.workload.source_queue if synth else c.network.nic_fifo_packets for c in configs)
    EQ = max(n.nic_ejection_flits for n in net)
    rpn = max(c.mpi.ranks_per_node for c in configs)
    SQ = max(f.max_isends for f in figs) + 2 if NR else 1
    RD = max(f.max_irecvs for f in figs) + 2 if NR else 1
    NPK = R * P * V * buf + N * (FQ + EQ) + 1024
    sizes = dict(B=len(configs), R=R, P=P, V=V, MW=-(-P * D.MAX_VCS // 64), N=N, FQ=FQ,
                 NW=max(rpn, 1), EQ=EQ, RQ=max(rpn, 1) * SQ, NR=NR,
                 MC=max(mailbox_capacity(c, f) for c, f in zip(configs, figs)), SQ=SQ, RD=RD,
                 UQ=max(f.inbound_messages for f in figs) + 2, GQ=RD,
                 CQ=3 * NR + 16,   # a credit packet, a request and a response per peer
                 K=max(fields_needed(c.protocol.name, c.protocol.credit_slots) for c in configs),
                 KR=RANK_FIELDS, NSNAP=max(f.snapshots for f in figs), NPK=NPK)
    lat = max(n.link_latency + n.router_delay for n in net) + maxL
    sizes["W"] = 1 << max(7, int(math.ceil(math.log2(4 * lat))))
    sizes["E"] = 3 * NPK + 3 * R * P + 2 * NR + 4 * N + 1024
    return sizes


def check_widths(programs, send_slots: int) -> None:
    """Programs must fit the mailbox entry's fields (kernels/host.py, mb_pack)."""
    if send_slots > host.MB_RNDV_SLOTS:
        raise ConfigError("workload", f"{send_slots - 2} sends outstanding at once; allowed: at "
                          f"most {host.MB_RNDV_SLOTS - 2} (the rendezvous slot field)")
    for p in programs:
        sends = np.isin(p.ops[:, 0], (D.OP_SEND, D.OP_ISEND))
        if sends.any() and int(p.ops[sends, 2].max()) >= host.MB_RNDV_BYTES:
            raise ConfigError("workload.message_bytes", f"got {int(p.ops[sends, 2].max())}; "
                              f"allowed: < {host.MB_RNDV_BYTES} bytes per message")

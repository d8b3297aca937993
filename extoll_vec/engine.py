"""The loop around the kernels: configs -> batch state -> chunks of cycles -> checked results.

simulate(configs) groups configs of equal array shapes into batches (one kernel call advances a
whole batch), checks the kernels' error flags and the conservation invariants after every run,
and returns an xarray Dataset with one `point` per config, in order.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple, Sequence

import numpy as np

from . import dtypes as D
from .config import RunConfig
from .dataset import SCHEMA, build_dataset, pad_points, result_sizes
from .errors import ConfigError, SimulationError
from .protocols.audit import quiescent_problems
from .protocols.extoll_static import layout as mailbox_layout
from .state import Topo, allocate
from .topology import build as build_topology
from .workloads import build_program, skewed, snapshot_counts
from extoll_vec.kernels import host, progstats, sim
from extoll_vec.kernels.fc_fields import F_SEQ_RX, F_SEQ_TX, RANK_FIELDS, fields_needed

RESULT_VARIABLES = tuple(SCHEMA)   # what results() returns: the dataset schema's variables
NONE_MAILBOX_CAP = 1 << 16   # slots: the "unlimited" mailbox of protocol none holds this many


def shape_key(cfg: RunConfig) -> tuple:
    """Configs with equal keys have equal array shapes and run in one batch."""
    t = cfg.topology
    return (t.kind, t.dims if t.kind in ("mesh", "torus") else (), t.p, t.a, t.h, t.n_groups,
            t.cube_dim, cfg.n_ranks, cfg.network.vcs, cfg.workload.synthetic)


def cycles(ns: float, cycle_ns: float) -> int:
    """Host costs are given in ns; the kernels count whole cycles (rounded up). The credit
    operation's cost is the exception, kept in fixed point (dtypes.CREDIT_FRAC_BITS)."""
    return int(math.ceil(ns / cycle_ns - 1e-9))


def _topo_arrays(topo, cfg: RunConfig) -> Topo:
    rpn = cfg.mpi.ranks_per_node
    nr = cfg.n_ranks
    return Topo(topo.neighbor, topo.neighbor_port, topo.terminal_node, topo.node_router,
                topo.node_port, topo.route_port, topo.vc_next.astype(np.int32),
                (np.arange(nr, dtype=np.int32) // rpn).astype(np.int32))


def _params(cfg: RunConfig, mailbox: int) -> np.ndarray:
    n, h, m, w, pr = cfg.network, cfg.host, cfg.mpi, cfg.workload, cfg.protocol
    c = lambda ns: cycles(ns, n.cycle_ns)  # noqa: E731
    p = np.zeros(D.N_PAR, np.int64)
    p[D.P_LINK_LAT] = n.link_latency
    p[D.P_ROUTER_DELAY] = n.router_delay
    p[D.P_PIO] = c(h.pio_ns)
    p[D.P_RETRIEVE] = c(h.retrieve_ns)
    p[D.P_MATCH] = c(h.match_ns)
    p[D.P_CREDIT] = round(h.credit_ns / n.cycle_ns * (1 << D.CREDIT_FRAC_BITS))  # fixed point
    p[D.P_LIMIC] = c(h.limic_ns)
    p[D.P_LIMIC_PER_KB] = c(h.limic_ns_per_kb)
    p[D.P_LIMIC_ON] = int(m.limic)
    p[D.P_PROGRESS] = h.progress_packets
    p[D.P_EAGER] = m.eager_threshold
    p[D.P_MPI_HDR] = m.header_bytes
    p[D.P_VELO_PAYLOAD] = m.velo_payload
    p[D.P_FLIT_BYTES] = n.flit_bytes
    p[D.P_PKT_OVERHEAD] = 8 + n.packet_header_bytes   # 8-byte VELO header + network header
    p[D.P_RMA_BYTES] = n.rma_packet_bytes
    p[D.P_MAILBOX] = mailbox
    # a full mailbox is an error where the protocol promises it never happens: the unlimited
    # reference and the credit protocols; with backpressure/window the NIC waits (section 2)
    p[D.P_MAILBOX_HARD] = int(pr.name in ("none", "static", "dynamic"))
    p[D.P_PROTO] = D.PROTOCOL_IDS[pr.name]
    p[D.P_WINDOW] = pr.window
    p[D.P_THRESHOLD] = pr.threshold
    p[D.P_NIC_FIFO] = n.nic_fifo_packets
    p[D.P_NIC_GAP] = c(n.nic_packet_ns)
    p[D.P_BUF_FLITS] = n.buffer_flits
    p[D.P_EJ_FLITS] = n.nic_ejection_flits
    p[D.P_SYNTH] = {"uniform": 1, "permutation": 2}.get(w.kind, 0)
    # Bernoulli injection: w.injection_rate flits per node per cycle in packets of packet_flits
    p[D.P_GEN_P32] = min(1 << 32, int(round(w.injection_rate / w.packet_flits * 2**32)))
    p[D.P_SYN_FLITS] = w.packet_flits
    p[D.P_WARMUP] = w.warmup_cycles
    p[D.P_MEASURE] = w.measure_cycles
    p[D.P_DRAIN] = w.drain_cycles
    p[D.P_SEED] = cfg.seed
    p[D.P_NO_PROGRESS] = max(1, int(cfg.limits.no_progress_us * 1000 / n.cycle_ns))
    p[D.P_MAX_CYCLES] = cfg.limits.max_cycles
    p[D.P_RPN] = m.ranks_per_node
    if pr.name in ("static", "dynamic"):
        lay = mailbox_layout(pr.mailbox_slots, cfg.n_ranks, pr.credit_slots)
        p[D.P_CREDIT_SLOTS] = pr.credit_slots
        p[D.P_QUOTA] = lay.quota
        p[D.P_THRESH] = lay.threshold
        p[D.P_DATA_REGION] = lay.data_region
        p[D.P_DYN_REGION] = lay.dynamic_region
        p[D.P_PIGGY] = int(pr.piggyback)
    return p


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


def _check_widths(programs, send_slots: int) -> None:
    """Programs must fit the mailbox entry's fields (kernels/host.py, mb_pack)."""
    if send_slots > host.MB_RNDV_SLOTS:
        raise ConfigError("workload", f"{send_slots - 2} sends outstanding at once; allowed: at "
                          f"most {host.MB_RNDV_SLOTS - 2} (the rendezvous slot field)")
    for p in programs:
        sends = np.isin(p.ops[:, 0], (D.OP_SEND, D.OP_ISEND))
        if sends.any() and int(p.ops[sends, 2].max()) >= host.MB_RNDV_BYTES:
            raise ConfigError("workload.message_bytes", f"got {int(p.ops[sends, 2].max())}; "
                              f"allowed: < {host.MB_RNDV_BYTES} bytes per message")


class Batch:
    """The arrays of one batch: topology (shared), programs and parameters (per member), state."""

    def __init__(self, configs: Sequence[RunConfig], programs: Sequence | None = None):
        keys = {shape_key(c) for c in configs}
        if len(keys) != 1:
            raise ValueError("a batch needs configs of equal shapes (engine.shape_key)")
        self.configs = list(configs)
        c0 = configs[0]
        self.topology = build_topology(c0.topology)
        self.T = _topo_arrays(self.topology, c0)
        B, NR = len(configs), c0.n_ranks
        # workload.kind "program": the caller hands in hand-written Programs, one per config
        programs = list(programs) if programs is not None else [build_program(c) for c in configs]
        if len(programs) != B:
            raise ValueError("one Program per config")
        programs = [skewed(p, c) for p, c in zip(programs, configs)]
        rows = max(max(len(p.ops) for p in programs), 1)
        self.ops = np.zeros((B, rows, 4), np.int32)
        self.starts = np.zeros((B, max(NR, 1)), np.int32)[:, :NR]
        figs = []
        for b, (cfg, prog) in enumerate(zip(configs, programs)):
            ops = prog.ops.copy()
            comp = ops[:, 0] == D.OP_COMPUTE
            ops[comp, 2] = [cycles(ns, cfg.network.cycle_ns) for ns in ops[comp, 1]]
            self.ops[b, :len(ops)] = ops
            if NR:
                self.starts[b] = prog.start
                msgs, pkts = progstats.inbound(ops, prog.start.astype(np.int32), NR,
                                               cfg.mpi.header_bytes, cfg.mpi.velo_payload,
                                               cfg.mpi.eager_threshold)
                snaps = int(snapshot_counts(prog).max())
                figs.append(ProgramFigures(prog.max_isends, prog.max_irecvs, int(msgs.max()),
                                           int(pkts.max()), snaps))
            else:
                figs.append(ProgramFigures(0, 0, 0, 0, 0))
        self.par = np.stack([_params(c, mailbox_capacity(c, f)) for c, f in zip(configs, figs)])
        topo = self.topology
        if c0.network.vcs < topo.vcs_needed:
            raise ConfigError("network.vcs", f"got {c0.network.vcs}; allowed: >= "
                              f"{topo.vcs_needed} (the deadlock-free routing of {topo.kind} "
                              "needs them)")
        sizes = state_sizes(configs, topo, figs)
        _check_widths(programs, sizes["SQ"])
        synth = c0.workload.synthetic
        self.sizes = sizes
        self.S = allocate(sizes)
        S = self.S
        # initial credits: a router output owns the whole downstream VC buffer; an ejection
        # port owns the NIC ejection buffer; a NIC owns its router's injection buffer (VC 0)
        term = topo.terminal_node >= 0
        for b, cfg in enumerate(configs):
            S.cr[b][~term] = cfg.network.buffer_flits
            S.cr[b, term, 0] = cfg.network.nic_ejection_flits
            S.cr[b, term, 1:] = 0
            S.cr[b][(topo.neighbor < 0) & ~term] = 0
            S.nic_cr[b] = cfg.network.buffer_flits
            if synth:
                from .workloads import synthetic_destinations
                S.syn_dest[b] = synthetic_destinations(cfg.workload.kind, topo.n_nodes, cfg.seed)
        sim.start(S, self.T, self.par, self.starts)

    def run(self, progress: Callable[[float], None] | None = None,
            profile: np.ndarray | None = None) -> None:
        """Advance every member to completion. profile: int64 [B, dtypes.N_PROF, 2] to
        accumulate events and time-stamp cycles per event kind (a separately compiled,
        slower kernel; benchmarks/profile_events.py), or None."""
        chunk = min(c.limits.chunk_cycles for c in self.configs)
        t = 0
        while True:
            t += chunk
            running = sim.advance(self.S, self.T, self.par, self.ops, t, profile)
            if progress is not None:
                progress(float((self.S.finished != 0).mean()))
            for b in range(len(self.configs)):
                if self.S.status[b] != 0:
                    raise SimulationError(describe_error(self, b), int(self.S.status[b]), b)
            if running == 0:
                break
        for b in range(len(self.configs)):
            check_invariants(self, b)

    def results(self) -> dict[str, np.ndarray]:
        S, par = self.S, self.par
        out: dict[str, np.ndarray] = {}
        cyc_ns = np.array([c.network.cycle_ns for c in self.configs])

        def us(cycles, never=False):
            """Cycles [B, ...] in microseconds; with never, -1 ("never") becomes NaN."""
            t = cycles.astype(np.float64) * cyc_ns.reshape((-1,) + (1,) * (cycles.ndim - 1))
            t = t / 1000.0
            return np.where(cycles >= 0, t, np.nan) if never else t

        B = len(self.configs)
        if S.rk_tfin.shape[1]:
            exec_c = S.rk_tfin.max(axis=1).astype(np.float64)
        else:
            exec_c = S.now.astype(np.float64)
        out["exec_time_us"] = us(exec_c)
        out["rank_time_us"] = us(S.rk_tfin)
        out["packets_sent"] = S.st_sent.astype(np.int64)
        out["sends_delayed"] = S.st_delayed.astype(np.int64)
        out["mailbox_max_slots"] = S.st_mbmax.astype(np.int64)
        out["stall_us"] = us(S.st_stall)
        out["messages_received"] = S.st_msgs.astype(np.int64)
        out["control_sent"] = S.st_ctrl.astype(np.int64)
        out["flow_control_cpu_us"] = us(S.st_fccpu)
        out["mark_time_us"] = us(S.marks, never=True)
        mc = S.mark_cnt
        out["sends_delayed_at_mark"] = mc[..., D.MC_DELAYED].astype(np.int64)
        out["messages_received_at_mark"] = mc[..., D.MC_MSGS].astype(np.int64)
        out["stall_us_at_mark"] = us(mc[..., D.MC_STALL], never=True)
        out["flow_control_cpu_us_at_mark"] = us(mc[..., D.MC_FCCPU], never=True)
        out["credit_snapshot"] = S.snap.astype(np.int64)
        out["credit_snapshot_in"] = S.snap_in.astype(np.int64)
        sim_c = np.maximum(S.now, 1).astype(np.float64)
        util = S.op_util.reshape(B, -1).max(axis=1) if S.op_util.size else np.zeros(B)
        out["max_link_utilization"] = util / sim_c
        nodes = self.topology.n_nodes
        synth = par[:, D.P_SYNTH] != 0
        meas = par[:, D.P_MEASURE].astype(np.float64) * nodes
        nan = np.full(B, np.nan)
        out["accepted_flits_per_node_cycle"] = np.where(synth, S.syn[:, 1] / meas, nan)
        out["offered_flits_per_node_cycle"] = np.where(synth, S.syn[:, 0] / meas, nan)
        lat = np.where(S.syn[:, 3] > 0, S.syn[:, 2] / np.maximum(S.syn[:, 3], 1), np.nan)
        out["packet_latency_cycles_mean"] = np.where(synth, lat, nan)
        out["simulated_cycles"] = S.now.astype(np.int64)
        out["packets_delivered"] = S.delivered.astype(np.int64)
        out["events_processed"] = S.events.astype(np.int64)
        return out


def describe_error(batch: Batch, b: int) -> str:
    """One paragraph that says what broke and where the member is stuck."""
    S, cfg = batch.S, batch.configs[b]
    flags = int(S.status[b])
    names = [name for bit, name in D.ERR_NAMES.items() if flags & bit]
    t_us = S.now[b] * cfg.network.cycle_ns / 1000.0
    parts = [f"{' + '.join(names)} at cycle {int(S.now[b])} ({t_us:.3f} us)"]
    region = {1: "credit packets in the credit slots", 2: "packets beyond the sender's grant",
              3: "packets in the data region"}.get(int(S.err_info[b, 3]))
    if region is not None:
        parts.append(f"mailbox of rank {int(S.err_info[b, 0])} holds {int(S.err_info[b, 2])} "
                     f"{region} of rank {int(S.err_info[b, 1])}: more than its protocol allows")
    elif S.err_info[b, 0] >= 0:
        parts.append(f"rank {int(S.err_info[b, 0])}")
    nr = S.rk_pc.shape[1]
    if nr:
        stuck = np.nonzero(S.rk_wait[b] != D.W_DONE)[0]
        if len(stuck):
            desc = []
            for r in stuck[:8]:
                pc = int(S.rk_pc[b, r])
                op = D.OP_NAMES[int(batch.ops[b, pc, 0])]
                desc.append(f"rank {r} {D.WAIT_NAMES[int(S.rk_wait[b, r])]} at {op}(row {pc}), "
                            f"mailbox {int(S.mb_cnt[b, r])}/{int(batch.par[b, D.P_MAILBOX])}")
            more = f" (+{len(stuck) - 8} more)" if len(stuck) > 8 else ""
            parts.append(f"{len(stuck)} ranks unfinished: " + "; ".join(desc) + more)
    full = np.argwhere(S.ib_flits[b] + 0 >= batch.par[b, D.P_BUF_FLITS] - 1)
    if len(full):
        parts.append(f"{len(full)} router input buffers full, e.g. router {full[0][0]} port "
                     f"{full[0][1]} vc {full[0][2]}")
    blocked = np.nonzero(S.ej_blk[b])[0]
    if len(blocked):
        parts.append(f"NICs of nodes {blocked[:8].tolist()} hold packets for full mailboxes")
    return f"point {b}: " + "; ".join(parts)


def check_invariants(batch: Batch, b: int) -> None:
    """Conservation after a completed run: every packet and credit is accounted for."""
    S, p = batch.S, batch.par[b]
    errors = []
    if p[D.P_SYNTH] == 0:
        sent = int(S.st_sent[b].sum())
        if sent != int(S.delivered[b]):
            errors.append(f"packets sent {sent} != delivered {int(S.delivered[b])}")
        if int(S.pk_meta[b, 1]) != 0:
            errors.append(f"{int(S.pk_meta[b, 1])} packets still alive")
        if int(S.mb_cnt[b].sum()) != 0:
            errors.append("mailboxes not empty at the end")
        if int(S.rk_osend[b].sum()) or int(S.rk_orecv[b].sum()):
            errors.append("requests outstanding at the end")
        if int(S.ux_meta[b, :, 2].sum()) != 0:
            errors.append("unmatched messages at the end")
        term = batch.topology.terminal_node >= 0
        cr = S.cr[b]
        if not (np.all(cr[term][:, 0] == p[D.P_EJ_FLITS])
                and np.all(cr[(batch.topology.neighbor >= 0)] == p[D.P_BUF_FLITS])
                and np.all(S.nic_cr[b] == p[D.P_BUF_FLITS])):
            errors.append("link credits not all returned")
        if np.any(S.ib_cnt[b]) or np.any(S.ej_cnt[b]) or np.any(S.nq_cnt[b]):
            errors.append("buffers not empty at the end")
        lost = S.fc[b, :, :, F_SEQ_TX] != S.fc[b, :, :, F_SEQ_RX].T
        if lost.any():
            x, y = (int(i) for i in np.argwhere(lost)[0])
            errors.append(f"rank {x} wrote {int(S.fc[b, x, y, F_SEQ_TX])} VELO packets to rank "
                          f"{y}, {int(S.fc[b, y, x, F_SEQ_RX])} reached its mailbox")
        errors += quiescent_problems(S.fc[b], S.fcr[b], p)
    if errors:
        raise SimulationError(f"point {b}: invariant broken: " + "; ".join(errors),
                              D.ERR_INVARIANT, b)


def run_batch(configs: Sequence[RunConfig], progress=None, programs=None) -> dict[str, np.ndarray]:
    batch = Batch(configs, programs)
    batch.run(progress)
    return batch.results()


def simulate(configs: Sequence[RunConfig], progress: Callable[[float], None] | None = None,
             max_batch: int = 8, programs: Sequence | None = None):
    """Run configs (batched by shape) and return one Dataset with a `point` per config."""
    configs = list(configs)
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault(shape_key(c), []).append(i)
    per_point: list[dict] = [None] * len(configs)  # type: ignore[list-item]
    for idx in groups.values():
        for k in range(0, len(idx), max_batch):
            part = idx[k:k + max_batch]
            res = run_batch([configs[i] for i in part], progress,
                            None if programs is None else [programs[i] for i in part])
            for j, i in enumerate(part):
                per_point[i] = {name: res[name][j] for name in RESULT_VARIABLES}
    sizes = result_sizes(configs)
    arrays = {name: pad_points([pp[name] for pp in per_point], var,
                               tuple(sizes[d] for d in var.dims[1:]))
              for name, var in SCHEMA.items()}
    return build_dataset(configs, arrays)

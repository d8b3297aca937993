"""Array sizes of a batch: which configs can share one (equal shapes), and how large every
dimension of the state must be for all of its members. The sweep planner calls state_sizes too,
to estimate a batch's memory before building it, so the two cannot drift apart.

check_memory(configs) refuses a batch (`run` checks its one config) that the machine cannot
hold, or whose arrays the kernels' int32 indices cannot address, before anything is built: its
estimate is arithmetic on the configs alone (no topology tables, no programs), a lower bound
of what engine.Batch allocates."""
from __future__ import annotations

import contextlib
import dataclasses
import math
import os
from typing import Callable, NamedTuple, Sequence

import numpy as np

from .. import dtypes as D
from ..config import I32_MAX, SECTIONS, RunConfig, TopologyConfig, bounds, show
from ..errors import ConfigError, SimulationError
from ..formulas import message_packets
from extoll_vec.kernels import host
from extoll_vec.kernels.fc_fields import PAIR_FIELDS
from extoll_vec.kernels.specialize import kernel_family
from ..protocols.registry import protocol
from ..topology.registry import kind as topology_kind
from ..workloads.registry import workload

NONE_MAILBOX_CAP = 1 << 16   # slots: the "unlimited" mailbox of protocol none holds this many


def shape_key(cfg: RunConfig) -> tuple:
    """Configs with equal keys have equal array shapes and run in one batch."""
    t = cfg.topology
    return ((t.kind,) + tuple(getattr(t, f) for f in topology_kind(t.kind).fields)
            + (cfg.n_ranks, cfg.network.vcs, cfg.workload.synthetic))


def batch_key(cfg: RunConfig) -> tuple:
    """Configs with equal keys may share a batch: equal shapes, and one compiled build of the
    kernels (the protocol's family under the default policy: kernels/specialize.py)."""
    return shape_key(cfg) + (kernel_family(cfg.protocol.name),)


class ProgramFigures(NamedTuple):
    """What sizing a member's state needs to know of its program."""
    max_isends: int        # sends outstanding at once, at most (any rank)
    max_irecvs: int        # receives posted and not yet completed, at most
    inbound_messages: int  # messages the busiest receiver gets over the run
    inbound_packets: int   # eager packets the busiest receiver gets over the run
    snapshots: int         # OP_SNAPSHOTs of the busiest rank
    pairs: int | None = None      # entries of the pair table (engine/pairs.py); None: ranks**2
    max_peers: int | None = None  # peers of the busiest rank in it; None: ranks
    ring: int | None = None       # mailbox ring slots (ring_slots); None: the mailbox's capacity


def mailbox_capacity(cfg: RunConfig, fig: ProgramFigures) -> int:
    """Mailbox slots per rank: the configured size, or for protocol none enough never to fill
    (every eager packet the rank will ever receive, capped at NONE_MAILBOX_CAP)."""
    if protocol(cfg.protocol.name).mailbox == "unlimited":
        return min(fig.inbound_packets + 1, NONE_MAILBOX_CAP)
    return cfg.protocol.mailbox_slots


def ring_slots(packets_in: int) -> int:
    """Slots of a rank's mailbox ring when at most `packets_in` eager packets reach it over the
    run: it never holds more than those and the control packets it is sent (credits: about one
    per threshold of its own packets; compulsory requests and responses: per steal), taken as
    as many again, plus 64. A ring that fills up before the mailbox's capacity raises
    ERR_SPARE and the batch runs again with rings of full capacity (engine/batch.py)."""
    return 2 * packets_in + 64


def least_packet_flits(cfg: RunConfig) -> int:
    """Flits of the smallest packet cfg's run can create (the kernels' pk_new calls, sized by
    NetworkConfig.flits = kernels/common.flits_of), leaving out a protocol's NIC-level packets
    when it bounds how many of those are alive (proto_packets). Synthetic runs:
    workload.packet_flits, their only packet. MPI runs: an eager VELO packet carries
    min(velo_payload, header + bytes - i * velo_payload) bytes, at least 1 (its last packet)
    or 0 when the header and the message are empty; an RMA data packet at least 1 byte (its
    last); control packets (8 bytes), GETs (16) and rendezvous requests (header + 16) are not
    smaller."""
    if protocol(cfg.protocol.name).nic_queue(cfg) > 0 and _proto_alive(cfg) is None:
        return 1   # its NIC-level packets (kernels/common.proto_send) may be 1 flit, unbounded
    if cfg.workload.synthetic:
        return cfg.workload.packet_flits
    return cfg.network.flits(0 if cfg.mpi.header_bytes == 0 else 1)


def _proto_alive(cfg: RunConfig) -> int | None:
    p = protocol(cfg.protocol.name)
    return None if p.proto_alive is None else p.proto_alive(cfg)


def proto_packets(cfg: RunConfig) -> int:
    """A protocol's NIC-level packets alive at once, at most, beside the bound of
    least_packet_flits: its declared bound (rdrp: one per credit, since each carries at least
    one), or, without one, those it may queue at each node (the rest are counted as 1-flit
    packets filling the buffers)."""
    q = cfg.n_nodes * protocol(cfg.protocol.name).nic_queue(cfg)
    bound = _proto_alive(cfg)
    return q if bound is None or q == 0 else bound


def pool_packets(configs: Sequence[RunConfig], R: int, P: int, V: int, N: int, FQ: int) -> int:
    """Packets that can be alive at once, at most (the packet pool NPK). A packet lives in a
    NIC injection FIFO (FQ per node), in a protocol's NIC queue, in a router input VC buffer
    (from the moment its head leaves upstream: its space is reserved by credits), or between
    a router's ejection port and the end of its NIC's drain (holding ejection credits);
    nowhere else (kernels/nic.py, network.py, router_iq.py move a packet from one to the next
    within one event; the mailbox keeps a copy, not the packet). A buffer of F flits holds at
    most F // (least packet flits) packets, since every packet occupies at least that many of
    its flits; a protocol's packets left out of that bound are bounded by proto_packets; so
    the pool never runs out (ERR_POOL), whatever the traffic (tests/test_router_iq.py runs
    the least packets at saturation). 1024 spare."""
    vc = max(c.network.buffer_flits // least_packet_flits(c) for c in configs)
    ej = max(c.network.nic_ejection_flits // least_packet_flits(c) for c in configs)
    return (R * P * V * vc + N * (FQ + ej) + max(proto_packets(c) for c in configs)
            + 1024)


def protocol_sizes(configs: Sequence[RunConfig]) -> dict:
    """The protocol dimensions of the state (state.py): the largest any member's protocol
    declares (protocols/registry.py); the in-order check's PAIR_FIELDS always."""
    recs = [(protocol(c.protocol.name), c) for c in configs]
    return dict(K=max(max(p.pair_fields(c), PAIR_FIELDS) for p, c in recs),
                KR=max(p.rank_fields(c) for p, c in recs),
                KN=max(p.node_fields(c) for p, c in recs),
                KNN=max(p.node_pair_fields(c) for p, c in recs),
                KNP=max(p.node_param_count(c) for p, c in recs),
                PF=max(len(p.packet_fields) for p, c in recs),
                PQ=max(p.nic_queue(c) for p, c in recs),
                HQ0=max(p.host_queue(c) for p, c in recs),
                TA=max(p.timers_alive(c) for p, c in recs))


def chunk_gets(configs: Sequence[RunConfig]) -> int:
    """The most chunk gets a receive keeps outstanding in the batch (mpi.outstanding_gets of
    its chunked rendezvous members, kernels/rendezvous.py), 0 when none runs it."""
    return max(c.mpi.outstanding_gets if c.mpi.rendezvous == "chunked" else 0 for c in configs)


def rma_slots(configs: Sequence[RunConfig], SQ: int, RD: int) -> int:
    """Entries of a NIC's RMA queue per rank (kernels/nic.py rq): one GET served per send
    descriptor; chunked rendezvous: per send its first chunk and up to c chunk GETs served at
    once, per receive up to c triggered GETs waiting to leave."""
    c = chunk_gets(configs)
    return SQ if c == 0 else SQ * (c + 1) + RD * c


def state_sizes(configs: Sequence[RunConfig], topo, figs: Sequence[ProgramFigures]) -> dict:
    """The size of every dimension of state.FIELDS for a batch (also the planner's estimate)."""
    c0 = configs[0]
    net = [c.network for c in configs]
    NR = c0.n_ranks
    maxL = max(max(n.max_packet_flits for n in net), max(c.workload.packet_flits for c in configs))
    R, P, V, N = topo.n_routers, topo.n_ports, c0.network.vcs, topo.n_nodes
    synth = c0.workload.synthetic
    FQ = max(c.workload.source_queue if synth else c.network.nic_fifo_packets for c in configs)
    EQ = max(n.nic_ejection_flits for n in net)
    rpn = max(c.mpi.ranks_per_node for c in configs)
    SQ = max(f.max_isends for f in figs) + 2 if NR else 1
    RD = max(f.max_irecvs for f in figs) + 2 if NR else 1
    ps = protocol_sizes(configs)
    NPK = pool_packets(configs, R, P, V, N, FQ)
    sizes = dict(B=len(configs), R=R, P=P, V=V, MW=-(-P * D.MAX_VCS // 64), N=N, FQ=FQ,
                 NW=max(rpn, 1), EQ=EQ, RQ=max(rpn, 1) * rma_slots(configs, SQ, RD), NR=NR,
                 MC=max(mailbox_capacity(c, f) if f.ring is None else
                        min(mailbox_capacity(c, f), f.ring) for c, f in zip(configs, figs)),
                 SQ=SQ, RD=RD,
                 # GETs the CPU writes: one per receive; chunked, the first c of each;
                 # rendezvous "write": a reply per receive and a finish message per send
                 GQ=RD * max(chunk_gets(configs), 1)
                 + (SQ if any(c.mpi.rendezvous == "write" for c in configs) else 0),
                 UQ=max(f.inbound_messages for f in figs) + 2,
                 # a credit packet, a request and a response per peer in the pair table
                 CQ=3 * max(NR if f.max_peers is None else f.max_peers for f in figs) + 16,
                 NR1=NR + 1,   # the pair table's row starts; NPAIR: its entries and the sink
                 NPAIR=max(NR * NR if f.pairs is None else f.pairs for f in figs) + 1,
                 NSNAP=max(f.snapshots for f in figs), NPK=NPK, **ps)
    lat = max(max(c.network.link_latency, *c.topology.link_latencies(c.network.link_latency))
              + c.network.router_delay for c in configs) + maxL
    sizes["W"] = 1 << max(7, int(math.ceil(math.log2(4 * lat))))
    # Events pending at once: link-credit events (EV_CREDIT, EV_NIC_CREDIT, EV_EJ_CREDIT) and
    # packets on their way to a NIC (EV_NIC_RX) each hold the flits of one packet of a buffer's
    # capacity not yet returned, so together with the packets in buffers they stay within
    # pool_packets' router and ejection terms; arbitration requests (EV_ARB) are one per packet
    # that reached an empty queue, pending until it can move, plus one re-request per output
    # or router; the rest are per port, rank and node. 3 * NPK covers them with room (the
    # saturation test records the peak use).
    sizes["E"] = 3 * NPK + 3 * R * P + 2 * NR + 4 * N + 1024
    if ps["KN"]:
        sizes["E"] += N   # a protocol timer per node
    sizes["E"] += sizes.pop("TA")   # and the timers the protocol says it keeps beyond those
    # the DMA queue of packets a protocol hands to its host (common.to_host), and an
    # EV_HOST_DMA or two per node pending
    sizes["HQ"] = max(1, sizes.pop("HQ0"))
    if sizes["HQ"] > 1:
        sizes["E"] += 2 * N
    if any(protocol(c.protocol.name).nic_polls for c in configs):
        sizes["E"] += 2 * N   # EV_NIC_POLL: the earliest pending and one superseded
    return sizes


def check_widths(programs, send_slots: int) -> None:
    """Programs must fit the mailbox entry's fields (kernels/host.py, mb_pack)."""
    if send_slots > host.MB_RNDV_SLOTS:
        raise ConfigError("workload", f"{send_slots - 2} sends outstanding at once; allowed: at "
                          f"most {host.MB_RNDV_SLOTS - 2} (the rendezvous slot field)")
    for p in programs:
        sends = np.isin(p.ops[:, 0], (D.OP_SEND, D.OP_ISEND, D.OP_MCAST, D.OP_IMCAST))
        if sends.any() and int(p.ops[sends, 2].max()) >= host.MB_RNDV_BYTES:
            raise ConfigError("workload.message_bytes", f"got {int(p.ops[sends, 2].max())}; "
                              f"allowed: < {host.MB_RNDV_BYTES} bytes per message")


# ---- memory: refuse what cannot be held, before anything is allocated -------------------------
@contextlib.contextmanager
def allocating(what: str, nbytes: int | None = None):
    """Inside: allocations of `what` (nbytes in all, when known). A MemoryError (numpy's
    ArrayMemoryError among them: the machine, a cgroup or an address-space limit refused
    the memory, after check_memory let the run start) becomes one SimulationError naming
    the table and its size, instead of a traceback."""
    try:
        yield
    except MemoryError as exc:
        failed = getattr(exc, "_total_size", None)
        size = f"{human_bytes(nbytes)} in all" if nbytes else ""
        if failed:
            size += f"{'; ' if size else ''}an array of {human_bytes(failed)} refused"
        raise SimulationError(f"out of memory allocating {what}{f' ({size})' if size else ''}"
                              f"; give the run more memory (or a smaller configuration): "
                              f"its estimate is in `extoll-vec sweep --dry-run`") from None
class TopoShape(NamedTuple):
    """What state_sizes reads of a Topology, known without building its tables."""
    n_routers: int
    n_ports: int
    n_nodes: int


def topology_shape(t: TopologyConfig) -> TopoShape:
    """Routers, ports per router and nodes of t, by arithmetic (topology/*.py build them so:
    tests/test_bad_input_config.py compares the two)."""
    k = topology_kind(t.kind)
    return TopoShape(k.routers(t), k.ports(t), k.nodes(t))


def _program_rows(cfg: RunConfig) -> int:
    """Rows of cfg's rank programs, at least: the alltoalls' sends and receives (each member
    of a group of n sends n-1 messages and receives n-1, workloads/collectives.alltoall_rows),
    else one row per rank. The O(ranks**2) programs are the ones that matter."""
    w = cfg.workload
    rec = workload(w.kind)
    if rec.synthetic:
        return 0
    return rec.rows(cfg) if rec.rows is not None else w.ranks


def least_figures(cfg: RunConfig) -> ProgramFigures:
    """ProgramFigures that cfg's program has at least, known without building it: the
    messages (and eager packets) the busiest rank of an alltoall or multiphase run receives,
    the snapshots of a multiphase run; 0 for the rest."""
    from ..workloads import snapshot_count
    w, rec = cfg.workload, workload(cfg.workload.kind)
    # messages into the busiest rank and the pair table (engine/pairs.py), as the kind knows
    msgs, pairs, peers = (0, 0, 0) if rec.synthetic else (
        rec.figures(cfg) if rec.figures is not None else (0, 2, 1))
    m = cfg.mpi
    per = message_packets(w.message_bytes, m.header_bytes, m.velo_payload, m.eager_threshold)
    snaps = snapshot_count(cfg)
    if cfg.n_ranks and snaps:
        pairs = peers = None    # the dense table
    return ProgramFigures(0, 0, msgs, msgs * per, snaps, pairs, peers, ring_slots(msgs * per))


def _member_sizes(cfg: RunConfig) -> dict[str, int]:
    return state_sizes([cfg], topology_shape(cfg.topology), [least_figures(cfg)])


def _part(dims: tuple) -> str:
    """The part of the state an array belongs to, for the messages."""
    if "NPAIR" in dims:
        return "pair tables"
    for dim, part in (("NSNAP", "credit snapshots"), ("MC", "mailboxes"),
                      ("NPK", "packet pool"), ("E", "event calendar"), ("W", "event calendar"),
                      ("R", "routers"), ("N", "NICs"), ("NR", "ranks")):
        if dim in dims:
            return part
    return "counters"


# What a run's process holds beside its arrays, and what it allocates for a while, measured
# (benchmarks/bench_memory.py, docs/design.md "Memory"): the interpreter with numpy, Numba and
# a protocol family's kernels loaded is 0.22 GiB resident; building a rank program takes about
# 115 bytes per row of it for a while, the program included (16,384-rank IMB programs of 3.5 M
# rows: 0.39 GiB; the alltoall of 4,096 ranks, 33.7 M rows: 3.5 GiB); the
# conservation check after the run (diagnostics.check_invariants, the protocols' audits: both
# look up every pair of the table, protocols/audit.lookup) about 165 bytes per entry of the
# pair table (17.9 M entries: 2.76 GiB beside the state's 2.79 GiB).
PROCESS_BYTES = 256 << 20
# the parts that the programs size (their rows, the pairs they talk over)
PROGRAM_PARTS = ("pair tables", "working memory", "rank programs", "ranks")
BUILD_BYTES_PER_ROW = 128
AUDIT_BYTES_PER_PAIR = 176


def estimate_parts(configs: Sequence[RunConfig], figs: Sequence[ProgramFigures] | None = None,
                   rows: Sequence[int] | None = None) -> tuple[dict[str, int], dict[str, int]]:
    """(bytes by part, sizes) of a batch of configs: the peak resident memory of the process
    that runs it (engine.Batch). The state (state.FIELDS at the largest member's sizes,
    state_sizes), the topology tables, the rank programs, the process itself
    (PROCESS_BYTES) and the working memory of the build or of the check after the run,
    whichever phase is the larger. figs, rows: each member's ProgramFigures and program rows,
    known once its program is built (engine.batch.member_figures): the estimate then bounds
    the peak;
    without them, the least figures known from the configs alone (least_figures), a lower
    bound. Python integers throughout: no overflow, nothing allocated, whatever the configs
    ask for."""
    from ..state import FIELDS
    from ..topology.base import _ARRAYS as TOPOLOGY_ARRAYS
    if figs is None:
        per = [_member_sizes(c) for c in configs]
    else:
        per = [state_sizes([c], topology_shape(c.topology), [f]) for c, f in zip(configs, figs)]
    sizes = {k: max(s[k] for s in per) for k in per[0]}
    sizes["B"] = len(configs)
    parts: dict[str, int] = {}
    for dtype, dims, _fill in FIELDS.values():
        n = np.dtype(dtype).itemsize * math.prod(sizes[d] if isinstance(d, str) else d
                                                 for d in dims)
        parts[_part(dims)] = parts.get(_part(dims), 0) + n
    shapes = [topology_shape(c.topology) for c in configs]
    parts["topology tables"] = max(
        sum(np.dtype(dt).itemsize * math.prod(shape(t.n_routers, t.n_nodes, t.n_ports, 1))
            for dt, shape in TOPOLOGY_ARRAYS.values()) for t in shapes)
    rows = [_program_rows(c) for c in configs] if rows is None else list(rows)
    # int32 [rows, 4] rows (16 bytes): per member its Program and engine.Batch's working copy
    # of it, and the batch's ops array (an alltoall of 8192 ranks: 13.5 GiB estimated in all,
    # 13.8 GiB peak resident measured)
    programs = 16 * (2 * sum(rows) + len(configs) * max(rows))
    sizes["program rows"] = max(rows)
    parts["process"] = PROCESS_BYTES
    if figs is None:     # the lower bound: all of it
        parts["rank programs"] = programs
        return parts, sizes
    # The programs are built (and their pair tables) before the state exists; the run and the
    # check after it hold the state, the batch's copy of the programs and the check's lookups:
    # the peak is the larger of the two phases
    state = sum(v for k, v in parts.items() if k not in ("topology tables", "process"))
    build = max(BUILD_BYTES_PER_ROW * sum(rows), programs)
    ops = 16 * len(configs) * max(rows)
    audit = AUDIT_BYTES_PER_PAIR * sizes["NPAIR"]
    if build > state + ops + audit:
        parts = {"topology tables": parts["topology tables"], "process": PROCESS_BYTES,
                 "rank programs": programs, "working memory": build - programs}
    else:
        parts.update({"rank programs": ops, "working memory": audit})
    return parts, sizes


def _status_bytes(*keys: str) -> list[int]:
    """Fields of /proc/self/status in bytes (VmSize, VmRSS, ...), 0 where unknown."""
    out = dict.fromkeys(keys, 0)
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                k, _, v = line.partition(":")
                if k in out:
                    out[k] = int(v.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return [out[k] for k in keys]


ADDRESS_RESERVE = 384 << 20


def available_memory(own: bool = True) -> int | None:
    """Bytes a run's process can reach at its peak (estimate_parts counts the whole process):
    own (the run is in this process): what it holds now and what it can still allocate,
    else (a local worker's) what can still be allocated. Allocatable: MemAvailable of
    /proc/meminfo, lowered to what is left under the cgroup's memory.max when one is set
    (the free physical pages elsewhere), and to what is left of an address-space limit
    (ulimit -v, RLIMIT_AS: the process's mappings beyond its resident pages, Numba's and the
    libraries' reserved ranges, count against it); None if nothing can be read."""
    size, rss = _status_bytes("VmSize", "VmRSS")
    held = rss if own else 0
    avail = _physical()
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY and size:
            # own: soft - (VmSize - VmRSS) in all, less what the run maps later without
            # making it resident (the store writer's libraries and threads' stacks)
            left = soft - size + rss - held - ADDRESS_RESERVE
            avail = left if avail is None else min(avail, left)
    except (ImportError, OSError, ValueError):
        pass
    return None if avail is None else avail + held


def _physical() -> int | None:
    avail = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError):
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, AttributeError):
            return None
    try:
        with open("/proc/self/cgroup") as fh:
            rel = next((ln.split(":", 2)[2].strip() for ln in fh if ln.startswith("0::")), None)
        if rel is not None:
            base = os.path.join("/sys/fs/cgroup", rel.lstrip("/"))
            with open(os.path.join(base, "memory.max")) as fh:
                limit = fh.read().strip()
            if limit != "max":
                with open(os.path.join(base, "memory.current")) as fh:
                    avail = min(avail, int(limit) - int(fh.read()))
    except (OSError, ValueError):
        pass
    return avail


MEMORY_LIMIT_ENV = "EXTOLL_VEC_MEMORY_LIMIT"


def memory_limit() -> int | None:
    """The configured limit in bytes (environment EXTOLL_VEC_MEMORY_LIMIT: 8GiB, 512MiB, 10G
    or bytes), below the machine's available memory; None if unset."""
    text = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    if not text:
        return None
    units = {"": 1, "B": 1, "K": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MIB": 1 << 20,
             "G": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TIB": 1 << 40}
    num = text.rstrip("KMGTiBkmgtib ")
    unit = text[len(num):].strip().upper()
    try:
        value = float(num) * units[unit]
    except (ValueError, KeyError):
        raise ConfigError(MEMORY_LIMIT_ENV, f"got {text!r}; allowed: a size such as 8GiB, "
                          "512MiB or a number of bytes") from None
    if not value > 0:
        raise ConfigError(MEMORY_LIMIT_ENV, f"got {text!r}; allowed: a size > 0")
    return int(value)


def human_bytes(n: int) -> str:
    """1.5 GiB, 412 GiB, 3.2 TiB."""
    for unit, shift in (("EiB", 60), ("PiB", 50), ("TiB", 40), ("GiB", 30)):
        if n >= 1 << shift:
            return f"{n / 2**shift:.3g} {unit}"
    return f"{n / 2**20:.3g} MiB"


def _unchecked(cfg: RunConfig, section: str, name: str, value) -> RunConfig:
    """cfg with one field replaced, not validated (only for the arithmetic of the estimate)."""
    new = object.__new__(RunConfig)
    for f in dataclasses.fields(RunConfig):
        object.__setattr__(new, f.name, getattr(cfg, f.name))
    object.__setattr__(new, section, dataclasses.replace(getattr(cfg, section), **{name: value}))
    return new


def _culprit(cfg: RunConfig, measure: Callable[[RunConfig], int]) -> tuple[str, object] | None:
    """The field whose value, set back to its default, shrinks measure(cfg) the most."""
    base, best = measure(cfg), None
    for sec, cls in SECTIONS.items():
        default = cls()
        for name, b in bounds(cls).items():
            value = getattr(getattr(cfg, sec), name)
            if b.kind not in ("int", "float", "ints") or value == getattr(default, name):
                continue
            try:
                gain = base - measure(_unchecked(cfg, sec, name, getattr(default, name)))
            except (ArithmeticError, ValueError):
                continue
            if gain > 0 and (best is None or gain > best[0]):
                best = (gain, f"{sec}.{name}", value)
    return None if best is None else best[1:]


def _refuse(configs: Sequence[RunConfig], measure: Callable[[Sequence[RunConfig]], int],
            what: str) -> ConfigError:
    big = max(configs, key=lambda c: measure([c]))
    culprit = _culprit(big, lambda c: measure([c]))
    batch = f" (a batch of {len(configs)})" if len(configs) > 1 else ""
    if culprit is None:
        return ConfigError("config", f"{what}{batch}")
    return ConfigError(culprit[0], f"got {show(culprit[1])}; {what}{batch}")


def check_memory(configs: Sequence[RunConfig], available: int | None = None,
                 figs: Sequence[ProgramFigures] | None = None,
                 rows: Sequence[int] | None = None) -> int:
    """Refuse, with a ConfigError naming the field that makes it large, a batch of configs
    (one kernel call: `run` checks its one config) whose arrays the kernels' int32 indices
    cannot address, or whose estimate (estimate_parts: with the programs' figs and rows the
    peak, without them a lower bound) exceeds `available` bytes (default: available_memory();
    no memory check if that is unknown). Nothing is built or allocated. Returns the
    estimate in bytes."""
    configs = list(configs)
    parts, sizes = estimate_parts(configs, figs, rows)
    dim, n = max(((k, v) for k, v in sizes.items() if k != "B"), key=lambda kv: kv[1])
    if n > I32_MAX:
        def widest(cs):
            return max(v for k, v in estimate_parts(cs)[1].items() if k != "B")
        raise _refuse(configs, widest,
                      f"the run would need {n if n < 10**10 else f'{n:.3g}'} "
                      f"{DIMENSIONS.get(dim, dim)}, more than the "
                      f"{I32_MAX} that the kernels' int32 indices address")
    total = sum(parts.values())
    limit = memory_limit()
    if available is None:
        available = available_memory()
    what = "available"
    if limit is not None and (available is None or limit < available):
        available, what = limit, f"limit ({MEMORY_LIMIT_ENV})"
    if available is not None and total > available:
        top = sorted(parts.items(), key=lambda kv: -kv[1])[:2]
        detail = ", ".join(f"{k} {human_bytes(v)}" for k, v in top if v)
        need = "at its peak" if figs is not None else "at least"
        msg = (f"the run would need {need} {human_bytes(total)} ({detail}), more than the "
               f"{human_bytes(max(available, 0))} {what}")
        largest = max((k for k in parts if k != "process"), key=parts.get)
        if figs is not None and largest in PROGRAM_PARTS:
            # what the programs make (their rows, the pairs they talk over) grows with ranks
            big = max(configs, key=lambda c: c.n_ranks)
            raise ConfigError("workload.ranks", f"got {big.workload.ranks}; {msg}")
        # named: the field that makes the estimate from the configs alone the largest
        raise _refuse(configs, lambda cs: sum(estimate_parts(cs)[0].values()), msg)
    return total


# the state dimensions (state.py) as the messages name them
DIMENSIONS = {"E": "event pool entries", "W": "timing wheel buckets", "NPK": "packet pool entries",
              "R": "routers", "P": "ports per router", "N": "nodes", "FQ": "NIC FIFO slots",
              "EQ": "NIC ejection slots", "NR": "ranks", "MC": "mailbox slots per rank",
              "RQ": "RMA queue slots", "NW": "ranks per node", "UQ": "unexpected messages",
              "CQ": "control queue slots", "NSNAP": "credit snapshots",
              "program rows": "program rows", "MW": "VOQ mask words", "SQ": "send slots",
              "RD": "receive slots", "GQ": "GET queue slots", "K": "flow-control fields"}

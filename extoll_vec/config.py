"""Immutable run parameters: defaults, validation and YAML loading in one place.

A RunConfig is a tree of frozen dataclasses. Every field has a default here and nowhere else;
derived values (nodes, ranks per node, packets per message, cycles per ns) are properties,
never stored beside their inputs. Every invalid value raises ConfigError naming the dotted
field and what is allowed.
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field, fields
from typing import Any

import yaml

from .dtypes import MAX_VCS
from .errors import ConfigError
from .formulas import VELO_HEADER_BYTES, VELO_PAYLOAD_BYTES, eager_packets, packet_flits
from .protocols.catalogue import CREDIT_PROTOCOLS, PROTOCOL_NAMES as PROTOCOLS, protocol

TOPOLOGY_KINDS = ("mesh", "torus", "dragonfly", "crossbar", "hypercube")
WORKLOADS = ("multi_pingpong", "alltoall", "multiphase", "imb", "permutation", "uniform",
             "program")
IMB_BENCHMARKS = ("PingPong", "PingPing", "Sendrecv", "Exchange", "Allreduce", "Reduce", "Bcast",
                  "Barrier", "Alltoall", "Alltoallv", "Allgather", "Allgatherv", "Gather",
                  "Scatter", "Scatterv", "Gatherv", "Reduce_scatter")


def _check(cond: bool, name: str, allowed: str, value: Any) -> None:
    if not cond:
        raise ConfigError(name, f"got {value!r}; allowed: {allowed}")


@dataclass(frozen=True)
class TopologyConfig:
    """Router graph. mesh/torus: one node per router, radix per dimension in `dims`.
    dragonfly: p terminals per router, a routers per group, h global links per router,
    `groups` groups (0 means the maximum a*h+1). crossbar: p nodes on one switch.
    hypercube: 2**cube_dim switches with p nodes each."""
    kind: str = "mesh"
    dims: tuple[int, ...] = (4, 4, 4)
    p: int = 1
    a: int = 4
    h: int = 2
    groups: int = 0
    cube_dim: int = 3

    def validate(self, pre: str = "topology") -> None:
        _check(self.kind in TOPOLOGY_KINDS, f"{pre}.kind", " | ".join(TOPOLOGY_KINDS), self.kind)
        if self.kind in ("mesh", "torus"):
            _check(1 <= len(self.dims) <= 4 and all(isinstance(d, int) and d >= 1 for d in self.dims)
                   and math.prod(self.dims) >= 2, f"{pre}.dims",
                   "1 to 4 integer radices >= 1 with at least 2 routers", list(self.dims))
        if self.kind == "torus":
            _check(all(d >= 3 or d == 1 for d in self.dims), f"{pre}.dims",
                   "torus radices >= 3 (a radix of 2 is a mesh)", list(self.dims))
        _check(self.p >= 1, f"{pre}.p", "integer >= 1", self.p)
        if self.kind == "dragonfly":
            _check(self.a >= 1, f"{pre}.a", "integer >= 1", self.a)
            _check(self.h >= 1, f"{pre}.h", "integer >= 1", self.h)
            _check(self.groups == 0 or 2 <= self.groups <= self.a * self.h + 1, f"{pre}.groups",
                   f"0 (= a*h+1) or 2..{self.a * self.h + 1}", self.groups)
        if self.kind == "crossbar":
            _check(self.p >= 2, f"{pre}.p", "crossbar needs >= 2 nodes", self.p)
        if self.kind == "hypercube":
            _check(1 <= self.cube_dim <= 12, f"{pre}.cube_dim", "1..12", self.cube_dim)
        if self.kind in ("mesh", "torus"):
            _check(self.p == 1, f"{pre}.p", "1 (one node per router on meshes and tori)", self.p)

    @property
    def n_groups(self) -> int:
        return self.groups or self.a * self.h + 1

    @property
    def n_nodes(self) -> int:
        if self.kind in ("mesh", "torus"):
            return math.prod(self.dims)
        if self.kind == "dragonfly":
            return self.p * self.a * self.n_groups
        if self.kind == "crossbar":
            return self.p
        return self.p * (1 << self.cube_dim)


@dataclass(frozen=True)
class NetworkConfig:
    """Links, routers and NICs. One cycle is one flit time on a link. cycle_ns (and with it the
    link rate and the hop latency) is fitted to the EXTOLL paper's reference times
    (analysis/calibration.py: 587 MB/s links, 327 ns per hop)."""
    cycle_ns: float = 27.27            # length of one cycle (one flit on a link): fitted
    flit_bytes: int = 16               # link width x cycle: bytes per flit
    packet_header_bytes: int = 8       # network header added to every packet on the wire
    link_latency: int = 4              # cycles a flit needs to cross a link
    router_delay: int = 8              # router pipeline cycles before a head can be switched
    vcs: int = 2                       # virtual channels per port
    buffer_flits: int = 40             # input buffer per port and VC, flits
    nic_fifo_packets: int = 16         # NIC injection FIFO, packets (PIO writes land here)
    nic_ejection_flits: int = 40       # NIC ejection buffer, flits (holds packets a full mailbox refuses)
    nic_packet_ns: float = 0.0         # NIC packet rate: least time between two injected packets
                                       # (0: link rate only; rounded up to whole cycles)
    rma_packet_bytes: int = 256        # payload of one RMA data packet

    def validate(self, pre: str = "network") -> None:
        _check(self.cycle_ns > 0, f"{pre}.cycle_ns", "> 0 nanoseconds", self.cycle_ns)
        _check(self.nic_packet_ns >= 0, f"{pre}.nic_packet_ns",
               ">= 0 nanoseconds (0: link rate only)", self.nic_packet_ns)
        for n in ("flit_bytes", "vcs", "nic_fifo_packets", "rma_packet_bytes"):
            _check(getattr(self, n) >= 1, f"{pre}.{n}", "integer >= 1", getattr(self, n))
        for n in ("packet_header_bytes", "link_latency", "router_delay"):
            _check(getattr(self, n) >= 0, f"{pre}.{n}", "integer >= 0", getattr(self, n))
        _check(self.link_latency >= 1, f"{pre}.link_latency", "integer >= 1", self.link_latency)
        _check(self.vcs <= MAX_VCS, f"{pre}.vcs", f"1..{MAX_VCS}", self.vcs)
        mx = self.max_packet_flits
        _check(self.buffer_flits >= mx, f"{pre}.buffer_flits",
               f">= {mx} (the largest packet, virtual cut-through)", self.buffer_flits)
        _check(self.nic_ejection_flits >= mx, f"{pre}.nic_ejection_flits",
               f">= {mx} (the largest packet)", self.nic_ejection_flits)

    @property
    def packet_overhead_bytes(self) -> int:
        """Bytes every packet carries on the wire besides its payload: the VELO header and the
        network header (the kernels' P_PKT_OVERHEAD)."""
        return VELO_HEADER_BYTES + self.packet_header_bytes

    def flits(self, payload_bytes: int) -> int:
        """Flits of a packet with payload_bytes of payload, as the kernels size it."""
        return packet_flits(payload_bytes, self.packet_overhead_bytes, self.flit_bytes)

    @property
    def velo_packet_flits(self) -> int:
        """A full VELO packet: a 64-byte mailbox slot plus the network header."""
        return self.flits(VELO_PAYLOAD_BYTES)

    @property
    def max_packet_flits(self) -> int:
        return max(self.velo_packet_flits, self.flits(self.rma_packet_bytes))


@dataclass(frozen=True)
class HostConfig:
    """CPU costs in nanoseconds (converted once to cycles by the engine). Fitted together with
    network.cycle_ns to the EXTOLL paper's reference times, keeping their ratios
    (analysis/calibration.py): 8, 10, 19, 125 and 31 cycles of 27.27 ns; credit_ns is not
    fitted (the reference runs have no flow control)."""
    pio_ns: float = 218.16        # write one VELO packet to the NIC (PIO)
    retrieve_ns: float = 272.7    # poll, copy and release one mailbox slot
    match_ns: float = 518.13      # MPI matching / bookkeeping per message
    credit_ns: float = 27.27      # one flow-control credit operation: not fitted (no credits in
                                  # the reference runs); one cycle. Unlike the other costs it is
                                  # not rounded up to whole cycles (dtypes.CREDIT_FRAC_BITS)
    limic_ns: float = 3408.75     # LiMIC fixed cost per intra-node message
    limic_ns_per_kb: float = 845.37
    progress_packets: int = 64    # mailbox packets the MPI progress engine takes per MPI call

    def validate(self, pre: str = "host") -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            _check(v >= 0, f"{pre}.{f.name}",
                   "an integer >= 0" if f.name == "progress_packets" else
                   "a cost >= 0 nanoseconds", v)


@dataclass(frozen=True)
class MpiConfig:
    """EXTOLL MPI over VELO (paper section 3)."""
    ranks_per_node: int = 16
    eager_threshold: int = 2048   # bytes; larger messages use rendezvous over RMA
    header_bytes: int = 16        # MPI header prepended to the first VELO packet
    velo_payload: int = VELO_PAYLOAD_BYTES   # bytes of payload per VELO packet (56: 64-byte slot)
    limic: bool = True            # same-node ranks use shared memory (LiMIC)

    def validate(self, pre: str = "mpi") -> None:
        _check(self.ranks_per_node >= 1, f"{pre}.ranks_per_node", "integer >= 1", self.ranks_per_node)
        _check(0 <= self.eager_threshold < 2**24, f"{pre}.eager_threshold", "0..16777215 bytes",
               self.eager_threshold)
        _check(0 <= self.header_bytes < self.velo_payload, f"{pre}.header_bytes",
               f"0..{self.velo_payload - 1}", self.header_bytes)
        _check(1 <= self.velo_payload <= VELO_PAYLOAD_BYTES, f"{pre}.velo_payload",
               f"1..{VELO_PAYLOAD_BYTES} bytes", self.velo_payload)
        _check(isinstance(self.limic, bool), f"{pre}.limic", "true | false", self.limic)

    def packets(self, nbytes: int) -> int:
        """VELO packets of an eager message: header + payload in velo_payload-byte pieces."""
        return eager_packets(nbytes, self.header_bytes, self.velo_payload)


@dataclass(frozen=True)
class ProtocolConfig:
    """End-to-end flow control. none: the reference (a mailbox never full). backpressure:
    finite mailbox, hardware back-pressure only. window: a fixed credit window per peer.
    static / dynamic: EXTOLL credit-based flow control (paper sections 5 and 6): the mailbox
    of `mailbox_slots` is shared out among all processes of the job, `credit_slots` of each
    process' share form the credit region (see extoll_vec.protocols.extoll_static.layout)."""
    name: str = "none"
    mailbox_slots: int = 0       # 64-byte slots per rank; 0 = unlimited (only for `none`)
    window: int = 8              # window: credits per (sender, receiver) pair
    threshold: int = 4           # window: retrieved packets that trigger a credit packet
    credit_slots: int = 2        # static/dynamic: credit slots per process (2: section 5.3)
    piggyback: bool = False      # static/dynamic: credits ride on partly filled packets (5.4)

    def validate(self, pre: str = "protocol") -> None:
        _check(self.name in PROTOCOLS, f"{pre}.name", " | ".join(PROTOCOLS), self.name)
        if self.name == "none":
            _check(self.mailbox_slots == 0, f"{pre}.mailbox_slots",
                   "0 for protocol none (its mailbox never fills; use backpressure for a finite one)",
                   self.mailbox_slots)
        else:
            _check(self.mailbox_slots >= 1, f"{pre}.mailbox_slots", "integer >= 1", self.mailbox_slots)
        if self.name == "window":
            _check(self.window >= 1, f"{pre}.window", "integer >= 1", self.window)
            _check(1 <= self.threshold <= self.window, f"{pre}.threshold",
                   f"1..window ({self.window})", self.threshold)
        _check(1 <= self.credit_slots <= 16, f"{pre}.credit_slots", "1..16", self.credit_slots)
        _check(isinstance(self.piggyback, bool), f"{pre}.piggyback", "true | false", self.piggyback)
        _check(not self.piggyback or self.name in CREDIT_PROTOCOLS, f"{pre}.piggyback",
               f"false for protocol {self.name} (piggybacking is part of "
               f"{' and '.join(CREDIT_PROTOCOLS)})", self.piggyback)


@dataclass(frozen=True)
class WorkloadConfig:
    """What the ranks do. multi_pingpong: `pairs` rank pairs between two nodes `hops` router
    links apart. alltoall: `groups` disjoint groups of `group_size` ranks (0 = ranks/groups)
    each run a non-optimized alltoall; the other ranks wait in a barrier (groups 1, group_size g
    with 16 ranks per node is the paper's LiMIC test, 7.2: 16/g of the destinations on the
    node). multiphase (7.3): `iterations` alltoalls over ranks [0, n) per n in `phases` (empty:
    ranks x (1, 1/4, 1/2, 1, 1/2, 1/4, 1)), a barrier of all ranks after each. imb (7.4): the
    Intel MPI Benchmark `benchmark` over all ranks, `message_bytes` x `iterations`.
    `warmup` iterations run first, untimed and followed by a barrier of all ranks (IMB's warm-up;
    the paper averages many repetitions, which hides that the dynamic protocol starts every
    sender at its static slots). `start_skew_ns` > 0 delays each rank's start by a whole number
    of ns drawn uniformly from 0..start_skew_ns by `seed` (ranks leave MPI_Init or a barrier at
    different times): runs that differ only in the seed are then replicates of one
    measurement, as the paper's averages over 150 repetitions are (0: all start at cycle 0).
    permutation/uniform: network-only Bernoulli traffic at `injection_rate` flits per node per
    cycle."""
    kind: str = "alltoall"
    ranks: int = 1024
    message_bytes: int = 2048
    iterations: int = 1
    pairs: int = 16
    hops: int = 1
    groups: int = 1
    group_size: int = 0
    injection_rate: float = 0.1
    packet_flits: int = 4
    warmup_cycles: int = 2000
    measure_cycles: int = 10000
    drain_cycles: int = 50000
    source_queue: int = 256
    benchmark: str = "PingPong"
    phases: tuple[int, ...] = ()
    warmup: int = 0              # untimed iterations first (multi_pingpong, alltoall, imb)
    start_skew_ns: int = 0       # each rank starts up to this late, drawn from `seed`

    def validate(self, pre: str = "workload") -> None:
        _check(self.kind in WORKLOADS, f"{pre}.kind", " | ".join(WORKLOADS), self.kind)
        _check(self.ranks >= 1, f"{pre}.ranks", "integer >= 1", self.ranks)
        _check(self.message_bytes >= 0, f"{pre}.message_bytes", "bytes >= 0", self.message_bytes)
        _check(self.iterations >= 1, f"{pre}.iterations", "integer >= 1", self.iterations)
        _check(self.warmup >= 0, f"{pre}.warmup", "integer >= 0", self.warmup)
        _check(0 <= self.start_skew_ns <= 10**9, f"{pre}.start_skew_ns", "ns 0..10**9",
               self.start_skew_ns)
        _check(self.pairs >= 1, f"{pre}.pairs", "integer >= 1", self.pairs)
        _check(self.hops >= 1, f"{pre}.hops", "integer >= 1", self.hops)
        _check(self.groups >= 1, f"{pre}.groups", "integer >= 1", self.groups)
        _check(self.group_size >= 0, f"{pre}.group_size", "0 (= ranks/groups) or >= 2", self.group_size)
        if self.kind == "alltoall":
            gs = self.group_size or self.ranks // self.groups
            _check(gs >= 2 and gs * self.groups <= self.ranks, f"{pre}.group_size",
                   f"groups x group_size <= ranks ({self.ranks}) and group_size >= 2", gs)
        _check(self.benchmark in IMB_BENCHMARKS, f"{pre}.benchmark", " | ".join(IMB_BENCHMARKS),
               self.benchmark)
        if self.kind == "multiphase":
            _check(len(self.phases) > 0 or self.ranks >= 8, f"{pre}.ranks",
                   ">= 8 for the default phases (ranks/4 >= 2)", self.ranks)
            _check(all(2 <= n <= self.ranks for n in self.phases), f"{pre}.phases",
                   f"ranks per phase in 2..ranks ({self.ranks}); empty = the paper's phases",
                   list(self.phases))
        if self.kind == "imb":
            _check(self.ranks >= 2, f"{pre}.ranks", "integer >= 2 for imb", self.ranks)
        _check(0 < self.injection_rate <= 1, f"{pre}.injection_rate",
               "0 < flits per node per cycle <= 1", self.injection_rate)
        _check(self.packet_flits >= 1, f"{pre}.packet_flits", "integer >= 1", self.packet_flits)
        for n in ("warmup_cycles", "drain_cycles"):
            _check(getattr(self, n) >= 0, f"{pre}.{n}", "integer >= 0", getattr(self, n))
        _check(self.measure_cycles >= 1, f"{pre}.measure_cycles", "integer >= 1", self.measure_cycles)
        _check(self.source_queue >= 1, f"{pre}.source_queue", "integer >= 1", self.source_queue)

    @property
    def synthetic(self) -> bool:
        return self.kind in ("permutation", "uniform")

    @property
    def phase_ranks(self) -> tuple[int, ...]:
        """multiphase: ranks of each phase (`phases`, or the paper's 1024, 256, 512, 1024, 512,
        256, 1024 scaled to `ranks`)."""
        r = self.ranks
        return self.phases or (r, r // 4, r // 2, r, r // 2, r // 4, r)


@dataclass(frozen=True)
class LimitsConfig:
    chunk_cycles: int = 5_000_000     # cycles per kernel call (Python checks flags between calls)
    max_cycles: int = 10**12          # hard stop
    no_progress_us: float = 10_000.0  # no packet delivered / op finished for this long: error

    def validate(self, pre: str = "limits") -> None:
        _check(self.chunk_cycles >= 1, f"{pre}.chunk_cycles", "integer >= 1", self.chunk_cycles)
        _check(self.max_cycles >= 1, f"{pre}.max_cycles", "integer >= 1", self.max_cycles)
        _check(self.no_progress_us > 0, f"{pre}.no_progress_us", "> 0 microseconds", self.no_progress_us)


# Fields added after result stores were first written, each with a default that reproduces the
# model from before it existed. At that default a sweep's identity leaves the field out (so a
# store written before it existed can still be resumed: RunConfig.identity_dict) and a store
# without its coordinate reads as holding the default (dataset.open_result).
ADDED_FIELDS = ("network.nic_packet_ns",)

SECTIONS = {"topology": TopologyConfig, "network": NetworkConfig, "host": HostConfig,
            "mpi": MpiConfig, "protocol": ProtocolConfig, "workload": WorkloadConfig,
            "limits": LimitsConfig}


@dataclass(frozen=True)
class RunConfig:
    topology: TopologyConfig = field(default_factory=TopologyConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    host: HostConfig = field(default_factory=HostConfig)
    mpi: MpiConfig = field(default_factory=MpiConfig)
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    seed: int = 0

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        for name in SECTIONS:
            getattr(self, name).validate(name)
        _check(isinstance(self.seed, int) and 0 <= self.seed < 2**63, "seed", "integer 0..2**63-1",
               self.seed)
        nodes = self.topology.n_nodes
        w = self.workload
        if not w.synthetic:
            _check(w.ranks % nodes == 0, "workload.ranks",
                   f"a multiple of the {nodes} nodes of the topology", w.ranks)
            _check(w.ranks // nodes == self.mpi.ranks_per_node, "mpi.ranks_per_node",
                   f"workload.ranks / nodes = {w.ranks // nodes}", self.mpi.ranks_per_node)
        if w.kind == "multi_pingpong":
            _check(w.pairs <= self.mpi.ranks_per_node, "workload.pairs",
                   f"<= ranks per node ({self.mpi.ranks_per_node})", w.pairs)
        _check(w.packet_flits <= self.network.buffer_flits, "workload.packet_flits",
               f"<= network.buffer_flits ({self.network.buffer_flits})", w.packet_flits)
        p = self.protocol
        if p.name in CREDIT_PROTOCOLS:
            _check(not w.synthetic, "protocol.name",
                   "none for network-only traffic (no ranks, no mailboxes)", p.name)
            n = self.n_ranks
            need = 2 * p.credit_slots * n
            _check(p.mailbox_slots >= need, "protocol.mailbox_slots",
                   f">= {need} = {2 * p.credit_slots} slots per process x {n} processes (Eq. 2: "
                   f"data region >= credit region >= 1 slot per process, credit_slots "
                   f"{p.credit_slots})", p.mailbox_slots)

    # ---- derived values ----
    @property
    def n_nodes(self) -> int:
        return self.topology.n_nodes

    @property
    def n_ranks(self) -> int:
        return 0 if self.workload.synthetic else self.workload.ranks

    def effective(self) -> "RunConfig":
        """The config with every field its protocol ignores (protocols/catalogue.py,
        `parameters`) reset to the default: configs with equal effective() simulate identically
        (the sweep runner computes such points once)."""
        p, d = self.protocol, ProtocolConfig()
        used = protocol(p.name).parameters
        unused = {f.name: getattr(d, f.name) for f in fields(ProtocolConfig)
                  if f.name != "name" and f.name not in used}
        return dataclasses.replace(self, protocol=dataclasses.replace(p, **unused))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def identity_dict(self) -> dict:
        """to_dict() without the ADDED_FIELDS that hold their defaults: what identifies the
        model a result came from, the same before and after such a field was added."""
        d = self.to_dict()
        default = RunConfig()
        for dotted in ADDED_FIELDS:
            section, name = dotted.split(".")
            if getattr(getattr(self, section), name) == getattr(getattr(default, section), name):
                del d[section][name]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def replace(self, **dotted: Any) -> "RunConfig":
        """Copy with dotted overrides, e.g. replace(**{"protocol.name": "window"})."""
        d = self.to_dict()
        for key, value in dotted.items():
            _set_dotted(d, key, value)
        return from_dict(d)


def _set_dotted(d: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    cur = d
    for i, p in enumerate(parts[:-1]):
        if p not in cur or not isinstance(cur[p], dict):
            raise ConfigError(".".join(parts[: i + 1]), f"unknown section; allowed: {', '.join(SECTIONS)}")
        cur = cur[p]
    cur[parts[-1]] = value


def _coerce(cls, name: str, f: dataclasses.Field, value: Any) -> Any:
    default = getattr(cls(), f.name) if f.default is dataclasses.MISSING else f.default
    if isinstance(default, bool):
        ok = isinstance(value, bool)
        want = "true | false"
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
        want = "an integer"
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
        want = "a number"
    elif isinstance(default, str):
        ok = isinstance(value, str)
        want = "a string"
    elif isinstance(default, tuple):
        ok = isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool)
                                                        for v in value)
        value = tuple(value) if ok else value
        want = "a list of integers"
    else:  # pragma: no cover - every field has one of the types above
        ok, want = True, ""
    if not ok:
        raise ConfigError(name, f"got {value!r}; allowed: {want}")
    return value


def _section(cls, data: Any, pre: str):
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(pre, f"must be a mapping, got {type(data).__name__}")
    known = {f.name: f for f in fields(cls)}
    kwargs = {}
    for k, v in data.items():
        if k not in known:
            raise ConfigError(f"{pre}.{k}", f"unknown key; allowed: {', '.join(known)}")
        kwargs[k] = _coerce(cls, f"{pre}.{k}", known[k], v)
    return cls(**kwargs)


def from_dict(data: Any) -> RunConfig:
    """Build and validate a RunConfig from nested plain data (as loaded from YAML)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("config", f"must be a mapping of sections, got {type(data).__name__}")
    allowed = list(SECTIONS) + ["seed"]
    kwargs = {}
    for k, v in data.items():
        if k not in allowed:
            raise ConfigError(str(k), f"unknown section; allowed: {', '.join(allowed)}")
        if k == "seed":
            if not isinstance(v, int) or isinstance(v, bool):
                raise ConfigError("seed", f"got {v!r}; allowed: an integer")
            kwargs[k] = v
        else:
            kwargs[k] = _section(SECTIONS[k], v, k)
    return RunConfig(**kwargs)


def load_yaml(path: str) -> RunConfig:
    try:
        with open(path) as fh:
            data = yaml.safe_load(fh)
    except FileNotFoundError:
        raise ConfigError("config", f"file not found: {path}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError("config", f"{path} is not valid YAML{where}") from None
    return from_dict(data)

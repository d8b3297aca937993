"""Immutable run parameters: defaults, validation and YAML loading in one place.

A RunConfig is a tree of frozen dataclasses. Every field has a default here and nowhere else;
derived values (nodes, ranks per node, packets per message, cycles per ns) are properties,
never stored beside their inputs. Every invalid value raises ConfigError naming the dotted
field and what is allowed.

Validation has two layers. Every field declares once, beside its default, its type, its bounds
and its unit (`Bounds`, in the field's metadata: the helpers _int, _num, _choice, _flag,
_ints); check_fields() checks them for every field of every section, whatever the chosen
topology, protocol or workload, before anything else: the type (an int is not a bool, a float
field takes an int), finiteness, the bounds and the allowed names. The bounds are what the
engine represents after its conversions (the *_MAX constants below say which). Then each
section's `check` and RunConfig.validate check what depends on the kind or on other fields
(a torus radix, a mailbox that holds the credit regions, ...).
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import math
from dataclasses import dataclass, field, fields
from typing import Any

from .dtypes import MAX_VCS
from .errors import ConfigError
from .formulas import VELO_HEADER_BYTES, VELO_PAYLOAD_BYTES, eager_packets, packet_flits
from .protocols.catalogue import CREDIT_PROTOCOLS, PROTOCOL_NAMES as PROTOCOLS, protocol
from .protocols.registry import declared_params, family as protocol_family
from .routing.registry import names as routing_names, registered as registered_routings, routing
from .topology.registry import kind as topology_kind, names as topology_names
from .workloads.imb import IMB_BENCHMARKS
from .workloads.nas import NAS_BENCHMARKS
from .workloads.registry import names as workload_names, registered as registered_workloads
from .workloads.registry import workload


# ---- what the engine represents (the bounds every field declares derive from these) ----------
I32_MAX = 2**31 - 1        # counts that size or index the kernels' arrays (dtypes.IDX, int32)
RANKS_MAX = 2**19          # ranks: the mailbox entry's source field (kernels/host.py: src << 44
                           # of an int64 word stays positive below 2**19)
CYCLES_MAX = 10**18        # cycle counts (dtypes.TIME, int64 up to 9.2e18: room to add a few)
CYCLE_NS_MIN = 1e-3        # network.cycle_ns: 1 ps .. 1 ms is every link ever built and more
CYCLE_NS_MAX = 1e6
NS_MAX = 10**9             # any time in ns (1 s): at the shortest cycle 1e12 cycles, so a cost
                           # x 2**18 KiB (LiMIC per KiB, the largest message) or x 2**10 (the
                           # credit cost's fixed point, dtypes.CREDIT_FRAC_BITS) stays in int64;
                           # rank start times are int32 ns (engine.Batch starts)
US_MAX = CYCLES_MAX * CYCLE_NS_MIN / 1000   # limits.no_progress_us: its cycles fit CYCLES_MAX
MAILBOX_PACKET_MAX = 65536  # mpi.velo_payload: a packet's flits stay far below int32
BYTES_MAX = 2**28 - 1      # bytes of a message or packet: the mailbox entry's rendezvous byte
                           # field (kernels/host.py MB_RNDV_BYTES); sums of a few stay int32
PORTS_MAX = 2**15 - 1     # ports per router: the kernels' route table is int16
HOP_CYCLES_MAX = 2**24     # link latency / router delay: the timing wheel spans 4 x a hop


def _check(cond: bool, name: str, allowed: str, value: Any) -> None:
    if not cond:
        raise ConfigError(name, f"got {show(value)}; allowed: {allowed}")


def show(value: Any, width: int = 60) -> str:
    """A value for an error message: its repr, shortened to one line however large it is."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    if isinstance(value, tuple):
        value = list(value)
    try:
        text = repr(value)
    except ValueError:          # e.g. a list holding an int too long for str()
        text = f"a {type(value).__name__}"
    return text if len(text) <= width else text[:width] + "..."


def fmt_limit(x: float | int) -> str:
    """1e9, 1e18, 0.001, 2147483647: limits as the messages print them."""
    if isinstance(x, int) and x >= 10**6 and str(x).rstrip("0") == "1":
        return f"1e{len(str(x)) - 1}"
    if isinstance(x, float):
        if x.is_integer() and abs(x) < 10**6:
            return str(int(x))
        return f"{x:g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")
    return str(x)


@dataclass(frozen=True)
class Bounds:
    """What one config field accepts, declared once beside its default (field metadata).

    kind: "int" (an int, not a bool), "float" (an int or float, finite), "bool", "str" (one of
    `choices`), "ints" (a list of ints, `length` = (least, most) items, each item lo..hi).
    lo, hi: inclusive bounds (lo exclusive if lo_open). noun and unit word the message:
    ``allowed: a finite cost 0..1e9 nanoseconds``; note adds why, in parentheses."""
    kind: str
    lo: Any = None
    hi: Any = None
    unit: str = ""
    noun: str = ""
    lo_open: bool = False
    choices: tuple = ()
    length: tuple[int, int] = (0, 0)
    note: str = ""

    def allowed(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        note = f" ({self.note})" if self.note else ""
        rng = f"{fmt_limit(self.lo)}..{fmt_limit(self.hi)}"
        if self.kind == "int":
            return f"an integer {rng}{unit}{note}"
        if self.kind == "float":
            noun = self.noun or "number"
            if self.lo_open:
                return (f"a finite {noun} > {fmt_limit(self.lo)} and <= {fmt_limit(self.hi)}"
                        f"{unit}{note}")
            return f"a finite {noun} {rng}{unit}{note}"
        if self.kind == "str":
            return " | ".join(self.choices)
        if self.kind == "bool":
            return "true | false"
        a, b = self.length
        items = f"{a}..{b} integers" if a else f"at most {b} integers"
        return f"a list of {items}, each {rng}{unit}{note}"

    def _in_range(self, v) -> bool:
        return (self.lo < v if self.lo_open else self.lo <= v) and v <= self.hi

    def admits(self, v: Any) -> bool:
        if self.kind == "int":
            return isinstance(v, int) and not isinstance(v, bool) and self._in_range(v)
        if self.kind == "float":
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return False
            return (not isinstance(v, float) or math.isfinite(v)) and self._in_range(v)
        if self.kind == "str":
            return isinstance(v, str) and v in self.choices
        if self.kind == "bool":
            return isinstance(v, bool)
        return (isinstance(v, (tuple, list)) and self.length[0] <= len(v) <= self.length[1]
                and all(isinstance(x, int) and not isinstance(x, bool) and self._in_range(x)
                        for x in v))

    def check(self, name: str, value: Any) -> None:
        if not self.admits(value):
            raise ConfigError(name, f"got {show(value)}; allowed: {self.allowed()}")

    def coerce(self, value: Any) -> Any:
        """Parse-time conversions of plain (YAML/JSON) data: an int into a float field becomes a
        float (when it has one), a list into a list field a tuple."""
        if self.kind == "float" and isinstance(value, int) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:       # beyond any float: left for check() to refuse
                return value
        if self.kind == "ints" and isinstance(value, list):
            return tuple(value)
        return value


# Threads that advance the members of one batch at once (engine.Batch.run).
# Not a RunConfig field: results are bit-identical for any count, so it is no part of a
# point's identity. 1024: more than any node's cores; a count above the batch's members is
# allowed (the batch then uses one thread per member).
THREADS = Bounds("int", 1, 1024, "threads")


def check_threads(value: Any, name: str = "--threads") -> int:
    """The member threads of a batch (`extoll-vec run --threads`, cluster.yaml's threads per
    worker, engine.Batch.run): ConfigError naming `name` unless an integer 1..1024."""
    THREADS.check(name, value)
    return value


def _declare(default: Any, bounds: Bounds):
    return field(default=default, metadata={"bounds": bounds})


def _int(default: int, lo: int, hi: int = I32_MAX, unit: str = "", note: str = ""):
    return _declare(default, Bounds("int", lo, hi, unit, note=note))


def _num(default: float, lo: float, hi: float, unit: str, noun: str, lo_open: bool = False,
         note: str = ""):
    return _declare(default, Bounds("float", lo, hi, unit, noun, lo_open, note=note))


def _choice(default: str, choices: tuple[str, ...]):
    return _declare(default, Bounds("str", choices=tuple(choices)))


def _flag(default: bool):
    return _declare(default, Bounds("bool"))


def _ints(default: tuple[int, ...], lo: int, hi: int, length: tuple[int, int], unit: str = "",
          note: str = ""):
    return _declare(default, Bounds("ints", lo, hi, unit, length=length, note=note))


@functools.lru_cache(maxsize=None)
def bounds(cls) -> dict[str, Bounds]:
    """The declared Bounds of every field of a section class (or RunConfig: only `seed`).
    Do not modify the dict: it is cached."""
    return {f.name: f.metadata["bounds"] for f in fields(cls) if "bounds" in f.metadata}


@functools.lru_cache(maxsize=None)
def _field_names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def check_fields(obj: Any, pre: str) -> None:
    """Check every field of a section (or RunConfig's own scalars) against its Bounds."""
    for name, b in bounds(type(obj)).items():
        b.check(f"{pre}.{name}" if pre else name, getattr(obj, name))


class _Section:
    """A config section: validate() = the declared bounds of every field, then `check` (what
    depends on the section's kind or on its other fields)."""

    def validate(self, pre: str = "") -> None:
        pre = pre or next(k for k, c in SECTIONS.items() if isinstance(self, c))
        check_fields(self, pre)
        self.check(pre)

    def check(self, pre: str) -> None:
        pass


@dataclass(frozen=True)
class TopologyConfig(_Section):
    """Router graph. mesh/torus: one node per router, radix per dimension in `dims`.
    dragonfly: p terminals per router, a routers per group, h global links per router,
    `groups` groups (0 means the maximum a*h+1); its local and global links take
    local_latency and global_latency cycles (Schneider et al.: 2 and 10), its terminal links
    network.link_latency. crossbar: p nodes on one switch. hypercube: 2**cube_dim switches
    with p nodes each. Every link of the other kinds takes network.link_latency."""
    kind: str = _choice("mesh", topology_names())
    dims: tuple[int, ...] = _ints((4, 4, 4), 1, I32_MAX, (1, 4), "routers per dimension")
    p: int = _int(1, 1, unit="nodes per router")
    a: int = _int(4, 1, unit="routers per group")
    h: int = _int(2, 1, unit="global links per router")
    groups: int = _int(0, 0, unit="groups", note="0: a*h+1")
    cube_dim: int = _int(3, 1, 12, "dimensions")
    local_latency: int = _int(2, 1, HOP_CYCLES_MAX, "cycles", "dragonfly local links")
    global_latency: int = _int(10, 1, HOP_CYCLES_MAX, "cycles", "dragonfly global links")

    def link_latencies(self, link_latency: int) -> tuple[int, int]:
        """(local, global) router-link latencies: the kind's own (dragonfly), else link_latency."""
        own = topology_kind(self.kind).link_latencies
        return own(self, link_latency) if own is not None else (link_latency, link_latency)

    def check(self, pre: str = "topology") -> None:
        k = topology_kind(self.kind)
        k.check(self, pre, _check)
        # output ports are int16 in the kernels' route table (engine/params.topo_arrays: a
        # smaller table stays in cache on large networks)
        ports = k.ports(self)
        if ports > PORTS_MAX:
            field_ = k.size_field or ("p" if self.p > self.a else "a")
            _check(False, f"{pre}.{field_}", f"at most {PORTS_MAX} ports per router; this "
                   f"{self.kind} makes {ports}", getattr(self, field_))
        # node and router numbers are int32 in every table (topology.base, state.FIELDS)
        n = max(self.n_nodes, self.n_routers)
        if n > I32_MAX:
            allowed = f"at most {I32_MAX} nodes and routers (int32 indices)"
            if k.size_field:
                value = getattr(self, k.size_field)
                _check(False, f"{pre}.{k.size_field}", f"{allowed}; this {self.kind} has {n}",
                       list(value) if isinstance(value, tuple) else value)
            raise ConfigError(pre, f"{k.describe(self)}: {n} nodes; allowed: {allowed}")

    @property
    def n_groups(self) -> int:
        return self.groups or self.a * self.h + 1

    @property
    def n_routers(self) -> int:
        return topology_kind(self.kind).routers(self)

    @property
    def n_nodes(self) -> int:
        return topology_kind(self.kind).nodes(self)


@dataclass(frozen=True)
class NetworkConfig(_Section):
    """Links, routers and NICs. One cycle is one flit time on a link. cycle_ns (and with it the
    link rate and the hop latency) is fitted to the EXTOLL paper's reference times
    (analysis/extoll/calibration.py: 542 MB/s links, 354 ns per hop)."""
    # length of one cycle (one flit on a link): fitted
    cycle_ns: float = _num(29.54, CYCLE_NS_MIN, CYCLE_NS_MAX, "nanoseconds", "cycle length")
    flit_bytes: int = _int(16, 1, BYTES_MAX, "bytes")          # link width x cycle
    packet_header_bytes: int = _int(8, 0, BYTES_MAX, "bytes")  # network header on every packet
    link_latency: int = _int(4, 1, HOP_CYCLES_MAX, "cycles")   # cycles a flit needs on a link
    # router pipeline cycles before a head can be switched
    router_delay: int = _int(8, 0, HOP_CYCLES_MAX, "cycles")
    vcs: int = _int(2, 1, MAX_VCS, "virtual channels per port")
    # input buffer per port and VC. Unpublished for EXTOLL: 20 flits is the size, of those
    # refitted, at which the reference alltoall-256 is the fastest single run (docs/calibration.md,
    # "The router buffers")
    buffer_flits: int = _int(20, 1, unit="flits")
    # the NIC's requester FIFO (PIO writes of packets): 256 packets, 16 KB of on-chip RAM
    # (docs/calibration.md, "The requester model")
    nic_fifo_packets: int = _int(256, 1, unit="packets")
    # NIC ejection buffer (holds packets a full mailbox refuses)
    nic_ejection_flits: int = _int(40, 1, unit="flits")
    # NIC packet rate: least time between two injected packets (0: link rate only; rounded up
    # to whole cycles)
    nic_packet_ns: float = _num(0.0, 0.0, NS_MAX, "nanoseconds", "time",
                                note="0: link rate only")
    rma_packet_bytes: int = _int(256, 1, BYTES_MAX, "bytes")   # payload of one RMA data packet
    # the DMA of received packets from the NIC's memory into host memory over an I/O bus
    # (Bhoedjang et al.: 33 MHz, 32-bit PCI, 132 MB/s): one transfer at a time per node, each taking
    # dma_setup_ns plus the packet's bytes at pci_mb_s, into a posted host buffer (a mailbox
    # slot; none free: the NIC waits). 0 and 0: packets are written into the mailbox at once
    pci_mb_s: float = _num(0.0, 0.0, 1e6, "MB/s", "rate", note="0: no DMA stage")
    dma_setup_ns: float = _num(0.0, 0.0, NS_MAX, "nanoseconds", "time")
    # router model (Schneider et al.'s Booksim setup; docs/model.md): "voq" virtual output
    # queues, "iq" input-queued (one FIFO per input VC: head-of-line blocking)
    router: str = _choice("voq", ("voq", "iq"))
    # crossbar speedup: a packet of L flits occupies its crossbar input ceil(L / speedup) cycles
    # (the output link still sends one flit per cycle); 2.4 in Schneider et al.
    speedup: float = _num(1.0, 1.0, 16.0, "times the link rate", "speedup")
    # iq router: flits that may wait at an output behind the packet on its link, switched
    # ahead at the crossbar's speed with the downstream credits taken (Booksim's output
    # buffer; 0: an output takes a packet only when its link is free)
    output_queue_flits: int = _int(0, 0, 2**24, "flits", "iq router only; 0: none")
    # routing function (routing/registry.py): table = the topology's tables (dimension order,
    # dragonfly minimal, e-cube); valiant, ugal (UGAL-L), par (progressive adaptive): dragonfly
    routing: str = _choice("table", routing_names())
    # UGAL/PAR: route minimally iff q_min <= adaptive_bias * q_nonmin + adaptive_threshold
    # (Schneider et al.: bias 2x, threshold 30 flits)
    adaptive_bias: float = _num(2.0, 0.0, 1e6, "", "factor")
    adaptive_threshold: int = _int(30, 0, 2**24, "flits")
    # layered: the routing's deadlock-free VCs; flat: every hop on VC 0 (cyclic, for tests)
    vc_assignment: str = _choice("layered", ("layered", "flat"))
    # refuse a routing whose channel dependency graph has a cycle (routing/deadlock.py)
    deadlock_check: bool = _flag(True)
    # slow receivers (Schneider et al., NVM behind the NIC): nodes whose memory sinks data at
    # 1/slow_factor of the link rate, chosen by the seed; a count or a share of the nodes
    # (RunConfig.slow_node_count), back-pressure through the NIC's ejection buffer
    slow_nodes: int = _int(0, 0, unit="nodes")
    slow_share: float = _num(0.0, 0.0, 1.0, "share of the nodes", "share")
    slow_factor: float = _num(1.0, 1.0, 1024.0, "times the link's time per flit", "factor")

    @property
    def routing_vcs(self) -> int | None:
        """VCs the routing needs (None: the topology's tables say, topology.vcs_needed)."""
        if self.vc_assignment == "flat":
            return 1
        return routing(self.routing).vcs

    def check(self, pre: str = "network") -> None:
        mx = self.max_packet_flits
        _check(self.buffer_flits >= mx, f"{pre}.buffer_flits",
               f">= {mx} (the largest packet, virtual cut-through)", self.buffer_flits)
        _check(self.nic_ejection_flits >= mx, f"{pre}.nic_ejection_flits",
               f">= {mx} (the largest packet)", self.nic_ejection_flits)
        _check(self.output_queue_flits == 0 or self.router == "iq",
               f"{pre}.output_queue_flits", "0 unless network.router is iq (the VOQ router "
               "has no output buffer)", self.output_queue_flits)
        slow = self.slow_nodes > 0 or self.slow_share > 0
        _check(not slow or not self.dma_stage, f"{pre}.pci_mb_s",
               "0 with slow receivers (network.slow_nodes, slow_share): both model the write "
               "into the receiver's memory", self.pci_mb_s)

    @property
    def dma_stage(self) -> bool:
        """Received packets cross the I/O bus before they land (pci_mb_s or dma_setup_ns)."""
        return self.pci_mb_s > 0 or self.dma_setup_ns > 0

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


def _cost(default: float):
    return _num(default, 0.0, NS_MAX, "nanoseconds", "cost")


@dataclass(frozen=True)
class HostConfig(_Section):
    """CPU costs in nanoseconds (converted once to cycles by the engine). Fitted together with
    network.cycle_ns to the EXTOLL paper's reference times, keeping their ratios
    (analysis/extoll/calibration.py): 8, 10, 19, 125 and 31 cycles of 29.54 ns; credit_ns is not
    fitted to them (the reference runs have no flow control) but chosen on Figure 27's static
    threshold (docs/calibration.md, "The credit operation's cost")."""
    pio_ns: float = _cost(236.32)        # write one VELO packet to the NIC (PIO)
    retrieve_ns: float = _cost(295.4)    # poll, copy and release one mailbox slot
    match_ns: float = _cost(561.26)      # MPI matching / bookkeeping per message
    # one flow-control credit operation (a counter update and compare on a 2.1 GHz Opteron, the
    # paper gives no cost): 15 ns puts static flow control's IMB average under 3 % first at 64
    # slots per process, as Figure 27 does, and keeps the reference the fastest alltoall-256
    # (docs/calibration.md, "The credit operation's cost"). Unlike the other costs it is not
    # rounded up to whole cycles (dtypes.CREDIT_FRAC_BITS)
    credit_ns: float = _cost(15.0)
    limic_ns: float = _cost(3692.5)      # LiMIC fixed cost per intra-node message
    limic_ns_per_kb: float = _cost(915.74)
    # per-byte CPU costs (Bhoedjang et al.'s hosts): writing a packet's payload to the NIC by PIO,
    # and copying a received packet's payload out of its host buffer (both 0 for EXTOLL, whose
    # fitted pio_ns and retrieve_ns cover a whole 64-byte slot)
    pio_ns_per_kb: float = _cost(0.0)
    copy_ns_per_kb: float = _cost(0.0)
    # mailbox packets the MPI progress engine takes per MPI call
    progress_packets: int = _int(64, 0, unit="packets")
    # the order of the posted writes a node's CPUs send to its NIC. "rank": only PIO writes of
    # packets wait for room in the requester FIFO (network.nic_fifo_packets); a rank releases a
    # mailbox slot whatever the FIFO holds. "node": they are one in-order stream per node (posted
    # writes over HyperTransport), so the release of a retrieved slot (a write of the mailbox's
    # read pointer) also waits while the node's FIFO is full, as a PIO write does
    # (docs/calibration.md, "The requester model")
    posted_writes: str = _choice("node", ("rank", "node"))


@dataclass(frozen=True)
class MpiConfig(_Section):
    """EXTOLL MPI over VELO (paper section 3)."""
    ranks_per_node: int = _int(16, 1, RANKS_MAX, "ranks")
    # bytes; larger messages use rendezvous over RMA (the mailbox entry's 24-bit byte field)
    eager_threshold: int = _int(2048, 0, 2**24 - 1, "bytes")
    # MPI header prepended to the first VELO packet
    header_bytes: int = _int(16, 0, MAILBOX_PACKET_MAX - 1, "bytes")
    # bytes of payload per mailbox packet: 56 for a VELO 64-byte slot; under the IB schemes
    # (protocols/infiniband/__init__.py) one pre-posted receive buffer, 2048 in Liu and Panda (section 5)
    velo_payload: int = _int(VELO_PAYLOAD_BYTES, 1, MAILBOX_PACKET_MAX, "bytes")
    limic: bool = _flag(True)    # same-node ranks use shared memory (LiMIC)
    # rendezvous (messages above eager_threshold): "get", one RMA GET of the whole message
    # once the request matched (EXTOLL MPI, section 3); "chunked", Schneider et al.'s
    # receiver-driven rendezvous (section 3.2): the first chunk goes with the request into a bounce
    # buffer, the receiver then gets the rest in chunk_bytes pieces, at most outstanding_gets at
    # once (triggered gets: the NIC sends the next when a chunk has arrived); "write", Liu and
    # Panda's MPI over InfiniBand (section 3.1): the receiver's CPU replies into the sender's
    # mailbox, whose CPU then posts one RDMA write of the whole message
    rendezvous: str = _choice("get", ("get", "chunked", "write"))
    chunk_bytes: int = _int(4096, 1, 2**24, "bytes", "rendezvous chunked only")
    outstanding_gets: int = _int(30, 1, 4096, "gets",
                                 "Schneider et al.'s c; rendezvous chunked only")

    def check(self, pre: str = "mpi") -> None:
        _check(self.header_bytes < self.velo_payload, f"{pre}.header_bytes",
               f"0..{self.velo_payload - 1}", self.header_bytes)
        for name in ("chunk_bytes", "outstanding_gets"):
            default = MpiConfig.__dataclass_fields__[name].default
            _check(self.rendezvous == "chunked" or getattr(self, name) == default,
                   f"{pre}.{name}", f"{default} (the default) unless {pre}.rendezvous is "
                   "chunked", getattr(self, name))

    def packets(self, nbytes: int) -> int:
        """VELO packets of an eager message: header + payload in velo_payload-byte pieces."""
        return eager_packets(nbytes, self.header_bytes, self.velo_payload)


class _ProtocolSection(_Section):
    """End-to-end flow control: `name` and the fields every registered protocol declares
    (protocols/registry.py; each with its Bounds). none: the reference (a mailbox never full).
    backpressure: finite mailbox, hardware back-pressure only. window: a fixed credit window
    per peer. static / dynamic: EXTOLL credit-based flow control (paper sections 5 and 6): the
    mailbox of `mailbox_slots` is shared out among all processes of the job, `credit_slots` of
    each process' share form the credit region (see extoll_vec.protocols.extoll.static.layout).
    Other protocols: their record modules (registry.REGISTERED)."""

    def check(self, pre: str = "protocol") -> None:
        rec = protocol(self.name)
        if rec.mailbox == "finite":
            _check(self.mailbox_slots >= 1, f"{pre}.mailbox_slots", "integer >= 1",
                   self.mailbox_slots)
        if rec.check is not None:
            rec.check(self, pre, _check)
        # a field only some protocols may set (Param.exclusive) keeps its default elsewhere, and
        # so does a field of another family's protocols (within a family a field the protocol
        # does not read is ignored: RunConfig.effective; sweeps cross a family's protocols)
        mine = protocol_family(self.name)
        for d, users in declared_params():
            value = getattr(self, d.name)
            if self.name in users or value == d.default:
                continue
            default = str(d.default).lower() if isinstance(d.default, bool) else show(d.default)
            if d.exclusive:
                _check(False, f"{pre}.{d.name}", f"{default} for protocol {self.name} "
                       f"({d.exclusive} {' and '.join(users)})", value)
            if users and all(protocol_family(u) != mine for u in users):
                _check(False, f"{pre}.{d.name}", f"{default} (the default) for protocol "
                       f"{self.name}: {d.name} belongs to protocol {' and '.join(users)}", value)


def _protocol_field(d):
    if d.kind == "int":
        hi = I32_MAX if d.hi is None else d.hi
        return int, _int(d.default, d.lo, hi, d.unit, d.note)
    if d.kind == "bool":
        return bool, _flag(d.default)
    if d.kind == "str":
        return str, _choice(d.default, d.choices)
    if d.kind == "ints":
        return tuple, _ints(tuple(d.default), d.lo, d.hi, (0, d.length), d.unit, d.note)
    return float, _num(d.default, d.lo, d.hi, d.unit, "number", note=d.note)


# built from the registry, so that a protocol adds its fields without editing this file
ProtocolConfig = dataclasses.make_dataclass(
    "ProtocolConfig",
    [("name", str, _choice("none", PROTOCOLS))]
    + [(d.name, *_protocol_field(d)) for d, _users in declared_params()],
    bases=(_ProtocolSection,), frozen=True)
ProtocolConfig.__module__ = __name__
ProtocolConfig.__doc__ = _ProtocolSection.__doc__


@dataclass(frozen=True)
class WorkloadConfig(_Section):
    """What the ranks do. multi_pingpong: `pairs` rank pairs between two nodes `hops` router
    links apart. alltoall: `groups` disjoint groups of `group_size` ranks (0 = ranks/groups)
    each run a non-optimized alltoall; the other ranks wait in a barrier (groups 1, group_size g
    with 16 ranks per node is the paper's LiMIC test, 7.2: 16/g of the destinations on the
    node). multiphase (7.3): `iterations` alltoalls over ranks [0, n) per n in `phases` (empty:
    ranks x (1, 1/4, 1/2, 1, 1/2, 1/4, 1)), a barrier of all ranks after each. mcast_latency,
    mcast_blast, mcast_alltoall (Bhoedjang et al.): multicasts to the group of ranks 0..group_size-1
    (0: every rank), workloads/multicast.py. imb (7.4): the
    Intel MPI Benchmark `benchmark` over all ranks, `message_bytes` x `iterations`.
    `warmup` iterations run first, untimed and followed by a barrier of all ranks (IMB's warm-up;
    the paper averages many repetitions, which hides that the dynamic protocol starts every
    sender at its static slots). `start_skew_ns` > 0 delays each rank's start by a whole number
    of ns drawn uniformly from 0..start_skew_ns by `seed` (ranks leave MPI_Init at different
    times) and, where a warm-up's barrier precedes the timed part (mark 0), delays the rank's
    leaving that barrier by a second such draw (the barrier would erase the first): runs that
    differ only in the seed are then independent replicates of one measurement, as the paper's averages over 150 repetitions are (0: all start at cycle 0).
    permutation/uniform/shift/pairwise: network-only Bernoulli traffic at `injection_rate`
    flits per node per cycle; shift sends node n to n + `shift` (mod nodes; 0: one dragonfly
    group, p*a nodes, else half the nodes), the adversarial group-to-group pattern of the
    dragonfly; pairwise pairs the nodes at random by `seed`, A sends all its traffic to B and B
    to A (Schneider et al., section 4.1)."""
    kind: str = _choice("alltoall", workload_names())
    ranks: int = _int(1024, 1, RANKS_MAX, "ranks")
    message_bytes: int = _int(2048, 0, BYTES_MAX, "bytes")
    iterations: int = _int(1, 1, unit="iterations")      # an int32 loop count (OP_LOOP)
    pairs: int = _int(16, 1, unit="pairs")
    hops: int = _int(1, 1, unit="hops")
    groups: int = _int(1, 1, unit="groups")
    group_size: int = _int(0, 0, unit="ranks", note="0: ranks/groups")
    injection_rate: float = _num(0.1, 0.0, 1.0, "flits per node per cycle", "rate",
                                 lo_open=True)
    packet_flits: int = _int(4, 1, unit="flits")
    warmup_cycles: int = _int(2000, 0, CYCLES_MAX, "cycles")
    measure_cycles: int = _int(10000, 1, CYCLES_MAX, "cycles")
    # run until convergence (Schneider et al., section 4.1): windows of sample_cycles from the end
    # of the warm-up until two successive ones accept throughputs within converge_tolerance of
    # each other (relative), at most measure_cycles; the results cover the last window
    sample_cycles: int = _int(0, 0, CYCLES_MAX, "cycles", note="0: one window of measure_cycles")
    converge_tolerance: float = _num(0.05, 0.0, 1.0, "relative change", "tolerance")
    drain_cycles: int = _int(50000, 0, CYCLES_MAX, "cycles")
    source_queue: int = _int(256, 1, unit="packets")
    benchmark: str = _choice("PingPong", IMB_BENCHMARKS)
    phases: tuple[int, ...] = _ints((), 2, RANKS_MAX, (0, 4096), "ranks per phase",
                                    note="empty: the paper's phases")
    # untimed iterations first (multi_pingpong, alltoall, imb)
    warmup: int = _int(0, 0, unit="iterations")
    # each rank starts up to this late, drawn from `seed`
    start_skew_ns: int = _int(0, 0, NS_MAX, "nanoseconds")
    # shift: destination = node + shift (mod nodes)
    shift: int = _int(0, 0, unit="nodes", note="0: a dragonfly group, else nodes/2")
    # bandwidth (Liu and Panda, sec. 6.2.2): messages sent back to back before the reply
    window: int = _int(1, 1, unit="messages")
    # bandwidth: MPI_Send / MPI_Recv per message (false: MPI_Isend / MPI_Irecv, MPI_Waitall)
    blocking: bool = _flag(True)
    # nas (Liu and Panda, sec. 6.3): the NAS Parallel Benchmark whose class A skeleton the ranks
    # run, its time steps (0: class A's), and a factor on its compute phases
    nas: str = _choice("IS", NAS_BENCHMARKS)
    nas_iterations: int = _int(0, 0, unit="iterations", note="0: class A's")
    compute_scale: float = _num(1.0, 0.0, 1e3, "factor", "scale")

    def check(self, pre: str = "workload") -> None:
        workload(self.kind).check(self, pre, _check)
        # a field only one kind reads keeps its default under every other kind
        for name_, rec in registered_workloads().items():
            if name_ == self.kind:
                continue
            for f in rec.owns:
                default = WorkloadConfig.__dataclass_fields__[f].default
                text = str(default).lower() if isinstance(default, bool) else show(default)
                _check(getattr(self, f) == default, f"{pre}.{f}",
                       f"{text} (the default) unless {pre}.kind is {name_}", getattr(self, f))
        if self.sample_cycles:
            _check(self.measure_cycles % self.sample_cycles == 0
                   and self.measure_cycles >= 2 * self.sample_cycles, f"{pre}.sample_cycles",
                   f"0 or a divisor of measure_cycles ({self.measure_cycles}) at most half of "
                   "it (two windows to compare)", self.sample_cycles)

    @property
    def synthetic(self) -> bool:
        """Network-only traffic (workloads/registry.py): no ranks, no rank programs."""
        return workload(self.kind).synthetic

    @property
    def phase_ranks(self) -> tuple[int, ...]:
        """multiphase: ranks of each phase (`phases`, or the paper's 1024, 256, 512, 1024, 512,
        256, 1024 scaled to `ranks`)."""
        r = self.ranks
        return self.phases or (r, r // 4, r // 2, r, r // 2, r // 4, r)


@dataclass(frozen=True)
class LimitsConfig(_Section):
    chunk_cycles: int = _int(5_000_000, 1, CYCLES_MAX, "cycles")  # cycles per kernel call
                                                     # (Python checks flags between calls)
    max_cycles: int = _int(10**12, 1, CYCLES_MAX, "cycles")     # hard stop
    # no packet delivered / op finished for this long: error
    no_progress_us: float = _num(10_000.0, 0.0, US_MAX, "microseconds", "time", lo_open=True)
    # with network.deadlock_check false: a router input buffer whose queues have not changed
    # for this long, and whose queue heads wait only on other such buffers, stops the run: part
    # of the network has stopped for good while the rest moves (engine/stall.py); 0: no check
    stall_check_cycles: int = _int(2000, 0, CYCLES_MAX, "cycles")


# Fields added after result stores were first written, each with a default that reproduces the
# model from before it existed. At that default a sweep's identity leaves the field out (so a
# store written before it existed can still be resumed: RunConfig.identity_dict) and a store
# without its coordinate reads as holding the default (dataset.open_result).
ADDED_FIELDS = ("network.nic_packet_ns", "network.router", "network.speedup", "network.routing",
                "network.adaptive_bias", "network.adaptive_threshold",
                "network.output_queue_flits", "mpi.rendezvous", "mpi.chunk_bytes",
                "mpi.outstanding_gets", "network.vc_assignment",
                "network.deadlock_check", "topology.local_latency", "topology.global_latency",
                "workload.shift", "network.slow_nodes", "network.slow_share",
                "network.slow_factor", "workload.sample_cycles",
                "workload.converge_tolerance", "workload.window", "workload.blocking",
                "workload.nas", "workload.nas_iterations", "workload.compute_scale",
                "network.pci_mb_s", "network.dma_setup_ns", "host.pio_ns_per_kb",
                "host.copy_ns_per_kb", "limits.stall_check_cycles") + tuple(
    f"protocol.{d.name}" for d, _users in declared_params() if d.added)

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
    # numpy's PCG64 and the kernels' P_SEED (int64) take it
    seed: int = _int(0, 0, 2**63 - 1)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        # the declared bounds of every field first, so that a value out of its bounds is named
        # before any check that combines fields sees it
        for name, cls in SECTIONS.items():
            sec = getattr(self, name)
            if not isinstance(sec, cls):
                raise ConfigError(name, f"got {show(sec)}; allowed: a {cls.__name__}")
            check_fields(sec, name)
        check_fields(self, "")
        for name in SECTIONS:
            getattr(self, name).check(name)
        nodes = self.topology.n_nodes
        w = self.workload
        if not w.synthetic:
            _check(w.ranks % nodes == 0, "workload.ranks",
                   f"a multiple of the {nodes} nodes of the topology", w.ranks)
            _check(w.ranks // nodes == self.mpi.ranks_per_node, "mpi.ranks_per_node",
                   f"workload.ranks / nodes = {w.ranks // nodes}", self.mpi.ranks_per_node)
        workload(w.kind).check_run(self, _check)
        _check(w.packet_flits <= self.network.buffer_flits, "workload.packet_flits",
               f"<= network.buffer_flits ({self.network.buffer_flits})", w.packet_flits)
        if self.mpi.rendezvous == "write":
            _check(protocol(self.protocol.name).mailbox == "unlimited", "mpi.rendezvous",
                   "get or chunked unless the protocol's mailbox is unlimited (none, the IB "
                   "schemes): the reply takes a mailbox packet no EXTOLL credit covers",
                   self.mpi.rendezvous)
        if not w.synthetic:
            # a mailbox packet larger than a VELO slot (the IB schemes' 2 KB buffers) must fit
            # the buffers too (virtual cut-through; NetworkConfig checks the VELO size)
            mx = self.network.flits(self.mpi.velo_payload)
            for name in ("buffer_flits", "nic_ejection_flits"):
                _check(getattr(self.network, name) >= mx, f"network.{name}",
                       f">= {mx} (a packet of mpi.velo_payload {self.mpi.velo_payload} bytes, "
                       "virtual cut-through)", getattr(self.network, name))
        self._check_routing()
        n = self.network
        _check(not (n.slow_nodes and n.slow_share), "network.slow_nodes",
               "0 when network.slow_share is set (a count or a share of the nodes, not both)",
               n.slow_nodes)
        _check(n.slow_nodes <= nodes, "network.slow_nodes", f"<= the {nodes} nodes",
               n.slow_nodes)
        check_run = protocol(self.protocol.name).check_run
        if check_run is not None:
            check_run(self, _check)

    def _check_routing(self) -> None:
        n, t = self.network, self.topology
        rt = routing(n.routing)
        if rt.topologies:
            able = [name for name, r in registered_routings().items()
                    if not r.topologies or t.kind in r.topologies]
            _check(t.kind in rt.topologies, "network.routing",
                   f"a routing of a {t.kind}: {', '.join(able)} ({n.routing} routes "
                   f"{', '.join(rt.topologies)})", n.routing)
        if not rt.in_order:
            _check(self.workload.synthetic, "network.routing",
                   "table for MPI workloads (adaptive routes reorder the packets of a pair; "
                   "the MPI model needs them in order)", n.routing)
        problem = rt.problem(self)
        _check(problem is None, "network.routing", problem, n.routing)
        need = n.routing_vcs
        if need is not None:
            _check(n.vcs >= need, "network.vcs",
                   f">= {need} (the deadlock-free VC assignment of routing {n.routing} "
                   "needs them)", n.vcs)

    @property
    def shift_nodes(self) -> int:
        """workload.shift, or its default: one dragonfly group (p*a nodes), else nodes/2."""
        t = self.topology
        if self.workload.shift:
            return self.workload.shift
        group = topology_kind(t.kind).group_nodes
        return group(t) if group is not None else t.n_nodes // 2

    @property
    def slow_node_count(self) -> int:
        """Slow receivers: network.slow_nodes, or network.slow_share of the nodes rounded to
        the nearest count (0.02 % of 5,256 nodes: 1, Schneider et al.'s 'one or two slow nodes')."""
        n = self.network
        return n.slow_nodes or int(math.floor(n.slow_share * self.topology.n_nodes + 0.5))

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
        """Nested plain data, as dataclasses.asdict gives it (every field is a scalar or a
        tuple of ints, so nothing needs its deep copy; a sweep builds thousands)."""
        d = {name: {f: getattr(sec, f) for f in _field_names(type(sec))}
             for name, sec in ((name, getattr(self, name)) for name in SECTIONS)}
        d["seed"] = self.seed
        return d

    def identity_dict(self) -> dict:
        """to_dict() without the ADDED_FIELDS that hold their defaults: what identifies the
        model a result came from, the same before and after such a field was added."""
        d = self.to_dict()
        default = _defaults()
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


@functools.lru_cache(maxsize=1)
def _defaults() -> RunConfig:
    return RunConfig()


def _set_dotted(d: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    cur = d
    for i, p in enumerate(parts[:-1]):
        if p not in cur or not isinstance(cur[p], dict):
            raise ConfigError(".".join(parts[: i + 1]), f"unknown section; allowed: {', '.join(SECTIONS)}")
        cur = cur[p]
    cur[parts[-1]] = value


def allowed_keys(names, got: str) -> str:
    """What an unknown key may be: every name, or, for a long list (the protocol section holds
    every registered protocol's fields), the closest few to the one given and how many exist,
    so that the one-line error stays one readable line."""
    names = list(names)
    if len(names) <= 24:
        return ", ".join(names)
    near = difflib.get_close_matches(got, names, n=6, cutoff=0.5) or names[:6]
    return f"{', '.join(near)} (the closest of {len(names)} keys)"


def _section(cls, data: Any, pre: str):
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(pre, f"must be a mapping, got {type(data).__name__}")
    known = bounds(cls)
    kwargs = {}
    for k, v in data.items():
        if k not in known:
            raise ConfigError(f"{pre}.{k}", f"unknown key; allowed: {allowed_keys(known, k)}")
        kwargs[k] = known[k].coerce(v)
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
        kwargs[k] = v if k == "seed" else _section(SECTIONS[k], v, k)
    return RunConfig(**kwargs)


NOTHING_TO_RUN = "nothing to run: give --example or a config with at least one section"


def load_yaml(path: str) -> RunConfig:
    """A run configuration file (inputs.read_yaml_document: every way a file can be unusable
    is one SpecError naming it). A document without a section (empty, blank, comments only,
    null, {} or just a seed) is refused (NOTHING_TO_RUN) rather than run as the defaults; an
    invalid field names the file, line and column."""
    from .errors import SpecError
    from .inputs import read_yaml_document, shown_path
    data, positions = read_yaml_document(path, "config")
    where = shown_path(str(path))
    if data is None or (isinstance(data, dict) and all(k == "seed" for k in data)):
        raise SpecError(where, "config", NOTHING_TO_RUN)
    try:
        return from_dict(data)
    except ConfigError as exc:
        key = tuple(exc.field.split("."))
        line, col = positions.get(key) or positions.get(key[:1]) or (None, None)
        raise SpecError(where, exc.field, exc.message, line, col) from None

"""The workload registry: one `Workload` record per `workload.kind`, holding everything the code
outside its generator needs to know of it, as protocols/registry.py does for protocols: its
rank programs (or, for network-only traffic, each node's destination), the workload fields it
owns and their checks, what is known of its programs before they are built (engine/sizing.py
sizes sweeps from it), and its one-line description.

A kind is a record in a module listed in REGISTERED (exposing WORKLOADS), next to its
generator. This module and the record modules import no config (config.py imports them): the
checks get config's checker as an argument.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..plugins import Registry

# The record modules, in order. Adding a workload adds one line here.
REGISTERED = (
    "extoll_vec.workloads.patterns",     # multi_pingpong, alltoall; permutation, uniform, shift,
                                         # pairwise (network-only)
    "extoll_vec.workloads.multiphase",   # multiphase
    "extoll_vec.workloads.imb",          # imb
    "extoll_vec.workloads.program",      # program (written by hand, passed to the engine)
    "extoll_vec.workloads.ib_micro",     # latency, bandwidth
    "extoll_vec.workloads.nas",          # nas
    "extoll_vec.workloads.multicast",    # mcast_latency, mcast_blast, mcast_alltoall
    "extoll_vec.workloads.bit_reverse",  # bit_reverse (network-only)
)


def _none(*args) -> None:
    return None


def _zero(cfg) -> int:
    return 0


@dataclass(frozen=True)
class Workload:
    name: str                           # workload.kind in a configuration
    program: Callable | None = None     # program(cfg) -> Program: its rank programs
    destinations: Callable | None = None  # network-only traffic (no ranks): destinations(
                                        # n_nodes, cfg) -> int32 [nodes], -1: a random node
                                        # per packet
    random_per_packet: bool = False     # its destinations are drawn per packet (kernels/nic.py)
    hand_written: bool = False          # programs written in Python and passed to the engine
    owns: tuple[str, ...] = ()          # workload fields only it reads (elsewhere: defaults)
    check: Callable = _none             # check(w, pre, check): its fields beyond their bounds
    check_run: Callable = _none         # check_run(cfg, check): what depends on other sections
    describe: Callable | None = None    # describe(cfg) -> the work part of a config line
    detail: Callable | None = None      # detail(cfg) -> what the generic line adds (", 4 pairs")
    snapshots: Callable = _zero         # credit snapshots (OP_SNAPSHOT) of its busiest rank
    rows: Callable | None = None        # rows(cfg) -> rows of its programs at least (None: ranks)
    figures: Callable | None = None     # figures(cfg) -> (messages into the busiest rank, pair
                                        # table entries, peers of the busiest rank), at least,
                                        # before the programs are built (None: 0, 2, 1)
    multicast: bool = False             # its programs multicast (protocols must accept it)

    @property
    def synthetic(self) -> bool:
        """Network-only traffic: no ranks, no rank programs."""
        return self.destinations is not None


_WORKLOADS = Registry("workload kind", REGISTERED, "WORKLOADS")
registered, names, workload = _WORKLOADS.records, _WORKLOADS.names, _WORKLOADS.get


def synthetic_names() -> tuple[str, ...]:
    return tuple(n for n, w in registered().items() if w.synthetic)


def describe(cfg) -> str:
    """The work part of a config line: the kind's own, or the generic one."""
    w, rec = cfg.workload, workload(cfg.workload.kind)
    if rec.describe is not None:
        return rec.describe(cfg)
    if rec.synthetic:
        return f"{w.kind} {w.injection_rate:g} flits/node/cycle, {w.packet_flits}-flit packets"
    line = f"{w.kind} {w.ranks} ranks ({cfg.mpi.ranks_per_node}/node), {w.message_bytes} B"
    if rec.detail is not None:
        line += rec.detail(cfg)
    if w.iterations > 1:
        line += f" x{w.iterations}"
    return line


def ranks_at_least(n: int):
    """A check: ranks >= n for this kind."""
    def check(w, pre, check):
        check(w.ranks >= n, f"{pre}.ranks", f"integer >= {n} for {w.kind}", w.ranks)
    return check

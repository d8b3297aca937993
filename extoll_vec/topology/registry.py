"""The topology registry: one `TopologyKind` record per router graph (`topology.kind`), holding
everything the code outside its builder needs to know of it, as protocols/registry.py does for
protocols: the config fields it reads and their checks, its sizes by arithmetic (sweeps are
sized before anything is built), its one-line description, the dragonfly-style geometry the
kernels' adaptive routings read, and its link classes' latencies.

A kind is a record in a module listed in REGISTERED (exposing KINDS) next to its builder.
This module and the record modules are Numba-free and import no config (config.py imports
them): a record's check gets config's checker as an argument.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..plugins import Registry

# The record modules, in order. Adding a topology adds one line here.
REGISTERED = (
    "extoll_vec.topology.mesh",        # mesh, torus
    "extoll_vec.topology.dragonfly",   # dragonfly
    "extoll_vec.topology.switch",      # crossbar, hypercube
    "extoll_vec.topology.ring",        # ring
)


def _no_check(t, pre, check) -> None:
    return None


def _no_geo(t) -> tuple[int, int, int, int]:
    return (0, 0, 0, 0)


@dataclass(frozen=True)
class TopologyKind:
    name: str                       # topology.kind in a configuration
    fields: tuple[str, ...]         # the topology: fields it reads besides kind
    build: Callable                 # build(TopologyConfig) -> base.Topology
    routers: Callable               # routers(t) -> routers, by arithmetic
    nodes: Callable                 # nodes(t) -> nodes
    ports: Callable                 # ports(t) -> ports per router
    describe: Callable              # describe(t) -> one line ("mesh 4x4x4")
    check: Callable = _no_check     # check(t, pre, check): its fields beyond their bounds;
                                    # check(cond, field, allowed, value) is config's checker
    size_field: str = ""            # the field named when it has too many nodes, routers or
                                    # ports ("": the section)
    geo: Callable = _no_geo         # geo(t) -> (p, a, h, groups): T.geo of the kernels
                                    # (dragonfly routings; zeros elsewhere)
    group_nodes: Callable | None = None   # nodes of a group (workload shift's default);
                                    # None: half the nodes
    link_latencies: Callable | None = None  # (t, link_latency) -> (local, global) router-link
                                    # latencies; None: link_latency for both


_KINDS = Registry("topology kind", REGISTERED, "KINDS")
registered, names, kind = _KINDS.records, _KINDS.names, _KINDS.get

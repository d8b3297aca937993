"""Router graphs and their deterministic deadlock-free routing tables.

build(cfg) turns a TopologyConfig into a Topology (see base.py for the fields). Kinds are
registered (registry.py): mesh/torus (mesh.py), dragonfly (dragonfly.py), crossbar and
hypercube (switch.py), ring (ring.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .base import (Topology, diameter, node_pair_at_hops, route_hops_table, route_path,
                   router_hops)
from .registry import kind

if TYPE_CHECKING:   # config.py imports the registry: no import of config at run time here
    from ..config import TopologyConfig

__all__ = ["Topology", "build", "router_hops", "node_pair_at_hops", "diameter",
           "route_hops_table", "route_path"]


def build(cfg: TopologyConfig) -> Topology:
    """Validate cfg (ConfigError names the topology.* field) and build its tables."""
    cfg.validate("topology")
    return kind(cfg.kind).build(cfg)

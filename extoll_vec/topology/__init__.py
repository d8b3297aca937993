"""Router graphs and their deterministic deadlock-free routing tables.

build(cfg) turns a TopologyConfig into a Topology (see base.py for the fields). Kinds:
mesh/torus (mesh.py), dragonfly (dragonfly.py), crossbar and hypercube (switch.py).
"""
from __future__ import annotations

from ..config import TopologyConfig
from .base import (Topology, diameter, node_pair_at_hops, route_hops_table, route_path,
                   router_hops)
from .dragonfly import build_dragonfly
from .mesh import build_mesh
from .switch import build_crossbar, build_hypercube

__all__ = ["Topology", "build", "router_hops", "node_pair_at_hops", "diameter",
           "route_hops_table", "route_path"]


def build(cfg: TopologyConfig) -> Topology:
    """Validate cfg (ConfigError names the topology.* field) and build its tables."""
    cfg.validate("topology")
    if cfg.kind in ("mesh", "torus"):
        return build_mesh(cfg.dims, torus=cfg.kind == "torus")
    if cfg.kind == "dragonfly":
        return build_dragonfly(cfg.p, cfg.a, cfg.h, cfg.n_groups)
    if cfg.kind == "crossbar":
        return build_crossbar(cfg.p)
    return build_hypercube(cfg.p, cfg.cube_dim)

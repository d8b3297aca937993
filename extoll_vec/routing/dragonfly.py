"""Adaptive routings of the dragonfly (Schneider et al., sec. 4, after BookSim's dragonfly):
Valiant (a random intermediate group), UGAL-L (minimal or Valiant, decided at the source router
on local queue occupancy) and PAR (progressive adaptive routing, Jiang, Kim and Dally, ISCA
2009, sec. 4.2: the same test re-evaluated at the second router of the source group). One route
function serves the three (kernels/routing_dragonfly.py, whose docstring gives the algorithms
and the VC assignments); their deadlock argument is the path shapes below: every path climbs a
strict order of (link class, VC), checked as a class-level channel dependency graph.
"""
from __future__ import annotations

import itertools

from ..dtypes import PORT_GLOBAL, PORT_LOCAL
from .deadlock import class_edges
from .registry import Routing


def path_shapes(routing: str) -> list[tuple[str, ...]]:
    """The hop-class sequences a routing's paths take ('l' local, 'g' global): minimal
    [l] g [l] or within the group l, and for every one of them via an intermediate group
    [l [l]] g [l] g [l] (the second source-group hop: PAR diverting at the second router)."""
    opt = ((), ("l",))
    shapes = {("l",)}
    for a, b, c in itertools.product(opt, opt, opt):        # minimal: [l] g [l]
        shapes.add(a + ("g",) + c)
    src = [(), ("l",)] + ([("l", "l")] if routing == "par" else [])
    for s, m, e in itertools.product(src, opt, opt):        # [l [l]] g [l] g [l]
        shapes.add(s + ("g",) + m + ("g",) + e)
    return sorted(shapes)


def hop_vcs(routing: str, shape: tuple[str, ...], flat: bool) -> list[tuple[int, int]]:
    """(port class, VC) of each hop of a path shape, as kernels/routing_dragonfly.py assigns
    them: VC = global hops taken; PAR's local hops in the source group count its local hops
    instead, and 1 + global hops after."""
    out, gh, lh = [], 0, 0
    for hop in shape:
        if flat:
            vc = 0
        elif routing == "par" and hop == "l":
            vc = lh if gh == 0 else 1 + gh
        else:
            vc = gh
        out.append((PORT_GLOBAL if hop == "g" else PORT_LOCAL, vc))
        if hop == "g":
            gh += 1
        elif gh == 0:
            lh += 1
    return out


def _edges(name: str):
    def edges(topo, flat: bool):
        trans = set()
        for shape in path_shapes(name):
            hops = hop_vcs(name, shape, flat)
            trans.update(zip(hops, hops[1:]))
        return class_edges(topo, trans)
    return edges


def _three_groups(cfg) -> str | None:
    if cfg.topology.n_groups >= 3:
        return None
    return "table on a dragonfly of 2 groups (no intermediate group)"


def _record(name: str, vcs: int, note: str) -> Routing:
    return Routing(name, edges=_edges(name), hooks="extoll_vec.kernels.routing_dragonfly",
                   function="adaptive_route", vcs=vcs, topologies=("dragonfly",),
                   in_order=False, problem=_three_groups, note=note)


ROUTINGS = (
    _record("valiant", 3, "a random intermediate group, minimal to it and on (3 VCs)"),
    _record("ugal", 3, "UGAL-L: minimal or Valiant, decided at the source router (3 VCs)"),
    _record("par", 4, "progressive adaptive routing, Jiang, Kim and Dally 2009 (4 VCs)"),
)

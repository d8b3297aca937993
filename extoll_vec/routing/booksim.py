"""ugal_booksim: stock BookSim2's `ugal_dragonflynew` as written (kernels/routing_booksim.py),
for comparison with the project's UGAL-L. Its VC is the packet's phase (0 to the intermediate
node's router, 1 after it, 2 from the global hop into the destination group), which does not
order the channels: an intermediate group's local hop shares VC 0 with the source groups' local
hops. Its channel dependency graph (the phases' hop sequences made physical at every router,
deadlock.class_edges) therefore has a cycle, and the config-time check refuses it unless
network.deadlock_check is false; run so, it can stop part of the network for good, which the
run's stall check names (engine/stall.py).
"""
from __future__ import annotations

from ..dtypes import PORT_GLOBAL, PORT_LOCAL
from .deadlock import class_edges
from .dragonfly import _three_groups
from .registry import Routing

L, G = PORT_LOCAL, PORT_GLOBAL
# (port class, VC) of the hops of every path shape: minimal within the group [l2]; minimal
# [l1] g2 [l2]; through an intermediate node [l0] g0 [l0] then minimal from its router, [l1]
# g2 [l2] (or [l1] when that node is in the destination group)
PATHS = (
    ((L, 2),),
    ((L, 1), (G, 2), (L, 2)),
    ((L, 0), (G, 0), (L, 0), (L, 1), (G, 2), (L, 2)),
    ((L, 0), (G, 0), (G, 2), (L, 2)),
    ((L, 0), (G, 0), (L, 0), (L, 1)),
    ((L, 0), (G, 0), (L, 1)),
)


def _edges(topo, flat: bool):
    if flat:
        paths = [tuple((c, 0) for c, _ in path) for path in PATHS]
    else:
        paths = PATHS
    return class_edges(topo, {t for path in paths for t in zip(path, path[1:])})


ROUTINGS = (
    Routing("ugal_booksim", edges=_edges, hooks="extoll_vec.kernels.routing_booksim",
            vcs=3, topologies=("dragonfly",), in_order=False, problem=_three_groups,
            note="stock BookSim2's ugal_dragonflynew: a random intermediate node, VC = phase "
                 "(3 VCs; its channel dependency graph is cyclic)"),
)

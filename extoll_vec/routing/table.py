"""The table routing: the topology's own tables (route_port, vc_next), deterministic and
minimal: dimension order on meshes and tori (dateline VCs on tori), e-cube on hypercubes,
minimal on dragonflies (VC 0, VC 1 after the global hop). Kernel id 0, the kernels' fast path
(kernels/routing.py route_out); its channel dependency graph is exact (deadlock.table_edges).
With the flat VC assignment every hop uses VC 0 (cyclic on tori and dragonflies, on purpose).
"""
from __future__ import annotations

from .deadlock import table_edges
from .registry import Routing

ROUTINGS = (
    Routing("table", edges=table_edges,
            note="the topology's tables (dimension order, e-cube, dragonfly minimal)"),
)

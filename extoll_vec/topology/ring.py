"""ring: n routers in a cycle (topology.dims = [n]), p nodes on each (topology.p), the shorter
way round (towards plus on a tie). Unlike a one-dimensional torus it takes several nodes per
router, as the rings of early cluster networks and of on-chip interconnects do.

Router r has terminals on ports 0..p-1 (node r*p + k on port k), port p to router r-1 and
port p+1 to router r+1 (mod n). Deadlock freedom, the dateline of a torus ring: a packet takes
VC 1 when it leaves through the wrap-around link (between routers n-1 and 0) and keeps its VC
while it goes on round the ring; a minimal route crosses that link at most once, so neither
VC's channels close a cycle (2 VCs; routing/deadlock.py checks the tables).
"""
from __future__ import annotations

import numpy as np

from .base import Topology, finish
from .registry import TopologyKind


def build_ring(n: int, p: int) -> Topology:
    R, N, P = n, n * p, p + 2
    minus, plus = p, p + 1
    r = np.arange(R)
    neighbor = np.full((R, P), -1)
    neighbor_port = np.full((R, P), -1)
    neighbor[:, minus], neighbor_port[:, minus] = (r - 1) % n, plus
    neighbor[:, plus], neighbor_port[:, plus] = (r + 1) % n, minus
    terminal_node = np.full((R, P), -1)
    terminal_node[:, :p] = r[:, None] * p + np.arange(p)[None, :]
    node = np.arange(N)
    dest = node // p
    fwd = (dest[None, :] - r[:, None]) % n                    # [R, N] hops going plus
    route = np.where(fwd <= n - fwd, plus, minus)
    route = np.where(fwd == 0, (node % p)[None, :], route)   # the node's own router
    wrap = np.zeros((R, P), bool)
    wrap[n - 1, plus] = wrap[0, minus] = True
    ring_port = np.arange(P) >= p
    vc_next = np.zeros((R, P, P, 2), np.int8)
    vc_next[:, :, :, 1] = (ring_port[:, None] & ring_port[None, :])[None]   # keep VC 1
    vc_next[np.broadcast_to(wrap[:, None, :], (R, P, P))] = 1              # leave through wrap
    return finish("ring", 2, neighbor, neighbor_port, terminal_node, node_router=dest,
                  node_port=node % p, route_port=route, vc_next=vc_next,
                  coords=r[:, None].astype(np.int32))


def _check(t, pre, check) -> None:
    check(len(t.dims) == 1 and t.dims[0] >= 3, f"{pre}.dims",
          "one radix >= 3 on a ring (the routers of the cycle)", list(t.dims))


KINDS = (
    TopologyKind("ring", fields=("dims", "p"), build=lambda t: build_ring(t.dims[0], t.p),
                 routers=lambda t: t.dims[0], nodes=lambda t: t.dims[0] * t.p,
                 ports=lambda t: t.p + 2,
                 describe=lambda t: f"ring of {t.dims[0]} routers x {t.p} nodes",
                 check=_check, size_field="dims"),
)

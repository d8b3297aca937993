"""The Topology record shared by every router graph, and queries that follow its routes.

A topology is a set of routers with numbered bidirectional ports. A port either leads to
another router (`neighbor`, `neighbor_port`), holds one node (`terminal_node`) or is unused.
Routing is a table: `route_port[r, n]` is the output port at router r for a packet to node n;
`vc_next[r, pi, po, vi]` the virtual channel it takes on that output, given the input port and
VC it arrived on. Packets are injected on VC 0 through their node's terminal port.

The queries here (hop counts, diameter, a node pair at a given distance) follow those tables,
so they measure the routes the simulator actually takes, not graph distances.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dtypes import PORT_LOCAL, PORT_TERMINAL
from ..errors import ConfigError

I32 = np.int32
I8 = np.int8

_ARRAYS = {  # name: (dtype, shape as a function of (routers, nodes, ports, VCs))
    "neighbor": (I32, lambda R, N, P, V: (R, P)),
    "neighbor_port": (I32, lambda R, N, P, V: (R, P)),
    "terminal_node": (I32, lambda R, N, P, V: (R, P)),
    "node_router": (I32, lambda R, N, P, V: (N,)),
    "node_port": (I32, lambda R, N, P, V: (N,)),
    "route_port": (I32, lambda R, N, P, V: (R, N)),
    "vc_next": (I8, lambda R, N, P, V: (R, P, P, V)),
    "port_class": (I8, lambda R, N, P, V: (R, P)),
}


@dataclass(frozen=True, eq=False)  # eq=False: numpy fields; identity equality and hashing
class Topology:
    kind: str
    n_routers: int
    n_nodes: int
    n_ports: int          # ports per router (max over routers); each port is bidirectional
    vcs_needed: int       # VCs the deadlock-free deterministic routing needs
    neighbor: np.ndarray        # int32 [R, P] far router of port p, -1 if unused or terminal
    neighbor_port: np.ndarray   # int32 [R, P] port index at that far router, -1 where unused
    terminal_node: np.ndarray   # int32 [R, P] node on port p, -1 if not a terminal port
    node_router: np.ndarray     # int32 [N]
    node_port: np.ndarray       # int32 [N] terminal port of the node at node_router
    route_port: np.ndarray      # int32 [R, N] output port at r for a packet to node n
    vc_next: np.ndarray         # int8 [R, P, P, V] output VC given (input port, input VC)
    coords: np.ndarray          # int32 [R, ndim] router coordinates
    port_class: np.ndarray      # int8 [R, P] dtypes.PORT_*: terminal, local (every router link
                                # but the dragonfly's global ones), global; its link latency

    def __post_init__(self) -> None:
        R, N, P, V = self.n_routers, self.n_nodes, self.n_ports, self.vcs_needed
        for name, (dtype, shape) in _ARRAYS.items():
            arr = getattr(self, name)
            if (not isinstance(arr, np.ndarray) or arr.dtype != dtype
                    or arr.shape != shape(R, N, P, V) or not arr.flags.c_contiguous):
                got = (getattr(arr, "dtype", type(arr)), getattr(arr, "shape", None))
                raise ValueError(f"Topology.{name}: want C-contiguous {np.dtype(dtype)} "
                                 f"{shape(R, N, P, V)}, got {got}")
        c = self.coords
        if c.dtype != I32 or c.ndim != 2 or c.shape[0] != R or not c.flags.c_contiguous:
            raise ValueError(f"Topology.coords: want C-contiguous int32 [{R}, ndim]")


def finish(kind: str, vcs_needed: int, neighbor, neighbor_port, terminal_node, node_router,
           node_port, route_port, vc_next, coords, port_class=None) -> Topology:
    """Cast every table to its dtype, make it C-contiguous and wrap it in a Topology.
    port_class: default terminal ports PORT_TERMINAL, every other port PORT_LOCAL."""
    def c32(x):
        return np.ascontiguousarray(x, dtype=I32)
    neighbor = c32(neighbor)
    R, P = neighbor.shape
    if port_class is None:
        port_class = np.where(np.asarray(terminal_node) >= 0, PORT_TERMINAL, PORT_LOCAL)
    return Topology(kind=kind, n_routers=int(R), n_nodes=int(len(node_router)), n_ports=int(P),
                    vcs_needed=int(vcs_needed), neighbor=neighbor,
                    neighbor_port=c32(neighbor_port), terminal_node=c32(terminal_node),
                    node_router=c32(node_router), node_port=c32(node_port),
                    route_port=c32(route_port),
                    vc_next=np.ascontiguousarray(vc_next, dtype=I8), coords=c32(coords),
                    port_class=np.ascontiguousarray(port_class, dtype=I8))


# ---- queries that follow the routing tables ----------------------------------------------------

def route_path(topo: Topology, src_node: int, dst_node: int) -> list[tuple[int, int, int, int]]:
    """Hops of the route from src_node to dst_node as (router, input port, output port, VC on
    the output). The first entry is the source router (input = src's terminal port, VC 0 on
    it); the last leaves through dst's terminal port (ejection)."""
    r, pi, vi = int(topo.node_router[src_node]), int(topo.node_port[src_node]), 0
    path = []
    for _ in range(topo.n_routers + 1):
        po = int(topo.route_port[r, dst_node])
        vo = int(topo.vc_next[r, pi, po, vi])
        path.append((r, pi, po, vo))
        if topo.terminal_node[r, po] == dst_node:
            return path
        nr = int(topo.neighbor[r, po])
        if nr < 0:
            raise RuntimeError(f"{topo.kind}: route {src_node}->{dst_node} leaves router {r} "
                               f"through port {po}, which has no link")
        r, pi, vi = nr, int(topo.neighbor_port[r, po]), vo
    raise RuntimeError(f"{topo.kind}: route {src_node}->{dst_node} does not terminate")


def router_hops(topo: Topology, src_node: int, dst_node: int) -> int:
    """Router-to-router links on the route from src_node to dst_node (0 on the same router)."""
    dst_router = int(topo.node_router[dst_node])
    r, hops = int(topo.node_router[src_node]), 0
    while r != dst_router:
        r = int(topo.neighbor[r, topo.route_port[r, dst_node]])
        hops += 1
        if r < 0 or hops > topo.n_routers:
            raise RuntimeError(f"{topo.kind}: route {src_node}->{dst_node} is broken")
    return hops


def route_hops_table(topo: Topology) -> np.ndarray:
    """int32 [R, R]: routed hop count from router r to router rd (to the first node of rd;
    routes here depend only on the destination router). Pointer doubling: log2(diameter)
    vectorized steps instead of one step per hop."""
    R = topo.n_routers
    first_node = np.full(R, topo.n_nodes, dtype=np.int64)
    np.minimum.at(first_node, topo.node_router, np.arange(topo.n_nodes))
    if (first_node == topo.n_nodes).any():  # routes are indexed by node: none leads there
        raise RuntimeError(f"{topo.kind}: route_hops_table needs a node on every router")
    rows = np.arange(R)[:, None]
    port = topo.route_port[:, first_node]                     # [R, R] output port at r
    jump = np.where(rows == np.arange(R)[None, :], rows, topo.neighbor[rows, port])
    if (jump < 0).any():
        raise RuntimeError(f"{topo.kind}: a route leaves through a port without a link")
    jump = jump.astype(np.int32)
    count = (jump != rows).astype(np.int32)                   # steps taken within 1 move
    arrived = np.arange(R, dtype=np.int32)[None, :]
    for _ in range(max(1, int(R).bit_length()) + 1):
        if (jump == arrived).all():
            break
        count = count + np.take_along_axis(count, jump, axis=0)
        jump = np.take_along_axis(jump, jump, axis=0)
    if (jump != arrived).any():
        raise RuntimeError(f"{topo.kind}: some routes do not reach their destination")
    return count


def diameter(topo: Topology) -> int:
    """Largest number of router-to-router links on any route."""
    return int(route_hops_table(topo).max())


def node_pair_at_hops(topo: Topology, hops: int) -> tuple[int, int]:
    """The pair (smallest source node, then smallest destination node) whose route crosses
    exactly `hops` router-to-router links."""
    table = route_hops_table(topo)
    diam = int(table.max())
    if not 1 <= hops <= diam or not (table == hops).any():
        allowed = f"1..{diam}" if diam >= 1 else "none (a single router: every route has 0 hops)"
        raise ConfigError("workload.hops", f"no node pair is {hops} router links apart on this "
                                           f"{topo.kind}; allowed: {allowed}")
    src_has = (table == hops).any(axis=1)[topo.node_router]
    src = int(np.flatnonzero(src_has)[0])
    dst = int(np.flatnonzero(table[topo.node_router[src]][topo.node_router] == hops)[0])
    return src, dst

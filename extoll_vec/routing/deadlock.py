"""Config-time deadlock check: the channel dependency graph (Dally and Seitz 1987) of a routing
with its VC assignment must be acyclic.

A channel is an input buffer (router r, input port p, VC v): one per link direction and VC.
A packet that holds buffer c and requests buffer c' makes the edge c -> c'. With virtual
cut-through a cycle of such edges can fill and block for ever; without one it cannot.

Each registered routing gives its graph (its record's `edges`, routing/registry.py), built
with the two constructions here:
- table_edges, exact for routes that follow the topology's tables: every (router, input port,
  VC, destination router) state that a route reaches is propagated from the injection ports,
  hop by hop, vectorized over all states (routes depend on the destination router only); the
  edges are the steps of those routes.
- class_edges, for routings described by the path shapes they can take (routing/dragonfly.py):
  every pair of consecutive hops (port class, VC) -> (port class, VC) that some path takes
  becomes, at every router, an edge from each input port of the first class to each output
  port of the second. This is a superset of the dependencies any traffic can make, so
  "acyclic" is safe.

A cycle is found by peeling nodes without predecessors or successors (vectorized) and then
walking what remains; the message names it router by router.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import MAX_VCS, PORT_TERMINAL
from ..errors import ConfigError
from .registry import routing

_STATES_PER_CHUNK = 1 << 21      # destination routers per chunk x routers: bounds the memory
_CACHE: dict = {}
_PORTS = 1 << 20                 # buffer id = (router * _PORTS + port) * MAX_VCS + VC


def buffer_id(r, p, v):
    return (np.asarray(r, np.int64) * _PORTS + p) * MAX_VCS + v


def buffer_parts(ids) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(router, port, VC) of buffer ids."""
    ids = np.asarray(ids, np.int64)
    return ids // MAX_VCS // _PORTS, ids // MAX_VCS % _PORTS, ids % MAX_VCS


def buffer_name(i: int) -> str:
    i = int(i)
    return f"router {i // MAX_VCS // _PORTS} port {i // MAX_VCS % _PORTS} VC {i % MAX_VCS}"


def table_edges(topo, flat: bool) -> np.ndarray:
    """int64 [E, 2] (buffer, next buffer) of every step of every table route."""
    R, P = topo.n_routers, topo.n_ports
    V = 1 if flat else topo.vc_next.shape[3]
    first = np.full(R, topo.n_nodes, np.int64)
    np.minimum.at(first, topo.node_router, np.arange(topo.n_nodes))
    hosts = np.flatnonzero(first < topo.n_nodes)          # routers with nodes
    if len(hosts) == 0 or R == 1:
        return np.zeros((0, 2), np.int64)
    vcn = np.zeros((R, P, P, 1), np.int8) if flat else topo.vc_next
    route = topo.route_port[:, first[hosts]]               # [R, destination host index]
    edges = []
    step = max(1, _STATES_PER_CHUNK // len(hosts))
    for lo in range(0, len(hosts), step):
        dsel = np.arange(lo, min(lo + step, len(hosts)))
        # injection: every host router towards every destination router of this chunk
        r = np.repeat(hosts, len(dsel))
        d = np.tile(dsel, len(hosts))
        keep = r != hosts[d]
        r, d = r[keep], d[keep]
        pi = topo.node_port[first[r]].astype(np.int64)
        vi = np.zeros(len(r), np.int64)
        for _ in range(R * P * V + 1):
            if len(r) == 0:
                break
            po = route[r, d]
            vo = vcn[r, pi, po, np.minimum(vi, vcn.shape[3] - 1)].astype(np.int64)
            nr = topo.neighbor[r, po].astype(np.int64)
            go = nr >= 0
            if (~go & (topo.terminal_node[r, po] < 0)).any():
                raise RuntimeError(f"{topo.kind}: a route leaves through a port without a link")
            r, pi, vi, po, vo, nr, d = r[go], pi[go], vi[go], po[go], vo[go], nr[go], d[go]
            npi = topo.neighbor_port[r, po].astype(np.int64)
            edges.append(np.unique(np.stack([buffer_id(r, pi, vi), buffer_id(nr, npi, vo)], 1),
                                   axis=0))
            key = np.unique(((nr * P + npi) * V + vo) * len(hosts) + d)
            d = key % len(hosts)
            key //= len(hosts)
            vi = key % V
            key //= V
            r, pi = key // P, key % P
        else:
            raise RuntimeError(f"{topo.kind}: some table routes do not terminate")
    if not edges:
        return np.zeros((0, 2), np.int64)
    return np.unique(np.concatenate(edges), axis=0)


def class_edges(topo, transitions) -> np.ndarray:
    """int64 [E, 2]: class-level transitions ((port class, VC) -> (port class, VC), pairs of
    consecutive hops some path takes) made physical at every router: an edge from each input
    port of the first class to each output port of the second."""
    trans = set(transitions)
    cls = topo.port_class
    link = (topo.neighbor >= 0) & (cls != PORT_TERMINAL)
    edges = []
    for (ci, vi), (co, vo) in sorted(trans):
        r_in, p_in = np.nonzero(link & (cls == ci))
        for r in np.unique(r_in):
            pins = p_in[r_in == r]
            pouts = np.flatnonzero(link[r] & (cls[r] == co))
            if len(pouts) == 0:
                continue
            a = np.repeat(pins, len(pouts))
            o = np.tile(pouts, len(pins))
            edges.append(np.stack([buffer_id(r, a, vi),
                                   buffer_id(topo.neighbor[r, o], topo.neighbor_port[r, o], vo)],
                                  1))
    if not edges:
        return np.zeros((0, 2), np.int64)
    return np.unique(np.concatenate(edges), axis=0)


def find_cycle(edges: np.ndarray) -> list[int] | None:
    """A cycle of the directed graph given by its edges (buffer ids), or None if acyclic."""
    if len(edges) == 0:
        return None
    ids, inv = np.unique(edges.ravel(), return_inverse=True)
    s, d = inv[0::2], inv[1::2]
    n = len(ids)
    alive = np.ones(n, bool)
    live = np.ones(len(s), bool)
    while True:
        indeg = np.bincount(d[live], minlength=n)
        outdeg = np.bincount(s[live], minlength=n)
        kill = alive & ((indeg == 0) | (outdeg == 0))
        if not kill.any():
            break
        alive &= ~kill
        live &= alive[s] & alive[d]
    if not live.any():
        return None
    succ = {}
    for a, b in zip(s[live].tolist(), d[live].tolist()):
        succ.setdefault(a, b)
    node, seen, path = next(iter(succ)), {}, []
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = succ[node]
    return [int(ids[k]) for k in path[seen[node]:]]


def channel_cycle(topo, name: str, flat: bool) -> list[int] | None:
    """A cycle of routing `name`'s channel dependency graph (buffer ids), None if acyclic."""
    return find_cycle(routing(name).edges(topo, flat))


def describe_cycle(cycle: list[int], limit: int = 12) -> str:
    names = [buffer_name(c) for c in cycle[:limit]]
    more = f" -> ... ({len(cycle)} buffers)" if len(cycle) > limit else ""
    return " -> ".join(names) + more + f" -> {buffer_name(cycle[0])}"


def check_deadlock_free(topo, cfg) -> None:
    """ConfigError if cfg's routing and VC assignment can deadlock on topo (unless
    network.deadlock_check is false). Results are cached per (topology, routing, assignment)."""
    n = cfg.network
    if not n.deadlock_check:
        return
    key = (cfg.topology, n.routing, n.vc_assignment)
    if key not in _CACHE:
        if len(_CACHE) > 64:
            _CACHE.clear()
        _CACHE[key] = channel_cycle(topo, n.routing, n.vc_assignment == "flat")
    cycle = _CACHE[key]
    if cycle is not None:
        field = "network.vc_assignment" if n.vc_assignment == "flat" else "network.routing"
        value = n.vc_assignment if field.endswith("assignment") else n.routing
        raise ConfigError(field, f"got {value!r}; allowed: a deadlock-free VC assignment: routing "
                                 f"{n.routing} with VC assignment {n.vc_assignment} on this "
                                 f"{topo.kind} has the channel dependency cycle "
                                 f"{describe_cycle(cycle)} (input buffers; "
                                 "network.deadlock_check: false runs it anyway)")

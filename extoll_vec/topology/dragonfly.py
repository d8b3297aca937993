"""Dragonfly (Kim, Dally, Scott, Abts 2008) with minimal routing.

g groups of a routers; every router has p terminals and h global ports, and the routers of a
group are fully connected by local links. Router index = group * a + router-in-group; node
index = router * p + terminal. Ports of every router:
    0 .. p-1                terminals
    p .. p+a-2              local links, to the other routers of the group in increasing order
                            (port p+k leads to router k if k < i, else to router k+1)
    p+a-1 .. p+a-1+h-1      global ports

Global links ("consecutive" arrangement). Each group has a*h global channels; channel c lives
on router c // h, global port c % h. Channel c of group G leads to group G + m (mod g) with
offset m = c % (g-1) + 1, i.e. the channels hand out the offsets 1..g-1 in consecutive rounds
t = c // (g-1). Its partner is the channel of the same round with the opposite offset g - m:
    channel c = t*(g-1) + m-1 of group G  <->  channel t*(g-1) + (g-m)-1 of group G+m.
With the maximal g = a*h+1 there is one round: channel c of G joins channel a*h-1-c of group
G+c+1, and every pair of groups has exactly one link. With fewer groups the first round is
complete (a*h >= g-1), so every pair still has a link, later rounds add parallel links, and a
channel whose partner does not exist in an incomplete last round stays unused.

Minimal routing takes the first link to the destination group (round 0, channel m-1): a local
hop to the router holding it (if needed), the global hop, a local hop to the destination
router (if needed): at most 3 router-to-router links. Both directions between two groups use
the same physical link.

VCs: VC 1 once the packet has crossed a global link (input port global, or input VC 1), else
VC 0: local(VC 0) -> global(VC 0) -> local(VC 1) is acyclic. The ejection port always uses
VC 0.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import PORT_GLOBAL, PORT_LOCAL, PORT_TERMINAL
from .base import Topology, finish
from .registry import TopologyKind


def global_partner(c: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """(group offset, partner channel) of global channel(s) c in a dragonfly of g groups."""
    t, m = c // (g - 1), c % (g - 1) + 1
    return m, t * (g - 1) + (g - m) - 1


def build_dragonfly(p: int, a: int, h: int, g: int) -> Topology:
    R, N = g * a, g * a * p
    P = p + (a - 1) + h
    gp0 = p + a - 1                                   # first global port
    r = np.arange(R, dtype=np.int64)
    grp, idx = r // a, r % a

    neighbor = np.full((R, P), -1, dtype=np.int64)
    neighbor_port = np.full((R, P), -1, dtype=np.int64)
    terminal_node = np.full((R, P), -1, dtype=np.int64)
    terminal_node[:, :p] = r[:, None] * p + np.arange(p)[None, :]

    # local links: port p+k of router i -> router j = k + (k >= i); arrives on port p + i - (i > j)
    k = np.arange(a - 1)[None, :]
    j = k + (k >= idx[:, None])                       # [R, a-1]
    neighbor[:, p:gp0] = grp[:, None] * a + j
    neighbor_port[:, p:gp0] = p + idx[:, None] - (idx[:, None] > j)

    # global links
    c = np.arange(a * h)
    off, partner = global_partner(c, g)
    used = partner < a * h
    cg = np.broadcast_to(c[used], (g, used.sum()))    # [group, used channel]
    src = np.arange(g)[:, None] * a + cg // h
    dst_group = (np.arange(g)[:, None] + off[used][None, :]) % g
    neighbor[src, gp0 + cg % h] = dst_group * a + partner[used][None, :] // h
    neighbor_port[src, gp0 + cg % h] = gp0 + partner[used][None, :] % h

    route_port = _minimal_routes(p, a, h, g, grp, idx)
    node = np.arange(N)
    node_router, node_port = node // p, node % p

    # VC 1 after a global hop (input port global or input VC 1), VC 0 before; ejection VC 0
    vc_next = np.zeros((R, P, P, 2), dtype=np.int8)
    vc_next[:, :, p:, 1] = 1
    vc_next[:, gp0:, p:, :] = 1
    coords = np.stack([grp, idx], axis=1)
    # link classes (per-class latencies: topology.local_latency, topology.global_latency)
    port_class = np.full((R, P), PORT_LOCAL, dtype=np.int8)
    port_class[:, :p] = PORT_TERMINAL
    port_class[:, gp0:] = PORT_GLOBAL
    return finish("dragonfly", 2, neighbor, neighbor_port, terminal_node, node_router, node_port,
                  route_port, vc_next, coords, port_class)


def _minimal_routes(p, a, h, g, grp, idx) -> np.ndarray:
    """int32 [R, N]: computed per (router, destination router), then spread over the nodes."""
    gd, idd = grp[None, :], idx[None, :]              # destination router (columns)
    gs, ids = grp[:, None], idx[:, None]              # current router (rows)
    chan = (gd - gs) % g - 1                          # first channel towards the dest group
    gate = chan // h                                  # router in this group that holds it
    target = np.where(gs == gd, idd, gate)            # router of this group to reach next
    local = p + target - (target > ids)               # local port towards `target`
    port = np.where(target == ids, p + a - 1 + chan % h, local)   # at the gateway: global
    rr = port.astype(np.int32)                        # [R, R]; diagonal fixed below
    route = np.repeat(rr, p, axis=1)                  # node n is on router n // p
    n = np.arange(route.shape[1])
    own = n // p
    route[own, n] = n % p                             # at the node's own router: terminal port
    return route


def _check(t, pre, check) -> None:
    check(t.groups == 0 or 2 <= t.groups <= t.a * t.h + 1, f"{pre}.groups",
          f"0 (= a*h+1) or 2..{t.a * t.h + 1}", t.groups)


KINDS = (
    TopologyKind(
        "dragonfly", fields=("p", "a", "h", "groups", "local_latency", "global_latency"),
        build=lambda t: build_dragonfly(t.p, t.a, t.h, t.n_groups),
        routers=lambda t: t.a * t.n_groups, nodes=lambda t: t.p * t.a * t.n_groups,
        ports=lambda t: t.p + t.a - 1 + t.h,
        describe=lambda t: f"dragonfly p={t.p} a={t.a} h={t.h} groups={t.n_groups}",
        check=_check, geo=lambda t: (t.p, t.a, t.h, t.n_groups),
        group_nodes=lambda t: t.p * t.a,
        link_latencies=lambda t, link: (t.local_latency, t.global_latency)),
)

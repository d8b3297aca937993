"""Single-switch crossbar and binary hypercube of switches.

crossbar: one router whose p ports each hold one node (node n on port n).

hypercube: 2**D switches, switch index = its coordinate bits (bit d = coordinate d). Each has
p terminals on ports 0..p-1 (node n on switch n // p, port n % p) and D cube links: port p+d
leads to switch r ^ (1 << d), arriving on its port p+d. e-cube routing flips the lowest
differing bit first; it is deadlock-free with one VC (dimension order on a cube).
"""
from __future__ import annotations

import numpy as np

from .base import Topology, finish
from .registry import TopologyKind


def build_crossbar(p: int) -> Topology:
    n = np.arange(p)
    return finish("crossbar", 1, np.full((1, p), -1), np.full((1, p), -1), n[None, :],
                  node_router=np.zeros(p, dtype=np.int32), node_port=n, route_port=n[None, :],
                  vc_next=np.zeros((1, p, p, 1), dtype=np.int8),
                  coords=np.zeros((1, 1), dtype=np.int32))


def build_hypercube(p: int, D: int) -> Topology:
    R, N, P = 1 << D, (1 << D) * p, p + D
    r = np.arange(R, dtype=np.int64)
    bits = np.arange(D)
    neighbor = np.full((R, P), -1, dtype=np.int64)
    neighbor_port = np.full((R, P), -1, dtype=np.int64)
    terminal_node = np.full((R, P), -1, dtype=np.int64)
    terminal_node[:, :p] = r[:, None] * p + np.arange(p)[None, :]
    neighbor[:, p:] = r[:, None] ^ (1 << bits)[None, :]
    neighbor_port[:, p:] = p + bits[None, :]

    # lowest set bit of x = r ^ rd, via a table over all x in 0 .. R-1
    x = np.arange(R)
    low = np.full(R, -1, dtype=np.int64)
    for d in bits[::-1]:                               # the last write (lowest d) wins
        low[(x >> d) & 1 == 1] = d
    rr = (p + low[r[:, None] ^ r[None, :]]).astype(np.int32)   # [R, R]; diagonal fixed below
    route = np.repeat(rr, p, axis=1)
    n = np.arange(N)
    route[n // p, n] = n % p
    coords = (r[:, None] >> bits[None, :]) & 1
    return finish("hypercube", 1, neighbor, neighbor_port, terminal_node,
                  node_router=n // p, node_port=n % p, route_port=route,
                  vc_next=np.zeros((R, P, P, 1), dtype=np.int8), coords=coords)


def _check_crossbar(t, pre, check) -> None:
    check(t.p >= 2, f"{pre}.p", "crossbar needs >= 2 nodes", t.p)


KINDS = (
    TopologyKind("crossbar", fields=("p",), build=lambda t: build_crossbar(t.p),
                 routers=lambda t: 1, nodes=lambda t: t.p, ports=lambda t: t.p,
                 describe=lambda t: f"crossbar {t.p} nodes", check=_check_crossbar,
                 size_field="p"),
    TopologyKind("hypercube", fields=("p", "cube_dim"),
                 build=lambda t: build_hypercube(t.p, t.cube_dim),
                 routers=lambda t: 1 << t.cube_dim, nodes=lambda t: t.p * (1 << t.cube_dim),
                 ports=lambda t: t.p + t.cube_dim,
                 describe=lambda t: f"hypercube 2^{t.cube_dim} switches x {t.p} nodes",
                 size_field="p"),
)

"""Meshes and tori of any number of dimensions, dimension-order routing.

Router index = mixed radix of its coordinates, dimension 0 fastest; node i sits on router i.
Ports: 0 = terminal; for dimension d, port 1+2d leads to the minus neighbour and port 2+2d to
the plus neighbour. A link always joins a minus port to the plus port of the far router (and
the reverse). Mesh edges and radix-1 dimensions leave their ports unused (neighbor -1).

Routing corrects dimension 0 first, then 1, ... A mesh moves towards the destination
coordinate; a torus takes the shorter way round each ring (towards plus on a tie), using the
wrap-around link between coordinates k-1 and 0 when that is shorter.

Torus deadlock freedom (dateline, 2 VCs): a packet moves to VC 1 when it leaves through a
wrap-around link, keeps its VC while it continues in the same dimension, and starts on VC 0
in every new dimension. In one ring a minimal route crosses the wrap link at most once, so the
VC-0 channels of a ring form a chain that never closes through the wrap link and the VC-1
channels a chain that starts at it; dimensions are visited in increasing order, so the
channel dependency graph is acyclic. The ejection port always uses VC 0.
"""
from __future__ import annotations

import math

import numpy as np

from .base import Topology, finish
from .registry import TopologyKind

TERMINAL = 0


def minus_port(d: int) -> int:
    return 1 + 2 * d


def plus_port(d: int) -> int:
    return 2 + 2 * d


def build_mesh(dims: tuple[int, ...], torus: bool) -> Topology:
    dims = tuple(int(k) for k in dims)
    ndim, R = len(dims), math.prod(dims)
    P = 1 + 2 * ndim
    stride = np.cumprod((1,) + dims[:-1]).astype(np.int64)
    r = np.arange(R, dtype=np.int64)
    coords = (r[:, None] // stride[None, :]) % np.asarray(dims)[None, :]   # [R, ndim]

    neighbor = np.full((R, P), -1, dtype=np.int32)
    neighbor_port = np.full((R, P), -1, dtype=np.int32)
    wrap = np.zeros((R, P), dtype=bool)          # the output port is a wrap-around link
    for d, k in enumerate(dims):
        if k == 1:
            continue
        c = coords[:, d]
        lo, hi = c == 0, c == k - 1
        minus = r + np.where(lo, (k - 1) * stride[d], -stride[d])
        plus = r + np.where(hi, -(k - 1) * stride[d], stride[d])
        m_ok = np.ones(R, bool) if torus else ~lo
        p_ok = np.ones(R, bool) if torus else ~hi
        neighbor[:, minus_port(d)] = np.where(m_ok, minus, -1)
        neighbor[:, plus_port(d)] = np.where(p_ok, plus, -1)
        neighbor_port[:, minus_port(d)] = np.where(m_ok, plus_port(d), -1)
        neighbor_port[:, plus_port(d)] = np.where(p_ok, minus_port(d), -1)
        if torus:
            wrap[:, minus_port(d)] = lo
            wrap[:, plus_port(d)] = hi

    terminal_node = np.full((R, P), -1, dtype=np.int32)
    terminal_node[:, TERMINAL] = r
    route_port = _dimension_order_routes(coords, dims, torus)

    if torus:
        # port_dim[p]: dimension of port p (-1 for the terminal port)
        port_dim = np.array([-1] + [d for d in range(ndim) for _ in (0, 1)])
        same_dim = (port_dim[:, None] == port_dim[None, :]) & (port_dim[:, None] >= 0)  # [pi, po]
        vc_next = np.zeros((R, P, P, 2), dtype=np.int8)
        vc_next[:, :, :, 1] = same_dim[None, :, :]          # continue in a dimension: keep VC
        vc_next[np.broadcast_to(wrap[:, None, :], (R, P, P))] = 1   # leave through a wrap
        vcs = 2
    else:
        vc_next = np.zeros((R, P, P, 1), dtype=np.int8)
        vcs = 1
    return finish("torus" if torus else "mesh", vcs, neighbor, neighbor_port, terminal_node,
                  node_router=r, node_port=np.zeros(R, dtype=np.int32), route_port=route_port,
                  vc_next=vc_next, coords=coords)


def _dimension_order_routes(coords: np.ndarray, dims: tuple[int, ...], torus: bool) -> np.ndarray:
    """int32 [R, N]: the first dimension whose coordinate differs decides the output port.
    Dimensions are applied last to first, so the lowest differing one overwrites the rest."""
    R = len(coords)
    route = np.full((R, R), TERMINAL, dtype=np.int8 if 2 * len(dims) < 127 else np.int32)
    for d in reversed(range(len(dims))):
        k = dims[d]
        if k == 1:
            continue
        here, there = np.arange(k)[:, None], np.arange(k)[None, :]
        if torus:
            fwd = (there - here) % k                              # hops going plus
            go_plus = fwd <= k - fwd                              # tie -> plus
        else:
            go_plus = there > here
        table = np.where(here == there, TERMINAL,                 # [k, k] port per coordinates
                         np.where(go_plus, plus_port(d), minus_port(d))).astype(route.dtype)
        port = table[coords[:, d][:, None], coords[:, d][None, :]]
        np.copyto(route, port, where=port != TERMINAL)
    return route.astype(np.int32)


def _check_dims(t, pre, check) -> None:
    check(math.prod(t.dims) >= 2, f"{pre}.dims",
          "1 to 4 integer radices >= 1 with at least 2 routers", list(t.dims))


def _check_mesh(t, pre, check) -> None:
    _check_dims(t, pre, check)
    check(t.p == 1, f"{pre}.p", "1 (one node per router on meshes and tori)", t.p)


def _check_torus(t, pre, check) -> None:
    _check_dims(t, pre, check)
    check(all(d >= 3 or d == 1 for d in t.dims), f"{pre}.dims",
          "torus radices >= 3 (a radix of 2 is a mesh)", list(t.dims))
    check(t.p == 1, f"{pre}.p", "1 (one node per router on meshes and tori)", t.p)


def _record(name: str, torus: bool, check) -> TopologyKind:
    return TopologyKind(
        name, fields=("dims",), build=lambda t: build_mesh(t.dims, torus=torus),
        routers=lambda t: math.prod(t.dims), nodes=lambda t: math.prod(t.dims),
        ports=lambda t: 1 + 2 * len(t.dims), describe=lambda t: f"{name} {'x'.join(map(str, t.dims))}",
        check=check, size_field="dims")


KINDS = (_record("mesh", False, _check_mesh), _record("torus", True, _check_torus))

"""Topology tables: link symmetry, minimal routes, VC rules and deadlock freedom.

Routes are followed for all node pairs at once (vectorized walker below), compared with BFS
distances on the router graph, and turned into a channel dependency graph over (link, VC)
whose acyclicity is the deadlock-freedom proof of the deterministic routing (Dally & Seitz).
"""
from __future__ import annotations

import dataclasses
import math
import time
from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extoll_vec.config import TopologyConfig
from extoll_vec.errors import ConfigError
from extoll_vec.topology import (Topology, build, diameter, node_pair_at_hops, route_hops_table,
                                 route_path, router_hops)
from extoll_vec.topology.dragonfly import global_partner


def T(kind, **kw) -> Topology:
    return build(TopologyConfig(kind=kind, **kw))


SMALL = {
    "mesh-4x4x4": dict(kind="mesh", dims=(4, 4, 4)),
    "mesh-8x8": dict(kind="mesh", dims=(8, 8)),
    "mesh-3x1x2": dict(kind="mesh", dims=(3, 1, 2)),
    "mesh-5": dict(kind="mesh", dims=(5,)),
    "torus-4x4": dict(kind="torus", dims=(4, 4)),
    "torus-5x3x3": dict(kind="torus", dims=(5, 3, 3)),
    "torus-4x1x3": dict(kind="torus", dims=(4, 1, 3)),
    "torus-6": dict(kind="torus", dims=(6,)),
    "dragonfly-2-4-2": dict(kind="dragonfly", p=2, a=4, h=2),
    "dragonfly-2-4-2-g5": dict(kind="dragonfly", p=2, a=4, h=2, groups=5),
    "dragonfly-3-3-2-g4": dict(kind="dragonfly", p=3, a=3, h=2, groups=4),
    "dragonfly-1-1-1-g2": dict(kind="dragonfly", p=1, a=1, h=1, groups=2),
    "dragonfly-1-2-3-g3": dict(kind="dragonfly", p=1, a=2, h=3, groups=3),
    "crossbar-2": dict(kind="crossbar", p=2),
    "crossbar-5": dict(kind="crossbar", p=5),
    "hypercube-1-1": dict(kind="hypercube", p=1, cube_dim=1),
    "hypercube-2-3": dict(kind="hypercube", p=2, cube_dim=3),
    "hypercube-1-4": dict(kind="hypercube", p=1, cube_dim=4),
}


# ---- helpers -----------------------------------------------------------------------------------

def bfs_distances(topo: Topology) -> np.ndarray:
    """[R, R] hop distances on the router graph (frontier expansion by matrix product)."""
    R = topo.n_routers
    adj = np.zeros((R, R), dtype=np.float32)
    r, p = np.nonzero(topo.neighbor >= 0)
    adj[r, topo.neighbor[r, p]] = 1
    dist = np.where(np.eye(R, dtype=bool), 0, -1)
    reach = np.eye(R, dtype=np.float32)
    for step in range(1, R):
        reach = ((reach + reach @ adj) > 0).astype(np.float32)
        new = (reach > 0) & (dist < 0)
        if not new.any():
            break
        dist[new] = step
    assert (dist >= 0).all(), "router graph not connected"
    return dist


def walk(topo: Topology, src: np.ndarray, dst: np.ndarray):
    """Follow route_port/vc_next for all (src, dst) node pairs at once. Returns hops [K] and
    the link steps as a list of (active mask, router, in port, out port, out VC) arrays."""
    r = topo.node_router[src].astype(np.int64)
    pi = topo.node_port[src].astype(np.int64)
    vi = np.zeros(len(src), dtype=np.int64)
    active = np.ones(len(src), dtype=bool)
    hops = np.zeros(len(src), dtype=np.int64)
    steps = []
    for _ in range(topo.n_routers + 1):
        if not active.any():
            break
        po = topo.route_port[r, dst].astype(np.int64)
        assert (po[active] >= 0).all() and (po[active] < topo.n_ports).all()
        vo = topo.vc_next[r, pi, po, vi].astype(np.int64)
        eject = active & (topo.terminal_node[r, po] == dst)
        assert (vo[eject] == 0).all(), "ejection uses VC 0"
        link = active & ~eject
        nr = topo.neighbor[r, po]
        assert (nr[link] >= 0).all(), "route leaves through a port without a link"
        steps.append((link, r.copy(), pi.copy(), po, vo))
        hops += link
        pi = np.where(link, topo.neighbor_port[r, po], pi)
        r = np.where(link, nr, r)
        vi = np.where(link, vo, vi)
        active = link
    assert not active.any(), "some routes do not terminate"
    return hops, steps


def all_pairs(topo: Topology):
    n = topo.n_nodes
    src, dst = np.divmod(np.arange(n * n), n)
    return src, dst


def cdg_is_acyclic(topo: Topology, steps) -> bool:
    """Channel dependency graph over (router, output port, VC) of router-to-router links:
    an edge c -> c' when some route holds c and requests c' next. Kahn's topological sort."""
    P, V = topo.n_ports, topo.vcs_needed
    edges = []
    for (l0, r0, _, p0, v0), (l1, r1, _, p1, v1) in zip(steps, steps[1:]):
        both = l0 & l1
        a = (r0 * P + p0) * V + v0
        b = (r1 * P + p1) * V + v1
        edges.append(np.stack([a[both], b[both]], axis=1))
    if not edges:
        return True
    e = np.unique(np.concatenate(edges), axis=0)
    succ: dict[int, list[int]] = {}
    indeg: dict[int, int] = {}
    for a, b in e.tolist():
        succ.setdefault(a, []).append(b)
        indeg[b] = indeg.get(b, 0) + 1
        indeg.setdefault(a, 0)
    queue = deque(c for c, d in indeg.items() if d == 0)
    seen = 0
    while queue:
        c = queue.popleft()
        seen += 1
        for b in succ.get(c, ()):
            indeg[b] -= 1
            if indeg[b] == 0:
                queue.append(b)
    return seen == len(indeg)


def check_structure(topo: Topology) -> None:
    R, N, P = topo.n_routers, topo.n_nodes, topo.n_ports
    for name in ("neighbor", "neighbor_port", "terminal_node", "node_router", "node_port",
                 "route_port", "coords"):
        arr = getattr(topo, name)
        assert arr.dtype == np.int32 and arr.flags.c_contiguous, name
    assert topo.vc_next.dtype == np.int8 and topo.vc_next.flags.c_contiguous
    assert topo.vc_next.shape == (R, P, P, topo.vcs_needed)
    assert ((topo.vc_next >= 0) & (topo.vc_next < topo.vcs_needed)).all()
    # link symmetry: the far end of r.p leads back to r.p
    r, p = np.nonzero(topo.neighbor >= 0)
    nr, np_ = topo.neighbor[r, p], topo.neighbor_port[r, p]
    assert (np_ >= 0).all() and (np_ < P).all()
    assert (topo.neighbor[nr, np_] == r).all() and (topo.neighbor_port[nr, np_] == p).all()
    assert (topo.neighbor_port[topo.neighbor < 0] == -1).all()
    assert (nr != r).all(), "self loop"
    # terminals: a port is a link, a terminal or unused; nodes and terminal ports match 1:1
    assert not ((topo.neighbor >= 0) & (topo.terminal_node >= 0)).any()
    n = np.arange(N)
    assert (topo.terminal_node[topo.node_router, topo.node_port] == n).all()
    assert (topo.terminal_node >= 0).sum() == N
    assert (topo.route_port[topo.node_router, n] == topo.node_port).all()


def dragonfly_reference(topo: Topology, p: int, a: int, h: int):
    """Hop counts of dragonfly minimal routing, from the link table alone: ([R, R] hops over
    the first global link between two groups, [R, R] best hops over any single global link).
    "First" = lowest global channel index = router-in-group * h + global port."""
    R = topo.n_routers
    g = R // a
    grp = np.arange(R) // a
    far = topo.neighbor[:, p + a - 1:]                   # [R, h] global ports
    u, j = np.nonzero(far >= 0)                          # router-major, then port: channel order
    v = far[u, j]
    first = {}
    for uu, vv in zip(u.tolist(), v.tolist()):
        first.setdefault((uu // a, vv // a), (uu, vv))
    assert len(first) == g * (g - 1), "a pair of groups without a global link"
    ref = np.ones((R, R), dtype=int)                     # same group, other router: 1 local hop
    ref[np.arange(R), np.arange(R)] = 0
    for (G, Gd), (uu, vv) in first.items():
        rows, cols = np.arange(G * a, G * a + a), np.arange(Gd * a, Gd * a + a)
        ref[G * a:G * a + a, Gd * a:Gd * a + a] = ((rows != uu)[:, None] + 1
                                                   + (cols != vv)[None, :])
    # best single-global-link path: 1 hop if r holds a link to rd, 2 if r holds a link to rd's
    # group or rd holds one to r's group (links are bidirectional), else 3
    direct = np.zeros((R, R), dtype=bool)
    direct[u, v] = True
    to_group = np.zeros((R, g), dtype=bool)
    to_group[u, v // a] = True
    near = to_group[:, grp] | to_group[:, grp].T
    best = np.where(direct, 1, np.where(near, 2, 3))
    same = grp[:, None] == grp[None, :]
    best[same] = ref[same]
    return ref, best


def check_routes(topo: Topology, dragonfly_pah=None) -> tuple[np.ndarray, list]:
    """Every route reaches its destination, within the diameter, along a shortest path: the
    BFS distance on the router graph, or for a dragonfly the path over the first global link
    between the groups (dragonfly minimal routing uses one global link; two global links can
    be shorter in the graph, so BFS is only a lower bound there)."""
    src, dst = all_pairs(topo)
    hops, steps = walk(topo, src, dst)
    bfs = bfs_distances(topo)
    ref = bfs
    if topo.kind == "dragonfly":
        ref, best = dragonfly_reference(topo, *dragonfly_pah)
        assert (ref >= bfs).all() and (ref >= best).all() and ref.max() <= 3
        if topo.n_routers // dragonfly_pah[1] == dragonfly_pah[1] * dragonfly_pah[2] + 1:
            assert (ref == best).all()        # one link per pair of groups: nothing better
    sr, dr = topo.node_router[src], topo.node_router[dst]
    assert (hops == ref[sr, dr]).all(), "route not minimal"
    assert (route_hops_table(topo) == ref).all()
    assert diameter(topo) == ref.max() and hops.max() <= diameter(topo)
    return hops, steps


# ---- every kind --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(SMALL))
def test_small_topologies(name):
    kw = SMALL[name]
    topo = T(**kw)
    cfg = TopologyConfig(**kw)
    assert topo.kind == cfg.kind and topo.n_nodes == cfg.n_nodes
    check_structure(topo)
    hops, steps = check_routes(topo, (cfg.p, cfg.a, cfg.h))
    if topo.kind != "mesh":      # meshes in test_mesh_and_torus_cdg (one proof each)
        assert cdg_is_acyclic(topo, steps)
    # router_hops and route_path agree with the vectorized walker on a few pairs
    rng = np.random.default_rng(len(name))
    for s, d in rng.integers(0, topo.n_nodes, size=(20, 2)).tolist():
        path = route_path(topo, s, d)
        assert router_hops(topo, s, d) == len(path) - 1 == hops[s * topo.n_nodes + d]
        assert path[0][1] == topo.node_port[s] and path[-1][2] == topo.node_port[d]
        assert path[-1][0] == topo.node_router[d]


def test_vcs_needed():
    assert [T(**SMALL[k]).vcs_needed for k in ("mesh-8x8", "torus-4x4", "dragonfly-2-4-2",
                                                 "crossbar-5", "hypercube-2-3")] == [1, 2, 2, 1, 1]


def test_build_validates():
    with pytest.raises(ConfigError) as e:
        T("torus", dims=(2, 4))
    assert e.value.field == "topology.dims"
    with pytest.raises(ConfigError):
        T("dragonfly", p=2, a=4, h=2, groups=10)


# ---- mesh / torus ------------------------------------------------------------------------------

def test_mesh_hops_and_pairs():
    m3 = T("mesh", dims=(4, 4, 4))
    assert router_hops(m3, 0, 63) == 9 and diameter(m3) == 9
    m2 = T("mesh", dims=(8, 8))
    assert router_hops(m2, 0, 63) == 14 and router_hops(m2, 63, 0) == 14
    s, d = node_pair_at_hops(m2, 14)
    assert (s, d) == (0, 63) and router_hops(m2, s, d) == 14
    assert node_pair_at_hops(m2, 1) == (0, 1)
    assert node_pair_at_hops(m2, 8) == (0, 15)          # (0,0) -> (7,1)
    for bad in (0, 15):
        with pytest.raises(ConfigError) as e:
            node_pair_at_hops(m2, bad)
        assert e.value.field == "workload.hops" and "allowed: 1..14" in str(e.value)
    with pytest.raises(ConfigError, match="workload.hops"):
        node_pair_at_hops(T("crossbar", p=4), 1)


def test_mesh_port_layout_and_dimension_order():
    m = T("mesh", dims=(3, 4))
    assert m.n_ports == 5 and m.coords.tolist()[5] == [2, 1]
    # router 0 at the corner: no minus links; router 5 = (2,1): no plus link in dim 0
    assert m.neighbor[0].tolist() == [-1, -1, 1, -1, 3]
    assert m.neighbor[5].tolist() == [-1, 4, -1, 2, 8]
    # from (0,0) to (2,3): dim 0 first (plus x twice), then dim 1
    ports = [po for _, _, po, _ in route_path(m, 0, 11)]
    assert ports == [2, 2, 4, 4, 4, 0]
    assert (m.vc_next == 0).all()


def test_torus_wrap_links_and_dateline():
    t = T("torus", dims=(5,))
    assert t.neighbor[0].tolist() == [-1, 4, 1] and t.neighbor[4].tolist() == [-1, 3, 0]
    # 0 -> 4 is one hop over the minus wrap link, on VC 1
    assert [(r, po, vo) for r, _, po, vo in route_path(t, 0, 4)] == [(0, 1, 1), (4, 0, 0)]
    # 3 -> 0: plus, 3 -> 4 on VC 0, then the wrap 4 -> 0 on VC 1
    assert [(r, po, vo) for r, _, po, vo in route_path(t, 3, 0)] == [
        (3, 2, 0), (4, 2, 1), (0, 0, 0)]
    # 4 -> 1: wrap 4 -> 0 (VC 1), 0 -> 1 keeps VC 1; 1 -> 3 stays inside: VC 0
    assert [(r, po, vo) for r, _, po, vo in route_path(t, 4, 1)] == [
        (4, 2, 1), (0, 2, 1), (1, 0, 0)]
    assert [(r, po, vo) for r, _, po, vo in route_path(t, 1, 3)] == [
        (1, 2, 0), (2, 2, 0), (3, 0, 0)]
    t4 = T("torus", dims=(4, 4))
    # a tie (2 hops either way) goes plus: 1 -> 3 without wrap, 3 -> 1 through the wrap
    assert [po for _, _, po, _ in route_path(t4, 1, 3)] == [2, 2, 0]
    assert [(po, vo) for _, _, po, vo in route_path(t4, 3, 1)] == [(2, 1), (2, 1), (0, 0)]
    # (3,0) -> (1,3): wrap in dim 0 (VC 1), turn to dim 1 minus via its wrap 0 -> 3 (VC 1)
    # (3,0) -> (0,1): wrap in dim 0 (VC 1), then dim 1 plus, no wrap: back to VC 0
    assert [(po, vo) for _, _, po, vo in route_path(t4, 3, 1 + 4 * 3)] == [
        (2, 1), (2, 1), (3, 1), (0, 0)]
    assert [(po, vo) for _, _, po, vo in route_path(t4, 3, 4)] == [(2, 1), (4, 0), (0, 0)]


def _expected_dateline_vcs(topo, path):
    """The dateline rule written from coordinates, independent of vc_next."""
    vcs, prev_dim, vc = [], -1, 0
    for r, _, po, _ in path[:-1]:
        d = (po - 1) // 2
        k = int(np.asarray(topo.coords[:, d]).max()) + 1
        c = int(topo.coords[r, d])
        wrap = (po == 2 + 2 * d and c == k - 1) or (po == 1 + 2 * d and c == 0)
        vc = 1 if wrap else (vc if d == prev_dim else 0)
        vcs.append(vc)
        prev_dim = d
    return vcs


@pytest.mark.parametrize("dims", [(4, 4), (5, 3, 3), (6, 1, 3)])
def test_torus_vc_sequences_follow_dateline(dims):
    t = T("torus", dims=dims)
    wraps = 0
    for s in range(t.n_nodes):
        for d in range(t.n_nodes):
            path = route_path(t, s, d)
            assert [vo for *_, vo in path[:-1]] == _expected_dateline_vcs(t, path)
            wraps += any(vo for *_, vo in path)
            # within one dimension a route never crosses more links than half the ring
            assert len(path) - 1 == sum(min(abs(int(x) - int(y)), k - abs(int(x) - int(y)))
                                        for x, y, k in zip(t.coords[s], t.coords[d], dims))
    assert wraps > 0


def test_mesh_and_torus_cdg():
    for kind, dims in (("mesh", (4, 4, 4)), ("mesh", (5, 3)), ("torus", (4, 4)),
                       ("torus", (5, 3, 3))):
        topo = T(kind, dims=dims)
        _, steps = walk(topo, *all_pairs(topo))
        assert cdg_is_acyclic(topo, steps), (kind, dims)


@pytest.mark.parametrize("kw", [dict(kind="torus", dims=(4, 4)),
                                dict(kind="dragonfly", p=2, a=4, h=2)])
def test_cdg_check_finds_cycle_on_one_vc(kw):
    """Negative control: the same routes with every packet on VC 0 (no dateline, no VC change
    after the global hop) can deadlock, and the check sees the cycle."""
    t = T(**kw)
    one_vc = dataclasses.replace(t, vc_next=np.zeros_like(t.vc_next))
    _, steps = walk(one_vc, *all_pairs(one_vc))
    assert not cdg_is_acyclic(one_vc, steps)


mesh_dims = st.lists(st.integers(1, 5), min_size=1, max_size=3).filter(lambda d: math.prod(d) >= 2)
torus_dims = st.lists(st.sampled_from([1, 3, 4, 5]), min_size=1, max_size=3).filter(
    lambda d: math.prod(d) >= 2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind_dims=st.one_of(st.tuples(st.just("mesh"), mesh_dims),
                           st.tuples(st.just("torus"), torus_dims)))
def test_random_mesh_torus(kind_dims):
    kind, dims = kind_dims
    topo = T(kind, dims=tuple(dims))
    assert topo.n_routers == topo.n_nodes == math.prod(dims)
    assert topo.n_ports == 1 + 2 * len(dims)
    check_structure(topo)
    hops, steps = check_routes(topo)
    want = sum(k - 1 if kind == "mesh" else k // 2 for k in dims)
    assert diameter(topo) == want
    assert cdg_is_acyclic(topo, steps)
    s, d = node_pair_at_hops(topo, want)
    assert router_hops(topo, s, d) == want


# ---- dragonfly ---------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3), st.data())
def test_random_dragonfly(p, a, h, data):
    g = data.draw(st.integers(2, a * h + 1))
    topo = T("dragonfly", p=p, a=a, h=h, groups=g)
    assert topo.n_routers == g * a and topo.n_nodes == g * a * p
    assert topo.n_ports == p + a - 1 + h
    check_structure(topo)
    hops, steps = check_routes(topo, (p, a, h))
    assert hops.max() <= 3
    assert cdg_is_acyclic(topo, steps)


def _group_links(topo: Topology, a: int) -> np.ndarray:
    """[g, g] number of global links between groups."""
    g = topo.n_routers // a
    r, p = np.nonzero(topo.neighbor >= 0)
    gs, gd = r // a, topo.neighbor[r, p] // a
    links = np.zeros((g, g), dtype=int)
    np.add.at(links, (gs[gs != gd], gd[gs != gd]), 1)
    return links


def test_dragonfly_global_arrangement():
    p, a, h = 2, 4, 2
    full = T("dragonfly", p=p, a=a, h=h)                 # g = 9 = a*h + 1
    links = _group_links(full, a)
    assert (links + np.eye(9, dtype=int) == 1).all()    # exactly one link per pair of groups
    assert (full.neighbor >= 0).sum() == 9 * a * (a - 1 + h)   # every global port used
    # channel c of group G <-> channel a*h-1-c of group G+c+1
    gp0 = p + a - 1
    for G in range(9):
        for c in range(a * h):
            r, port = G * a + c // h, gp0 + c % h
            c2 = a * h - 1 - c
            assert full.neighbor[r, port] == ((G + c + 1) % 9) * a + c2 // h
            assert full.neighbor_port[r, port] == gp0 + c2 % h
    for g in (2, 3, 5, 8):                               # fewer groups: still all pairs linked
        links = _group_links(T("dragonfly", p=p, a=a, h=h, groups=g), a)
        assert (links[~np.eye(g, dtype=bool)] >= 1).all() and (links == links.T).all()
    m, partner = global_partner(np.arange(8), 5)
    assert m.tolist() == [1, 2, 3, 4, 1, 2, 3, 4] and partner.tolist() == [3, 2, 1, 0, 7, 6, 5, 4]


def test_dragonfly_vcs():
    topo = T("dragonfly", p=2, a=4, h=2)
    for s, d in ((0, 71), (0, 3), (5, 40), (70, 1)):
        path = route_path(topo, s, d)
        seen_global = False
        for r, pi, po, vo in path[:-1]:
            assert vo == int(seen_global)
            seen_global |= po >= 2 + 3                   # leaves through a global port
        assert path[-1][3] == 0
    # the 3-hop shape: local, global, local
    path = route_path(topo, 2, 71)                      # router 1 -> router 35 (group 8)
    assert [po >= 5 for _, _, po, _ in path[:-1]] == [False, True, False]


def test_dragonfly_73_groups():
    cfg = TopologyConfig(kind="dragonfly", p=6, a=12, h=6, groups=73)
    t0 = time.perf_counter()
    topo = build(cfg)
    elapsed = time.perf_counter() - t0
    assert topo.n_nodes == 5256 and topo.n_routers == 876 and topo.n_ports == 6 + 11 + 6
    assert elapsed < 10, f"build took {elapsed:.1f} s"
    check_structure(topo)
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, topo.n_nodes, size=(2, 2000))
    hops, _ = walk(topo, src, dst)
    assert hops.max() <= 3 and (hops == 3).any()
    ref, best = dragonfly_reference(topo, 6, 12, 6)
    assert (hops == ref[topo.node_router[src], topo.node_router[dst]]).all()
    assert (ref == best).all() and (route_hops_table(topo) == ref).all()
    assert diameter(topo) == 3


# ---- crossbar / hypercube ----------------------------------------------------------------------

def test_crossbar():
    x = T("crossbar", p=6)
    assert x.n_routers == 1 and x.n_ports == 6 and x.coords.shape == (1, 1)
    assert x.route_port[0].tolist() == list(range(6)) and (x.neighbor == -1).all()
    assert router_hops(x, 0, 5) == 0 and diameter(x) == 0


def test_hypercube_ecube():
    p, D = 2, 4
    hc = T("hypercube", p=p, cube_dim=D)
    assert hc.coords[0b1011].tolist() == [1, 1, 0, 1]
    for s in range(hc.n_nodes):
        for d in range(hc.n_nodes):
            path = route_path(hc, s, d)
            bits = [po - p for _, _, po, _ in path[:-1]]
            diff = (s // p) ^ (d // p)
            assert bits == [b for b in range(D) if diff >> b & 1]   # lowest bit first
    assert diameter(hc) == D

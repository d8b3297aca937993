"""Multicast spanning trees of Bhoedjang et al. (LFC, sections 3.2 and 4) and the static check of
the network interfaces' buffer dependencies they create. Pure numpy; the LFC protocol turns the
trees into per-sender forwarding tables.

    tree_parents(kind, members, root, seed=0) -> int32 [N]: each node's parent in root's tree
                                         (-1: the root, -2: not a member)
    tree_children(parents)            -> per node its children, largest subtree first
    depths(parents)                   -> int32 [N]: hops from the root (-1: not a member)
    dependency_cycle(trees)           -> a cycle of NI-buffer partitions, or None

Tree kinds (Bhoedjang et al., sections 3.3 and 5.2; the readings where the paper is silent are gap
G10 of the design notes):
- ``binomial`` (LFC's default): virtual rank v = node XOR root, the parent of v is v with its
  lowest set bit cleared, so every tree edge flips one bit of the node id and follows e-cube
  routing on the hypercube (section 3.3: "restrict the routes ... to the routes prescribed by e-cube
  routing, which is deadlock-free"). A member whose parent is not a member (groups that are not
  a whole subcube, e.g. 61 of 64 nodes) is adopted by its nearest member ancestor. On nodes
  0..60 with root 0: levels of 1, 6, 15, 20, 15, 4 nodes, fan-out 6 (section 5.2).
- ``binary`` (FM/MC's, section 2.2): heap order over v = (index(node) - index(root)) mod P, the
  parent of v is (v - 1) // 2. On 61 members: 6 levels, 30 nodes at the last (section 5.2).
- ``chain``: each member forwards to the next, v - 1 is the parent of v (section 3.3).
- ``user`` (in the protocol, not here: user_parents): a table of every member's parent in
  every member's tree, any spanning trees at all (section 3.2, 4: with recovery, "arbitrary
  multicast trees").
- ``random``: every member's parent a uniformly drawn member with a smaller virtual rank, from
  numpy.random.Generator(PCG64([seed, root])) (any spanning tree shape, for the invariants).

The dependency check (section 4's premise: which trees can deadlock). Every NI splits its
receive buffers among the sending NIs (sections 3.1 and 3.3, Figure 2), so a buffer partition is a
pair (y, x): NI y's buffers reserved for packets from NI x. A packet of tree T held at NI x, in
partition (x, parent), that waits for a send credit towards child c, needs partition (c, x): the
edge (x, parent) -> (c, x). With every member multicasting at once, a cycle of such edges is a
possible buffer deadlock; without one, none is (hosts always drain their NIs and credit
updates need no buffer).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

TREE_KINDS = ("binomial", "binary", "chain", "random")
ROOT, OUTSIDE = -1, -2


def _check(kind: str, members: Sequence[int], root: int) -> np.ndarray:
    if kind not in TREE_KINDS:
        raise ValueError(f"tree kind must be one of {', '.join(TREE_KINDS)}, got {kind!r}")
    m = np.asarray(sorted(set(int(x) for x in members)), dtype=np.int64)
    if m.size == 0 or m[0] < 0:
        raise ValueError("members must be node ids >= 0, at least one")
    if root not in set(m.tolist()):
        raise ValueError(f"the root {root} must be a member")
    return m


def tree_parents(kind: str, members: Sequence[int], root: int, seed: int = 0,
                 n_nodes: int | None = None) -> np.ndarray:
    """Parent of every node in root's multicast tree over `members` (node ids): int32 [N],
    N = n_nodes (default: the largest member + 1); ROOT (-1) for the root, OUTSIDE (-2) for
    nodes that are not members."""
    m = _check(kind, members, root)
    n = int(m[-1]) + 1 if n_nodes is None else int(n_nodes)
    if n <= m[-1]:
        raise ValueError(f"n_nodes {n} must exceed the largest member {int(m[-1])}")
    par = np.full(n, OUTSIDE, np.int32)
    par[root] = ROOT
    if kind == "binomial":
        inside = np.zeros(max(n, 1 << int(m[-1]).bit_length()), bool)
        inside[m] = True
        for r in m.tolist():
            if r == root:
                continue
            v = r ^ root
            p = v & (v - 1)                      # the lowest set bit cleared
            while not inside[p ^ root]:          # adopted by the nearest member ancestor
                p &= p - 1
            par[r] = p ^ root
        return par
    P = m.size
    i0 = int(np.searchsorted(m, root))
    v = (np.arange(P) - i0) % P                  # virtual rank of member k
    if kind == "binary":
        pv = (v - 1) // 2
    elif kind == "chain":
        pv = v - 1
    else:
        rng = np.random.Generator(np.random.PCG64([int(seed), int(root)]))
        pv = np.floor(rng.random(P) * np.maximum(v, 1)).astype(np.int64)
    by_v = m[(np.arange(P) + i0) % P]            # member of virtual rank w
    kids = v != 0
    par[m[kids]] = by_v[pv[kids]]
    return par


def user_parents(rows: Sequence[int], P: int, root: int, n_nodes: int) -> np.ndarray:
    """Root's tree from a user's table (row-major [P, P]: row s gives, for each member 0..P-1,
    its parent in root s's tree, ROOT at s itself) in tree_parents' form. ValueError naming
    the first member whose parent is not a tree's."""
    row = np.asarray(rows[root * P:(root + 1) * P], np.int64)
    if len(row) != P:
        raise ValueError(f"{P * P} parents ({P} members x {P} roots), got {len(rows)}")
    bad = [k for k in range(P) if (row[k] == ROOT) != (k == root)
           or not (row[k] == ROOT or 0 <= row[k] < P and row[k] != k)]
    if bad:
        raise ValueError(f"root {root}'s tree: member {bad[0]} has parent {int(row[bad[0]])} "
                         f"(the root's is {ROOT}, every other member's another member 0..{P - 1})")
    par = np.full(n_nodes, OUTSIDE, np.int32)
    par[:P] = row
    try:
        depths(par)
    except ValueError as e:
        raise ValueError(f"root {root}'s tree: {e}") from None
    return par


def depths(parents: np.ndarray) -> np.ndarray:
    """Hops from the root of every node of a tree (tree_parents' output); -1 outside it."""
    par = np.asarray(parents)
    d = np.full(par.size, -1, np.int32)
    for x in np.flatnonzero(par != OUTSIDE).tolist():
        k, y = 0, x
        while par[y] != ROOT:
            y = int(par[y])
            k += 1
            if k > par.size:
                raise ValueError(f"node {x}: its parents form a cycle, not a tree")
        d[x] = k
    return d


def tree_children(parents: np.ndarray) -> list[list[int]]:
    """Per node its children, the largest subtree first (ties: lower node id), the order in
    which an NI forwards a packet (gap G9: as MPICH's binomial broadcast)."""
    par = np.asarray(parents)
    d = depths(par)
    size = np.where(par != OUTSIDE, 1, 0)
    for x in np.argsort(-d, kind="stable").tolist():       # deepest first
        if par[x] >= 0:
            size[par[x]] += size[x]
    kids: list[list[int]] = [[] for _ in range(par.size)]
    for x in np.flatnonzero(par >= 0).tolist():
        kids[int(par[x])].append(x)
    return [sorted(k, key=lambda c: (-int(size[c]), c)) for k in kids]


def dependency_edges(trees: Mapping[int, np.ndarray]) -> dict[tuple, set]:
    """The NI-buffer dependency graph of a set of trees (root -> tree_parents): partition
    (x, parent) -> (child, x) for every node x with children in some tree."""
    g: dict[tuple, set] = {}
    for par in trees.values():
        for x, kids in enumerate(tree_children(par)):
            if kids and par[x] >= 0:
                g.setdefault((x, int(par[x])), set()).update((c, x) for c in kids)
    return g


def dependency_cycle(trees: Mapping[int, np.ndarray]) -> list[tuple[int, int]] | None:
    """A cycle of buffer partitions (y, x) of the trees' dependency graph, first partition
    repeated at the end, or None if the graph is acyclic (no buffer deadlock possible)."""
    g = dependency_edges(trees)
    color: dict[tuple, int] = {}
    for start in sorted(g):
        if start in color:
            continue
        path, iters = [start], [iter(sorted(g.get(start, ())))]
        color[start] = 1
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                color[path.pop()] = 2
                iters.pop()
            elif color.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in color:
                color[nxt] = 1
                path.append(nxt)
                iters.append(iter(sorted(g.get(nxt, ()))))
    return None

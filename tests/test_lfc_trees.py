"""Bhoedjang et al.'s multicast trees (extoll_vec/protocols/lfc/trees.py): spanning trees of their
members for every kind, root and group; the shapes section 5 describes for 61 processors; and
the NI-buffer dependency check that says which tree sets can deadlock (only the chain among
the paper's shapes; the negative control of tests/test_lfc_recovery.py runs it)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extoll_vec.protocols.lfc.trees import (OUTSIDE, ROOT, TREE_KINDS, dependency_cycle, depths,
                                           tree_children, tree_parents)


@st.composite
def groups(draw):
    n = draw(st.integers(1, 64))
    members = draw(st.lists(st.integers(0, 63), min_size=1, max_size=n, unique=True))
    root = draw(st.sampled_from(members))
    return sorted(members), root


@settings(max_examples=200, deadline=None)
@given(groups(), st.sampled_from(TREE_KINDS), st.integers(0, 2**31))
def test_every_tree_spans_its_members(group, kind, seed):
    members, root = group
    par = tree_parents(kind, members, root, seed=seed, n_nodes=64)
    assert par[root] == ROOT
    inside = set(members)
    assert {x for x in range(64) if par[x] != OUTSIDE} == inside
    assert all(par[x] in inside for x in inside - {root})     # parents are members
    d = depths(par)                                           # raises on a cycle
    assert (d[members] >= 0).all() and d[root] == 0
    kids = tree_children(par)
    assert sorted(c for k in kids for c in k) == sorted(inside - {root})


def _level_sizes(par):
    d = depths(par)
    return np.bincount(d[d >= 0]).tolist()


def test_shapes_of_section_5():
    """Section 5.2: on 61 processors the binomial tree has 4 nodes at its last (6th) level and a
    fan-out of 6; the binary tree 6 levels, 30 nodes at the last."""
    members = list(range(61))
    binomial = tree_parents("binomial", members, 0)
    assert _level_sizes(binomial) == [1, 6, 15, 20, 15, 4]
    assert len(tree_children(binomial)[0]) == 6
    assert _level_sizes(tree_parents("binary", members, 0)) == [1, 2, 4, 8, 16, 30]
    assert _level_sizes(tree_parents("chain", members, 5)) == [1] * 61


def test_binomial_edges_flip_one_bit():
    """Section 3.3: binomial trees follow e-cube routes (each edge of a whole cube flips a bit)."""
    for root in (0, 5, 63):
        par = tree_parents("binomial", range(64), root)
        for x in range(64):
            if x != root:
                assert bin(x ^ int(par[x])).count("1") == 1


def test_children_largest_subtree_first():
    kids = tree_children(tree_parents("binomial", range(16), 0))
    assert kids[0] == [8, 4, 2, 1]


@pytest.mark.parametrize("p", [4, 8, 16, 32, 61, 64])
def test_only_the_chain_can_deadlock(p):
    members = list(range(p))
    for kind in ("binomial", "binary"):
        assert dependency_cycle({r: tree_parents(kind, members, r) for r in members}) is None
    cycle = dependency_cycle({r: tree_parents("chain", members, r) for r in members})
    assert cycle is not None and cycle[0] == cycle[-1] and len(cycle) > 2
    for (y, x), (y2, x2) in zip(cycle, cycle[1:]):
        assert x2 == y                    # (x, parent) -> (child, x): partitions chain up


def test_bad_trees_are_refused():
    with pytest.raises(ValueError, match="tree kind must be one of"):
        tree_parents("star", [0, 1], 0)
    with pytest.raises(ValueError, match="root 3 must be a member"):
        tree_parents("binomial", [0, 1], 3)

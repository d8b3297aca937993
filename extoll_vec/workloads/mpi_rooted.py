"""Rooted MPI collectives (root 0) and root rotation; see mpi_coll for conventions.

Binomial trees use virtual ranks with root 0: the parent of v != 0 is v - lowbit(v), its
children are v + m for the powers of 2 m < lowbit(v) (every power of 2 below n for the root)
with v + m < n, and subtree(v) ranks hang below v (itself included).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import OP_IRECV, OP_ISEND, OP_RECV, OP_SEND, OP_WAITALL
from .mpi_coll import Rows

_PEER_OPS = (OP_SEND, OP_ISEND, OP_RECV, OP_IRECV)


def _lowbit(v: int) -> int:
    return v & -v


def subtree(v: int, n: int) -> int:
    """Ranks in the binomial subtree of virtual rank v (root 0) among n ranks."""
    return n if v == 0 else min(_lowbit(v), n - v)


def reduce_binomial(n: int, nbytes: int) -> list[np.ndarray]:
    """Binomial tree to root 0: rank v RECVs nbytes from v + 2**k for k = 0, 1, ... while bit k
    of v is clear (and v + 2**k < n), then SENDs nbytes to its parent v - lowbit(v)."""
    R = Rows(n)
    for v in range(n):
        mask = 1
        while mask < n:
            if v & mask:
                R.add(v, OP_SEND, v - mask, nbytes)
                break
            if v + mask < n:
                R.add(v, OP_RECV, v + mask, nbytes)
            mask <<= 1
    return R.blocks()


def bcast_binomial(n: int, nbytes: int) -> list[np.ndarray]:
    """Binomial tree from root 0: rank v != 0 RECVs nbytes from v - lowbit(v), then ISENDs
    nbytes to v + m for m = lowbit(v)/2, ..., 1 (root: from the largest power of 2 < n down),
    then WAITALL."""
    R = Rows(n)
    top = 1 << max(0, (n - 1).bit_length())
    for v in range(n):
        if v:
            R.add(v, OP_RECV, v - _lowbit(v), nbytes)
        m = (_lowbit(v) if v else top) >> 1
        sent = False
        while m:
            if v + m < n:
                R.add(v, OP_ISEND, v + m, nbytes)
                sent = True
            m >>= 1
        if sent:
            R.add(v, OP_WAITALL)
    return R.blocks()


def gather_binomial(n: int, nbytes: int) -> list[np.ndarray]:
    """Binomial gather to root 0, data aggregating up the tree: rank v RECVs from each child
    c = v + 2**k (k increasing) nbytes * subtree(c) bytes, then SENDs nbytes * subtree(v) to its
    parent. The root receives log2(n) messages of nbytes, 2 nbytes, 4 nbytes, ... (n a power
    of 2)."""
    R = Rows(n)
    for v in range(n):
        mask = 1
        while mask < n:
            if v & mask:
                R.add(v, OP_SEND, v - mask, nbytes * subtree(v, n))
                break
            if v + mask < n:
                R.add(v, OP_RECV, v + mask, nbytes * subtree(v + mask, n))
            mask <<= 1
    return R.blocks()


def scatter_binomial(n: int, nbytes: int) -> list[np.ndarray]:
    """Binomial scatter from root 0 (the mirror of gather_binomial): rank v != 0 RECVs
    nbytes * subtree(v) from its parent, then SENDs nbytes * subtree(c) to each child
    c = v + m, m from lowbit(v)/2 down to 1 (largest subtree first)."""
    R = Rows(n)
    top = 1 << max(0, (n - 1).bit_length())
    for v in range(n):
        if v:
            R.add(v, OP_RECV, v - _lowbit(v), nbytes * subtree(v, n))
        m = (_lowbit(v) if v else top) >> 1
        while m:
            if v + m < n:
                R.add(v, OP_SEND, v + m, nbytes * subtree(v + m, n))
            m >>= 1
    return R.blocks()


def gatherv_linear(n: int, nbytes: int) -> list[np.ndarray]:
    """Linear (no optimization): every rank SENDs nbytes to root 0, which RECVs from 1..n-1 in
    order."""
    R = Rows(n)
    for v in range(1, n):
        R.add(v, OP_SEND, 0, nbytes)
        R.add(0, OP_RECV, v, nbytes)
    return R.blocks()


def scatterv_linear(n: int, nbytes: int) -> list[np.ndarray]:
    """Linear (no optimization): root 0 SENDs nbytes to 1..n-1 in order; the others RECV."""
    R = Rows(n)
    for v in range(1, n):
        R.add(0, OP_SEND, v, nbytes)
        R.add(v, OP_RECV, 0, nbytes)
    return R.blocks()


def rotate_root(vrows: list[np.ndarray], roots: np.ndarray) -> list[np.ndarray]:
    """Concatenate executions of a root-0 collective for each root in `roots` (in order), with
    virtual rank v played by rank (v + root) % n. Returns one block per rank. Vectorized."""
    n = len(vrows)
    roots = np.asarray(roots, np.int64)
    lens = np.array([len(x) for x in vrows], np.int64)
    off = np.cumsum(lens) - lens
    flat = np.concatenate([np.asarray(x, np.int32).reshape(-1, 4) for x in vrows])
    V = (np.arange(n)[:, None] - roots[None, :]) % n          # [n ranks, k executions]
    ln = lens[V].ravel()
    ends = np.cumsum(ln)
    idx = np.repeat(off[V].ravel() - (ends - ln), ln) + np.arange(int(ends[-1]) if ln.size else 0)
    rows = flat[idx]
    rho = np.repeat(np.broadcast_to(roots, V.shape).ravel(), ln)
    peer = np.isin(rows[:, 0], _PEER_OPS)
    rows[peer, 1] = (rows[peer, 1] + rho[peer]) % n
    per_rank = lens[V].sum(axis=1)
    return np.split(rows, np.cumsum(per_rank)[:-1])

"""Audit helpers every protocol family may use (protocols/<family>/ hold the audits
themselves): views of a member's pair table (engine/pairs.py builds it, kernels/pairs.py looks
pairs up), which packet slots are alive, and per-node counters as outputs."""
from __future__ import annotations

import numpy as np


def alive_packets(S, b) -> np.ndarray:
    """bool [NPK]: the packet slots of member b in use (not on the pool's free list), for the
    audits that count credits carried by packets still in the network."""
    free = np.zeros(S.pk["kind"].shape[1], bool)
    h = int(S.pk_meta[b, 0])
    while h >= 0:
        free[h] = True
        h = int(S.pk["next"][b, h])
    return ~free


def node_counter(field: int):
    """An Output extractor (protocols/registry.py): column `field` of the member's per-node
    protocol state fcn, as int64 [nodes]."""
    return lambda batch, b: batch.S.fcn[b, :, field].astype(np.int64)


def pairs_of(S, b: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) int64 of member b's table entries in use, in table order (row-major, a row's
    peers ascending, then the idle senders given an entry): the entries of S.fc[b, :len(x)]
    that are not in use carry y = -1 (spares) and are left out of nothing else."""
    nr = S.rk_pc.shape[1]
    ptr = S.pair_ptr[b].astype(np.int64)
    n = int(ptr[-1]) if nr else 0
    x = np.repeat(np.arange(nr, dtype=np.int64), np.diff(ptr))
    return x, S.pair_peer[b, :n].astype(np.int64)


def lookup(S, b: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Entries of pairs (x, y) of member b (arrays), -1 where a pair is not in the table."""
    nr = S.rk_pc.shape[1]
    px, py = pairs_of(S, b)
    used = np.flatnonzero(py >= 0)
    keys = px[used] * nr + py[used]
    order = np.argsort(keys, kind="stable")
    keys, used = keys[order], used[order]
    want = np.asarray(x, np.int64) * nr + np.asarray(y, np.int64)
    if not len(keys):
        return np.full(want.shape, -1)
    i = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    return np.where(keys[i] == want, used[i], -1)


def audit_args(S, b: int) -> tuple:
    """(fc, x, y, rev) of member b for the audits: its table entries, their pairs and
    the entry of each reverse pair (-1: not in the table)."""
    x, y = pairs_of(S, b)
    return S.fc[b, :len(x)], x, y, lookup(S, b, y, x)


def dense_fc(S, b: int) -> np.ndarray:
    """fc of member b as the dense [NR, NR, K] table of before (pairs outside the table read 0;
    for tests and small runs: it allocates ranks**2 entries)."""
    nr, K = S.rk_pc.shape[1], S.fc.shape[2]
    out = np.zeros((nr, nr, K), S.fc.dtype)
    x, y = pairs_of(S, b)
    used = y >= 0
    out[x[used], y[used]] = S.fc[b, :len(x)][used]
    return out

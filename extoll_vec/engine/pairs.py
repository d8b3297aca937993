"""The pair table (state.py: pair_ptr, pair_peer; kernels/pairs.py looks pairs up): which
pairs of ranks get per-pair state (fc, ux_head, ux_tail). Issue 23, item 3.

A pair (x, y) is in the table when x sends to y or y sends to x, or either posts a receive
naming the other (workloads.message_counts, loops unrolled): both directions, since control
packets and RMA GETs flow back along a pair. A row that would hold every other rank is made
dense (every rank, self included), so that the kernels find its pairs by arithmetic. Every row
is dense (the table is ranks**2, as before) when the member's protocol keeps state about every
sender (Protocol.every_pair: EXTOLL dynamic, whose activity lists hold every other process and
whose Eq. 6 steals from idle senders) or its program takes credit snapshots (OP_SNAPSHOT
records the credits towards every peer). A member with no ranks (network-only traffic) has no
pairs. Entries beyond the member's pairs are unused; the last entry of the batch's table is
the sink that a lookup of a missing pair returns (with ERR_PAIR).
"""
from __future__ import annotations

import numpy as np

from ..protocols.registry import protocol


def dense_rows(nr: int) -> tuple[np.ndarray, np.ndarray]:
    """(pair_ptr, pair_peer) of the table that holds every pair."""
    ptr = np.arange(nr + 1, dtype=np.int64) * nr
    return ptr, np.tile(np.arange(nr, dtype=np.int32), nr)


def pair_table(cfg, prog, snapshots: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(pair_ptr int64 [NR + 1], pair_peer int32 [pairs]) of one member, rows ascending."""
    from ..workloads import message_counts
    nr = prog.n_ranks if prog is not None else 0
    if nr == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.int32)
    if protocol(cfg.protocol.name).every_pair or snapshots > 0:
        return dense_rows(nr)
    src, dst, _sent, _recv, _any = message_counts(prog)
    src = src.astype(np.int64)
    dst = dst.astype(np.int64)
    keys = np.unique(np.concatenate([src * nr + dst, dst * nr + src]))
    x = keys // nr
    others = np.bincount(x[(keys % nr) != x], minlength=nr)
    full = np.flatnonzero(others >= nr - 1)     # rows holding every other rank: dense
    if len(full):
        keys = np.unique(np.concatenate(
            [keys, (full[:, None] * nr + np.arange(nr)[None, :]).ravel()]))
        x = keys // nr
    ptr = np.zeros(nr + 1, np.int64)
    ptr[1:] = np.cumsum(np.bincount(x, minlength=nr))
    return ptr, (keys % nr).astype(np.int32)


def pair_table_size(ptr: np.ndarray) -> tuple[int, int]:
    """(pairs, peers of the busiest rank) of a table."""
    return int(ptr[-1]), int(np.diff(ptr).max()) if len(ptr) > 1 else 0


def pairs_of(S, b: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) int64 [pairs] of member b's table, in table order (row-major, peers ascending)."""
    nr = S.rk_pc.shape[1]
    ptr = S.pair_ptr[b].astype(np.int64)
    n = int(ptr[-1]) if nr else 0
    x = np.repeat(np.arange(nr, dtype=np.int64), np.diff(ptr))
    return x, S.pair_peer[b, :n].astype(np.int64)


def lookup(S, b: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Entries of pairs (x, y) of member b (arrays), -1 where a pair is not in the table."""
    nr = S.rk_pc.shape[1]
    px, py = pairs_of(S, b)
    keys = px * nr + py                    # ascending: the table is row-major and sorted
    want = np.asarray(x, np.int64) * nr + np.asarray(y, np.int64)
    i = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
    return np.where((len(keys) > 0) & (keys[i] == want), i, -1) if len(keys) else \
        np.full(want.shape, -1)


def dense_fc(S, b: int) -> np.ndarray:
    """fc of member b as the dense [NR, NR, K] table of before (pairs outside the table read 0;
    for tests and small runs: it allocates ranks**2 entries)."""
    nr, K = S.rk_pc.shape[1], S.fc.shape[2]
    out = np.zeros((nr, nr, K), S.fc.dtype)
    x, y = pairs_of(S, b)
    out[x, y] = S.fc[b, :len(x)]
    return out

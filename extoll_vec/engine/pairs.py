"""The pair table (state.py: pair_ptr, pair_peer, pair_real; kernels/pairs.py looks pairs
up): which pairs of ranks get per-pair state (fc, ux_head, ux_tail).

A pair (x, y) is in the table when x sends to y or y sends to x, or either posts a receive
naming the other (workloads.message_counts, loops unrolled): both directions, since control
packets and RMA GETs flow back along a pair. A row that would hold every other rank is made
dense (every rank, self included), so that the kernels find its pairs by arithmetic. A member
with no ranks (network-only traffic) has no pairs. Every row is dense (ranks**2, as before)
when the program takes credit snapshots (OP_SNAPSHOT records the credits towards every peer),
or in a rerun at full size (exact=True, after ERR_SPARE).

A protocol that keeps state about every sender (Protocol.every_pair: EXTOLL dynamic, whose
activity lists hold every other process and whose Eq. 6 steals from idle senders) gets spare
entries after a row's peers for the idle senders it may steal from (kernels/pairs.py): as many
as its Protocol.spare_entries gives for the packets into the rank, at most one per idle sender
(a row that runs out raises ERR_SPARE and the batch is run again with dense tables,
engine/batch.py). Entries beyond the member's pairs are unused; the last
entry of the batch's table is the sink that a lookup of a missing pair returns (ERR_PAIR).
"""
from __future__ import annotations

import numpy as np

from ..protocols.registry import protocol


def dense_rows(nr: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair_ptr, pair_peer, pair_real) of the table that holds every pair."""
    ptr = np.arange(nr + 1, dtype=np.int64) * nr
    return ptr, np.tile(np.arange(nr, dtype=np.int32), nr), np.full(nr, nr, np.int64)


def pair_table(cfg, prog, snapshots: int = 0, packets_in: np.ndarray | None = None,
               exact: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair_ptr int64 [NR + 1], pair_peer int32 [entries], pair_real int64 [NR]) of one
    member: row x is pair_peer[pair_ptr[x]:pair_ptr[x + 1]], its first pair_real[x] entries
    its peers ascending, the rest spare (-1). packets_in: eager packets into each rank over
    the run (progstats.inbound), for the spare entries of Protocol.every_pair (None: dense)."""
    from ..workloads import message_counts
    nr = prog.n_ranks if prog is not None else 0
    if nr == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64)
    proto = protocol(cfg.protocol.name)
    every = proto.every_pair
    if exact or snapshots > 0 or (every and packets_in is None):
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
    real = np.bincount(x, minlength=nr).astype(np.int64)
    spare = np.zeros(nr, np.int64)
    if every:
        idle = np.where(others >= nr - 1, 0, nr - 1 - others)
        spare = np.minimum(idle, proto.spare_entries(cfg, np.asarray(packets_in, np.int64)))
    ptr = np.zeros(nr + 1, np.int64)
    ptr[1:] = np.cumsum(real + spare)
    peer = np.full(int(ptr[-1]), -1, np.int32)
    at = np.repeat(ptr[:-1], real) + (np.arange(len(keys)) - np.repeat(np.cumsum(real) - real,
                                                                       real))
    peer[at] = keys % nr
    return ptr, peer, real


def pair_table_size(ptr: np.ndarray) -> tuple[int, int]:
    """(entries, entries of the busiest rank) of a table."""
    return int(ptr[-1]), int(np.diff(ptr).max()) if len(ptr) > 1 else 0

"""Collectives built from point-to-point messages (row blocks to splice into rank programs)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..dtypes import OP_ISEND, OP_RECV, OP_SEND, OP_WAITALL


def barrier_rounds(n: int) -> int:
    """Rounds of a dissemination barrier among n ranks: ceil(log2 n) (0 for n <= 1)."""
    return (int(n) - 1).bit_length() if n > 1 else 0


def barrier_rows(ranks: Sequence[int] | np.ndarray, nbytes: int = 0) -> np.ndarray:
    """Dissemination barrier among `ranks` (Hensgen, Finkel and Manber).

    Returns int32 [len(ranks), 3 * barrier_rounds(len(ranks)), 4]: block i belongs to ranks[i].
    Round k of participant i: OP_ISEND of `nbytes` (0 by default) to ranks[(i + 2**k) % n],
    blocking OP_RECV from ranks[(i - 2**k) % n], OP_WAITALL. Within one barrier the 2**k
    offsets are distinct modulo n, so no pair exchanges two barrier messages, and MPI's
    non-overtaking order keeps them apart from earlier messages between the same ranks.
    """
    r = np.asarray(ranks, dtype=np.int64).ravel()
    n = r.size
    if n and (r.min() < 0 or np.unique(r).size != n):
        raise ValueError("barrier ranks must be distinct and >= 0")
    if nbytes < 0:
        raise ValueError(f"barrier message size must be >= 0, got {nbytes}")
    rounds = barrier_rounds(n)
    out = np.zeros((n, rounds, 3, 4), np.int32)
    if rounds:
        i = np.arange(n)[:, None]
        d = np.left_shift(1, np.arange(rounds))[None, :]
        out[:, :, 0, 0] = OP_ISEND
        out[:, :, 0, 1] = r[(i + d) % n]
        out[:, :, 0, 2] = nbytes
        out[:, :, 1, 0] = OP_RECV
        out[:, :, 1, 1] = r[(i - d) % n]
        out[:, :, 1, 2] = nbytes
        out[:, :, 2, 0] = OP_WAITALL
    return out.reshape(n, 3 * rounds, 4)


def alltoall_rows(groups: int, group_size: int, message_bytes: int) -> np.ndarray:
    """One non-optimized alltoall in each of `groups` groups of `group_size` consecutive ranks
    from rank 0: int32 [groups*group_size, 2*(group_size-1), 4]. Member i SENDs message_bytes to
    i+1, i+2, ..., i-1 (mod group_size, within its group), then RECVs from them in that order."""
    gs, m = group_size, group_size - 1
    rel = (np.arange(gs)[:, None] + np.arange(1, gs)[None, :]) % gs   # [gs, gs-1] rotating order
    peers = (np.arange(groups)[:, None, None] * gs + rel[None]).reshape(groups * gs, m)
    out = np.zeros((groups * gs, 2 * m, 4), np.int32)
    out[:, :m, 0] = OP_SEND
    out[:, m:, 0] = OP_RECV
    out[:, :, 1] = np.concatenate([peers, peers], axis=1)
    out[:, :, 2] = message_bytes
    return out

"""MPI collectives as MPICH 1.2.5 decomposes them (the MPI under MVAPICH 0.9, Liu and Panda's
library): the default collective module src/coll/intra_fns_new.c (configure.in:507) of
MPICH 1.2.5 (repository matthiasdiener/mpich, commit 4836f61d). Every function returns one
int32 [k, 4] row block per rank (root 0 where rooted; conventions of mpi_coll), cached: the NAS
skeletons (nas_*.py) splice them into their programs.

- Barrier (intra_Barrier, l. 205-266): pairwise exchange, log2 n zero-byte MPI_Sendrecv per
  rank, with the fold-in of the ranks above the largest power of 2.
- Bcast (intra_Bcast, l. 311): binomial tree with blocking sends only below 12288 bytes on at
  most 8 ranks (l. 392); otherwise an MST scatter and a recursive-doubling allgather.
- Reduce (l. 2783): binomial tree to 0. Allreduce (l. 2987): recursive doubling of the whole
  vector (Reduce + Bcast only on heterogeneous communicators).
- Alltoall (l. 2416-2640): by the bytes a rank sends in all: <= 128 recursive doubling,
  < 256 KiB all Irecv then all Isend then Waitall, else pairwise MPI_Sendrecv. Alltoallv
  (l. 2671-2750): all Irecv, all Isend from rank+1 on, Waitall.
- MPI_Sendrecv (src/pt2pt/sendrecv.c:93-98): Irecv, Isend, Waitall (mpi_coll.Rows.sendrecv).
Messages a rank sends to itself are local copies in MVAPICH and are left out.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..dtypes import OP_IRECV, OP_ISEND, OP_RECV, OP_SEND, OP_WAITALL
from .mpi_coll import Rows, alltoall_pairwise, pow2_floor
from .mpi_rooted import reduce_binomial

BCAST_SHORT_MSG = 12288         # MPIR_BCAST_SHORT_MSG
BCAST_MIN_PROCS = 8             # MPIR_BCAST_MIN_PROCS: binomial only if size <= 8
ALLTOALL_SHORT = 128            # bytes a rank sends in all: recursive doubling up to this
ALLTOALL_MEDIUM = 262144        # below this: all Irecv, all Isend; else pairwise


@lru_cache(maxsize=None)
def mpich_barrier(n: int) -> tuple:
    """intra_Barrier: N2_prev = largest power of 2 <= n, surfeit = n - N2_prev. Ranks r < surfeit
    RECV a 0-byte fan-in from N2_prev + r; ranks < N2_prev sendrecv 0 bytes with r ^ d for
    d = 1, 2, 4, ..; then r < surfeit SEND the fan-out to N2_prev + r; ranks >= N2_prev do one
    sendrecv with r - N2_prev."""
    R = Rows(n)
    p2 = pow2_floor(n)
    surfeit = n - p2
    for r in range(n):
        if r < p2:
            if r < surfeit:
                R.add(r, OP_RECV, p2 + r, 0)
            d = 1
            while d < p2:
                R.sendrecv(r, r ^ d, 0, r ^ d, 0)
                d <<= 1
            if r < surfeit:
                R.add(r, OP_SEND, p2 + r, 0)
        else:
            R.sendrecv(r, r - p2, 0, r - p2, 0)
    return tuple(R.blocks())


@lru_cache(maxsize=None)
def mpich_allreduce(n: int, nbytes: int) -> tuple:
    """intra_Allreduce, homogeneous case: (local self-copy, not modelled) then recursive doubling
    over mask = 1, 2, 4, ..: sendrecv nbytes with r ^ mask if it exists; for a non-power-of-two
    n, the subtree fix-up of the code (blocking SEND/RECV of the result to the ranks whose
    partner did not exist)."""
    R = Rows(n)
    for r in range(n):
        mask, i = 1, 0
        while mask < n:
            dst = r ^ mask
            dst_tree_root = (dst >> i) << i
            my_tree_root = (r >> i) << i
            if dst < n:
                R.sendrecv(r, dst, nbytes, dst, nbytes)
            if dst_tree_root + mask > n:
                nprocs_completed = n - my_tree_root - mask
                k = mask.bit_length() - 1
                tmp_mask = mask >> 1
                while tmp_mask:
                    d2 = r ^ tmp_mask
                    tree_root = (r >> k) << k
                    if d2 > r and r < tree_root + nprocs_completed <= d2:
                        R.add(r, OP_SEND, d2, nbytes)
                    elif d2 < r and d2 < tree_root + nprocs_completed <= r:
                        R.add(r, OP_RECV, d2, nbytes)
                    tmp_mask >>= 1
                    k -= 1
            mask <<= 1
            i += 1
    return tuple(R.blocks())


@lru_cache(maxsize=None)
def mpich_reduce(n: int, nbytes: int) -> tuple:
    """intra_Reduce, commutative op, root 0: binomial tree (mpi_rooted.reduce_binomial)."""
    return tuple(reduce_binomial(n, nbytes))


@lru_cache(maxsize=None)
def mpich_bcast(n: int, nbytes: int) -> tuple:
    """intra_Bcast from root 0. Short (nbytes < 12288 and n <= 8): binomial tree, RECV from the
    parent, blocking SEND to children rank + mask, mask from high to low. Otherwise: MST scatter
    of ceil(nbytes/n)-byte pieces (blocking SEND/RECV, only non-empty pieces), then an allgather
    by recursive doubling: MPI_Sendrecv of the bytes held so far with relative rank ^ mask for
    every mask (zero-byte ones included), plus the non-power-of-two fix-up of the code."""
    R = Rows(n)
    if nbytes < BCAST_SHORT_MSG and n <= BCAST_MIN_PROCS:
        for r in range(n):
            mask = 1
            while mask < n:
                if r & mask:
                    R.add(r, OP_RECV, r - mask, nbytes)
                    break
                mask <<= 1
            mask >>= 1
            while mask > 0:
                if r + mask < n:
                    R.add(r, OP_SEND, r + mask, nbytes)
                mask >>= 1
        return tuple(R.blocks())
    ss = (nbytes + n - 1) // n                       # scatter_size
    curr = [0] * n
    curr[0] = nbytes
    got = [None] * n                                 # bytes received in the scatter
    for r in range(n):                               # parents have lower ranks than children
        mask = 1
        while mask < n:
            if r & mask:
                expect = nbytes - r * ss
                if expect <= 0:
                    curr[r] = 0
                    assert got[r] is None
                else:
                    assert got[r] is not None and got[r] > 0
                    R.add(r, OP_RECV, r - mask, got[r])
                    curr[r] = got[r]
                break
            mask <<= 1
        mask >>= 1
        while mask > 0:
            if r + mask < n:
                send = curr[r] - ss * mask
                if send > 0:
                    R.add(r, OP_SEND, r + mask, send)
                    got[r + mask] = send
                    curr[r] -= send
            mask >>= 1
    last = [0] * n                                   # the code's recv_size (last received)
    mask, i = 1, 0
    while mask < n:
        new = list(curr)
        for r in range(n):
            d = r ^ mask
            if d < n:
                R.sendrecv(r, d, curr[r], d, curr[d])
                new[r] = curr[r] + curr[d]
                last[r] = curr[d]
        curr = new
        # non-power-of-two fix-up, round by round (tmp_mask = mask/2, mask/4, ..; k = log2 of
        # tmp_mask's round): a rank with data sends its last received piece to one without
        fix = [r for r in range(n) if (((r ^ mask) >> i) << i) + mask > n]
        tmp_mask, k = mask >> 1, mask.bit_length() - 1
        while tmp_mask:
            moves = []
            for r in fix:
                nprocs_completed = n - ((r >> i) << i) - mask
                d2 = r ^ tmp_mask
                tree_root = (r >> k) << k
                if d2 > r and r < tree_root + nprocs_completed <= d2:
                    moves.append((r, d2, last[r]))
            for s_, d2, b in moves:
                R.add(s_, OP_SEND, d2, b)
                R.add(d2, OP_RECV, s_, b)
                curr[d2] += b
                last[d2] = b
            tmp_mask >>= 1
            k -= 1
        mask <<= 1
        i += 1
    return tuple(R.blocks())



def alltoallv(sizes) -> list[np.ndarray]:
    """sizes[s][d] bytes from s to d: Irecv from rank+1, rank+2, ..., then Isend to rank+1,
    rank+2, ..., then Waitall (l. 2671-2750)."""
    n = len(sizes)
    R = Rows(n)
    for r in range(n):
        for i in range(1, n):
            R.add(r, OP_IRECV, (r + i) % n, sizes[(r + i) % n][r])
        for i in range(1, n):
            R.add(r, OP_ISEND, (r + i) % n, sizes[r][(r + i) % n])
        R.add(r, OP_WAITALL)
    return R.blocks()


@lru_cache(maxsize=None)
def mpich_alltoall(n: int, blk: int) -> tuple:
    """MPI_Alltoall of blk bytes per destination, the algorithm chosen by n * blk."""
    total = blk * n
    if total <= ALLTOALL_SHORT:          # recursive doubling with growing blocks (n a power of 2)
        R = Rows(n)
        for r in range(n):
            mask = 1
            while mask < n:
                b = blk * n * mask
                R.sendrecv(r, r ^ mask, b, r ^ mask, b)
                mask <<= 1
        return tuple(R.blocks())
    if total < ALLTOALL_MEDIUM:
        return tuple(alltoallv([[blk] * n for _ in range(n)]))
    return tuple(alltoall_pairwise(n, blk))

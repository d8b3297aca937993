"""MPI collective algorithms as point-to-point rank programs (one execution, ranks 0..n-1).
Rooted collectives (trees, linear gathers/scatters) and root rotation are in mpi_rooted.

Every function returns one int32 [k, 4] row block per rank (no OP_END, no loops), ready to be
wrapped by a benchmark driver (see imb.py). Message sizes are in bytes and exact per step;
reductions cost no compute time (the CPU time of the arithmetic is ignored).

A "sendrecv" step is what MPI libraries do for MPI_Sendrecv: IRECV from the source, ISEND to
the destination, WAITALL. Zero-byte pieces are skipped where MPICH/Open MPI skip them
(reduce-scatter); barrier messages are zero-byte.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import OP_IRECV, OP_ISEND, OP_RECV, OP_SEND, OP_WAITALL
from .collectives import barrier_rows


class Rows:
    """Per-rank row lists (op, a, b, 0); ``blocks()`` gives the int32 [k, 4] arrays."""

    def __init__(self, n: int):
        self.n = n
        self.rows: list[list[tuple[int, int, int, int]]] = [[] for _ in range(n)]

    def add(self, r: int, op: int, a: int = 0, b: int = 0) -> None:
        self.rows[r].append((op, a, b, 0))

    def sendrecv(self, r: int, dst: int, sbytes: int, src: int, rbytes: int) -> None:
        self.add(r, OP_IRECV, src, rbytes)
        self.add(r, OP_ISEND, dst, sbytes)
        self.add(r, OP_WAITALL)

    def blocks(self) -> list[np.ndarray]:
        return [np.array(x, np.int32).reshape(-1, 4) for x in self.rows]


def pow2_floor(n: int) -> int:
    return 1 << (int(n).bit_length() - 1)


# ---- point-to-point IMB patterns ------------------------------------------------------------

def pingpong(n: int, nbytes: int) -> list[np.ndarray]:
    """Rank 0 SEND to 1, RECV from 1; rank 1 the mirror image. Other ranks: nothing."""
    R = Rows(n)
    R.add(0, OP_SEND, 1, nbytes); R.add(0, OP_RECV, 1, nbytes)
    R.add(1, OP_RECV, 0, nbytes); R.add(1, OP_SEND, 0, nbytes)
    return R.blocks()


def pingping(n: int, nbytes: int) -> list[np.ndarray]:
    """Ranks 0 and 1 both: ISEND to the other, RECV from the other, WAITALL."""
    R = Rows(n)
    for me, peer in ((0, 1), (1, 0)):
        R.add(me, OP_ISEND, peer, nbytes); R.add(me, OP_RECV, peer, nbytes); R.add(me, OP_WAITALL)
    return R.blocks()


def sendrecv_ring(n: int, nbytes: int) -> list[np.ndarray]:
    """Every rank: sendrecv to the right neighbour, from the left one (periodic chain)."""
    R = Rows(n)
    for r in range(n):
        R.sendrecv(r, (r + 1) % n, nbytes, (r - 1) % n, nbytes)
    return R.blocks()


def exchange(n: int, nbytes: int) -> list[np.ndarray]:
    """IMB Exchange: ISEND right, ISEND left, RECV left, RECV right, WAITALL."""
    R = Rows(n)
    for r in range(n):
        left, right = (r - 1) % n, (r + 1) % n
        R.add(r, OP_ISEND, right, nbytes); R.add(r, OP_ISEND, left, nbytes)
        R.add(r, OP_RECV, left, nbytes); R.add(r, OP_RECV, right, nbytes)
        R.add(r, OP_WAITALL)
    return R.blocks()


# ---- reductions ---------------------------------------------------------------------------------

def allreduce_recursive_doubling(n: int, nbytes: int) -> list[np.ndarray]:
    """Recursive doubling (Open MPI/MPICH). With p = pow2_floor(n), e = n - p: among ranks < 2e
    the even ones SEND their vector to rank+1 and drop out; the p remaining ranks do log2(p)
    sendrecv steps with partner newrank ^ 2**k; rank 2i+1 (< 2e) finally SENDs the result back
    to 2i. Every message carries the whole vector (nbytes)."""
    R = Rows(n)
    p = pow2_floor(n)
    e = n - p
    real = lambda nr: 2 * nr + 1 if nr < e else nr + e  # noqa: E731
    for r in range(n):
        if r < 2 * e:
            if r % 2 == 0:
                R.add(r, OP_SEND, r + 1, nbytes); R.add(r, OP_RECV, r + 1, nbytes)
                continue
            R.add(r, OP_RECV, r - 1, nbytes)
            nr = r // 2
        else:
            nr = r - e
        d = 1
        while d < p:
            peer = real(nr ^ d)
            R.sendrecv(r, peer, nbytes, peer, nbytes)
            d <<= 1
        if r < 2 * e:
            R.add(r, OP_SEND, r - 1, nbytes)
    return R.blocks()


def reduce_scatter_recursive_halving(n: int, counts: list[int]) -> list[np.ndarray]:
    """Recursive halving (MPICH / Open MPI basic_recursivehalving); counts[i] = bytes rank i
    gets. Ranks < 2e (e = n - pow2_floor(n)): even ones SEND the whole vector (sum counts) to
    rank+1 and drop out. Then log2(p) steps: with mask = p/2, p/4, ..., 1 a rank keeps one half
    of its current block range and sendrecvs the other half with partner newrank ^ mask
    (sizes = sums of the block counts; a zero-byte direction is skipped). Finally rank 2i+1
    SENDs counts[2i] to 2i."""
    R = Rows(n)
    p = pow2_floor(n)
    e = n - p
    total = sum(counts)
    new = [counts[2 * i] + counts[2 * i + 1] if i < e else counts[i + e] for i in range(p)]
    pre = np.concatenate([[0], np.cumsum(new)]).tolist()
    real = lambda nr: 2 * nr + 1 if nr < e else nr + e  # noqa: E731
    for r in range(n):
        if r < 2 * e and r % 2 == 0:
            R.add(r, OP_SEND, r + 1, total)
            if counts[r]:
                R.add(r, OP_RECV, r + 1, counts[r])
            continue
        if r < 2 * e:
            R.add(r, OP_RECV, r - 1, total)
        nr = r // 2 if r < 2 * e else r - e
        mask, send_idx, recv_idx, last = p >> 1, 0, 0, p
        while mask > 0:
            peer = real(nr ^ mask)
            if nr < (nr ^ mask):
                send_idx = recv_idx + mask
                scnt, rcnt = pre[last] - pre[send_idx], pre[send_idx] - pre[recv_idx]
            else:
                recv_idx = send_idx + mask
                scnt, rcnt = pre[recv_idx] - pre[send_idx], pre[last] - pre[recv_idx]
            if rcnt:
                R.add(r, OP_IRECV, peer, rcnt)
            if scnt:
                R.add(r, OP_ISEND, peer, scnt)
            if rcnt or scnt:
                R.add(r, OP_WAITALL)
            send_idx, last = recv_idx, recv_idx + mask
            mask >>= 1
        if r < 2 * e and counts[r - 1]:
            R.add(r, OP_SEND, r - 1, counts[r - 1])
    return R.blocks()


# ---- all-to-all ----------------------------------------------------------------------------------

def alltoall_linear(n: int, nbytes: int) -> np.ndarray:
    """Open MPI basic_linear (its choice for blocks of 200..3000 bytes): IRECV from r+1, r+2, ...,
    r-1, then ISEND to r-1, r-2, ..., r+1 (reverse order), then WAITALL. Returns one array
    [n, 2(n-1)+1, 4] (all ranks have equal lengths)."""
    r = np.arange(n)[:, None]
    k = np.arange(1, n)[None, :]
    out = np.zeros((n, 2 * (n - 1) + 1, 4), np.int32)
    out[:, :n - 1, 0] = OP_IRECV
    out[:, :n - 1, 1] = (r + k) % n
    out[:, n - 1:2 * (n - 1), 0] = OP_ISEND
    out[:, n - 1:2 * (n - 1), 1] = (r - k) % n
    out[:, :2 * (n - 1), 2] = nbytes
    out[:, -1, 0] = OP_WAITALL
    return out


def alltoall_pairwise(n: int, nbytes: int) -> np.ndarray:
    """Pairwise exchange: steps k = 1..n-1, each a sendrecv to r+k from r-k. [n, 3(n-1), 4]."""
    r = np.arange(n)[:, None]
    k = np.arange(1, n)[None, :]
    out = np.zeros((n, n - 1, 3, 4), np.int32)
    out[:, :, 0, 0] = OP_IRECV
    out[:, :, 0, 1] = (r - k) % n
    out[:, :, 1, 0] = OP_ISEND
    out[:, :, 1, 1] = (r + k) % n
    out[:, :, :2, 2] = nbytes
    out[:, :, 2, 0] = OP_WAITALL
    return out.reshape(n, 3 * (n - 1), 4)


# ---- allgather ----------------------------------------------------------------------------------

def allgather_recursive_doubling(n: int, nbytes: int) -> list[np.ndarray]:
    """n a power of 2: step k sendrecvs nbytes * 2**k with partner r ^ 2**k."""
    assert n & (n - 1) == 0
    R = Rows(n)
    for r in range(n):
        d = 1
        while d < n:
            R.sendrecv(r, r ^ d, nbytes * d, r ^ d, nbytes * d)
            d <<= 1
    return R.blocks()


def allgather_bruck(n: int, nbytes: int) -> list[np.ndarray]:
    """Bruck: step k (d = 2**k < n) sendrecvs nbytes * min(d, n - d) to r - d from r + d."""
    R = Rows(n)
    for r in range(n):
        d = 1
        while d < n:
            b = nbytes * min(d, n - d)
            R.sendrecv(r, (r - d) % n, b, (r + d) % n, b)
            d <<= 1
    return R.blocks()


def allgather_ring(n: int, nbytes: int) -> list[np.ndarray]:
    """Ring: n-1 sendrecv steps of nbytes to r+1 from r-1."""
    return [np.tile(b, (n - 1, 1)) for b in sendrecv_ring(n, nbytes)]


def allgather_neighbor_exchange(n: int, nbytes: int) -> list[np.ndarray]:
    """Neighbor exchange (Chen et al.; Open MPI, n even): step 0 sendrecvs nbytes with the
    first neighbour (r+1 for even r, r-1 for odd r), then n/2 - 1 steps sendrecv 2 * nbytes,
    alternating between the second and the first neighbour."""
    assert n % 2 == 0
    R = Rows(n)
    for r in range(n):
        nb = [(r + 1) % n, (r - 1) % n] if r % 2 == 0 else [(r - 1) % n, (r + 1) % n]
        R.sendrecv(r, nb[0], nbytes, nb[0], nbytes)
        for i in range(1, n // 2):
            peer = nb[i % 2]
            R.sendrecv(r, peer, 2 * nbytes, peer, 2 * nbytes)
    return R.blocks()


def allgather_open_mpi(n: int, nbytes: int, v: bool = False) -> tuple[str, list[np.ndarray]]:
    """Open MPI tuned decision: total n*nbytes < 50000 B -> recursive doubling (n a power of 2,
    not for the v variant) or Bruck; otherwise neighbor exchange (n even) or ring (n odd)."""
    if n * nbytes < 50000:
        if not v and n & (n - 1) == 0:
            return "recursive doubling", allgather_recursive_doubling(n, nbytes)
        return "Bruck", allgather_bruck(n, nbytes)
    if n % 2 == 0:
        return "neighbor exchange", allgather_neighbor_exchange(n, nbytes)
    return "ring", allgather_ring(n, nbytes)


def barrier(n: int) -> list[np.ndarray]:
    """Dissemination barrier (collectives.barrier_rows), zero-byte messages."""
    return list(barrier_rows(np.arange(n)))

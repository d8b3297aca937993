"""Intel MPI Benchmarks (IMB) as rank programs (paper section 7.4: 1024 ranks, 2 KB messages).

``imb_program(n, benchmark, nbytes, iterations)``; workload.kind "imb" with workload.benchmark,
workload.message_bytes (IMB's message size X) and workload.iterations.

Every rank runs: (with warmup > 0: the benchmark `warmup` times with root 0, untimed, and a
barrier;) dissemination barrier (IMB's synchronisation before timing); MARK_START; the
benchmark `iterations` times; MARK_DONE; a final dissemination barrier (IMB's idle processes
"waiting in MPI_Barrier", and everybody leaves together). Time per iteration: (MARK_DONE -
MARK_START) / iterations. Reductions cost no CPU time (the arithmetic is not modelled).

The algorithms are those of the MPI library EXTOLL's MPI is based on (Open MPI, coll/tuned fixed
decision rules) for 1024 ranks and X = 2 KB, unless noted; the eager/rendezvous split
(mpi.eager_threshold) then decides which messages go by RMA. n = ranks, X = message_bytes, p =
largest power of 2 <= n, e = n - p. Sizes are per message:

PingPong      ranks 0 and 1 only (IMB runs PingPong/PingPing between 2 processes; the other
              n-2 wait in the final barrier). Rank 0: SEND X to 1, RECV X; rank 1 the mirror.
              With ranks_per_node >= 2 both are on node 0 (LiMIC if mpi.limic).
PingPing      ranks 0 and 1: ISEND X to the other, RECV X from it, WAITALL.
Sendrecv      all ranks: sendrecv X to r+1, from r-1 (periodic chain).
Exchange      all ranks: ISEND X to r+1 and r-1, RECV X from r-1 and r+1, WAITALL.
Allreduce     recursive doubling (Open MPI for vectors < 10000 B): even ranks < 2e SEND X to
              rank+1 and get the result back at the end; log2(p) sendrecv steps of X between
              partners newrank ^ 2**k.
Reduce        Open MPI's fixed rules (v1.8.4 coll_tuned_decision_fixed.c:343-417; workloads/
              ompi_tuned.py) on IMB's MPI_FLOAT (X/4 floats). X >= 2 KB on 8+ ranks
              ("Binomial_1K", lines 393-397, at 1024 x 2 KB): reduce_generic on the in-order
              binomial tree with 1 KB segments (coll_tuned_reduce.c:66-361, 462-491): a leaf
              SENDs each segment to its parent s - lowbit(s); an inner node, per segment,
              RECVs it from each child (s + 1, s + 2, s + 4, ...), then SENDs the sum up. The
              other segmented branches (pipeline 1 KB, binary tree 32 KB, pipeline 32/64 KB)
              are built alike. Unsegmented (X < 2 KB, or < 20 KB on fewer than 8 ranks): the
              binomial tree with one X message, as before. Departures: Open MPI posts the next
              segment's irecv before waiting for the previous one (two outstanding), here a
              blocking RECV at each wait; Open MPI's basic linear reduce (fewer than 8 ranks,
              X < 512 B, lines 384-386) is not built: those runs keep the binomial tree.
Bcast         Open MPI's fixed rules (coll_tuned_decision_fixed.c:223-305) on MPI_BYTE.
              2 KB <= X < 370728 B: split binary tree with 1 KB segments (lines 262-268;
              coll_tuned_bcast.c:389-633): halves of ceil(X/2) and floor(X/2) bytes go down
              the two subtrees of a fanout-2 tree (s at level L has children s + 2**L and
              s + 2**(L+1): odd ranks below 1 get half 0, even ones below 2 half 1), segment by
              segment with blocking SENDs (the root alternating between its two children);
              then odd s and s + 1 sendrecv their halves (IRECV, ISEND, WAITALL), and with n
              even the root SENDs half 1 to rank n - 1. X < 2 KB (lines 255-260): binomial
              tree, unsegmented, as before: RECV X from the parent, ISEND X to each child
              (largest subtree first), WAITALL. Departures: inner nodes RECV each segment at
              Open MPI's wait (it pre-posts the next irecv); below 2 KB the tree is numbered
              as MPICH's (parent s - lowbit(s)), Open MPI's bmtree as s - highbit(s) (same
              shape and send order, other ranks in each position: coll_tuned_topo.c:323-383);
              larger messages (pipelines, 8 KB split tree) raise a ValueError (not built).
Barrier       dissemination barrier (Open MPI "bruck"), ceil(log2 n) rounds of 0-byte messages;
              X is not used.
Alltoall      Open MPI basic_linear (its choice for blocks of 200..3000 B): IRECV X from every
              other rank, ISEND X to every other rank (reverse order), WAITALL: n-1 receives
              and sends outstanding at once.
Alltoallv     pairwise exchange (IMB uses counts X for every pair): n-1 sendrecv steps of X,
              to r+k from r-k.
Allgather     Open MPI decision on the total n*X: < 50000 B: recursive doubling (n a power of
              2; step k exchanges X * 2**k with r ^ 2**k) or Bruck (step k: X * min(2**k,
              n-2**k) to r-2**k from r+2**k); otherwise neighbor exchange (n even: one step of
              X, then n/2-1 steps of 2X, i.e. 4 KB rendezvous messages at X = 2 KB) or ring (n
              odd: n-1 steps of X). 1024 x 2 KB: neighbor exchange.
Allgatherv    as Allgather, except Bruck for every small total (Open MPI's allgatherv rule).
Gather        binomial tree, data aggregating: a rank SENDs X * (size of its subtree) to its
              parent after RECVing X * subtree(child) from each child; the root RECVs
              log2(n) messages of X, 2X, 4X, ..., nX/2 (n a power of 2). Mostly RMA.
Scatter       binomial tree, the mirror image of Gather (root SENDs nX/2 first).
Gatherv       linear (no optimized algorithm, as in Open MPI's basic module): every rank SENDs
              X to the root, which RECVs them in rank order (root+1, root+2, ...).
Scatterv      linear: the root SENDs X to root+1, root+2, ... in order; the others RECV.
Reduce_scatter  recursive halving (Open MPI for totals <= 12 KB). IMB semantics: the whole
              vector is X bytes of 4-byte floats, split as evenly as possible (rank i gets
              L//n + (i < L%n) floats, L = X//4; at X = 2 KB and n = 1024, 4 bytes to ranks
              0..511, nothing to the others). Even ranks < 2e SEND the whole vector to rank+1;
              then log2(p) steps each exchange half of the remaining block range (byte sums of
              the blocks; zero-byte directions skipped); rank 2i+1 returns 2i's block.

Rooted collectives (Reduce, Bcast, Gather, Scatter, Gatherv, Scatterv) change the root round
robin, iteration i using root i mod n, as IMB does (the paper's explanation of Scatterv). Their
iterations are unrolled (one OP_LOOP over complete rounds of n roots when iterations >= 2n).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import OP_ENDLOOP, OP_LOOP, OP_MARK
from . import mpi_coll as C
from . import mpi_rooted as T
from . import ompi_tuned as O
from .common import MARK_DONE, MARK_START, int_arg
from .program import Program, assemble
from .registry import Workload, ranks_at_least

IMB_BENCHMARKS = ("PingPong", "PingPing", "Sendrecv", "Exchange", "Allreduce", "Reduce", "Bcast",
                  "Barrier", "Alltoall", "Alltoallv", "Allgather", "Allgatherv", "Gather",
                  "Scatter", "Scatterv", "Gatherv", "Reduce_scatter")

ROOTED = ("Reduce", "Bcast", "Gather", "Scatter", "Gatherv", "Scatterv")


def reduce_scatter_counts(n: int, nbytes: int) -> list[int]:
    """Bytes each rank receives in IMB Reduce_scatter with an X = nbytes vector of floats."""
    floats = nbytes // 4
    return [4 * (floats // n + (1 if i < floats % n else 0)) for i in range(n)]


def imb_algorithm(benchmark: str, n: int, nbytes: int) -> tuple[str, list[np.ndarray]]:
    """(algorithm name, one execution's row block per rank; rooted ones with root 0)."""
    simple = {"PingPong": ("pingpong", C.pingpong), "PingPing": ("pingping", C.pingping),
              "Sendrecv": ("ring sendrecv", C.sendrecv_ring), "Exchange": ("exchange", C.exchange),
              "Allreduce": ("recursive doubling", C.allreduce_recursive_doubling),
              "Alltoall": ("linear (all requests at once)", C.alltoall_linear),
              "Alltoallv": ("pairwise exchange", C.alltoall_pairwise),
              "Gather": ("binomial tree", T.gather_binomial),
              "Scatter": ("binomial tree", T.scatter_binomial),
              "Gatherv": ("linear", T.gatherv_linear), "Scatterv": ("linear", T.scatterv_linear)}
    if benchmark in simple:
        name, fn = simple[benchmark]
        return name, list(fn(n, nbytes))
    if benchmark == "Reduce":
        return O.reduce_open_mpi(n, nbytes)
    if benchmark == "Bcast":
        return O.bcast_open_mpi(n, nbytes)
    if benchmark == "Barrier":
        return "dissemination", C.barrier(n)
    if benchmark in ("Allgather", "Allgatherv"):
        return C.allgather_open_mpi(n, nbytes, v=benchmark == "Allgatherv")
    if benchmark == "Reduce_scatter":
        return "recursive halving", C.reduce_scatter_recursive_halving(
            n, reduce_scatter_counts(n, nbytes))
    raise ValueError(f"unknown IMB benchmark {benchmark!r}; allowed: {', '.join(IMB_BENCHMARKS)}")


def _row(op: int, a: int = 0) -> np.ndarray:
    return np.array([[op, a, 0, 0]], np.int32)


def _looped(blocks: list[np.ndarray], count: int) -> list[np.ndarray]:
    """Each block wrapped in LOOP count ... ENDLOOP (not when count is 1 or the block empty)."""
    if count == 1:
        return blocks
    return [np.concatenate([_row(OP_LOOP, count), b, _row(OP_ENDLOOP)]) if len(b) else b
            for b in blocks]


def imb_program(n_ranks: int, benchmark: str, message_bytes: int, iterations: int,
                warmup: int = 0) -> Program:
    """Rank programs of one IMB benchmark over all n_ranks ranks (see the module docstring)."""
    n = int_arg("n_ranks", n_ranks, 2)
    nbytes = int_arg("message_bytes", message_bytes, 0)
    iterations = int_arg("iterations", iterations, 1)
    algo, one = imb_algorithm(benchmark, n, nbytes)   # ValueError for an unknown benchmark
    if benchmark in ROOTED:
        rounds, rest = divmod(iterations, n)
        parts = []
        if rounds:
            parts.append(_looped(T.rotate_root(one, np.arange(n)), rounds))
        if rest:
            parts.append(T.rotate_root(one, np.arange(rest)))
        body = [np.concatenate([p[r] for p in parts]) for r in range(n)]
    else:
        body = _looped(one, iterations)
    bar = C.barrier(n)
    start, done = _row(OP_MARK, MARK_START), _row(OP_MARK, MARK_DONE)
    warm = _looped(one, warmup) if warmup else [np.zeros((0, 4), np.int32)] * n
    head = [np.concatenate([warm[r], bar[r]]) if warmup else warm[r] for r in range(n)]
    ranks = [np.concatenate([head[r], bar[r], start, body[r], done, bar[r]]) for r in range(n)]
    return assemble(ranks, f"imb {benchmark} ({algo}): {n} ranks, {nbytes} B x {iterations}")


WORKLOADS = (
    Workload("imb", program=lambda cfg: imb_program(
                 cfg.workload.ranks, cfg.workload.benchmark, cfg.workload.message_bytes,
                 cfg.workload.iterations, cfg.workload.warmup),
             check=ranks_at_least(2), detail=lambda cfg: f", {cfg.workload.benchmark}"),
)

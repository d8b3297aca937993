"""Open MPI's coll/tuned Bcast and Reduce (v1.8.4; v1.6.5 has the same algorithms): the fixed
decision rules and the segmented trees they choose, as rank programs with root 0 (mpi_rooted's
rotate_root makes the other roots). Read at tag v1.8.4 of open-mpi/ompi, ompi/mca/coll/tuned/:

- coll_tuned_decision_fixed.c: ompi_coll_tuned_bcast_intra_dec_fixed (lines 223-305) and
  ompi_coll_tuned_reduce_intra_dec_fixed (lines 343-417): bcast_rule and reduce_rule below.
- coll_tuned_bcast.c: ompi_coll_tuned_bcast_intra_split_bintree (lines 389-633).
- coll_tuned_reduce.c: ompi_coll_tuned_reduce_generic (lines 66-361) with the trees of
  reduce_intra_binomial (in-order binomial, 462-491), _pipeline (chain, 400-429) and _binary
  (binary tree, 431-460); coll_tuned.h:525 COLL_TUNED_COMPUTED_SEGCOUNT (segment counts).
- coll_tuned_topo.c: ompi_coll_tuned_topo_build_tree (fanout 2: 75-173),
  _build_in_order_bmtree (399-454), _build_chain (fanout 1: 515-527).
- coll_tuned_util.c:32-77: ompi_coll_tuned_sendrecv is irecv, isend, wait for both
  (Rows.sendrecv).

Ranks here are shifted ranks s = (rank - root) mod n. One departure common to the pipelined
loops: Open MPI posts the receive of the next segment (irecv) before it waits for the previous
one, so two receives are outstanding; rank programs have no wait for one request (OP_WAITALL
would wait for the next segment too and undo the pipelining), so each such receive is a
blocking RECV at the point where Open MPI waits for it: every rank blocks at the same points
and sends at the same points, but a segment that arrives before its wait is matched from the
unexpected queue instead of a posted receive. The unsegmented binomial Reduce of
mpi_rooted.reduce_binomial is the same reading of reduce_generic with one segment.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import OP_RECV, OP_SEND
from . import mpi_rooted as T
from .mpi_coll import Rows

FLOAT = 4          # IMB's Reduce type: MPI_FLOAT (Bcast: MPI_BYTE, 1 byte)


# ---- trees (shifted ranks, root 0): children in Open MPI's tree_next order -----------------

def bintree_children(n: int) -> list[list[int]]:
    """topo_build_tree(fanout 2): s at level L (2**L - 1 <= s < 2**(L+1) - 1) has children
    s + 2**L and s + 2 * 2**L (those < n; the second only if the first exists). 0 -> 1, 2;
    1 -> 3, 5; 2 -> 4, 6; 3 -> 7, 11: odd ranks below 1, even ones below 2."""
    kids = []
    for s in range(n):
        delta = 1 << ((s + 1).bit_length() - 1)
        kids.append([c for c in (s + delta, s + 2 * delta) if c < n])
    return kids


def in_order_bmtree_children(n: int) -> list[list[int]]:
    """topo_build_in_order_bmtree: s's children are s + m for the powers of 2 m below s's
    lowest set bit (all of them for the root), m increasing, s + m < n; its parent
    s - lowbit(s) (the tree of mpi_rooted.reduce_binomial)."""
    kids = []
    for s in range(n):
        mask, ks = 1, []
        while mask < n and not s & mask:
            if s + mask < n:
                ks.append(s + mask)
            mask <<= 1
        kids.append(ks)
    return kids


def chain_children(n: int) -> list[list[int]]:
    """topo_build_chain with fanout 1 (the pipeline): 0 -> 1 -> 2 -> ... -> n-1."""
    return [[s + 1] if s + 1 < n else [] for s in range(n)]


def parents(kids: list[list[int]]) -> list[int]:
    par = [-1] * len(kids)
    for s, ks in enumerate(kids):
        for c in ks:
            par[c] = s
    return par


# ---- segmentation ---------------------------------------------------------------------------

def segcount(count: int, segsize: int, typelng: int) -> int:
    """COLL_TUNED_COMPUTED_SEGCOUNT (coll_tuned.h:525): elements per segment."""
    if typelng <= segsize < typelng * count:
        seg, residual = divmod(segsize, typelng)
        return seg + (1 if residual > typelng >> 1 else 0)
    return count


def segments(count: int, per: int) -> list[int]:
    """Element counts of the segments of `count` elements, `per` each, the last one shorter."""
    if count <= 0:
        return [count]
    full, rest = divmod(count, per)
    return [per] * full + ([rest] if rest else [])


# ---- Reduce: reduce_generic ------------------------------------------------------------------

def reduce_generic(kids: list[list[int]], seg_bytes: list[int]) -> list[np.ndarray]:
    """ompi_coll_tuned_reduce_generic, max_outstanding_reqs 0 (coll_tuned_reduce.c:66-361), on
    the tree `kids` (shifted ranks, root 0), segments of seg_bytes. A leaf SENDs (blocking)
    every segment to its parent, in order (lines 270-289). An inner node, for each segment k:
    receives k from each child in tree_next order (Open MPI: irecv of the next one posted,
    then the wait for the previous one: here a RECV at the wait, see the module docstring),
    then, once the last child's k is in, SENDs (blocking) the reduced k to its parent (lines
    213-237; the root does not send)."""
    n = len(kids)
    par = parents(kids)
    R = Rows(n)
    for s in range(n):
        for b in seg_bytes:
            for c in kids[s]:
                R.add(s, OP_RECV, c, b)
            if s:
                R.add(s, OP_SEND, par[s], b)
    return R.blocks()


def reduce_segmented(n: int, nbytes: int, segsize: int, tree: str) -> list[np.ndarray]:
    """IMB Reduce of nbytes of MPI_FLOAT (count = nbytes // 4) by reduce_generic on `tree`
    ("binomial", "binary" or "pipeline") with segsize-byte segments (segcount elements each,
    the last one shorter)."""
    kids = {"binomial": in_order_bmtree_children, "binary": bintree_children,
            "pipeline": chain_children}[tree](n)
    count = nbytes // FLOAT
    segs = segments(count, segcount(count, segsize, FLOAT))
    return reduce_generic(kids, [FLOAT * c for c in segs])


# ---- Bcast: split binary tree ----------------------------------------------------------------

def bcast_split_bintree(n: int, nbytes: int, segsize: int) -> list[np.ndarray]:
    """ompi_coll_tuned_bcast_intra_split_bintree (coll_tuned_bcast.c:389-633) of nbytes of
    MPI_BYTE, root 0, on the binary tree of bintree_children. The message is split into halves
    of ceil(X/2) and floor(X/2) bytes (lines 427-429), each cut into segsize-byte segments.
    lr = (s + 1) % 2 (line 475): the odd ranks (below child 1) get half 0, the even ones (below
    child 2) half 1. The root SENDs (blocking) segment k of half 0 to child 1, then of half 1
    to child 2, k = 0, 1, ... (lines 483-500). An inner node RECVs each segment of its half
    from its parent and SENDs (blocking) it to each child (lines 516-554; Open MPI posts the
    next irecv before waiting, see the module docstring); a leaf RECVs its segments (lines
    561-572). Then the halves are exchanged (lines 588-627): odd s with s + 1, even s with
    s - 1 (IRECV the other half, ISEND its own, WAITALL); with n even, s = n - 1 has no partner
    and RECVs half 1 from the root, which SENDs it after its tree sends; with n odd the root
    takes no part. Open MPI falls back to a chain bcast when a half is shorter than a segment
    (lines 449-456): not built (ValueError; the fixed rules never reach it)."""
    counts = [(nbytes + 1) // 2, nbytes // 2]
    if counts[1] == 0 or segsize > counts[1]:
        raise ValueError(f"split binary tree bcast of {nbytes} B with {segsize} B segments: "
                         "Open MPI uses a chain here (coll_tuned_bcast.c:449-456), not built")
    seg = [segments(c, segsize) for c in counts]
    kids, R = bintree_children(n), Rows(n)
    par = parents(kids)
    for s in range(n):
        lr = (s + 1) % 2
        if s == 0:
            for k in range(len(seg[0])):
                for i, c in enumerate(kids[0][:2]):
                    if k < len(seg[i]):
                        R.add(0, OP_SEND, c, seg[i][k])
        else:
            for b in seg[lr]:
                R.add(s, OP_RECV, par[s], b)
                for c in kids[s]:
                    R.add(s, OP_SEND, c, b)
    for s in range(1, n):
        lr = (s + 1) % 2
        pair = s + 1 if lr == 0 else s - 1
        if n % 2 == 0 and s == n - 1:
            R.add(0, OP_SEND, s, counts[1])
            R.add(s, OP_RECV, 0, counts[1])
        else:
            R.sendrecv(s, pair, counts[lr], pair, counts[1 - lr])
    return R.blocks()


# ---- the fixed decision rules ----------------------------------------------------------------

def bcast_rule(n: int, nbytes: int) -> tuple[str, int]:
    """ompi_coll_tuned_bcast_intra_dec_fixed (coll_tuned_decision_fixed.c:223-305), MPI_BYTE
    (message_size = count = nbytes): (algorithm, segsize)."""
    a16, b16, a64, b64, a128, b128 = 3.2118e-6, 8.7936, 2.3679e-6, 1.1787, 1.6134e-6, 2.1102
    if nbytes < 2048 or nbytes <= 1:
        return "binomial", 0
    if nbytes < 370728:
        return "split_bintree", 1024
    if n < a128 * nbytes + b128:
        return "pipeline", 1024 << 7
    if n < 13:
        return "split_bintree", 1024 << 3
    if n < a64 * nbytes + b64:
        return "pipeline", 1024 << 6
    if n < a16 * nbytes + b16:
        return "pipeline", 1024 << 4
    return "pipeline", 1024 << 3


def reduce_rule(n: int, nbytes: int) -> tuple[str, int]:
    """ompi_coll_tuned_reduce_intra_dec_fixed (coll_tuned_decision_fixed.c:343-417), a
    commutative op (IMB's MPI_SUM) on MPI_FLOAT (count = nbytes // 4, message_size = 4 count):
    (algorithm, segsize)."""
    a1, b1, a2, b2 = 0.6016 / 1024, 1.3496, 0.0410 / 1024, 9.7128
    a3, b3, a4, b4 = 0.0422 / 1024, 1.1614, 0.0033 / 1024, 1.6761
    count = nbytes // FLOAT
    m = FLOAT * count
    if n < 8 and m < 512:
        return "linear", 0
    if (n < 8 and m < 20480) or m < 2048 or count <= 1:
        return "binomial", 0
    if n > a1 * m + b1:
        return "binomial", 1024
    if n > a2 * m + b2:
        return "pipeline", 1024
    if n > a3 * m + b3:
        return "binary", 32 * 1024
    if n > a4 * m + b4:
        return "pipeline", 32 * 1024
    return "pipeline", 64 * 1024


def _kb(segsize: int) -> str:
    return f"{segsize // 1024} KB segments"


def bcast_open_mpi(n: int, nbytes: int) -> tuple[str, list[np.ndarray]]:
    """(name, root-0 rows) of the Bcast Open MPI's fixed rules choose. Below 2 KB the
    unsegmented binomial tree of mpi_rooted.bcast_binomial (Open MPI's bmtree has the same
    shape and send order, largest subtree first, but numbers the ranks differently: parent
    s - highbit(s), not s - lowbit(s); topo_build_bmtree, coll_tuned_topo.c:323-383)."""
    algo, segsize = bcast_rule(n, nbytes)
    if algo == "binomial":
        return "binomial tree", T.bcast_binomial(n, nbytes)
    if algo == "split_bintree" and segsize == 1024:
        return f"split binary tree, {_kb(segsize)}", bcast_split_bintree(n, nbytes, segsize)
    raise ValueError(f"Bcast of {nbytes} B on {n} ranks: Open MPI's fixed rules choose "
                     f"{algo} with {_kb(segsize)} (coll_tuned_decision_fixed.c:270-305), "
                     "which is not built (messages below 370728 B only)")


def reduce_open_mpi(n: int, nbytes: int) -> tuple[str, list[np.ndarray]]:
    """(name, root-0 rows) of the Reduce Open MPI's fixed rules choose. Unsegmented (below 2 KB,
    or below 20 KB on fewer than 8 ranks): mpi_rooted.reduce_binomial, reduce_generic with one
    segment. Open MPI's basic linear reduce (fewer than 8 ranks and below 512 B: the root
    receives from ranks n-1, n-2, ..., 0 in absolute order, whatever the root) is not built:
    those runs keep the binomial tree, named so."""
    algo, segsize = reduce_rule(n, nbytes)
    if algo == "linear":
        return "binomial tree (Open MPI: linear, not modelled)", T.reduce_binomial(n, nbytes)
    if segsize == 0:
        return "binomial tree", T.reduce_binomial(n, nbytes)
    name = {"binomial": "binomial tree", "binary": "binary tree", "pipeline": "pipeline"}[algo]
    return f"{name}, {_kb(segsize)}", reduce_segmented(n, nbytes, segsize, algo)

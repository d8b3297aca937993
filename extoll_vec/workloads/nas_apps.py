"""Communication skeletons of the NAS Parallel Benchmarks LU, SP and BT (MPI version, class A)
for the extoll-vec rank-program encoding (derivations and sources:
docs/reproduction/nas_skeletons.md, A1-A8).

    lu_blocks(n_ranks=8,  iterations=None, compute_scale=1.0)   LU, itmax = inorm = 250
    sp_blocks(n_ranks=16, iterations=None, compute_scale=1.0)   SP, niter = 400
    bt_blocks(n_ranks=16, iterations=None, compute_scale=1.0)   BT, niter = 200

Each returns one int32 [k, 4] row block per rank (no OP_END), for
extoll_vec.workloads.program.assemble. The whole run is modelled: MPI setup collectives, input
broadcasts, the untimed warm-up step, the timed loop between OP_MARK 0 and OP_MARK 1, the final
norms / verification and the barrier inside MPI_Finalize. `iterations` replaces the class A step
count (LU: itmax and inorm, so the l2norms stay on the last step) for quick runs.

Point-to-point calls follow the NPB source (NPB3.3-MPI, whose LU/SP/BT communication is that of
NPB 2.4, docs/reproduction/nas_skeletons.md, A0): MPI_Send/MPI_Recv -> OP_SEND/OP_RECV,
MPI_Isend/MPI_Irecv -> OP_ISEND/OP_IRECV, MPI_Wait/MPI_Waitall -> OP_WAITALL (every MPI_Wait
in these codes is issued when the waited requests are the only ones outstanding, so "wait for
all" is exact).
Collectives are decomposed as MPICH 1.2.5 src/coll/intra_fns_new.c does (the default
collective module of MPICH 1.2.5): Barrier = pairwise-exchange (recursive doubling) with fold-in
of the ranks above the largest power of two; Bcast = binomial tree with blocking sends if
nbytes < 12288 and size <= 8, otherwise MST scatter + recursive-doubling allgather (so every
broadcast on 16 ranks is scatter+allgather, even of one integer); Reduce = binomial tree;
Allreduce = recursive doubling (Reduce+Bcast only in the heterogeneous case). MPI_Sendrecv ->
IRECV, ISEND, WAITALL (Rows.sendrecv). Messages a rank sends to itself are not modelled.
MPI_Comm_split / MPI_Comm_dup (SP, BT) cost the Allreduces of MPICH 1.2.5's comm_split.c and
context_util.c (MPIR_Context_alloc).

Compute phases are OP_COMPUTE rows whose durations come from the NPB operation counts (the
Mop/s formulas in lu.f, sp.f, bt.f), an assumed sustained rate per process on the 2.4 GHz Xeon
testbed (*_MFLOPS_PER_PROC) and the split of the work over the phases (*_WEIGHTS: static
operation counts per grid point of the NPB routines); compute_scale multiplies every duration.
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from extoll_vec.dtypes import (MAX_LOOP_DEPTH, OP_COMPUTE, OP_ENDLOOP, OP_IRECV, OP_ISEND,
                               OP_LOOP, OP_MARK, OP_RECV, OP_SEND, OP_WAITALL)
from extoll_vec.workloads.common import MARK_DONE, MARK_START, compute_chunks
from extoll_vec.workloads.mpi_coll import Rows
from extoll_vec.workloads.mpich import mpich_allreduce, mpich_barrier, mpich_bcast, mpich_reduce

# ---- MPI library (MVAPICH 0.9 = MPICH 1.2.5 + InfiniBand device; Liu and Panda, sec. 3, 5) ---
CONTEXT_ALLREDUCE_BYTES = 4     # MPIR_Context_alloc: Allreduce(MAX) of one context id (int)
DP = 8                          # bytes of a double precision word
INT = 4

# ---- compute model (docs/reproduction/nas_skeletons.md, A6) --------------------
# Sustained rate of one process in NPB "Mop" (operation counts of the benchmarks' own Mop/s
# formulas) on a 2.4 GHz Xeon (512 KB L2, 400 MHz FSB), Intel compilers 6.0: an ASSUMPTION
# (no measured figure for this testbed found), uncertain by about +-50 %.
LU_MFLOPS_PER_PROC = 500.0      # one process per node
SP_MFLOPS_PER_PROC = 250.0      # two processes per node share the FSB; SP is memory bound
BT_MFLOPS_PER_PROC = 400.0      # two per node; BT's 5x5 block kernels are denser in flops

# Relative work per grid point of the phases (static operation counts of the NPB3.3-MPI loop
# bodies, 5-fold for the m = 1..5 loops; calls to BT's solve_subs counted at their bodies).
LU_WEIGHTS = dict(jacld=964, blts=283, jacu=913, buts=283,        # per k-plane, lower / upper
                  rhs_pre=5, rhs_xi=404, rhs_eta_zeta=807,        # rhs.f split at exchange_3
                  scale=5, update=10, l2norm=10,                  # ssor.f loops, l2norm.f
                  setiv=1434, erhs_pre=223, error=323, pintgr=113)  # one-time phases
LU_ITER_KEYS = ("jacld", "blts", "jacu", "buts", "rhs_pre", "rhs_xi", "rhs_eta_zeta",
                "scale", "update")
SP_WEIGHTS = dict(pack=1, rhs=895, txinvr=29,                     # copy_faces + compute_rhs
                  lhs=43, fwd=121, back=56, inv_x=9, inv_y=9, inv_z=29,  # per direction
                  add=5, initialize=870, exact_rhs=1300, error_norm=200, rhs_norm=10)
BT_WEIGHTS = dict(pack=1, rhs=881, fwd=1090, back=55, add=5,
                  initialize=870, exact_rhs=1300, error_norm=200, rhs_norm=10)


def lu_ops_per_iter(n: int = 64) -> float:
    """NPB LU operation count of one SSOR iteration (lu.f, mflops formula; nx0=ny0=nz0=n)."""
    return 1984.77 * n**3 - 10923.3 * n**2 + 27770.9 * n - 144010.0


def sp_ops_per_step(n: int = 64) -> float:
    """NPB SP operation count of one time step (sp.f, mflops formula)."""
    return 881.174 * n**3 - 4683.91 * n**2 + 11484.5 * n - 19272.4


def bt_ops_per_step(n: int = 64) -> float:
    """NPB BT operation count of one time step (bt.f, mflops formula)."""
    return 3478.8 * n**3 - 17655.7 * n**2 + 28023.7 * n


# ---- row building -------------------------------------------------------------------------------

class _Prog:
    """Per-rank row lists on top of mpi_coll.Rows, with compute splitting and loops."""

    def __init__(self, n: int):
        self.n = n
        self.R = Rows(n)
        self._depth = [0] * n

    def add(self, r: int, op: int, a: int = 0, b: int = 0) -> None:
        self.R.add(r, op, int(a), int(b))

    def compute(self, r: int, ns: float) -> None:
        for c in compute_chunks(ns):
            self.R.add(r, OP_COMPUTE, c, 0)

    def block(self, r: int, blk) -> None:
        for row in np.asarray(blk, np.int64).reshape(-1, 4).tolist():
            self.R.rows[r].append(tuple(int(x) for x in row))

    def sendrecv(self, r: int, peer: int, sbytes: int, rbytes: int) -> None:
        self.R.sendrecv(r, peer, int(sbytes), peer, int(rbytes))

    @contextmanager
    def loop(self, r: int, count: int):
        """Body rows inside LOOP count .. ENDLOOP; count 1: no loop rows; count 0: body dropped."""
        rows = self.R.rows[r]
        start = len(rows)
        self._depth[r] += 1
        if self._depth[r] > MAX_LOOP_DEPTH:
            raise ValueError(f"rank {r}: loops nested deeper than {MAX_LOOP_DEPTH}")
        yield
        self._depth[r] -= 1
        if count <= 0 or len(rows) == start:
            del rows[start:]
        elif count > 1:
            rows.insert(start, (OP_LOOP, int(count), 0, 0))
            rows.append((OP_ENDLOOP, 0, 0, 0))

    def blocks(self) -> list[np.ndarray]:
        return self.R.blocks()


# ---- LU -----------------------------------------------------------------------------------------

def lu_layout(n_ranks: int, n: int = 64) -> list[dict]:
    """Per rank: proc_grid.f / neighbors.f / subdomain.f of NPB LU (xdim x ydim processes; row
    along i (x), col along j (y); -1 = no neighbour, MPICH-1's MPI_PROC_NULL)."""
    ydim = int(math.sqrt(n_ranks) + 0.001)
    xdim = n_ranks // ydim
    while xdim * ydim != n_ranks:
        ydim -= 1
        xdim = n_ranks // ydim
    out = []
    for r in range(n_ranks):
        row, col = r % xdim + 1, r // xdim + 1
        north = r - 1 if row > 1 else -1
        south = r + 1 if row < xdim else -1
        west = r - xdim if col > 1 else -1
        east = r + xdim if col < ydim else -1
        mm = n % xdim
        if row <= mm:
            nx, ipt = n // xdim + 1, (row - 1) * (n // xdim + 1)
        else:
            nx = n // xdim
            ipt = (row - 1) * nx + mm
        mm = n % ydim
        if col <= mm:
            ny, jpt = n // ydim + 1, (col - 1) * (n // ydim + 1)
        else:
            ny = n // ydim
            jpt = (col - 1) * ny + mm
        ist, iend = (2 if north == -1 else 1), (nx - 1 if south == -1 else nx)
        jst, jend = (2 if west == -1 else 1), (ny - 1 if east == -1 else ny)
        out.append(dict(xdim=xdim, ydim=ydim, row=row, col=col, north=north, south=south,
                        west=west, east=east, nx=nx, ny=ny, nz=n, ipt=ipt, jpt=jpt,
                        ist=ist, iend=iend, jst=jst, jend=jend))
    return out


def _pintgr_range(pt: int, size: int, lo: int, hi: int) -> tuple[int, int]:
    """pintgr.f's local range (beg, fin) of one axis: the rank's points pt+1..pt+size against
    the global range lo..hi (the same code for i and j)."""
    beg, fin = size + 1, 0
    g1, g2 = pt + 1, pt + size
    if g1 >= lo and g2 < hi + size:
        beg = 1
    if g1 > lo - size and g2 <= hi:
        fin = size
    if g1 <= lo <= g2:
        beg = lo - pt
    if g1 <= hi <= g2:
        fin = hi - pt
    return beg, fin


def _lu_pintgr(L: dict, n: int) -> dict:
    """pintgr.f index ranges (ii1=2, ii2=n-1, ji1=2, ji2=n-2, setcoeff.f)."""
    ii1, ii2, ji1, ji2 = 2, n - 1, 2, n - 2
    ipt, jpt = L["ipt"], L["jpt"]
    ibeg, ifin = _pintgr_range(ipt, L["nx"], ii1, ii2)
    jbeg, jfin = _pintgr_range(jpt, L["ny"], ji1, ji2)
    ifin1 = ifin - 1 if ipt + ifin == ii2 else ifin
    jfin1 = jfin - 1 if jpt + jfin == ji2 else jfin
    return dict(ibeg=ibeg, ifin=ifin, ifin1=ifin1, jbeg=jbeg, jfin=jfin, jfin1=jfin1,
                ind5=int(jpt + jbeg == ji1) + int(jpt + jfin == ji2),
                ind6=int(ipt + ibeg == ii1) + int(ipt + ifin == ii2))


def lu_blocks(n_ranks: int = 8, iterations: int | None = None, compute_scale: float = 1.0, *,
              npb: str = "2.4", problem_size: int = 64, warmup: bool = True) -> list[np.ndarray]:
    """NPB LU (SSOR with a 2-D pipelined wavefront) on n_ranks (a power of two, as NPB 2.4
    requires). iterations = itmax = inorm (class A: 250). warmup=False drops the untimed
    ssor(1) of lu.f (Table 1 of Liu and Panda matches LU without it, nas_skeletons.md, A5)."""
    n = problem_size
    if n_ranks < 1 or n_ranks & (n_ranks - 1):
        raise ValueError("LU (NPB 2.4) needs a power-of-two number of processes")
    itmax = 250 if iterations is None else int(iterations)
    inorm = itmax
    if itmax < 1:
        raise ValueError("iterations must be >= 1")
    lay = lu_layout(n_ranks, n)
    P = _Prog(n_ranks)
    pts = [(L["iend"] - L["ist"] + 1) * (L["jend"] - L["jst"] + 1) for L in lay]
    mean_pts = sum(pts) / len(pts)
    t_iter = lu_ops_per_iter(n) / n_ranks / (LU_MFLOPS_PER_PROC * 1e6) * 1e9 * compute_scale
    w_iter = sum(LU_WEIGHTS[k] for k in LU_ITER_KEYS)
    planes = n - 2                                    # k = 2 .. nz-1
    bc_sizes = [INT, INT, INT, DP, DP, 5 * DP, INT, INT, INT] + ([INT] if npb != "2.4" else [])
    bcasts = [mpich_bcast(n_ranks, b) for b in bc_sizes]
    ar40, ar8 = mpich_allreduce(n_ranks, 5 * DP), mpich_allreduce(n_ranks, DP)
    bar = mpich_barrier(n_ranks)

    for r, L in enumerate(lay):
        unit = t_iter * pts[r] / mean_pts / w_iter     # ns per weight unit on this rank
        c = lambda key, times=1.0, r=r, unit=unit: P.compute(r, LU_WEIGHTS[key] * unit * times)
        N, S, W, E = L["north"], L["south"], L["west"], L["east"]
        ew = 5 * DP * (L["iend"] - L["ist"] + 1)       # exchange_1 sizes
        ns_ = 5 * DP * (L["jend"] - L["jst"] + 1)
        b3ns = 10 * DP * L["ny"] * L["nz"]             # exchange_3 sizes
        b3ew = 10 * DP * L["nx"] * L["nz"]

        def exchange_3(iex):
            if iex == 0:
                a, b, sz = N, S, b3ns
            else:
                a, b, sz = W, E, b3ew
            # IRECV from a; SEND to b; WAIT; IRECV from b; SEND to a; WAIT (exchange_3.f)
            if a != -1:
                P.add(r, OP_IRECV, a, sz)
            if b != -1:
                P.add(r, OP_SEND, b, sz)
            if a != -1:
                P.add(r, OP_WAITALL)
            if b != -1:
                P.add(r, OP_IRECV, b, sz)
            if a != -1:
                P.add(r, OP_SEND, a, sz)
            if b != -1:
                P.add(r, OP_WAITALL)

        def rhs():
            c("rhs_pre")
            exchange_3(0)
            c("rhs_xi")
            exchange_3(1)
            c("rhs_eta_zeta")

        def l2norm():
            c("l2norm")
            P.block(r, ar40[r])

        def sweep(jac, solve, upstream, downstream):
            """One wavefront sweep over the k-planes: per plane the Jacobian (jac), blocking
            receives from the upstream neighbours, the triangular solve, blocking sends to
            the downstream ones (exchange_1; absent neighbours are -1)."""
            with P.loop(r, planes):
                c(jac, 1.0 / planes)
                for peer, nbytes in upstream:
                    if peer != -1:
                        P.add(r, OP_RECV, peer, nbytes)
                c(solve, 1.0 / planes)
                for peer, nbytes in downstream:
                    if peer != -1:
                        P.add(r, OP_SEND, peer, nbytes)

        def iteration(norm_delu, norm_rsd):
            c("scale")
            # blts, k = 2 .. nz-1 (exchange_1 iex 0 and 2); buts, k = nz-1 .. 2 (iex 1 and 3)
            sweep("jacld", "blts", ((N, ns_), (W, ew)), ((S, ns_), (E, ew)))
            sweep("jacu", "buts", ((S, ns_), (E, ew)), ((N, ns_), (W, ew)))
            c("update")
            if norm_delu:
                l2norm()
            rhs()
            if norm_rsd:
                l2norm()

        def ssor(niter, timed):
            rhs()
            l2norm()
            P.block(r, bar[r])
            if timed:
                P.add(r, OP_MARK, MARK_START)
            flags = [((s % inorm) == 0, (s % inorm) == 0 or s == itmax)
                     for s in range(1, niter + 1)]
            s = 0
            while s < niter:                           # runs of equal l2norm flags
                e = s
                while e < niter and flags[e] == flags[s]:
                    e += 1
                with P.loop(r, e - s):
                    iteration(*flags[s])
                s = e
            if timed:
                P.add(r, OP_MARK, MARK_DONE)
            P.block(r, ar8[r])                         # MPI_ALLREDUCE(maxtime)

        for b in bcasts:                               # read_input -> bcast_inputs
            P.block(r, b[r])
        c("setiv", 0.5)                                # setcoeff, setbv, setiv
        c("erhs_pre")                                  # erhs: exact forcing, then two exchange_3
        exchange_3(0)
        c("rhs_xi")
        exchange_3(1)
        c("rhs_eta_zeta")
        if warmup:
            ssor(1, False)                             # untimed warm-up iteration
            c("setiv", 0.5)                            # setbv, setiv again
        ssor(itmax, True)
        c("error")                                     # error.f
        P.block(r, ar40[r])
        pi = _lu_pintgr(L, n)                          # pintgr.f
        c("pintgr", 1.0 / 3)
        if pi["jfin1"] == L["ny"] and E != -1:         # exchange_4
            P.add(r, OP_IRECV, E, 2 * L["nx"] * DP)
            P.add(r, OP_WAITALL)
        if pi["jbeg"] == 1 and W != -1:
            P.add(r, OP_SEND, W, 2 * L["nx"] * DP)
        if pi["ifin1"] == L["nx"] and S != -1:
            P.add(r, OP_IRECV, S, 2 * (L["ny"] + 2) * DP)
            P.add(r, OP_WAITALL)
        if pi["ibeg"] == 1 and N != -1:
            P.add(r, OP_SEND, N, 2 * (L["ny"] + 2) * DP)
        P.block(r, ar8[r])
        c("pintgr", 1.0 / 3)
        for _ in range(pi["ind5"]):                    # exchange_5 (phi1 and/or phi2)
            if pi["ifin1"] == L["nx"] and S != -1:
                P.add(r, OP_IRECV, S, L["nz"] * DP)
                P.add(r, OP_WAITALL)
            if pi["ibeg"] == 1 and N != -1:
                P.add(r, OP_SEND, N, L["nz"] * DP)
        P.block(r, ar8[r])
        c("pintgr", 1.0 / 3)
        for _ in range(pi["ind6"]):                    # exchange_6
            if pi["jfin1"] == L["ny"] and E != -1:
                P.add(r, OP_IRECV, E, L["nz"] * DP)
                P.add(r, OP_WAITALL)
            if pi["jbeg"] == 1 and W != -1:
                P.add(r, OP_SEND, W, L["nz"] * DP)
        P.block(r, ar8[r])
        P.block(r, bar[r])                             # MPI_Finalize's MPI_Barrier
    return P.blocks()


# ---- SP and BT: multipartition ---------------------------------------------------------------

def multipartition(n_ranks: int, n: int = 64) -> list[dict]:
    """make_set.f / initialize.f / define.f of NPB SP and BT: for every rank its ncells cells
    (coords 1-based, sizes), slice[dir][stage] = cell of that stage, predecessor/successor per
    direction, start/end flags and the copy_faces sizes (doubles, dim = 5)."""
    p = int(math.sqrt(n_ranks + 0.00001))
    if p * p != n_ranks:
        raise ValueError("SP and BT need a square number of processes")
    out = []
    for node in range(n_ranks):
        coord = [[node % p, node // p, 0]]
        for c in range(1, p):
            a, b, _ = coord[c - 1]
            coord.append([(a + 1) % p, (b - 1 + p) % p, c])
        coord = [[x + 1 for x in cc] for cc in coord]
        slc = [[0] * (p + 1) for _ in range(3)]
        for d in range(3):
            for c in range(p):
                slc[d][coord[c][d]] = c
        i, j = coord[0][0] - 1, coord[0][1] - 1
        pred = [(i - 1 + p) % p + p * j, i + p * ((j - 1 + p) % p),
                (i + 1) % p + p * ((j - 1 + p) % p)]
        succ = [(i + 1) % p + p * j, i + p * ((j + 1) % p), (i - 1 + p) % p + p * ((j + 1) % p)]
        size = [[0] * 3 for _ in range(p)]
        for d in range(3):
            sz, excess = n // p, n % p
            for c in range(p):
                size[c][d] = sz + 1 if coord[c][d] <= excess else sz
        start = [[1 if coord[c][d] == 1 else 0 for d in range(3)] for c in range(p)]
        end = [[1 if coord[c][d] == p else 0 for d in range(3)] for c in range(p)]
        west = east = north = south = top = bottom = 0
        for c in range(p):
            f = size[c][1] * size[c][2] * 5 * 2
            west += f if coord[c][0] != 1 else 0
            east += f if coord[c][0] != p else 0
            f = size[c][0] * size[c][2] * 5 * 2
            south += f if coord[c][1] != 1 else 0
            north += f if coord[c][1] != p else 0
            f = size[c][0] * size[c][1] * 5 * 2
            bottom += f if coord[c][2] != 1 else 0
            top += f if coord[c][2] != p else 0
        out.append(dict(p=p, coord=coord, slice=slc, pred=pred, succ=succ, size=size,
                        start=start, end=end, west=west, east=east, north=north, south=south,
                        top=top, bottom=bottom))
    return out


def _copy_faces(P: _Prog, r: int, lay: list[dict]) -> None:
    """copy_faces.f: 6 IRECVs, 6 ISENDs, MPI_Waitall(12). Sizes are the sender's b_size."""
    M = lay[r]
    s1, p1 = M["succ"][0], M["pred"][0]
    s2, p2 = M["succ"][1], M["pred"][1]
    s3, p3 = M["succ"][2], M["pred"][2]
    # irecv order: successor(1) [its west data], predecessor(1) [its east], successor(2)
    # [south], predecessor(2) [north], successor(3) [bottom], predecessor(3) [top]
    for src, key in ((s1, "west"), (p1, "east"), (s2, "south"), (p2, "north"),
                     (s3, "bottom"), (p3, "top")):
        P.add(r, OP_IRECV, src, lay[src][key] * DP)
    for dst, key in ((s1, "east"), (p1, "west"), (s2, "north"), (p2, "south"),
                     (s3, "top"), (p3, "bottom")):
        P.add(r, OP_ISEND, dst, M[key] * DP)
    P.add(r, OP_WAITALL)


def _cell_pts(M: dict, c: int) -> int:
    s = M["size"][c]
    return s[0] * s[1] * s[2]


def _sp_bs(M: dict, c: int, d: int) -> int:
    """SP buffer_size of cell c for a solve in direction d (0, 1, 2): the product over the two
    other directions of (size - start - end)."""
    o = [x for x in range(3) if x != d]
    return ((M["size"][c][o[0]] - M["start"][c][o[0]] - M["end"][c][o[0]])
            * (M["size"][c][o[1]] - M["start"][c][o[1]] - M["end"][c][o[1]]))


def _setup_collectives(P: _Prog, r: int, n: int, bc_sizes: list[int]) -> None:
    """setup_mpi.f: MPI_Comm_split (Allreduce of the 2n-int color/key table, then
    MPIR_Context_alloc's Allreduce) and two MPI_Comm_dup (one Allreduce each); then the input
    broadcasts of sp.f / bt.f on comm_setup."""
    P.block(r, mpich_allreduce(n, 2 * n * INT)[r])
    for _ in range(3):
        P.block(r, mpich_allreduce(n, CONTEXT_ALLREDUCE_BYTES)[r])
    for b in bc_sizes:
        P.block(r, mpich_bcast(n, b)[r])


def _final_collectives(P: _Prog, r: int, n: int) -> None:
    P.block(r, mpich_reduce(n, DP)[r])                 # mpi_reduce(t, tmax) to root
    P.block(r, mpich_barrier(n)[r])                    # mpi_barrier(MPI_COMM_WORLD)
    P.block(r, mpich_barrier(n)[r])                    # MPI_Finalize's MPI_Barrier


def sp_blocks(n_ranks: int = 16, iterations: int | None = None, compute_scale: float = 1.0, *,
              npb: str = "2.4", problem_size: int = 64, warmup: bool = True) -> list[np.ndarray]:
    """NPB SP (scalar pentadiagonal ADI, multipartition) on a square number of ranks."""
    n = problem_size
    niter = 400 if iterations is None else int(iterations)
    lay = multipartition(n_ranks, n)
    p = lay[0]["p"]
    P = _Prog(n_ranks)
    W = SP_WEIGHTS
    w_step = (W["pack"] + W["rhs"] + W["txinvr"] + 3 * (W["lhs"] + W["fwd"] + W["back"])
              + W["inv_x"] + W["inv_y"] + W["inv_z"] + W["add"])
    t_step = sp_ops_per_step(n) / n_ranks / (SP_MFLOPS_PER_PROC * 1e6) * 1e9 * compute_scale
    # niter, dt, grid_points(3) [, timeron]
    bc = [INT, DP, 3 * INT] + ([INT] if npb != "2.4" else [])
    inv = ("inv_x", "inv_y", "inv_z")
    for r, M in enumerate(lay):
        pts = sum(_cell_pts(M, c) for c in range(p))
        unit = t_step / (w_step * pts)                # ns per weight unit and grid point
        cw = lambda key, npts, r=r, unit=unit: P.compute(r, W[key] * unit * npts)

        def copy_faces():
            cw("pack", pts)
            _copy_faces(P, r, lay)
            cw("rhs", pts)                             # unpack + compute_rhs

        def solve(d):
            pre, suc = M["pred"][d], M["succ"][d]
            for stage in range(1, p + 1):              # forward elimination
                c = M["slice"][d][stage]
                bs = _sp_bs(M, c, d)
                if stage != 1:
                    P.add(r, OP_IRECV, pre, 22 * bs * DP)
                    cw("lhs", _cell_pts(M, c))         # lhsx(c) overlaps the receive
                    P.add(r, OP_WAITALL)               # recv + the previous stage's isend
                else:
                    cw("lhs", _cell_pts(M, c))
                cw("fwd", _cell_pts(M, c))
                if stage != p:
                    P.add(r, OP_ISEND, suc, 22 * bs * DP)
            for stage in range(p, 0, -1):              # back substitution
                c = M["slice"][d][stage]
                bs = _sp_bs(M, c, d)
                if stage != p:
                    P.add(r, OP_IRECV, suc, 10 * bs * DP)
                    cn = M["slice"][d][stage + 1]
                    cw(inv[d], _cell_pts(M, cn))       # ninvr/pinvr/tzetar(slice(stage+1))
                    P.add(r, OP_WAITALL)
                cw("back", _cell_pts(M, c))
                if stage != 1:
                    P.add(r, OP_ISEND, pre, 10 * bs * DP)
                else:
                    cw(inv[d], _cell_pts(M, c))

        def adi():
            copy_faces()
            cw("txinvr", pts)
            for d in range(3):
                solve(d)
            cw("add", pts)

        _setup_collectives(P, r, n_ranks, bc)
        cw("initialize", pts)                          # initialize, lhsinit, exact_rhs
        cw("exact_rhs", pts)
        if warmup:
            adi()                                      # untimed warm-up step
            cw("initialize", pts)
        P.block(r, mpich_barrier(n_ranks)[r])          # mpi_barrier(comm_setup)
        P.add(r, OP_MARK, MARK_START)
        with P.loop(r, niter):
            adi()
        P.add(r, OP_MARK, MARK_DONE)
        cw("error_norm", pts)                          # verify: error_norm
        P.block(r, mpich_allreduce(n_ranks, 5 * DP)[r])
        copy_faces()
        cw("rhs_norm", pts)
        P.block(r, mpich_allreduce(n_ranks, 5 * DP)[r])
        _final_collectives(P, r, n_ranks)
    return P.blocks()


def bt_blocks(n_ranks: int = 16, iterations: int | None = None, compute_scale: float = 1.0, *,
              npb: str = "2.4", problem_size: int = 64, warmup: bool = True) -> list[np.ndarray]:
    """NPB BT (block tridiagonal ADI, multipartition) on a square number of ranks; no I/O
    subtype."""
    n = problem_size
    niter = 200 if iterations is None else int(iterations)
    lay = multipartition(n_ranks, n)
    p = lay[0]["p"]
    mcd = n // p + 1                                   # MAX_CELL_DIM (header.h)
    solve_bytes = mcd * mcd * (5 * 5 + 5) * DP         # x_send_solve_info buffer_size
    back_bytes = mcd * mcd * 5 * DP                    # x_send_backsub_info buffer_size
    P = _Prog(n_ranks)
    W = BT_WEIGHTS
    w_step = W["pack"] + W["rhs"] + 3 * (W["fwd"] + W["back"]) + W["add"]
    t_step = bt_ops_per_step(n) / n_ranks / (BT_MFLOPS_PER_PROC * 1e6) * 1e9 * compute_scale
    # niter, dt, grid_points(3), wr_interval [3.3: rd_interval, timeron]
    bc = [INT, DP, 3 * INT, INT] + ([INT, INT] if npb != "2.4" else [])
    for r, M in enumerate(lay):
        pts = sum(_cell_pts(M, c) for c in range(p))
        unit = t_step / (w_step * pts)
        cw = lambda key, npts, r=r, unit=unit: P.compute(r, W[key] * unit * npts)

        def copy_faces():
            cw("pack", pts)
            _copy_faces(P, r, lay)
            cw("rhs", pts)

        def solve(d):
            pre, suc = M["pred"][d], M["succ"][d]
            for stage in range(1, p + 1):
                c = M["slice"][d][stage]
                if stage != 1:
                    P.add(r, OP_IRECV, pre, solve_bytes)   # x_receive_solve_info
                    P.add(r, OP_WAITALL)               # mpi_wait(send_id), mpi_wait(recv_id)
                cw("fwd", _cell_pts(M, c))             # x_unpack_solve_info, x_solve_cell
                if stage != p:
                    P.add(r, OP_ISEND, suc, solve_bytes)   # x_send_solve_info
            for stage in range(p, 0, -1):
                c = M["slice"][d][stage]
                if stage != p:
                    P.add(r, OP_IRECV, suc, back_bytes)    # x_receive_backsub_info
                    P.add(r, OP_WAITALL)
                cw("back", _cell_pts(M, c))            # x_backsubstitute
                if stage != 1:
                    P.add(r, OP_ISEND, pre, back_bytes)    # x_send_backsub_info

        def adi():
            copy_faces()
            for d in range(3):
                solve(d)
            cw("add", pts)

        _setup_collectives(P, r, n_ranks, bc)
        cw("initialize", pts)                          # initialize, lhsinit, exact_rhs
        cw("exact_rhs", pts)
        if warmup:
            adi()                                      # untimed warm-up step
            cw("initialize", pts)
        P.block(r, mpich_barrier(n_ranks)[r])
        P.add(r, OP_MARK, MARK_START)
        with P.loop(r, niter):
            adi()
        P.add(r, OP_MARK, MARK_DONE)
        cw("error_norm", pts)
        P.block(r, mpich_allreduce(n_ranks, 5 * DP)[r])
        copy_faces()
        cw("rhs_norm", pts)
        P.block(r, mpich_allreduce(n_ranks, 5 * DP)[r])
        _final_collectives(P, r, n_ranks)
    return P.blocks()

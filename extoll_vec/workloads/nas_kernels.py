"""NAS Parallel Benchmarks IS, FT, CG and MG (MPI, class A) as extoll-vec rank programs.

Communication skeletons of the runs of Liu and Panda (section 6.3: class A, 8
processes on 8 nodes, MVAPICH over InfiniBand). Every function returns one int32 [k, 4] row block
per rank (no OP_END) in the encoding of extoll_vec.workloads.program; assemble() them.

    is_blocks / ft_blocks / cg_blocks / mg_blocks(n_ranks=8, iterations=None, compute_scale=1.0,
                                                   *, npb="2.4", finalize=True)

What is modelled (docs/reproduction/nas_skeletons.md, K1-K6: every claim with repo:path:line):
- the benchmark's MPI calls, in program order, from NPB3.3-MPI (mbdevpl/nas-parallel-benchmarks,
  commit 6f8ec75d), which is NPB 2.4-MPI with later fixes; npb="2.4" drops what NPB 3.3.1 added
  (the timer-flag broadcasts; FT's five separate input broadcasts, two in 2.4), npb="3.3.1" keeps
  the source as it is;
- the untimed parts: set-up broadcasts, warm-up iterations (IS rank(1), CG's first conj_grad,
  FT's first fft, MG's first mg3P and both zran3), final reductions and verification messages,
  and MPI_Finalize's barrier (finalize=False leaves it out);
- MPI collectives decomposed as MPICH 1.2.5 does by default (mpich.py);
- messages a rank sends to itself are left out: MVAPICH copies them locally (MVICH's
  MPID_VIA_self_start), they never reach the network;
- MPI_Wait on one request: every one in these codes waits for the only outstanding request
  (CG, IS) or for the last two of a pair (MG's take3), so OP_WAITALL is exact, except that
  MG's unpack between its two waits moves after the second (a few microseconds).

Compute phases are OP_COMPUTE rows between the calls; their durations are estimates for one 2.4
GHz Xeon (400 MHz FSB, 512 KB L2) per node, derived in docs/reproduction/nas_skeletons.md (K5),
scaled by 8 / n_ranks for other rank counts and by compute_scale.

n_ranks: a power of two (CG, MG and IS's recursive-doubling Alltoall need one).
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from extoll_vec.dtypes import (OP_COMPUTE, OP_ENDLOOP, OP_IRECV, OP_ISEND, OP_LOOP, OP_MARK,
                               OP_SEND, OP_WAITALL)
from extoll_vec.workloads.common import COMPUTE_CHUNK_NS, MARK_DONE, MARK_START, compute_chunks
from extoll_vec.workloads.mpi_coll import Rows
from extoll_vec.workloads.mpich import (alltoallv, mpich_allreduce, mpich_alltoall, mpich_barrier,
                                        mpich_bcast, mpich_reduce)


# ---- compute-phase estimates, ns per process, class A, 8 ranks (nas_skeletons.md K5) ------------
# IS: per-key costs x 2**20 local keys (is.c rank(), create_seq, full_verify)
IS_NS = {
    "create_seq": 105_000_000,       # 4 x 2**20 randlc at ~25 ns (is.c:996, untimed)
    "rank_buckets": 9_400_000,       # count keys per bucket + scatter into buckets (~9 ns/key)
    "rank_redistribute": 10_000,     # 1024-bucket redistribution loop (is.c:650-675)
    "rank_local": 4_600_000,         # clear, count 2**20 received keys, prefix sum (is.c:719-760)
    "full_verify": 12_000_000,       # final local sort + check (is.c:499-545, untimed)
}
# FT: 2**20 complex points per rank; FFT passes at ~400 Mflop/s (5 N log2 L flops), local
# transposes and evolve memory-bound (~1.6 GB/s)
FT_NS = {
    "indexmap": 30_000_000,          # compute_indexmap (twiddle exponents)
    "init_cond": 31_000_000,         # compute_initial_conditions (2**21 vranlc numbers)
    "fft_init": 1_000_000,
    "fft_xy": 210_000_000,           # cffts1 + cffts2: 2 x 5 * 2**20 * 8 flops
    "fft_z": 92_000_000,             # cffts1 on the transposed layout: 5 * 2**20 * 7 flops
    "transpose_local": 30_000_000,   # transpose2_local, one 16 MB array
    "transpose_finish": 30_000_000,  # transpose2_finish
    "evolve": 35_000_000,            # u0 *= twiddle, u1 = u0
    "checksum": 100_000,             # 1024 sampled points
}
# CG: per rank a 7000 x 3500 block with ~231,000 nonzeros (cg.f:605 flop count / 8)
CG_NS = {
    "makea": 60_000_000,             # matrix generation (untimed, rough)
    "cg_init": 40_000,               # q = z = 0, r = p = x, rho = r.r (conj_grad start)
    "matvec": 1_800_000,             # w = A p: ~231k nonzeros x 12 B at ~1.6 GB/s
    "reduce_add": 8_000,             # w(j) += q(j) after each of the log2(npcols) exchanges
    "dot": 10_000,                   # one 3500-long dot product (p.q, (x-r)^2)
    "update_zr_rho": 30_000,         # z += a p, r -= a q, rho = r.r
    "update_p": 15_000,              # p = r + b p
    "self_copy": 10_000,             # transpose exchange with itself (local copy of 28 KB)
    "norm": 25_000,                  # x.z, z.z and x = z / ||z|| in the outer loop
}
# MG: ns per point of the level operated on (interior points of the rank's block)
MG_NS_PER_POINT = {
    "resid": 25.0, "psinv": 25.0,    # 27-point stencils, memory-bound
    "rprj3": 7.0,                    # per fine-grid point of the finer level
    "interp": 14.0,                  # per fine-grid point of the finer level
    "zero3": 5.0, "norm2u3": 5.0,
    "zran3": 25.0,                   # vranlc fill + search of the 10 largest/smallest
}


# ---- program building -------------------------------------------------------------------------

def _check_n(n_ranks) -> int:
    n = int(n_ranks)
    if n != n_ranks or n < 2 or n & (n - 1):
        raise ValueError(f"n_ranks must be a power of two >= 2, got {n_ranks!r}")
    return n


def _check_npb(npb) -> str:
    if npb not in ("2.4", "3.3.1"):
        raise ValueError(f"npb must be '2.4' or '3.3.1', got {npb!r}")
    return npb


def _check_iter(iterations, default: int) -> int:
    if iterations is None:
        return default
    it = int(iterations)
    if it != iterations or it < 1:
        raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
    return it


class _Prog:
    """Per-rank row lists (a Rows) plus collective and compute helpers."""

    def __init__(self, n: int, compute_scale: float):
        if not compute_scale >= 0:
            raise ValueError(f"compute_scale must be >= 0, got {compute_scale!r}")
        self.n = n
        self.R = Rows(n)
        self.scale = float(compute_scale) * 8.0 / n   # work per rank ~ 1/n

    # -- raw rows
    def add(self, r, op, a=0, b=0):
        self.R.add(r, op, int(a), int(b))

    def everyone(self, op, a=0, b=0):
        for r in range(self.n):
            self.add(r, op, a, b)

    def extend(self, blocks):
        for r, blk in enumerate(blocks):
            self.R.rows[r].extend(tuple(x) for x in np.asarray(blk).reshape(-1, 4).tolist())

    def compute(self, ns, ranks=None):
        """OP_COMPUTE of ns (already per rank at 8 ranks) x scale, split below int32."""
        chunks = compute_chunks(ns * self.scale)
        for r in (range(self.n) if ranks is None else ranks):
            for step in chunks:
                self.add(r, OP_COMPUTE, step)

    def mark(self, index):
        self.everyone(OP_MARK, index)

    @contextmanager
    def loop(self, count: int):
        if count > 1:
            self.everyone(OP_LOOP, count)
            yield
            self.everyone(OP_ENDLOOP)
        else:
            yield

    def blocks(self):
        """The rows per rank, adjacent OP_COMPUTE rows merged (up to COMPUTE_CHUNK_NS)."""
        for r in range(self.n):
            merged = []
            for row in self.R.rows[r]:
                if (row[0] == OP_COMPUTE and merged and merged[-1][0] == OP_COMPUTE
                        and merged[-1][1] + row[1] <= COMPUTE_CHUNK_NS):
                    merged[-1] = (OP_COMPUTE, merged[-1][1] + row[1], 0, 0)
                else:
                    merged.append(row)
            self.R.rows[r] = merged
        return self.R.blocks()

    # -- point-to-point idioms of the NPB codes
    def sendrecv(self, r, dst, sbytes, src, rbytes):
        """MPI_Sendrecv in MPICH-1: Irecv, Isend, Waitall (sendrecv.c:93-98)."""
        self.add(r, OP_IRECV, src, rbytes)
        self.add(r, OP_ISEND, dst, sbytes)
        self.add(r, OP_WAITALL)

    def irecv_send_wait(self, r, peer, sbytes, rbytes):
        """The NPB exchange idiom: MPI_Irecv(peer); MPI_Send(peer); MPI_Wait (one request)."""
        if peer == r:          # MVAPICH copies self messages locally
            return
        self.add(r, OP_IRECV, peer, rbytes)
        self.add(r, OP_SEND, peer, sbytes)
        self.add(r, OP_WAITALL)

    # -- MPICH 1.2.5 collectives (mpich.py; root 0 where rooted)
    def barrier(self):
        self.extend(mpich_barrier(self.n))

    def bcast(self, nbytes):
        self.extend(mpich_bcast(self.n, nbytes))

    def reduce(self, nbytes):
        self.extend(mpich_reduce(self.n, nbytes))

    def allreduce(self, nbytes):
        self.extend(mpich_allreduce(self.n, nbytes))

    def alltoall(self, blk):
        """MPI_Alltoall of blk bytes per destination."""
        self.extend(mpich_alltoall(self.n, blk))

    def alltoallv(self, sizes):
        """sizes[s][d] bytes from s to d."""
        self.extend(alltoallv(sizes))

    def comm_split(self):
        """MPI_Comm_split: Allreduce of the 2n-int split table (comm_split.c:116), then
        MPIR_Context_alloc's Allreduce of one int (context_util.c:227)."""
        self.allreduce(8 * self.n)
        self.allreduce(4)

    def finalize(self):
        """MPI_Finalize's MPI_Barrier (finalize.c:85)."""
        self.barrier()


# ---- IS -----------------------------------------------------------------------------------------

def _irwin_hall4_cdf(x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x, dtype=float)
    for k in range(5):
        out += (-1) ** k * math.comb(4, k) * np.clip(x - k, 0.0, None) ** 4
    return out / 24.0


def is_partition(n: int):
    """Expected IS class A key redistribution: (keys each rank sends to each destination,
    first and last bucket of each destination). Keys are MAX_KEY/4 x (sum of 4 uniforms)
    (is.c create_seq), so bucket b (keys >> 9) holds a fraction F((b+1)/256) - F(b/256) of
    every rank's keys; buckets go to ranks by the greedy rule of is.c:645-668."""
    num_keys = 2 ** 23 // n
    edges = np.arange(1025) / 256.0
    p = np.diff(_irwin_hall4_cdf(edges))
    local = np.floor(p * num_keys).astype(np.int64)
    rest = num_keys - int(local.sum())                      # largest remainders get the rest
    local[np.argsort(-(p * num_keys - local))[:rest]] += 1
    totals = local * n
    ranges, cum, j, first = [], 0, 0, 0
    for i in range(1024):
        cum += int(totals[i])
        if cum >= (j + 1) * num_keys:
            ranges.append((first, i))
            first, j = i + 1, j + 1
    while len(ranges) < n:
        ranges.append((1, 0))                               # no buckets (is.c:673-678)
    per_dest = [int(local[a:b + 1].sum()) if b >= a else 0 for a, b in ranges]
    return per_dest, ranges


def is_blocks(n_ranks=8, iterations=None, compute_scale=1.0, *, npb="2.4",
              finalize=True):
    """IS class A: 2**23 keys, MAX_KEY 2**19, 1024 buckets, 10 timed iterations + 1 untimed."""
    n = _check_n(n_ranks)
    _check_npb(npb)
    its = _check_iter(iterations, 10)
    P = _Prog(n, compute_scale)
    per_dest, _ = is_partition(n)
    kv = [[4 * per_dest[d] for d in range(n)] for _ in range(n)]     # bytes s -> d

    def rank():                                            # is.c:558-900
        P.compute(IS_NS["rank_buckets"])
        P.allreduce(4 * (1024 + 5))                        # bucket_size, is.c:623
        P.compute(IS_NS["rank_redistribute"])
        P.alltoall(4)                                      # send_count, is.c:685
        P.alltoallv(kv)                                    # keys, is.c:700
        P.compute(IS_NS["rank_local"])

    if npb == "3.3.1":
        P.bcast(4)                                         # timeron, is.c:989
    P.compute(IS_NS["create_seq"])                         # is.c:996
    rank()                                                 # untimed, is.c:1006
    P.mark(MARK_START)                                     # timer_start(0)
    with P.loop(its):                                      # is.c:1026
        rank()
    P.mark(MARK_DONE)
    P.reduce(8)                                            # maxtime, is.c:1039
    P.compute(IS_NS["full_verify"])                        # is.c:1050
    for r in range(n):                                     # is.c:506-522
        if r > 0:
            P.add(r, OP_IRECV, r - 1, 4)
        if r < n - 1:
            P.add(r, OP_SEND, r + 1, 4)
        if r > 0:
            P.add(r, OP_WAITALL)
    P.reduce(4)                                            # passed_verification, is.c:1055
    if finalize:
        P.finalize()
    return P.blocks()


# ---- FT -----------------------------------------------------------------------------------------

def ft_blocks(n_ranks=8, iterations=None, compute_scale=1.0, *, npb="2.4",
              finalize=True):
    """FT class A: 256 x 256 x 128 complex grid, 6 timed iterations, 1-D layout (np1 = 1,
    np2 = n: ft.f:447-450); each transpose is one MPI_Alltoall over commslice1 (= the world,
    same rank order) of ntdivnp/np complex numbers per pair (ft.f:1366)."""
    n = _check_n(n_ranks)
    _check_npb(npb)
    its = _check_iter(iterations, 6)
    P = _Prog(n, compute_scale)
    pair = 16 * (256 * 256 * 128 // n) // n                # bytes per destination

    def fft_forward():                                     # ft.f:837-846 (layout_1d, dir = 1)
        P.compute(FT_NS["fft_xy"] + FT_NS["transpose_local"])
        P.alltoall(pair)
        P.compute(FT_NS["transpose_finish"] + FT_NS["fft_z"])

    def fft_inverse():                                     # ft.f:869-878 (layout_1d, dir = -1)
        P.compute(FT_NS["fft_z"] + FT_NS["transpose_local"])
        P.alltoall(pair)
        P.compute(FT_NS["transpose_finish"] + FT_NS["fft_xy"])

    def init_and_forward():                                # ft.f:132-136 and 154-163
        P.compute(FT_NS["indexmap"] + FT_NS["init_cond"] + FT_NS["fft_init"])
        fft_forward()

    # setup(), ft.f:495-500 (3.3.1) / one MPI_BCAST(np1, 3 ints) + MPI_BCAST(niter) (2.4)
    if npb == "3.3.1":
        for _ in range(5):
            P.bcast(4)
    else:
        P.bcast(12)
        P.bcast(4)
    P.comm_split()                                         # commslice1, ft.f:563
    P.comm_split()                                         # commslice2, ft.f:564
    init_and_forward()                                     # untimed run-through
    P.barrier()                                            # ft.f:149
    P.mark(MARK_START)                                     # timer_start(T_total)
    init_and_forward()
    with P.loop(its):                                      # ft.f:166-177
        P.compute(FT_NS["evolve"])
        fft_inverse()
        P.compute(FT_NS["checksum"])
        P.reduce(16)                                       # checksum, ft.f:1753
    P.mark(MARK_DONE)                                      # verify() has no communication
    if finalize:
        P.finalize()
    return P.blocks()


# ---- CG -----------------------------------------------------------------------------------------

def cg_setup(n: int, naa: int = 14000):
    """Per rank: setup_proc_info and setup_submatrix_info of cg.f (cg.f:698-1020) and
    sys/setparams.c:764-766 (num_proc_cols = 2 num_proc_rows when n is not a square)."""
    l2 = n.bit_length() - 1
    cols = rows = l2 // 2
    if cols + rows != l2:
        cols += 1
    npcols, nprows = 1 << cols, 1 << rows
    if naa % npcols or naa % nprows:
        raise ValueError("naa not divisible by the process grid")
    l2npcols = npcols.bit_length() - 1
    out = []
    for me in range(n):
        proc_row, proc_col = divmod(me, npcols)
        col_size = naa // npcols
        firstcol = proc_col * col_size + 1
        lastcol = firstcol - 1 + col_size
        row_size = naa // nprows
        firstrow = proc_row * row_size + 1
        lastrow = firstrow - 1 + row_size
        nrow = lastrow - firstrow + 1
        if npcols == nprows:
            send_len = nrow
            exch_proc = (me % nprows) * nprows + me // nprows
        else:
            send_len = (1 + nrow) // 2 if me % 2 == 0 else nrow // 2
            exch_proc = 2 * (((me // 2) % nprows) * nprows + (me // 2) // nprows) + me % 2
        partners, div = [], npcols
        for _ in range(l2npcols):
            j = (proc_col + div // 2) % div + proc_col // div * div
            partners.append(proc_row * npcols + j)
            div //= 2
        send_lengths, recv_lengths = [0] * l2npcols, [0] * l2npcols
        for i in range(l2npcols - 1, -1, -1):
            if nprows == npcols:
                send_lengths[i], recv_lengths[i] = send_len, nrow
            else:
                recv_lengths[i] = send_len
                send_lengths[i] = nrow - send_len if i == l2npcols - 1 else send_len
        out.append(dict(npcols=npcols, nprows=nprows, partners=partners,
                        send_lengths=send_lengths, recv_lengths=recv_lengths,
                        exch_proc=exch_proc, send_len=send_len,
                        exch_recv_length=lastcol - firstcol + 1))
    return out


def cg_blocks(n_ranks=8, iterations=None, compute_scale=1.0, *, npb="2.4",
              finalize=True):
    """CG class A: na = 14000, nonzer = 11, 15 timed outer iterations + 1 untimed, 25 CG
    iterations each (cgitmax, cg.f:1110); 8 ranks = 2 rows x 4 columns of processes."""
    n = _check_n(n_ranks)
    _check_npb(npb)
    its = _check_iter(iterations, 15)
    P = _Prog(n, compute_scale)
    S = cg_setup(n)

    def scalar_sum(nbytes):                                # cg.f:1140-1160, 1264-1284, ...
        for r in range(n):
            for p in S[r]["partners"]:
                P.irecv_send_wait(r, p, nbytes, nbytes)

    def reduce_and_transpose():                            # cg.f:1188-1240, 1381-1432
        for r in range(n):
            s = S[r]
            for i in range(len(s["partners"]) - 1, -1, -1):
                P.irecv_send_wait(r, s["partners"][i], 8 * s["send_lengths"][i],
                                  8 * s["recv_lengths"][i])
                P.compute(CG_NS["reduce_add"], ranks=[r])
            if s["partners"]:
                if s["exch_proc"] == r:
                    P.compute(CG_NS["self_copy"], ranks=[r])
                else:
                    P.irecv_send_wait(r, s["exch_proc"], 8 * s["send_len"],
                                      8 * s["exch_recv_length"])

    def conj_grad():                                       # cg.f:1028-1480
        P.compute(CG_NS["cg_init"])
        scalar_sum(8)                                      # rho
        with P.loop(25):
            P.compute(CG_NS["matvec"])
            reduce_and_transpose()
            P.compute(CG_NS["dot"])
            scalar_sum(8)                                  # d = p.q
            P.compute(CG_NS["update_zr_rho"])
            scalar_sum(8)                                  # rho = r.r
            P.compute(CG_NS["update_p"])
        P.compute(CG_NS["matvec"])                         # r = A z
        reduce_and_transpose()
        P.compute(CG_NS["dot"])
        scalar_sum(8)                                      # ||x - A z||

    def outer():
        conj_grad()
        P.compute(CG_NS["norm"])
        scalar_sum(16)                                     # norm_temp1(1:2), cg.f:404-421

    if npb == "3.3.1":
        P.bcast(4)                                         # timeron, cg.f:689
    P.compute(CG_NS["makea"])                              # cg.f:335
    outer()                                                # untimed, cg.f:369-437
    P.barrier()                                            # cg.f:460
    P.mark(MARK_START)
    with P.loop(its):                                      # cg.f:471-530
        outer()
    P.mark(MARK_DONE)
    P.reduce(8)                                            # cg.f:560
    if finalize:
        P.finalize()
    return P.blocks()


# ---- MG -----------------------------------------------------------------------------------------

def mg_setup(n: int, nx: int = 256):
    """Per rank and level (1..lt): local grid (mi incl. 2 ghost layers) and neighbours, as
    setup() computes them (mg.f:401-520); pi = 2**(log_p/3), ... (mg.f:441-451)."""
    lt = nx.bit_length() - 1
    log_p = n.bit_length() - 1
    dx = log_p // 3
    dy = (log_p - dx) // 2
    pi = [1 << dx, 1 << dy, 0]
    pi[2] = n // (pi[0] * pi[1])
    ng = {k: nx >> (lt - k) for k in range(1, lt + 1)}
    out = []
    for me in range(n):
        idi = [me % pi[0], (me // pi[0]) % pi[1], me // (pi[0] * pi[1])]
        nxt = [1, 1, 1]
        lev = {}
        for k in range(lt, 0, -1):
            mi = [2 + ((idi[a] + 1) * ng[k]) // pi[a] - (idi[a] * ng[k]) // pi[a]
                  for a in range(3)]
            mip = [2 + ((nxt[a] + idi[a] + 1) * ng[k]) // pi[a]
                   - ((nxt[a] + idi[a]) * ng[k]) // pi[a] for a in range(3)]
            for a in range(3):
                if mip[a] == 2 or mi[a] == 2:
                    nxt[a] *= 2
                    raise NotImplementedError("MG levels with empty blocks (dead/give_ex)")
            nbr = {}
            for a in range(3):
                for d in (1, -1):
                    idin = list(idi)
                    idin[a] = (idi[a] + d * nxt[a] + pi[a]) % pi[a]
                    nbr[a, d] = idin[0] + pi[0] * (idin[1] + pi[1] * idin[2])
            lev[k] = dict(m=mi, nbr=nbr, pts=(mi[0] - 2) * (mi[1] - 2) * (mi[2] - 2))
        out.append(lev)
    return lt, out


def mg_blocks(n_ranks=8, iterations=None, compute_scale=1.0, *, npb="2.4",
              finalize=True):
    """MG class A: 256**3 grid, 4 timed iterations (V-cycle mg3P + resid), levels 1..8,
    8 ranks = 2 x 2 x 2 blocks. Warm-up: one mg3P + resid and two zran3 (mg.f:226-260)."""
    n = _check_n(n_ranks)
    _check_npb(npb)
    its = _check_iter(iterations, 4)
    P = _Prog(n, compute_scale)
    lt, L = mg_setup(n)
    ns = MG_NS_PER_POINT
    # per-point costs are at 8 ranks; _Prog scales by 8/n, so use 8-rank point counts
    pts8 = {k: (256 >> (lt - k)) ** 3 // 8 for k in range(1, lt + 1)}

    def work(op, k):
        P.compute(ns[op] * pts8[k])

    def comm3(k):                                          # mg.f:1131-1170
        for r in range(n):
            lev = L[r][k]
            m1, m2, m3 = lev["m"]
            face = {0: (m2 - 2) * (m3 - 2), 1: m1 * (m3 - 2), 2: m1 * m2}
            for a in range(3):
                up, down = lev["nbr"][a, 1], lev["nbr"][a, -1]
                b = 8 * face[a]
                if up == r and down == r:
                    continue                                # one block on this axis: self
                # ready(a,-1): Irecv from nbr(a,+1); ready(a,+1): Irecv from nbr(a,-1)
                if up != r:
                    P.add(r, OP_IRECV, up, b)
                if down != r:
                    P.add(r, OP_IRECV, down, b)
                # give3(a,+1): Send to nbr(a,+1); give3(a,-1): Send to nbr(a,-1)
                if up != r:
                    P.add(r, OP_SEND, up, b)
                if down != r:
                    P.add(r, OP_SEND, down, b)
                P.add(r, OP_WAITALL)                        # take3(a,-1), take3(a,+1)

    def resid(k):
        work("resid", k)
        comm3(k)                                           # mg.f:761

    def psinv(k):
        work("psinv", k)
        comm3(k)                                           # mg.f:691

    def norm2u3():                                         # mg.f:1043-1095
        work("norm2u3", lt)
        P.allreduce(8)                                     # max
        P.allreduce(8)                                     # sum

    def zran3():                                           # mg.f:2108-2300
        work("zran3", lt)
        P.barrier()                                        # mg.f:2203
        with P.loop(10):                                   # mm = 10, mg.f:2210-2260
            P.allreduce(8)
            P.allreduce(16)
            P.allreduce(8)
            P.allreduce(16)
        P.barrier()                                        # mg.f:2282
        work("zero3", lt)
        comm3(lt)                                          # mg.f:2296

    def mg3p():                                            # mg.f:570-633
        for k in range(lt, 1, -1):
            work("rprj3", k)
            comm3(k - 1)                                   # rprj3 -> comm3 at level k-1
        work("zero3", 1)
        psinv(1)
        for k in range(2, lt):
            work("zero3", k)
            work("interp", k)                              # comm3_ex: nothing to send here
            resid(k)
            psinv(k)
        work("interp", lt)
        resid(lt)
        psinv(lt)

    P.barrier()                                            # mg.f:116
    for b in (4, 4, 4, 4, 4, 32):                          # lt nit nx ny nz debug_vec(8)
        P.bcast(b)                                         # mg.f:157-163
    if npb == "3.3.1":
        P.bcast(4)                                         # timeron, mg.f:164
    work("zero3", lt)
    zran3()                                                # mg.f:226
    norm2u3()                                              # mg.f:228
    resid(lt)                                              # mg.f:248
    norm2u3()
    mg3p()                                                 # one untimed iteration, mg.f:256
    resid(lt)
    work("zero3", lt)
    zran3()                                                # mg.f:260
    P.barrier()                                            # mg.f:272
    P.mark(MARK_START)                                     # timer_start(T_bench)
    resid(lt)
    norm2u3()
    with P.loop(its):                                      # mg.f:281-288
        mg3p()
        resid(lt)
    norm2u3()                                              # mg.f:291
    P.mark(MARK_DONE)
    P.reduce(8)                                            # mg.f:297
    if finalize:
        P.finalize()
    return P.blocks()

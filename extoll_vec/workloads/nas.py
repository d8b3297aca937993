"""NAS Parallel Benchmarks (class A) communication skeletons, Liu and Panda, section 6.3: each
rank's program is the benchmark's real sequence of MPI calls (partners, sizes, order,
collectives as MPICH 1.2 decomposes them) with its compute phases between them.

    nas_program(name, n_ranks, iterations=None, compute_scale=1.0) -> Program

The generators: nas_kernels.py (IS, FT, CG, MG) and nas_apps.py (LU, SP, BT), on the MPICH
1.2.5 collectives of mpich.py; what each models and its sources:
docs/reproduction/nas_skeletons.md. Every generator brackets the
benchmark's timed part with MARK_START / MARK_DONE (its untimed set-up and verification
communication runs outside them, since Table 1 counts every message of the run).
"""
from __future__ import annotations

import math

import numpy as np

from .nas_apps import bt_blocks, lu_blocks, sp_blocks
from .nas_kernels import cg_blocks, ft_blocks, is_blocks, mg_blocks
from .program import Program, assemble, sends
from .registry import Workload

# The NAS Parallel Benchmarks' class A communication skeletons (Liu and Panda, sec. 6.3) and the
# rank counts each runs on: powers of 2, and squares for SP and BT
NAS_BENCHMARKS = ("IS", "FT", "LU", "CG", "MG", "SP", "BT")
NAS_SQUARE = ("SP", "BT")

# Table 1 of Liu and Panda (messages per process, static scheme) counts a rendezvous as three
# messages: the request and the finish message its sender writes, the reply its receiver does
RNDV_MESSAGES_SENT, RNDV_MESSAGES_RECEIVED = 2, 1

GENERATORS = {"IS": is_blocks, "FT": ft_blocks, "LU": lu_blocks, "CG": cg_blocks,
              "MG": mg_blocks, "SP": sp_blocks, "BT": bt_blocks}


def nas_program(name: str, n_ranks: int, iterations: int | None = None,
                compute_scale: float = 1.0) -> Program:
    """The skeleton of NAS benchmark `name` on n_ranks ranks; iterations: its time steps
    (None: class A's); compute_scale multiplies every compute phase."""
    blocks = GENERATORS[name](n_ranks, iterations=iterations, compute_scale=compute_scale)
    steps = "class A" if iterations is None else f"{iterations} iterations"
    return assemble(blocks, f"NAS {name} skeleton, {n_ranks} ranks, {steps}, "
                            f"compute x {compute_scale:g}")


def messages_per_rank(prog: Program, eager_max: int) -> np.ndarray:
    """Messages each rank of prog sends into pre-posted buffers when messages above eager_max
    bytes go by rendezvous (request, reply, finish): float64 [n_ranks], loops unrolled, flow
    control's own messages (ECMs) not included. The static count behind the skeletons' check
    against Table 1 (docs/reproduction/nas_skeletons.md)."""
    rank, dst, nbytes, mult = sends(prog)
    n = prog.n_ranks
    big = nbytes > eager_max
    eager = np.bincount(rank[~big], mult[~big], minlength=n)
    return (eager + RNDV_MESSAGES_SENT * np.bincount(rank[big], mult[big], minlength=n)
            + RNDV_MESSAGES_RECEIVED * np.bincount(dst[big], mult[big], minlength=n))


# ---- registered kind (registry.py) ------------------------------------------------------------
def _check(w, pre, check) -> None:
    r = w.ranks
    if w.nas in NAS_SQUARE:
        check(math.isqrt(r) ** 2 == r and r >= 4, f"{pre}.ranks",
              "a square number >= 4 for SP and BT", r)
    elif w.nas == "MG":   # class A MG: no rank without points
        check(2 <= r <= 8 and r & (r - 1) == 0, f"{pre}.ranks", "a power of 2 from 2 to 8 for "
              "MG (on more, class A's coarsest grids leave ranks without points)", r)
    else:
        check(r >= 2 and r & (r - 1) == 0, f"{pre}.ranks", f"a power of 2 >= 2 for {w.nas}", r)


def _describe(cfg) -> str:
    w = cfg.workload
    steps = f"{w.nas_iterations} time steps" if w.nas_iterations else "class A"
    line = f"NAS {w.nas} {w.ranks} ranks ({cfg.mpi.ranks_per_node}/node), {steps}"
    return line + (f", compute x{w.compute_scale:g}" if w.compute_scale != 1 else "")


WORKLOADS = (
    Workload("nas", program=lambda cfg: nas_program(
                 cfg.workload.nas, cfg.workload.ranks, cfg.workload.nas_iterations or None,
                 cfg.workload.compute_scale),
             check=_check, describe=_describe, owns=("nas", "nas_iterations", "compute_scale")),
)

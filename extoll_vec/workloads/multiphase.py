"""Multi-phase alltoall application (paper section 7.3, Figure 19: credit reallocation).

The paper's program: 100 alltoalls over all 1024 ranks, 100 over ranks 0-255, 100 over 0-511,
100 over all, 100 over 0-511, 100 over 0-255, 100 over all; 2 KB messages, no collective
optimization, and "at the end of each alltoall stage there is a barrier ... involving all the
processes". workload.kind "multiphase": workload.phases (empty = those fractions of
workload.ranks), workload.iterations alltoalls per phase, workload.message_bytes.

Rank r's program::

    MARK_START
    for phase p with n_p ranks:
        LOOP iterations {
            [if r == 0: SNAPSHOT   (credits rank 0 owns towards every peer, Figure 19, and
                                    every peer towards rank 0)]
            [if r < n_p: SEND to r+1, ..., r-1; RECV from r+1, ..., r-1   (mod n_p)]
            dissemination barrier among all ranks
            MARK phase_mark(p)
        }
    OP_END

So rank 0 records its credits before every alltoall: snapshot k is taken before alltoall k
(workloads.snapshot_count gives their number). OP_MARK records the time (and the counters) of
its last execution of an index, so after the run marks[r, phase_mark(p)] is the end of phase
p's last alltoall + barrier: phase p took marks[phase_mark(p)] - marks[phase_mark(p-1)]
(phase_mark(-1) = MARK_START), i.e. that over iterations per alltoall. The last phase's mark is
MARK_DONE; phase p < last uses index 2 + p, written only while it is < MAX_MARKS (the paper's 7
phases use exactly indices 0..7).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..dtypes import MAX_MARKS, OP_ENDLOOP, OP_LOOP, OP_MARK, OP_SNAPSHOT
from .collectives import alltoall_rows, barrier_rows
from .common import MARK_DONE, MARK_START, int_arg
from .program import Program, assemble
from .registry import Workload

PAPER_PHASES = (1024, 256, 512, 1024, 512, 256, 1024)


def paper_phases(n_ranks: int) -> tuple[int, ...]:
    """The paper's phase sizes scaled to n_ranks: fractions 1, 1/4, 1/2, 1, 1/2, 1/4, 1."""
    return tuple(n_ranks * p // 1024 for p in PAPER_PHASES)


def phase_mark(p: int, n_phases: int) -> int | None:
    """Mark index written after every alltoall of phase p (None: no index left)."""
    if p == n_phases - 1:
        return MARK_DONE
    return 2 + p if 2 + p < MAX_MARKS else None


def multiphase(n_ranks: int, phases: Sequence[int] | None, message_bytes: int,
               iterations: int) -> Program:
    """Rank programs of the multi-phase alltoall (module docstring); phases None or empty =
    paper_phases(n_ranks)."""
    n = int_arg("n_ranks", n_ranks, 2)
    phases = tuple(phases) if phases else paper_phases(n)
    phases = tuple(int_arg("ranks of a phase", q, 2, n) for q in phases)
    message_bytes = int_arg("message_bytes", message_bytes, 0)
    iterations = int_arg("iterations", iterations, 1)
    bar = barrier_rows(np.arange(n))                                  # [n, 3*rounds, 4]
    loop = np.array([[OP_LOOP, iterations, 0, 0]], np.int32)
    endloop = np.array([[OP_ENDLOOP, 0, 0, 0]], np.int32)
    snap = np.array([[OP_SNAPSHOT, 0, 0, 0]], np.int32)
    parts: list[list[np.ndarray]] = [[np.array([[OP_MARK, MARK_START, 0, 0]], np.int32)]
                                     for _ in range(n)]
    cache: dict[int, np.ndarray] = {}
    for p, size in enumerate(phases):
        if size not in cache:
            cache[size] = alltoall_rows(1, size, message_bytes)
        a2a = cache[size]
        idx = phase_mark(p, len(phases))
        mark = np.array([[OP_MARK, idx, 0, 0]] if idx is not None else [], np.int32).reshape(-1, 4)
        for r in range(n):
            body = ([snap] if r == 0 else []) + ([a2a[r]] if r < size else [])
            parts[r].extend([loop, *body, bar[r], mark, endloop])
    ranks = [np.concatenate(x) for x in parts]
    sizes = ", ".join(str(q) for q in phases)
    return assemble(ranks, f"multiphase: alltoalls over ranks [0, n) for n = {sizes} of {n}, "
                           f"{iterations} each, {message_bytes} B, barrier of all after each")


# ---- registered kind (registry.py) ------------------------------------------------------------
def _check(w, pre, check) -> None:
    check(len(w.phases) > 0 or w.ranks >= 8, f"{pre}.ranks",
          ">= 8 for the default phases (ranks/4 >= 2)", w.ranks)
    check(all(2 <= n <= w.ranks for n in w.phases), f"{pre}.phases",
          f"ranks per phase in 2..ranks ({w.ranks}); empty = the paper's phases", list(w.phases))


def _figures(cfg) -> tuple[int, int, int]:
    w = cfg.workload
    n = max(w.phase_ranks)
    return sum(max(k - 1, 0) for k in w.phase_ranks) * w.iterations, n * (n - 1), n - 1


WORKLOADS = (
    Workload("multiphase", program=lambda cfg: multiphase(
                 cfg.workload.ranks, cfg.workload.phase_ranks, cfg.workload.message_bytes,
                 cfg.workload.iterations),
             check=_check, figures=_figures,
             # one snapshot before every alltoall of rank 0 (section 7.3)
             snapshots=lambda cfg: len(cfg.workload.phase_ranks) * cfg.workload.iterations,
             rows=lambda cfg: max(cfg.workload.ranks, sum(n * 2 * max(n - 1, 0)
                                                          for n in cfg.workload.phase_ranks)),
             detail=lambda cfg: f", phases {'/'.join(str(n) for n in cfg.workload.phase_ranks)}"),
)

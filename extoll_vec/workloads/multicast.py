"""The multicast benchmarks of Bhoedjang et al. (section 5): latency of an empty multicast to the
last receiver, a single sender's blast, and every member multicasting at once, over the group of
ranks 0..P-1 (the other ranks idle). The paper says what each measures, not how it was timed;
the readings (gaps G28-G30 of docs/reproduction/lfc.md):

- mcast_latency (Figure 4 top, "the latency observed by the last receiver of each (empty)
  multicast message"): `warmup` rounds of (rank 0 multicasts, the members receive, a barrier
  of the group), then rank 0 marks MARK_START and multicasts once; every member marks
  MARK_DONE when it has the message. Latency = the last member's MARK_DONE - rank 0's
  MARK_START.
- mcast_blast (Figure 4 bottom, Figures 5-7 single sender, "a straightforward blast test ...
  the throughput observed by the sender"): rank 0 multicasts `iterations` messages back to back
  (blocking sends), then waits for an empty acknowledgement from every member; throughput =
  iterations x bytes / (rank 0's MARK_DONE - MARK_START). `warmup` untimed rounds first.
- mcast_alltoall (Figure 6 right, Table 1, Figure 8, "all senders broadcast
  simultaneously"): every member posts its receives, multicasts `iterations` messages
  (non-blocking) and waits for all; per-sender throughput = iterations x bytes / (last
  MARK_DONE - first MARK_START).
"""
from __future__ import annotations

from .common import MARK_DONE, MARK_START, int_arg
from .program import Program, ProgramBuilder, check_group_size
from .registry import Workload, ranks_at_least


def _args(n_ranks, group, nbytes, iterations, warmup):
    n = int_arg("n_ranks", n_ranks, 2)
    return (n, int_arg("group", group or n, 2, n), int_arg("message_bytes", nbytes, 0),
            int_arg("iterations", iterations, 1), int_arg("warmup", warmup, 0))


def _round(b: ProgramBuilder, group: int, nbytes: int) -> None:
    """Rank 0 multicasts one message of nbytes; every other member receives it."""
    b.mcast(0, group, nbytes)
    for m in range(1, group):
        b.recv(m, 0, nbytes)


def mcast_latency(n_ranks: int, group: int, nbytes: int, warmup: int = 2) -> Program:
    n, group, nbytes, _k, warmup = _args(n_ranks, group, nbytes, 1, warmup)
    b = ProgramBuilder(n)
    for _ in range(warmup):
        _round(b, group, nbytes)
        b.barrier(range(group))
    b.mark(0, MARK_START)
    _round(b, group, nbytes)
    for m in range(1, group):
        b.mark(m, MARK_DONE)
    return b.build(f"mcast_latency: rank 0 to ranks 0..{group - 1}, {nbytes} B")


def mcast_blast(n_ranks: int, group: int, nbytes: int, iterations: int,
                warmup: int = 0) -> Program:
    n, group, nbytes, iterations, warmup = _args(n_ranks, group, nbytes, iterations, warmup)
    b = ProgramBuilder(n)
    for count, timed in ((warmup, False), (iterations, True)):
        if count == 0:
            continue
        if timed:
            b.mark(0, MARK_START)
        for r in range(group):
            with b.loop(r, count):
                if r == 0:
                    b.mcast(0, group, nbytes)
                else:
                    b.recv(r, 0, nbytes)
        for m in range(1, group):      # the acknowledgements of the last message
            b.send(m, 0, 0)
            b.recv(0, m, 0)
    b.mark(0, MARK_DONE)
    return b.build(f"mcast_blast: rank 0 to ranks 0..{group - 1}, {iterations} x {nbytes} B")


def mcast_alltoall(n_ranks: int, group: int, nbytes: int, iterations: int) -> Program:
    n, group, nbytes, iterations, _w = _args(n_ranks, group, nbytes, iterations, 0)
    b = ProgramBuilder(n)
    for r in range(group):
        b.mark(r, MARK_START)
        for s in range(group):
            if s != r:
                with b.loop(r, iterations):
                    b.irecv(r, s, nbytes)
        with b.loop(r, iterations):
            b.mcast(r, group, nbytes, blocking=False)
        b.waitall(r)
        b.mark(r, MARK_DONE)
    return b.build(f"mcast_alltoall: ranks 0..{group - 1} each {iterations} x {nbytes} B")


# ---- registered kinds (registry.py) -----------------------------------------------------------
def _check(w, pre, check) -> None:
    ranks_at_least(2)(w, pre, check)
    check_group_size(w, pre, check)


def _group(cfg) -> int:
    return cfg.workload.group_size


WORKLOADS = (
    Workload("mcast_latency", multicast=True, check=_check, program=lambda cfg: mcast_latency(
        cfg.workload.ranks, _group(cfg), cfg.workload.message_bytes, cfg.workload.warmup)),
    Workload("mcast_blast", multicast=True, check=_check, program=lambda cfg: mcast_blast(
        cfg.workload.ranks, _group(cfg), cfg.workload.message_bytes, cfg.workload.iterations,
        cfg.workload.warmup)),
    Workload("mcast_alltoall", multicast=True, check=_check, program=lambda cfg: mcast_alltoall(
        cfg.workload.ranks, _group(cfg), cfg.workload.message_bytes, cfg.workload.iterations)),
)

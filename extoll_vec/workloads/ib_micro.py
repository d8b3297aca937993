"""The micro-benchmarks of Liu and Panda (section 6.2), between ranks 0 and 1 (other ranks idle).

latency (Figure 2): a ping-pong of blocking sends and receives; the one-way latency is half a
round trip, averaged over the timed iterations.

bandwidth (Figures 3-8): "the sender send[s] out a number of back-to-back messages to the
receiver and then wait[s] for a reply from the receiver. The number of back-to-back messages
is referred to as window size. The receiver sends the reply only after it has received all
messages." Blocking: MPI_Send / MPI_Recv for each message; non-blocking: MPI_Isend /
MPI_Irecv for the window, then MPI_Waitall. The reply is a 4-byte message (the paper does not
give its size). Bandwidth = bytes the sender sent / time, over the timed iterations.
"""
from __future__ import annotations

from .common import int_arg, pingpong_body, timed_loops
from .program import Program, ProgramBuilder
from .registry import Workload, ranks_at_least

REPLY_BYTES = 4


def _args(n_ranks, message_bytes, iterations, warmup) -> tuple[int, int, int, int]:
    return (int_arg("n_ranks", n_ranks, 2), int_arg("message_bytes", message_bytes, 0),
            int_arg("iterations", iterations, 1), int_arg("warmup", warmup, 0))


def latency_program(n_ranks: int, message_bytes: int, iterations: int,
                    warmup: int = 0) -> Program:
    n_ranks, message_bytes, iterations, warmup = _args(n_ranks, message_bytes, iterations,
                                                       warmup)
    b = ProgramBuilder(n_ranks)
    for me, peer, first in ((0, 1, True), (1, 0, False)):
        timed_loops(b, me, warmup, iterations, pingpong_body(b, me, peer, first, message_bytes))
    return b.build(f"latency: ping-pong rank 0 <-> 1, {message_bytes} B x {iterations}")


def bandwidth_program(n_ranks: int, message_bytes: int, window: int, iterations: int,
                      blocking: bool, warmup: int = 0) -> Program:
    n_ranks, message_bytes, iterations, warmup = _args(n_ranks, message_bytes, iterations,
                                                       warmup)
    window = int_arg("window", window, 1)
    b = ProgramBuilder(n_ranks)
    for me, peer, sender in ((0, 1, True), (1, 0, False)):
        def body(me=me, peer=peer, sender=sender):
            with b.loop(me, window):
                if sender:
                    (b.send if blocking else b.isend)(me, peer, message_bytes)
                else:
                    (b.recv if blocking else b.irecv)(me, peer, message_bytes)
            if not blocking:
                b.waitall(me)
            if sender:
                b.recv(me, peer, REPLY_BYTES)
            else:
                b.send(me, peer, REPLY_BYTES)
        timed_loops(b, me, warmup, iterations, body)
    kind = "blocking" if blocking else "non-blocking"
    return b.build(f"bandwidth ({kind}): rank 0 -> 1, window {window} x {message_bytes} B "
                   f"x {iterations}")


WORKLOADS = (
    Workload("latency", program=lambda cfg: latency_program(
                 cfg.workload.ranks, cfg.workload.message_bytes, cfg.workload.iterations,
                 cfg.workload.warmup), check=ranks_at_least(2)),
    Workload("bandwidth", program=lambda cfg: bandwidth_program(
                 cfg.workload.ranks, cfg.workload.message_bytes, cfg.workload.window,
                 cfg.workload.iterations, cfg.workload.blocking, cfg.workload.warmup),
             check=ranks_at_least(2), owns=("window", "blocking")),
)

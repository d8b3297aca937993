"""The micro-benchmarks of seed 003 (section 6.2), between ranks 0 and 1 (other ranks idle).

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

from .common import MARK_DONE, MARK_START, int_arg
from .program import Program, ProgramBuilder

REPLY_BYTES = 4


def latency_program(n_ranks: int, message_bytes: int, iterations: int,
                    warmup: int = 0) -> Program:
    n_ranks = int_arg("n_ranks", n_ranks, 2)
    message_bytes = int_arg("message_bytes", message_bytes, 0)
    iterations = int_arg("iterations", iterations, 1)
    warmup = int_arg("warmup", warmup, 0)
    b = ProgramBuilder(n_ranks)
    for me, peer, first in ((0, 1, True), (1, 0, False)):
        for count, timed in ((warmup, False), (iterations, True)):
            if count == 0:
                continue
            if timed:
                b.mark(me, MARK_START)
            with b.loop(me, count):
                if first:
                    b.send(me, peer, message_bytes).recv(me, peer, message_bytes)
                else:
                    b.recv(me, peer, message_bytes).send(me, peer, message_bytes)
        b.mark(me, MARK_DONE)
    return b.build(f"latency: ping-pong rank 0 <-> 1, {message_bytes} B x {iterations}")


def bandwidth_program(n_ranks: int, message_bytes: int, window: int, iterations: int,
                      blocking: bool, warmup: int = 0) -> Program:
    n_ranks = int_arg("n_ranks", n_ranks, 2)
    message_bytes = int_arg("message_bytes", message_bytes, 0)
    window = int_arg("window", window, 1)
    iterations = int_arg("iterations", iterations, 1)
    warmup = int_arg("warmup", warmup, 0)
    b = ProgramBuilder(n_ranks)
    for me, peer, sender in ((0, 1, True), (1, 0, False)):
        for count, timed in ((warmup, False), (iterations, True)):
            if count == 0:
                continue
            if timed:
                b.mark(me, MARK_START)
            with b.loop(me, count):
                with b.loop(me, window):
                    if sender and blocking:
                        b.send(me, peer, message_bytes)
                    elif sender:
                        b.isend(me, peer, message_bytes)
                    elif blocking:
                        b.recv(me, peer, message_bytes)
                    else:
                        b.irecv(me, peer, message_bytes)
                if not blocking:
                    b.waitall(me)
                if sender:
                    b.recv(me, peer, REPLY_BYTES)
                else:
                    b.send(me, peer, REPLY_BYTES)
        b.mark(me, MARK_DONE)
    kind = "blocking" if blocking else "non-blocking"
    return b.build(f"bandwidth ({kind}): rank 0 -> 1, window {window} x {message_bytes} B "
                   f"x {iterations}")

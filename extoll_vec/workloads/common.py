"""What every workload generator shares: the phase marks they write and the check of their
integer arguments. A module of its own so that generators import it, never each other."""
from __future__ import annotations

from .program import I32_MAX

# Phase marks written by the generators (marks[rank, index]).
MARK_START = 0   # the rank starts its workload
MARK_DONE = 1    # the rank finished its communication phase (before any final barrier)


# the longest OP_COMPUTE row (its ns are an int32); longer phases take several rows
COMPUTE_CHUNK_NS = 2_000_000_000


def compute_chunks(ns: float) -> list[int]:
    """A compute phase of ns nanoseconds (rounded to whole ns) as OP_COMPUTE durations of at
    most COMPUTE_CHUNK_NS each; none for a phase under half a nanosecond."""
    left, out = int(round(ns)), []
    while left > 0:
        out.append(min(left, COMPUTE_CHUNK_NS))
        left -= out[-1]
    return out


def int_arg(name: str, value, lo: int, hi: int = I32_MAX) -> int:
    """value as an int, ValueError unless it is a whole number in lo..hi."""
    v = int(value)
    if v != value or not lo <= v <= hi:
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    return v


def timed_loops(b, me: int, warmup: int, iterations: int, body) -> None:
    """Rank `me` of ProgramBuilder b runs body() `warmup` times untimed, then MARK_START,
    `iterations` times, then MARK_DONE: the timed loop of the micro-benchmarks."""
    for count, timed in ((warmup, False), (iterations, True)):
        if count == 0:
            continue
        if timed:
            b.mark(me, MARK_START)
        with b.loop(me, count):
            body()
    b.mark(me, MARK_DONE)


def pingpong_body(b, me: int, peer: int, first_send: bool, nbytes: int):
    """One round trip of a ping-pong as seen by rank `me` (the body for timed_loops)."""
    if first_send:
        return lambda: b.send(me, peer, nbytes).recv(me, peer, nbytes)
    return lambda: b.recv(me, peer, nbytes).send(me, peer, nbytes)

"""Partial deadlock: part of the network stops for good while the rest moves.

The kernels' watchdogs see a network that stops as a whole (no event left, or nothing delivered
for limits.no_progress_us). A routing whose channel dependency graph has a cycle (the config-time
check run with network.deadlock_check false: the flat VC assignment, BookSim's ugal_dragonflynew
as written) can instead fill one cycle of buffers while the other nodes go on delivering, so a
throughput would be measured over a network that is partly dead. This check looks for it between
kernel calls, every limits.stall_check_cycles cycles (Batch.run ends each call there):

- a router input buffer (router, input port, VC) is *still* when its virtual output queues
  (every head and tail) are what they were one check earlier: no packet left or entered it
  for at least the check interval, far longer than a link's credit round trip;
- a still buffer is *blocked* when every queue head in it waits for credits of the downstream
  buffer its output leads to (the wait-for graph of diagnostics.blocked_cycle);
- a set of still, blocked buffers whose heads wait only on buffers of the set can never move
  again. Under a routing whose dependency graph is acyclic no such set can form (its wait-for
  graph is a subgraph of that graph), so only members that skipped the config-time check
  (network.deadlock_check false) are looked at: the others cannot stop so, and an MPI-level
  run would pay for a kernel call and a look every few thousand cycles.

It names a cycle of the set (router, port, VC of each buffer) and the cycle of the clock since
which all of the set's buffers have been still. Results are unchanged by it: only the chunk
boundaries move, and the kernels' results do not depend on them (tests/test_threads.py).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..routing.deadlock import buffer_parts, describe_cycle, find_cycle
from .diagnostics import queue_heads, waiting_set


def every(cfg) -> int:
    """The cycles between a member's looks: limits.stall_check_cycles where its routing may
    deadlock (network.deadlock_check false: the config-time check did not prove it cannot), 0
    (none) elsewhere."""
    return 0 if cfg.network.deadlock_check else cfg.limits.stall_check_cycles


def interval(configs) -> int:
    """The cycles between checks: the smallest of the members' intervals that is set (0: no
    member checks)."""
    on = [every(c) for c in configs if every(c) > 0]
    return min(on) if on else 0


class StallCheck:
    """The still buffers of every member across checks; check() flags ERR_STALL."""

    def __init__(self, batch):
        self.batch = batch
        self.every = [every(c) for c in batch.configs]
        self.prev: dict[int, np.ndarray] = {}       # member -> its queues at the last check
        self.since: dict[int, np.ndarray] = {}      # member -> [R, P, V] still since this cycle
        self.notes: dict[int, str] = {}

    def _queues(self, b: int) -> np.ndarray:
        """Member b's queue pointers, [R, P, V, k]: the VOQ router's head and tail of each
        output's queue, the iq router's head and tail of each input VC's FIFO."""
        S = self.batch.S
        if self.batch.configs[b].network.router == "iq":
            return np.stack([S.iq_head[b], S.iq_tail[b]], -1)
        voq = S.voq[b]
        return voq.reshape(voq.shape[:3] + (-1,))

    def check(self, t: int) -> None:
        S = self.batch.S
        for b, gap in enumerate(self.every):
            if gap == 0 or S.finished[b] != 0 or S.status[b] != 0:
                continue
            q = self._queues(b)
            if b not in self.prev:
                self.prev[b] = q.copy()
                self.since[b] = np.full(q.shape[:3], t, np.int64)
                continue
            same = (q == self.prev[b]).all(axis=-1)             # [R, P, V]
            self.since[b][~same] = t
            self.prev[b][...] = q
            still = same & (self.since[b] <= t - gap) & (q >= 0).any(axis=-1)
            if still.any():
                note = self._stopped(b, still)
                if note is not None:
                    S.status[b] |= D.ERR_STALL
                    self.notes[b] = note

    def _stopped(self, b: int, still: np.ndarray) -> str | None:
        """The sentence naming a set of still buffers that wait only on each other, or None."""
        r, pi, vi, po, ovc, flits = queue_heads(self.batch, b)
        keep = still[r, pi, vi]
        stuck, _ = waiting_set(self.batch, b, r[keep], pi[keep], vi[keep], po[keep], ovc[keep],
                               flits[keep])
        if not stuck:
            return None
        edges = np.unique(np.array([(a, c) for a, cs in stuck.items() for c in cs], np.int64),
                          axis=0)
        cycle = find_cycle(edges)
        rr, pp, vv = buffer_parts(sorted(stuck))
        formed = int(self.since[b][rr, pp, vv].max())
        cfg = self.batch.configs[b]
        return (f"partial deadlock: {len(stuck)} router input buffers at "
                f"{len(np.unique(rr))} routers wait only on each other and have not changed "
                f"since cycle {formed} ({formed * cfg.network.cycle_ns / 1000:.3f} us), "
                f"whatever else still moves; the cycle {describe_cycle(cycle)} "
                f"(network.routing {cfg.network.routing}; limits.stall_check_cycles "
                f"{cfg.limits.stall_check_cycles})")

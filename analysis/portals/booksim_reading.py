"""Throughput as BookSim2 reads it (trafficmanager.cpp, `_SingleSim` with sim_type throughput),
for comparison with the project's convergence windows (workload.sample_cycles).

BookSim runs sample periods of `sample_period` cycles. It warms up for `warmup_periods` of
them (3 by default), then clears its statistics; from there each period ends with the
*cumulative* accepted rate since that reset (flits over cycles and nodes), and the run stops
once three successive periods each moved that average by at most `acc_stopping_thres` (5 %)
of its new value, or after `max_samples` periods in all, warm-up included (10). The reading is
the cumulative average at the stop. The project's targets report the last of their 2000-cycle
windows after 5000 cycles of warm-up instead (docs/routing.md, workload.sample_cycles): a
window sees a change in the network at once, a cumulative average dilutes it over the run.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Reading:
    throughput: float       # flits per node and cycle
    stop_cycle: int         # the cycle the reading ends at
    converged: bool         # three periods within the threshold before max_samples


def booksim_reading(accepted: np.ndarray, step: int, nodes: int, sample_period: int = 1000,
                    warmup_periods: int = 3, max_samples: int = 10,
                    threshold: float = 0.05) -> Reading:
    """BookSim's reading of a run whose cumulative accepted flits (all nodes) after every
    `step` cycles from cycle 0 are `accepted` (accepted[k]: flits by cycle (k + 1) * step).
    As _SingleSim: statistics cleared before every even period while warming up and once
    more after it; after each period the average since the last clear, its change against
    the previous period's average; while running, three changes in a row within the
    threshold stop the run. ValueError if the series ends before BookSim would."""
    if sample_period % step:
        raise ValueError(f"sample_period {sample_period} is not a multiple of the step {step}")
    per = sample_period // step

    def flits(period: int) -> int:          # cumulative by the end of `period` (-1: none)
        if period < 0:
            return 0
        if (period + 1) * per > len(accepted):
            raise ValueError(f"the run ends at cycle {len(accepted) * step}, BookSim's reading "
                             f"needs cycle {(period + 1) * sample_period}")
        return int(accepted[(period + 1) * per - 1])

    running, clear_last, converged, prev, cur, cleared = False, False, 0, 0.0, 0.0, 0
    period = 0
    while period < max_samples and (not running or converged < 3):
        if clear_last or (not running and period % 2 == 0):
            clear_last, cleared = False, period
        cur = (flits(period) - flits(cleared - 1)) / ((period + 1 - cleared) * sample_period) \
            / nodes
        change = abs(cur - prev) / cur if cur > 0 else float("inf")
        prev = cur
        if not running:
            if period + 1 >= warmup_periods:
                clear_last, running = True, True
        else:
            converged = converged + 1 if change <= threshold else 0
        period += 1
    if not running or cleared < warmup_periods:
        raise ValueError("max_samples ends the run before a period after the warm-up")
    return Reading(cur, period * sample_period, converged >= 3)


def window_reading(accepted: np.ndarray, step: int, nodes: int, warmup: int = 5000,
                   window: int = 2000, max_windows: int = 20,
                   tolerance: float = 0.05) -> Reading:
    """The project's reading (workload.sample_cycles) of the same series: windows of `window`
    cycles after `warmup`, until two successive ones differ by at most `tolerance` of the
    earlier (at most max_windows); the last window's rate."""
    per, w0 = window // step, warmup // step
    at = lambda k: int(accepted[k - 1]) if k > 0 else 0                # noqa: E731
    prev = None
    for i in range(max_windows):
        lo, hi = w0 + i * per, w0 + (i + 1) * per
        if hi > len(accepted):
            raise ValueError(f"the run ends at cycle {len(accepted) * step}")
        cur = (at(hi) - at(lo)) / window / nodes
        if prev is not None and abs(cur - prev) <= tolerance * prev:
            return Reading(cur, hi * step, True)
        prev = cur
    return Reading(prev, hi * step, False)

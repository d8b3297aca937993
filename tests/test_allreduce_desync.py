"""benchmarks/allreduce_desync.py follows every rank through IMB Allreduce's timed sendrecv
steps (why static flow control runs it faster than the reference). Its step times must
be those of the run: one per step and repetition, in order, and adding up to the time the
paper's measure (the marks) gives."""
import math
import sys
from pathlib import Path

import numpy as np

from extoll_vec.analysis.extoll_common import measured_us
from extoll_vec.engine import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import allreduce_desync as A  # noqa: E402


def test_step_completions_are_the_runs_steps():
    cfg = A.allreduce_config("2x1x1", 16, 0, "static", 16)
    at = A.step_completions(cfg, sample=10)
    steps = int(math.log2(cfg.n_ranks))                # 5 sendrecv steps per Allreduce
    assert at.shape == (cfg.n_ranks, 16 * steps)
    assert (np.diff(at, axis=1) >= 0).all()            # a rank leaves its steps in order
    assert (at % 10 == 0).all()                        # taken at the samples
    rep_us = float(np.diff(np.median(at, 0)[steps - 1::steps]).mean()) * cfg.network.cycle_ns / 1e3
    marks_us = measured_us(simulate([cfg]), 0, cfg)
    assert abs(rep_us / marks_us - 1) < 0.03, (rep_us, marks_us)


def test_summary_reports_spread_and_repetition_time():
    cfg = A.allreduce_config("2x1x1", 16, 0, "none", 0)
    first, last, spread_first, spread_last, mean = A.summary(cfg, sample=10)
    assert 0 < spread_first and 0 < spread_last
    assert min(first, last) * 0.8 < mean < max(first, last) * 1.2

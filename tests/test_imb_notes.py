"""The extoll_imb target's judgements on synthetic rows: the reference as lower bound within two
standard errors (section 7.4) and the seed-004 claim (under 2 % dynamic, over 15 % static)."""
from __future__ import annotations

import math

from extoll_vec.analysis.extoll_imb import lower_bound_note, seed004_note

NAN = math.nan


def per(overhead, se, reps=4, bench="Reduce", proto="dynamic", slots=16):
    return [bench, proto, slots, 0.0, 0.0, overhead, se, reps]


def test_a_negative_overhead_within_two_se_passes_and_beyond_is_named():
    assert "every one of 2 overheads >= 0 within 2 SE" in lower_bound_note(
        [per(-1.9, 1.0), per(3.0, 0.5)])
    note = lower_bound_note([per(-2.1, 1.0, bench="Bcast", proto="static", slots=8),
                             per(3.0, 0.5)])
    assert "1 of 2 overheads below 0 by more than 2 SE: Bcast static 8 (-2.1 +- 1.0 %)" in note
    assert "(4+ replicates per point)" in note


def test_single_runs_are_not_judged():
    assert "no standard error" in lower_bound_note([per(-30.0, NAN, reps=1)])


def rows(static, dynamic):
    return ([["static", s, v, NAN, 14, v, "Bcast"] for s, v in static.items()]
            + [["dynamic", s, v, NAN, 14, v, "Bcast"] for s, v in dynamic.items()])


def test_seed004_claim_names_the_sizes_where_both_hold():
    note = seed004_note(rows({8: 30.0, 16: 16.0, 32: 4.0}, {8: 2.5, 16: 1.5, 32: 1.0}))
    assert "at 8 slots per process dynamic 2.5 %, static 30.0 %; holds at 16" in note
    assert seed004_note(rows({8: 10.0}, {8: 1.0})).endswith("holds at no measured size")

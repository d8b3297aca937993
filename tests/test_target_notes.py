"""The EXTOLL targets' judgements on synthetic rows: the reference as lower bound within two
standard errors (sections 5.3 and 7.4), the seed-004 IMB claim (under 2 % dynamic, over 15 %
static) and Figure 15's dynamic-minus-static gap."""
from __future__ import annotations

import math

from extoll_vec.analysis.extoll.common import below_reference
from extoll_vec.analysis.extoll.dynamic import gap
from extoll_vec.analysis.extoll.imb import seed004_note

NAN = math.nan


def test_a_negative_overhead_within_two_se_passes_and_beyond_is_named():
    assert "every one of 2 overheads >= 0 within 2 SE" in below_reference(
        [("Reduce dynamic 16", -1.9, 1.0, 4), ("Bcast dynamic 16", 3.0, 0.5, 4)])
    note = below_reference([("Bcast static 8", -2.1, 1.0, 4), ("Reduce static 8", 3.0, 0.5, 5)])
    assert "1 of 2 overheads below 0 by more than 2 SE: Bcast static 8 (-2.1 +- 1.0 %)" in note
    assert "(4+ replicates per point)" in note


def test_single_runs_are_not_judged():
    assert "no standard error" in below_reference([("Bcast static 8", -30.0, NAN, 1)])


def rows(static, dynamic):
    return ([["static", s, v, NAN, 14, v, "Bcast"] for s, v in static.items()]
            + [["dynamic", s, v, NAN, 14, v, "Bcast"] for s, v in dynamic.items()])


def test_seed004_claim_names_the_sizes_where_both_hold():
    note = seed004_note(rows({8: 30.0, 16: 16.0, 32: 4.0}, {8: 2.5, 16: 1.5, 32: 1.0}))
    assert ("at 8 slots per process dynamic 2.5 %, static 30.0 %; at 16 slots per process "
            "dynamic 1.5 %, static 16.0 %; holds at 16") in note
    assert seed004_note(rows({8: 10.0}, {8: 1.0})).endswith("holds at no measured size")


def test_gap_is_dynamic_minus_static_where_both_ran():
    pts = [["1x1024", "static", 8, 10.0], ["1x1024", "dynamic", 8, 11.5],
           ["1x1024", "static", 16, 4.0], ["1x1024", "dynamic", 16, 3.0],
           ["1x1024", "dynamic", 32, 9.0], ["2x512", "static", 8, 50.0]]
    assert gap(pts, "1x1024") == "dynamic - static -1.0 to +1.5 points"
    assert gap(pts, "2x512") == "dynamic - static: no common buffer size"


def test_flat_from_eq5_judges_within_two_combined_standard_errors():
    from extoll_vec.analysis.extoll.static import _flat_from

    def pt(slots, over, se):    # static_rows' layout: [2] slots, [3] overhead, [9] its SE
        return ["alltoall-1024", 2, slots, over, 0.0, 0.0, 0.0, True, 0.0, se, 4]
    curve = [pt(40, 30.0, 1.0), pt(57, 3.0, 1.0), pt(64, 1.0, 0.5), pt(76, 1.5, 0.5)]
    assert _flat_from(curve, 57) is True            # |3.0 - 1.5| <= 2 * hypot(1.0, 0.5)
    assert _flat_from(curve, 40) is False           # the drop is before Eq. 5
    curve[1][3] = 4.0                               # 2.5 > 2.24: not flat from 57
    assert _flat_from(curve, 57) is False
    assert _flat_from([pt(57, 3.0, math.nan), pt(64, 1.0, math.nan)], 57) is None

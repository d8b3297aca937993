"""EXTOLL static flow control formulas (Eq. 1-5, 7-8) against the paper's Tables 1-3.

No simulation and no Numba: extoll_vec.protocols.extoll.static and the targets in
analysis/extoll/tables.py are pure arithmetic.
"""
from __future__ import annotations

import csv
import re
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from extoll_vec.analysis.registry import get_target, load_targets

# Register the targets in TARGET_MODULES order before importing a target module directly: the
# registry lists targets in registration order (test_sweep_tables expects `summary` first).
load_targets()

from extoll_vec.analysis.extoll import paper_values as pv  # noqa: E402
from extoll_vec.analysis.extoll.tables import (MEMORY_COLUMNS, TABLE1_COLUMNS,  # noqa: E402
                                               printed_match, table2_eq5)
from extoll_vec.protocols.extoll import dynamic as ed  # noqa: E402
from extoll_vec.protocols.extoll import static as es  # noqa: E402

REQUIRED = {"extoll_table1": ["credit_quota", "credit_slots", "eq1", "formula_a", "formula_b"],
            "extoll_memory": ["processes", "static_mb", "dynamic_mb"],
            "extoll_buffer_bounds": ["processes", "groups", "group_size", "active_senders",
                                     "static_slots", "dynamic_slots", "static_mb", "dynamic_mb"]}


def _table(name, **kw):
    return get_target(name).compute(None, **kw)


# ---- Table 1 --------------------------------------------------------------------------------
def test_table1_equals_paper_on_every_row():
    t = _table("extoll_table1")
    assert t.columns == TABLE1_COLUMNS
    got = [tuple(r[:5]) for r in t.rows]
    assert got == list(pv.TABLE1)              # exact, all 10 rows, in the paper's order
    assert all(r[t.columns.index("matches_paper")] for r in t.rows)


def test_table1_wrong_formulas_fail_where_the_paper_says():
    t = _table("extoll_table1")
    a = t.columns.index("formula_a_deadlocks")
    b = t.columns.index("formula_b_overflows")
    assert [tuple(r[:2]) for r in t.rows if r[a]] == [(100, 1)]   # "101 ... never reached"
    assert [tuple(r[:2]) for r in t.rows if r[b]] == [(3, 2)]     # "a buffer overflow will occur"


def test_figure3_example():
    assert es.threshold(20, 2) == 7                # section 5.2, Figure 3: quota 20, 2 slots


# ---- safety argument of section 5.2 ---------------------------------------------------------
# Each credit packet returns exactly `threshold` credits and the sender never owns more than the
# quota, so at most quota div threshold credit packets can be outstanding; they must fit in the
# credit slots: quota div threshold <= credit_slots  <=>  (credit_slots + 1) * threshold > quota.
# Liveness (formula (a)'s failure): 1 <= threshold <= quota.
quotas = st.integers(min_value=1, max_value=10**9)
slots = st.integers(min_value=1, max_value=10**6)


@given(quotas, slots)
def test_eq1_is_safe_live_and_minimal(q, s):
    t = es.threshold(q, s)
    assert (s + 1) * t > q                                  # safety
    assert q // t <= s                                      # the same, as outstanding packets
    assert 1 <= t <= q                                      # liveness
    assert t == 1 or (s + 1) * (t - 1) <= q                 # the smallest safe threshold
    assert es.is_safe(q, s, t) and es.is_live(q, t)
    assert Fraction(q, s + 1) < t <= Fraction(q, s + 1) + 1


def _prop_safety(formula):
    @settings(database=None, max_examples=300, derandomize=True)
    @given(st.integers(1, 200), st.integers(1, 20))
    def prop(q, s):
        assert (s + 1) * formula(q, s) > q
    return prop


def _prop_liveness(formula):
    @settings(database=None, max_examples=300, derandomize=True)
    @given(st.integers(1, 200), st.integers(1, 20))
    def prop(q, s):
        assert 1 <= formula(q, s) <= q
    return prop


def test_negative_control_formula_b_fails_safety():
    _prop_safety(es.threshold)()                            # the same property passes for Eq. 1
    with pytest.raises(AssertionError):
        _prop_safety(es.formula_b)()
    assert not es.is_safe(3, 2, es.formula_b(3, 2))          # the paper's counterexample


def test_negative_control_formula_a_fails_liveness():
    _prop_liveness(es.threshold)()
    with pytest.raises(AssertionError):
        _prop_liveness(es.formula_a)()
    assert not es.is_live(100, es.formula_a(100, 1))


def _explore(q: int, s: int, t: int) -> tuple[bool, bool]:
    """Every reachable state of one sender/receiver pair: (credit region overflows, deadlocks).

    State (credits, unretrieved data, receiver count, outstanding credit packets). The sender
    always has data; any interleaving of send / retrieve / consume-a-credit-packet is allowed,
    outstanding credit packets count as occupying the sender's credit slots (worst case).
    """
    start = (q, 0, 0, 0)
    seen, todo = {start}, [start]
    overflow = deadlock = False
    while todo:
        cr, d, c, k = todo.pop()
        nxt = []
        if cr:
            nxt.append((cr - 1, d + 1, c, k))
        if d:
            nxt.append((cr, d - 1, 0, k + 1) if c + 1 == t else (cr, d - 1, c + 1, k))
        if k:
            nxt.append((cr + t, d, c, k - 1))
        if not nxt:
            deadlock = True
        for st_ in nxt:
            overflow |= st_[3] > s
            if st_ not in seen:
                seen.add(st_)
                todo.append(st_)
    return overflow, deadlock


@pytest.mark.parametrize("q", range(1, 25))
def test_state_model_agrees_with_the_safety_and_liveness_formulas(q):
    for s in range(1, 6):
        for t in range(1, q + 2):
            assert _explore(q, s, t) == (not es.is_safe(q, s, t), not es.is_live(q, t)), (q, s, t)
        assert _explore(q, s, es.threshold(q, s)) == (False, False)


def test_state_model_reproduces_the_papers_counterexamples():
    assert _explore(3, 2, es.formula_b(3, 2)) == (True, False)      # overflow, section 5.2
    assert _explore(100, 1, es.formula_a(100, 1)) == (False, True)  # deadlock, section 5.2
    assert _explore(100, 1, es.threshold(100, 1)) == (False, False)


# ---- Eq. 2 and footnote 7 -----------------------------------------------------------------
def test_valid_regions_eq2():
    assert es.valid_regions(64, 2, 2) and es.valid_regions(2, 2, 2)
    assert not es.valid_regions(1, 2, 2)        # data region smaller than credit region
    assert not es.valid_regions(64, 1, 2)       # less than one credit slot per process


def test_credit_quota_rounding():
    assert es.credit_quota(100, 10, "exact") == 10
    assert es.credit_quota(103, 10) == 10 and es.credit_quota(103, 10, "ceil") == 11
    with pytest.raises(ValueError):
        es.credit_quota(103, 10, "exact")
    assert es.credit_quotas(103, 10) == [11] * 3 + [10] * 7


@given(st.integers(0, 10**6), st.integers(1, 10**4))
def test_credit_quota_rules_bracket_the_region(slots_, senders):
    lo, hi = es.credit_quota(slots_, senders), es.credit_quota(slots_, senders, "ceil")
    assert lo * senders <= slots_ <= hi * senders and hi - lo in (0, 1)
    assert sum(es.credit_quotas(slots_, senders)) == slots_


# ---- section 5.3: Eq. 3-5, Table 2 --------------------------------------------------------
def test_37_packets_per_message():
    assert es.velo_packets() == 37 == es.PACKETS_PER_2KB_MESSAGE


def test_eq5_equals_table2_measured_rows():
    for s, paper in pv.TABLE2.items():
        if paper is None:                        # "Unknown; >> 64 slots"
            assert es.stabilizing_slots(s) > 64
            continue
        buf, data, credit = paper
        assert es.stabilizing_slots(s) == buf
        assert es.stabilizing_slots(s) - s == data and credit == s
        assert es.is_stable(data, s) and not es.is_stable(data - 1, s)   # Eq. 3 exactly there
    t = table2_eq5()
    assert t.columns[:2] == ["credit_slots", "eq5_slots"]
    assert [r[1] for r in t.rows] == [75, 57, 52, 50, 49]


def test_overhead_drop_points():
    assert {s: es.overhead_drop_slots(s) for s in pv.OVERHEAD_DROP} == pv.OVERHEAD_DROP


@given(st.integers(1, 300), st.integers(1, 100))
def test_eq5_vs_exact_eq4(p, s):
    e5, ex = es.stabilizing_slots(s, p), es.stabilizing_slots(s, p, exact=True)
    assert e5 - ex == (1 if p % s == 0 else 0)   # the simplification overshoots by one slot
    q = ex - s
    assert es.is_stable(q, s, p) and (q == 1 or not es.is_stable(q - 1, s, p))


# ---- sections 6.2-6.4: the dynamic protocol's bound per pattern -----------------------------
def test_dynamic_bound_of_the_papers_patterns():
    """1024 ranks, 16 per node with LiMIC, 2 credit slots, 2 KB: a receiver of 1x1024, 2x512,
    4x256 or 8x128 gets VELO data from 1008, 496, 240 or 112 senders. With every sender active
    the bound is the static one (Eq. 4 exact, 57); the fewer active, the smaller it is."""
    assert [ed.alltoall_active_senders(k, 1024 // k, 16) for k in (1, 2, 4, 8)] == [
        1008, 496, 240, 112]
    assert ed.alltoall_active_senders(4, 256, 16, limic=False) == 255
    # a group of 24: 16 ranks on one node, 8 on the next; the latter see 16 senders elsewhere
    assert ed.alltoall_active_senders(1, 24, 16) == 16
    want = {1008: 57, 496: 30, 240: 17, 112: 10}
    assert {a: ed.stabilizing_slots(1024, a, 2) for a in want} == want
    assert ed.stabilizing_slots(1024, 1023, 2) == es.stabilizing_slots(2, exact=True) == 57
    # 4x256 at 16 slots: the active senders share 53.15 each (what the simulation's intended
    # quotas average at the end of the run, README), below Eq. 4's 55 for 2 credit slots
    assert ed.even_share(16, 1024, 240, 2) == pytest.approx(53.15)
    assert es.eq4_min_quota(2) == 55


@given(st.integers(3, 4096), st.data(), st.integers(1, 5), st.integers(1, 120))
def test_dynamic_bound_is_the_smallest_buffer_whose_even_share_reaches_eq4(n, data, c, p):
    a = data.draw(st.integers(1, n - 1))
    s = ed.stabilizing_slots(n, a, c, p)
    q = max(es.eq4_min_quota(c, p), c)            # no quota below the static slots (6.3)
    static = max(es.stabilizing_slots(c, p, exact=True), 2 * c)     # and Eq. 2
    assert ed.even_share(s, n, a, c) >= q
    assert s == 2 * c or ed.even_share(s - 1, n, a, c) < q
    assert s <= static                                       # never above the static bound
    assert ed.stabilizing_slots(n, n - 1, c, p) == static


def test_dynamic_bound_refuses_impossible_arguments():
    for a in (0, 1024):
        with pytest.raises(ValueError, match="active_senders must be 1..processes - 1"):
            ed.stabilizing_slots(1024, a, 2)
    with pytest.raises(ValueError, match="credit_slots must be a positive integer"):
        ed.stabilizing_slots(1024, 240, 0)


def test_buffer_bounds_agree_with_the_patterns_target_and_eq8():
    """extoll_buffer_bounds at 1024 processes gives what extoll_patterns reports for the
    paper's alltoall-1024 in k groups; memory is Eq. 8 at the bound; more groups never need
    more buffer."""
    from extoll_vec.analysis.extoll.dynamic import eq4_slots
    from extoll_vec.examples import get_example
    rows = _table("extoll_buffer_bounds").rows
    base = get_example("alltoall-1024").replace(**{"protocol.name": "dynamic",
                                                   "protocol.credit_slots": 2,
                                                   "protocol.mailbox_slots": 64 * 1024})
    at_1024 = {r[1]: r[5] for r in rows if r[0] == 1024}
    assert at_1024 == {1: 57, 2: 30, 4: 17, 8: 10, 16: 7}
    for k, slots in at_1024.items():
        cfg = base.replace(**{"workload.groups": k, "workload.group_size": 1024 // k})
        assert eq4_slots(cfg) == slots
        assert eq4_slots(cfg.replace(**{"protocol.name": "static"})) == 57
    for n, k, g, a, st_, dy, s_mb, d_mb, ratio in rows:
        assert g * k == n and a == g - 16 and st_ == 57 and dy <= st_
        assert s_mb == es.static_memory_mb(n, 57) and d_mb == es.dynamic_memory_mb(n, dy)
        assert ratio == pytest.approx(s_mb / d_mb)
    for n in {r[0] for r in rows}:
        dyn = [r[5] for r in rows if r[0] == n]
        assert dyn == sorted(dyn, reverse=True)


# ---- section 7.5: Eq. 7-8, Table 3 --------------------------------------------------------
def test_eq8_bytes():
    assert es.static_memory_bytes(1) == 4 + 2 + 4096
    assert es.dynamic_memory_bytes(1) == 150 + 1024


def test_memory_equals_table3_to_printed_precision():
    """Comparison to the paper's printing: the printed value is Eq. 8 rounded half-up or truncated
    to its decimals (Table 3 does both). 9 of 10 cells agree; the static 256K cell does not."""
    t = _table("extoll_memory")
    assert t.columns == MEMORY_COLUMNS
    assert [r[0] for r in t.rows] == [1024, 4096, 16384, 65536, 262144]
    ds, ss = t.columns.index("dynamic_matches"), t.columns.index("static_matches")
    assert all(r[ds] for r in t.rows)
    assert [r[ss] for r in t.rows] == [True, True, True, True, False]
    how = [printed_match(es.dynamic_memory_mb(n), p) for n, _, p in pv.table3_rows()]
    assert how == ["truncated", "rounded", "rounded/truncated", "truncated", "exact"]


def test_table3_static_256k_discrepancy_is_the_structures_term():
    n = 256 * 1024
    assert es.static_memory_mb(n) == pytest.approx(1025.0000019, abs=1e-6)   # Eq. 8 as printed
    assert 4096 * n / es.MB == 1024 == float(pv.TABLE3_STATIC_MB[-1])        # buffers only
    assert es.static_structures_bytes(n) / es.MB == pytest.approx(1.0, abs=1e-5)


def test_printed_match_rule():
    assert printed_match(4.5859375, "4.6") == "rounded"
    assert printed_match(1.146484375, "1.14") == "truncated"
    assert printed_match(293.5, "293.5") == "exact"
    assert printed_match(1025.0000019, "1024") == ""


# ---- targets: registry, files, CLI ----------------------------------------------------------
@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_target_writes_csv_and_png(tmp_path, name):
    assert name in load_targets()
    assert getattr(get_target(name).compute, "needs_store", True) is False
    t = get_target(name).compute(None, out_dir=tmp_path / "out")
    csv_path, png_path = tmp_path / "out" / f"{name}.csv", tmp_path / "out" / f"{name}.png"
    with csv_path.open() as f:
        rows = list(csv.reader(f))
    assert rows[0][:len(REQUIRED[name])] == REQUIRED[name]
    assert len(rows) == len(t.rows) + 1
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png_path.stat().st_size > 5000


def _tables_cli_has_out(capsys) -> bool:
    from extoll_vec.cli import main
    main(["tables", "--help"])
    # a real --out option, not argparse's prefix match of --output
    return re.search(r"--out(?![a-z])", capsys.readouterr().out) is not None


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_cli_tables_out_dir(tmp_path, capsys, name):
    from extoll_vec.cli import main
    if not _tables_cli_has_out(capsys):
        pytest.skip("`extoll-vec tables` has no --out DIR yet (analysis/tables.py)")
    assert main(["tables", name, "--out", str(tmp_path)]) == 0
    with (tmp_path / f"{name}.csv").open() as f:
        assert next(csv.reader(f))[:len(REQUIRED[name])] == REQUIRED[name]
    assert (tmp_path / f"{name}.png").stat().st_size > 0


def test_formula_modules_do_not_import_numba():
    code = ("import sys, extoll_vec.analysis.extoll.tables, extoll_vec.analysis.registry as r; "
            "r.load_targets(); print('numba' in sys.modules, 'extoll_vec.engine' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_start_credits_is_the_quota_less_the_count_below_the_threshold():
    # quota 20, 2 credit slots: threshold 7 (Figure 3); 37 packets retrieved -> 5 thresholds
    # returned, 2 packets still counted: the sender starts its next message with 18
    assert es.start_credits(20, 2, 37) == 18
    assert es.start_credits(20, 2, 35) == 20


def test_stall_free_samples_only_the_counts_a_run_reaches():
    # 46 slots, 2 credit slots: quota 44, threshold 15; after one 37-packet message the count
    # is 7 and the sender owns 37 (no wait), after the barrier's extra packet 8 (36: it waits)
    assert es.stall_free(46, 2, 2) and not es.stall_free(46, 2, 2, extra=1)
    # 56 slots: quota 54, threshold 19, 37 mod 19 = 18 = threshold - 1, Eq. 3's worst case
    assert not es.stall_free(56, 2, 2)
    assert es.stall_free(38, 1, 1) and not es.stall_free(37, 1, 1)  # the first message: 37 + c


@pytest.mark.parametrize("c", [1, 2, 3, 4, 5])
def test_break_even_grows_with_messages_to_eq4(c):
    """More messages per pair reach more counts below the threshold: the break-even never
    falls, and with enough of them it is Eq. 4's bound (Table 2), except for 1 credit slot
    where quota 72 has threshold 37 = the message (every count a whole number of thresholds)."""
    seen = [es.break_even_slots(c, m) for m in (1, 2, 3, 5, 10, 40, 80)]
    assert seen == sorted(seen) and seen[0] == 37 + c
    exact = es.stabilizing_slots(c, exact=True)
    assert seen[-1] == (73 if c == 1 else exact)
    assert es.break_even_slots(c, 80, extra=1) >= seen[-1]

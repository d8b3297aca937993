"""Replicates: a start skew drawn from the seed (workload.start_skew_ns) makes runs that differ
only in the seed independent samples of one measurement, and the EXTOLL targets average them."""
from __future__ import annotations

import math

import numpy as np
import pytest

from extoll_vec.analysis.extoll.common import label, measured_us, overheads
from extoll_vec.analysis.stats import mean_and_se, se_of_mean
from extoll_vec.dtypes import OP_COMPUTE
from extoll_vec.engine import cycles, simulate
from extoll_vec.examples import get_example
from extoll_vec.workloads import build_program, skewed, start_delays_ns, with_start_delays


def _tiny(**changes):
    cfg = get_example("tiny").replace(**{"workload.warmup": 1})
    return cfg.replace(**changes)


def test_start_delays_are_fixed_by_the_seed_and_bounded():
    a = start_delays_ns(1024, 2000, seed=7)
    assert a.shape == (1024,) and a.min() >= 0 and a.max() <= 2000
    assert (a == start_delays_ns(1024, 2000, seed=7)).all()
    assert (a != start_delays_ns(1024, 2000, seed=8)).any()
    # a rank's delay does not depend on how many ranks follow it
    assert (start_delays_ns(16, 2000, seed=7) == a[:16]).all()


def test_with_start_delays_prepends_one_compute_per_rank():
    cfg = get_example("alltoall-256")
    prog = build_program(cfg)
    delays = np.arange(prog.n_ranks) * 3
    out = with_start_delays(prog, delays)
    assert out.ops.shape[0] == prog.ops.shape[0] + prog.n_ranks
    for r in (0, 1, 77, prog.n_ranks - 1):
        rows = out.rank_rows(r)
        assert tuple(rows[0, :2]) == (OP_COMPUTE, 3 * r)
        assert (rows[1:] == prog.rank_rows(r)).all()
    assert (out.max_isends, out.max_irecvs) == (prog.max_isends, prog.max_irecvs)
    with pytest.raises(ValueError, match="start delays"):
        with_start_delays(prog, delays[:-1])


def test_no_skew_leaves_the_program_alone():
    cfg = _tiny()
    prog = build_program(cfg)
    assert skewed(prog, cfg) is prog


def test_skew_makes_seeds_replicates_and_each_is_reproducible():
    cfgs = [_tiny(**{"workload.start_skew_ns": 3000, "seed": s}) for s in (0, 1, 2, 0)]
    ds = simulate(cfgs, max_batch=4)
    t = [measured_us(ds, i, c) for i, c in enumerate(cfgs)]
    assert t[0] == t[3]                                   # same seed: bit-identical
    assert len(set(t[:3])) > 1                            # other seeds: other timings
    alone = simulate([cfgs[1]])                           # whatever the batch
    assert float(alone.exec_time_us[0]) == float(ds.exec_time_us[1])


def test_each_rank_starts_after_its_delay():
    cfg = _tiny(**{"workload.warmup": 0, "workload.start_skew_ns": 5000, "seed": 3})
    ds = simulate([cfg])
    cyc = cfg.network.cycle_ns
    want = [cycles(d, cyc) * cyc / 1000 for d in start_delays_ns(16, 5000, 3)]
    assert ds.mark_time_us.values[0][:16, 0] == pytest.approx(want)   # mark 0 is the first op


def test_overheads_average_replicates_mean_over_mean():
    cfgs = []
    for proto, slots in (("none", 0), ("static", 16 * 40)):
        for seed in (0, 1, 2):
            cfgs.append(_tiny(**{"workload.start_skew_ns": 3000, "seed": seed,
                                 "protocol.name": proto, "protocol.mailbox_slots": slots}))
    ds = simulate(cfgs, max_batch=6)
    t = np.array([measured_us(ds, i, c) for i, c in enumerate(cfgs)])
    (p,) = overheads(ds)
    assert p.indices == (3, 4, 5) and p.reps == 3 and p.ref_reps == 3
    assert p.time_us == pytest.approx(t[3:].mean()) and p.ref_us == pytest.approx(t[:3].mean())
    assert p.overhead_pct == pytest.approx(100 * (t[3:].mean() / t[:3].mean() - 1))
    ft, rt = t[3:], t[:3]   # the standard error of a ratio of means, written out once more
    se = 100 * ft.mean() / rt.mean() * np.sqrt(ft.var(ddof=1) / (3 * ft.mean() ** 2)
                                               + rt.var(ddof=1) / (3 * rt.mean() ** 2))
    assert p.overhead_se_pct == pytest.approx(se) and p.overhead_se_pct > 0


def test_a_simulation_stored_twice_counts_once():
    """A sweep stores the reference of each seed once per slots-per-process value: the copies
    are one replicate, not several (they would shrink the standard error)."""
    cfgs = []
    for slots in (16 * 40, 16 * 60):
        for proto in ("none", "static"):
            for seed in (0, 1):
                cfgs.append(_tiny(**{"workload.start_skew_ns": 3000, "seed": seed,
                                     "protocol.name": proto,
                                     "protocol.mailbox_slots": 0 if proto == "none" else slots}))
    cfgs.append(cfgs[2])                     # a flow-control point stored twice as well
    ds = simulate(cfgs, max_batch=9)
    t = [measured_us(ds, i, c) for i, c in enumerate(cfgs)]
    p40, p60 = overheads(ds)
    assert p40.indices == (2, 3) and p60.indices == (6, 7)
    assert p40.ref_times == (t[0], t[1]) == p60.ref_times
    (one,) = overheads(simulate(cfgs[:3]))   # one flow-control run: its spread is unknown
    assert one.reps == 1 and math.isnan(one.overhead_se_pct)


@pytest.mark.parametrize("groups, group_size, want", [
    (1, 0, "alltoall-1024"), (4, 256, "4x256"), (8, 0, "8x128"), (1, 512, "512+barrier"),
    (2, 256, "2x256+barrier")])
def test_a_spec_without_a_case_axis_names_its_pattern(groups, group_size, want):
    """Replicate variants of one pattern (the *_reps entries of lab/variants.yaml) have no case
    axis; extoll_patterns then names the points from their workload, as the papers do."""
    cfg = get_example("alltoall-1024").replace(
        **{"workload.groups": groups, "workload.group_size": group_size})
    assert label(cfg) == want


def test_patterns_note_says_when_no_mailbox_reaches_five_percent():
    """extoll_patterns names, per pattern, the slots per process from which each protocol stays
    under 5 %; a protocol that never does is reported as not reaching it by the largest size
    (mailboxes of 4 and 5 slots per process cost far more than 5 % in the 16-rank alltoall)."""
    from extoll_vec.analysis.extoll.dynamic import extoll_patterns
    cfgs = [_tiny()] + [_tiny(**{"protocol.name": "static", "protocol.mailbox_slots": 16 * s})
                        for s in (4, 5)]
    table = extoll_patterns(simulate(cfgs))
    assert min(r[3] for r in table.rows) > 5          # the premise: both sizes cost over 5 %
    pattern = table.rows[0][0]
    assert table.notes[0].startswith(f"{pattern}: overhead <= 5 % from not by 5 slots per "
                                     "process (static), no runs (dynamic)"), table.notes[0]


def _fc_and_reference(seeds, **changes):
    return [_tiny(**{"workload.start_skew_ns": 3000, "seed": s, "protocol.name": proto,
                     "protocol.mailbox_slots": slots, **changes})
            for proto, slots in (("none", 0), ("static", 16 * 40)) for s in seeds]


@pytest.mark.slow
def test_replicates_spread_over_stores_are_read_as_one(tmp_path, capsys):
    """More seeds run later into a second store (`--from A --from B`): the target sees the
    replicates of both, a seed stored in both counts once, and the result equals one run of
    all seeds. Stores that do not belong together are refused with one line (exit 2)."""
    from extoll_vec.analysis.registry import compute
    from extoll_vec.cli import main
    from extoll_vec.dataset import write_zarr
    from extoll_vec.errors import StoreError
    from extoll_vec.sweep.store import open_merged

    a = write_zarr(simulate(_fc_and_reference((0, 1))), tmp_path / "a.zarr")
    b_ds = simulate(_fc_and_reference((1, 2)))          # seed 1 again, in another batch
    b = write_zarr(b_ds, tmp_path / "b.zarr")
    (whole,) = overheads(simulate(_fc_and_reference((0, 1, 2)), max_batch=6))
    merged = open_merged([a, b])
    assert merged.sizes["point"] == 8 and list(merged["point"].values) == list(range(8))
    (p,) = overheads(merged)
    assert (p.reps, p.ref_reps) == (3, 3)
    assert sorted(p.times) == sorted(whole.times)
    assert sorted(p.ref_times) == sorted(whole.ref_times)
    assert p.overhead_pct == pytest.approx(whole.overhead_pct, rel=1e-12)
    assert p.overhead_se_pct == pytest.approx(whole.overhead_se_pct, rel=1e-12)
    table = compute("extoll_patterns", [str(a), str(b)])
    assert [r[table.columns.index("replicates")] for r in table.rows] == [3]
    assert main(["tables", "extoll_patterns", "--from", str(a), "--from", str(b)]) == 0
    assert " 3 " in capsys.readouterr().out

    # negative control: the copy of seed 1 with another result (another model version)
    bad = b_ds.copy(deep=True)
    bad["exec_time_us"][0] = bad["exec_time_us"][0] * 1.01
    c = write_zarr(bad, tmp_path / "c.zarr")
    with pytest.raises(StoreError, match="has the configuration of point 1 of .*a.zarr but "
                                         "another exec_time_us"):
        open_merged([a, c])
    # a store of another machine size
    d = write_zarr(simulate(_fc_and_reference((3,), **{"workload.ranks": 8, "mpi.ranks_per_node": 2})),
                   tmp_path / "d.zarr")
    assert main(["tables", "extoll_patterns", "--from", str(a), "--from", str(d)]) == 2
    err = capsys.readouterr().err
    assert "d.zarr: cannot be merged with" in err and "dimension rank" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_after_a_warm_up_the_skew_is_applied_again_before_the_timed_part():
    """The barrier after the warm-up erases a start skew, so every rank also leaves it late by
    a second draw (a stream of its own): one more OP_COMPUTE right before its mark 0; without
    a warm-up mark 0 is the first row, and only the start delay is added."""
    from extoll_vec.dtypes import OP_MARK
    from extoll_vec.workloads import MARK_START
    from extoll_vec.workloads.build import timed_delays_ns
    cfg = _tiny(**{"workload.start_skew_ns": 2000, "seed": 5})
    prog = build_program(cfg)
    out = skewed(prog, cfg)
    assert out.n_rows == prog.n_rows + 2 * prog.n_ranks
    timed = timed_delays_ns(prog.n_ranks, 2000, 5)
    assert (timed != start_delays_ns(prog.n_ranks, 2000, 5)).any()
    for r in range(prog.n_ranks):
        rows = out.rank_rows(r)
        k = int(np.flatnonzero((rows[:, 0] == OP_MARK) & (rows[:, 1] == MARK_START))[0])
        assert tuple(rows[k - 1, :2]) == (OP_COMPUTE, timed[r])
        assert (np.delete(rows, [0, k - 1], axis=0) == prog.rank_rows(r)).all()
    cold = _tiny(**{"workload.warmup": 0, "workload.start_skew_ns": 2000})
    assert skewed(build_program(cold), cold).n_rows == build_program(cold).n_rows + 16


def test_reference_replicates_after_a_warm_up_are_independent():
    """Every seed gives the reference its own time after a warm-up. (At alltoall-256 with a
    256-packet FIFO the start draw alone gave two distinct times out of four; at
    this size it already differs, so the test above is what guards the second draw.)"""
    cfgs = [_tiny(**{"workload.start_skew_ns": 2000, "seed": s}) for s in range(4)]
    ds = simulate(cfgs, max_batch=4)
    t = [measured_us(ds, i, c) for i, c in enumerate(cfgs)]
    assert len(set(t)) == 4


def test_measured_time_spans_the_first_mark_0_to_the_last_mark_1_of_any_rank():
    """A multicast's latency: only rank 0 passes mark 0 and only the members pass mark 1
    (workloads/multicast.py); no rank passing mark 1 falls back to the run's time."""
    import warnings

    import xarray as xr
    cfg = get_example("lfc-latency")
    nan = np.nan
    marks = np.array([[[2.0, nan], [nan, 9.0], [nan, 12.0], [nan, nan]]])
    ds = xr.Dataset({"mark_time_us": (("point", "rank", "mark"), marks),
                     "exec_time_us": (("point",), [50.0])})
    with warnings.catch_warnings():
        warnings.simplefilter("error")         # no All-NaN slice
        assert measured_us(ds, 0, cfg) == pytest.approx(10.0 / cfg.workload.iterations)
        ds["mark_time_us"][0, :, 1] = nan
        assert measured_us(ds, 0, cfg) == 50.0


def test_se_of_mean_of_replicates():
    """The targets' and the report's one standard error: NaN without replicates, exactly 0 for
    equal ones (np.std of three equal 0.1s is about 1e-17, not 0), else std / sqrt(n)."""
    assert math.isnan(se_of_mean([]))
    assert math.isnan(se_of_mean([3.0]))
    assert np.std([0.1] * 3, ddof=1) != 0.0
    assert se_of_mean([0.1] * 3) == 0.0
    assert se_of_mean(np.array([1.0, 2.0, 3.0, 6.0])) == pytest.approx(np.std([1, 2, 3, 6], ddof=1) / 2)


def test_mean_and_se_of_replicates():
    """The mean beside se_of_mean's standard error; NaN, NaN without replicates."""
    assert all(math.isnan(x) for x in mean_and_se([]))
    m, se = mean_and_se([3.0])
    assert m == 3.0 and math.isnan(se)
    assert mean_and_se([1.0, 2.0, 3.0, 6.0]) == (3.0, se_of_mean([1.0, 2.0, 3.0, 6.0]))

"""BookSim2's throughput reading (analysis/portals/booksim_reading.py) on accepted-flit series
whose answer is known: its warm-up, its resets, its three-in-a-row stopping rule and
max_samples, beside the project's convergence windows."""
import numpy as np
import pytest

from extoll_vec.analysis.portals.booksim_reading import booksim_reading, window_reading

N = 10


def series(rates, step=1000):
    return np.cumsum(np.asarray(rates, float) * step * N).astype(np.int64)


def test_a_steady_rate_reads_the_same_every_way_and_stops_after_three_calm_periods():
    acc = series(np.full(100, 0.5))
    b1 = booksim_reading(acc, 1000, N)
    assert b1.throughput == pytest.approx(0.5) and b1.converged
    assert b1.stop_cycle == 6000            # 3 warm-up periods, then 3 within 5 %
    b10 = booksim_reading(acc, 1000, N, sample_period=10000)
    assert b10.stop_cycle == 60000 and b10.throughput == pytest.approx(0.5)
    w = window_reading(acc, 1000, N)
    assert w.throughput == pytest.approx(0.5) and w.stop_cycle == 9000


def test_a_cumulative_average_dilutes_a_late_fall_that_a_window_sees():
    rates = np.r_[np.full(35, 0.5), np.full(65, 0.2)]      # the network falls at cycle 35,000
    acc = series(rates)
    b10 = booksim_reading(acc, 1000, N, sample_period=10000)
    # reset at 30,000: 5,000 cycles at 0.5 then 0.2 -> the average sinks towards 0.2 slowly
    assert 0.2 < b10.throughput < 0.3
    w = window_reading(acc, 1000, N, warmup=36000)   # windows after the fall
    assert w.throughput == pytest.approx(0.2)


def test_no_convergence_ends_at_max_samples_with_the_cumulative_average():
    rates = np.tile([0.2, 0.8], 50)                         # every period moves by far
    r = booksim_reading(series(rates), 1000, N, sample_period=1000)
    assert not r.converged and r.stop_cycle == 10000
    assert r.throughput == pytest.approx(np.mean(rates[3:10]))


def test_a_series_too_short_for_the_reading_is_refused():
    with pytest.raises(ValueError, match="ends at cycle"):
        booksim_reading(series(np.full(20, 0.5)), 1000, N, sample_period=10000)

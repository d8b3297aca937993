"""Network-only runs until convergence (workload.sample_cycles, Schneider et al., section 4.1: until
the throughput of successive windows varies by less than the tolerance): when it stops, what
the results cover, the cap, independence of the chunking, and the validation."""
from __future__ import annotations

import pytest

from extoll_vec.config import from_dict
from extoll_vec.engine import run_batch
from extoll_vec.errors import ConfigError


def cfg(window=0, tol=0.05, rate=0.2, chunk=5_000_000, measure=20000, **work):
    return from_dict({"topology": {"kind": "mesh", "dims": [4, 4]},
                      "workload": {"kind": "uniform", "injection_rate": rate, "packet_flits": 4,
                                   "warmup_cycles": 1000, "measure_cycles": measure,
                                   "drain_cycles": 2000, "sample_cycles": window,
                                   "converge_tolerance": tol, **work},
                      "limits": {"chunk_cycles": chunk}})


@pytest.fixture(scope="module")
def runs():
    return run_batch([cfg(), cfg(1000), cfg(1000, tol=0.0), cfg(1000, chunk=77)])


def test_one_fixed_window_by_default(runs):
    assert runs["measured_cycles"][0] == 20000 and runs["converged"][0] == -1


def test_a_stationary_load_converges_and_the_results_cover_the_last_window(runs):
    assert runs["converged"][1] == 1 and runs["measured_cycles"][1] == 1000
    # stopped early: the sources end at the converged window, then the drain
    assert runs["simulated_cycles"][1] < 1000 + 20000
    acc, ref = runs["accepted_flits_per_node_cycle"][1], runs["accepted_flits_per_node_cycle"][0]
    assert acc == pytest.approx(ref, rel=0.1) and ref == pytest.approx(0.2, rel=0.05)


def test_without_convergence_the_cap_holds_and_the_last_window_counts(runs):
    assert runs["converged"][2] == 0 and runs["measured_cycles"][2] == 1000
    assert runs["simulated_cycles"][2] >= 1000 + 20000 - 1000


def test_the_chunking_changes_nothing(runs):
    for k in ("accepted_flits_per_node_cycle", "measured_cycles", "simulated_cycles",
              "events_processed", "packet_latency_cycles_mean"):
        assert runs[k][3] == runs[k][1], k


@pytest.mark.parametrize("window, measure", [(3000, 20000), (20000, 20000)])
def test_a_window_must_divide_the_cap_twice(window, measure):
    with pytest.raises(ConfigError) as exc:
        cfg(window, measure=measure)
    assert exc.value.field == "workload.sample_cycles"

"""`extoll-vec compile` (extoll_vec/warmup.py): what it builds and how it refuses bad input.
That its builds leave the workers nothing to compile: test_sweep_dask.py."""
from __future__ import annotations

import pytest

from extoll_vec import warmup
from extoll_vec.cli import main
from extoll_vec.protocols import registry


def test_every_family_has_a_small_valid_configuration():
    fams = warmup.families()
    assert {"extoll", "infiniband", "lfc", "portals", "capped"} <= set(fams)
    assert sorted(n for ns in fams.values() for n in ns) == sorted(registry.registered())
    for fam, names in fams.items():
        cfg = warmup.smallest_config(fam)
        assert cfg.protocol.name in names, fam
        assert cfg.n_ranks <= 64, fam


def test_an_unknown_family_is_refused_in_one_line(capsys):
    assert main(["compile", "--family", "extol"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--family" in err and "'extol'" in err and "extoll" in err


def test_a_job_count_below_one_is_refused_in_one_line(capsys):
    assert main(["compile", "--jobs", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--jobs" in err and ">= 1" in err


def test_a_build_serves_profiled_runs_too(capsys):
    """Batch.run(profile=...) (benchmarks/profile_events.py) runs the build `compile` made: a
    profiled run after it compiles nothing, and the event loop has one signature."""
    import numpy as np

    from extoll_vec import dtypes
    from extoll_vec.engine import Batch
    from extoll_vec.examples import get_example
    from numba import types
    assert main(["compile", "--family", "shared"]) == 0
    assert "shared" in capsys.readouterr().out
    batch = Batch([get_example("tiny")])
    compiled = warmup.cache_use()[1]
    batch.run(profile=np.zeros((1, dtypes.N_PROF, 2), np.int64))
    batch.run()
    assert warmup.cache_use()[1] == compiled
    # advance(state, topo, par, ops, starts, t_stop, prof, lo, hi): prof an array in either
    # case, and the members' start (Batch()) the same compiled loop
    sigs = batch.sim.advance.signatures
    assert len(sigs) == 1 and isinstance(sigs[0][6], types.Array)

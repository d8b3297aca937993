"""What a Dask worker runs: importable functions (never defined in __main__, so workers use
the Numba disk cache; see ../shared/notes/ecosystem.md)."""
from __future__ import annotations

import time


def run_points(configs) -> dict:
    """Simulate one batch (configs of equal engine.shape_key); the engine's arrays, one row per
    config."""
    from .. import engine
    return engine.run_batch(list(configs))


def warm_kernels() -> float:
    """Load (or, on a cold Numba cache, compile) the kernels by running the smallest example;
    returns the seconds it took."""
    t0 = time.perf_counter()
    from .. import engine
    from ..examples import get_example
    engine.run_batch([get_example("tiny")])
    return time.perf_counter() - t0

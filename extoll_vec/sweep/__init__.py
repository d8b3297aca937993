"""Parameter sweeps on Dask into one zarr store.

    spec.py      sweep specs (YAML) -> Sweep: axes and one RunConfig per point
    plan.py      batching by engine.batch_key under a memory budget; work estimates
    store.py     the sweep store: created up front, completion mask, region writes, open/dense
                 (a local path or a URL: ../storage.py)
    cluster.py   cluster.yaml -> a distributed Client (local, address, ssh, slurm, pbs)
    runner.py    run_sweep(): the missing points on the cluster, faults, Ctrl-C
    progress.py  the progress bar;  tasks.py  what workers run;  cli.py  `extoll-vec sweep`

The submodules import dask/xarray/zarr themselves; importing this package stays cheap.
"""
from __future__ import annotations

from .cli import register_cli
from .spec import Axis, Sweep, build_sweep, load_sweep

__all__ = ["Axis", "Sweep", "build_sweep", "load_sweep", "register_cli", "run_sweep",
           "open_sweep", "open_store", "dense", "sweep_axes"]


def __getattr__(name):
    if name == "run_sweep":
        from .runner import run_sweep
        return run_sweep
    if name in ("open_sweep", "open_store", "dense", "sweep_axes"):
        from . import store
        return getattr(store, name)
    raise AttributeError(name)

"""SLURM workers sharing one kernel cache: does a second worker compile what the first built?

    python lab/scripts/slurm_kernel_cache.py            # root, Debian's slurm-wlm and munge

On the tests' one-node SLURM cluster (tests/slurm_cluster.py), with a cache directory that
starts empty and reaches the jobs only through cluster.yaml's job_script_prologue (the jobs
start with --export=NONE): one job's worker runs a sweep (it compiles the EXTOLL family's
build), then a second job joins and both run another sweep. Prints, per worker, the kernel
functions it loaded from the cache and the ones it compiled, and the seconds each phase took.
tests/test_slurm_cluster.py checks the other order (`extoll-vec compile` first: no worker
compiles). Costs one cold compile of the EXTOLL build (minutes).
"""
from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2] / "tests"))

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import cloudpickle
import yaml

import slurm_cluster
from extoll_vec.sweep import build_sweep
from extoll_vec.sweep.cluster import connect, load_cluster_spec
from extoll_vec.sweep.runner import run_sweep

cloudpickle.register_pickle_by_value(sys.modules[__name__])   # workers cannot import lab/


def spec(name: str, sizes: list[int]) -> dict:
    return {"name": name, "base": {"example": "tiny", "protocol": {"mailbox_slots": 512}},
            "axes": {"protocol.name": ["backpressure", "window"],
                     "workload.message_bytes": sizes}}


def job_cache_use() -> tuple[str, int, int]:
    """(SLURM job, kernel functions loaded from the cache, compiled) of this worker."""
    from extoll_vec.warmup import cache_use
    return (os.environ.get("SLURM_JOB_ID"), *cache_use())


def main() -> None:
    reason = slurm_cluster.missing()
    if reason:
        sys.exit(reason)
    work = Path(tempfile.mkdtemp(prefix="slurm-kernel-cache-"))
    cache = work / "cache"              # empty: the first worker must compile
    section = {"cores": 1, "processes": 1, "memory": "2GiB", "walltime": "00:30:00",
               "queue": "debug", "python": sys.executable,
               "job_extra_directives": ["--export=NONE"],
               "job_script_prologue": [f"export EXTOLL_VEC_CACHE_DIR={cache}"],
               "log_directory": str(work / "logs")}
    (work / "cluster.yaml").write_text(yaml.safe_dump(
        {"cluster": {"kind": "slurm", "slurm": section, "scale": {"jobs": 1}}}))
    try:
        measure(work, cache)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(work: Path, cache: Path) -> None:
    with slurm_cluster.one_node_cluster() as slurm:
        os.environ["SLURM_CONF"] = str(slurm.conf)
        with connect(load_cluster_spec(str(work / "cluster.yaml")), quiet=True) as client:
            t0 = time.perf_counter()
            client.wait_for_workers(1, timeout=120)
            run_sweep(build_sweep(spec("first", [512, 1024])), work / "a.zarr", client,
                      quiet=True)
            t1 = time.perf_counter()
            print(f"one job, cold cache: {t1 - t0:.1f} s; (job, loaded, compiled) "
                  f"{sorted(client.run(job_cache_use).values())}", flush=True)
            client.cluster.scale(jobs=2)
            client.wait_for_workers(2, timeout=120)
            t2 = time.perf_counter()
            run_sweep(build_sweep(spec("second", [2048, 4096, 8192])), work / "b.zarr", client,
                      quiet=True, workers=2)
            t3 = time.perf_counter()
            print(f"second job joined in {t2 - t1:.1f} s, second sweep {t3 - t2:.1f} s; "
                  f"(job, loaded, compiled) {sorted(client.run(job_cache_use).values())}; "
                  f"squeue {slurm.jobs()}", flush=True)
        print(f"squeue empty {slurm.wait_until_no_jobs():.1f} s after the close")


if __name__ == "__main__":
    main()

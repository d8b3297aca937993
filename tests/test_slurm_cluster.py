"""A sweep on a real SLURM cluster (slurm_cluster.py: one node on localhost) through
cluster.yaml's slurm kind: its Dask workers run as SLURM jobs, read the kernels that
`extoll-vec compile` put in a shared cache directory (compiling nothing), and write the store a
LocalCluster writes, bit for bit; the jobs are gone afterwards.

The jobs start with a clean environment (--export=NONE, as on clusters whose login
environment does not reach the nodes): what the workers get is what cluster.yaml gives them."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import cloudpickle
import numpy as np
import pytest
from stores import TINY_SWEEP, assert_same_store
import yaml

import slurm_cluster
from extoll_vec.sweep import build_sweep
from extoll_vec.sweep.cluster import connect, load_cluster_spec
from extoll_vec.sweep.runner import run_sweep
from extoll_vec.warmup import cache_use

pytestmark = pytest.mark.slow   # daemons and a Dask cluster: the full suite only

# three flow-control settings x two message sizes of the tiny alltoall: six points, of the
# one protocol family the compile step builds
SPEC = {"name": "slurm-test", **TINY_SWEEP}
JOBS = 2
# the jobs' workers cannot import this module (tests/ is not on their path): the functions
# they run (client.run) travel by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="session")
def slurm():
    reason = slurm_cluster.missing()
    if reason:
        pytest.skip(reason)
    with slurm_cluster.one_node_cluster() as cluster:
        yield cluster


def _cache_root() -> Path:
    """The folder the suite's kernels are cached under (EXTOLL_VEC_CACHE_DIR's meaning)."""
    from extoll_vec.kernels import CACHE_DIR
    return Path(CACHE_DIR).parent


def _cluster_yaml(path: Path, cache: Path) -> Path:
    section = {
        "cores": 1, "processes": 1, "memory": "2GiB", "walltime": "00:10:00",
        "queue": "debug",
        "python": sys.executable,
        "job_extra_directives": ["--export=NONE"],
        "job_script_prologue": [f"export EXTOLL_VEC_CACHE_DIR={cache}"],
        "log_directory": str(path.parent / "slurm-logs"),
    }
    path.write_text(yaml.safe_dump({"cluster": {"kind": "slurm", "slurm": section,
                                                "scale": {"jobs": JOBS}}}))
    return path


def test_a_sweep_on_slurm_jobs_equals_the_local_clusters_store(slurm, tmp_path, monkeypatch):
    t = [time.perf_counter()]
    cache = _cache_root()
    # the family build the jobs run (they do not inherit the suite's EXTOLL_VEC_KERNELS)
    out = subprocess.run([sys.executable, "-m", "extoll_vec.cli", "compile", "--family",
                          "extoll", "--cache-dir", str(cache)], capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "EXTOLL_VEC_KERNELS"})
    assert out.returncode == 0, out.stderr
    t.append(time.perf_counter())
    monkeypatch.setenv("SLURM_CONF", str(slurm.conf))   # for dask-jobqueue's sbatch and scancel
    spec = load_cluster_spec(str(_cluster_yaml(tmp_path / "cluster.yaml", cache)))
    assert spec.kind == "slurm" and spec.workers == JOBS
    running: dict[str, str] = {}

    def look(points, result):
        running.update((j, s) for j, s in slurm.jobs().items() if s == "R")

    with connect(spec, quiet=True) as client:
        client.wait_for_workers(JOBS, timeout=120)
        submitted = {job.job_id for job in client.cluster.workers.values()}
        t.append(time.perf_counter())
        res = run_sweep(build_sweep(SPEC), tmp_path / "slurm.zarr", client, quiet=True,
                        on_batch=look, workers=JOBS)
        t.append(time.perf_counter())
        use = client.run(cache_use)
        worker_env = client.run(lambda: tuple(os.environ.get(k) for k in (
            "SLURM_JOB_ID", "EXTOLL_VEC_CACHE_DIR", "EXTOLL_VEC_KERNELS")))
    assert res.complete and res.computed == 6 and not res.failed
    # the workers were the SLURM jobs, seen running in squeue while the sweep ran
    assert len(submitted) == JOBS and set(running) == submitted, (running, submitted)
    assert sorted(env[0] for env in worker_env.values()) == sorted(submitted)
    # cluster.yaml's prologue gave them the cache; nothing else reached them (the default
    # kernel build, not the suite's EXTOLL_VEC_KERNELS)
    assert {env[1:] for env in worker_env.values()} == {(str(cache), None)}, worker_env
    # every worker ran batches, on kernels it loaded from the shared cache, compiling none
    assert len(use) == JOBS, use
    assert all(loaded > 0 and compiled == 0 for loaded, compiled in use.values()), use
    # and the jobs end with the cluster
    gone = slurm.wait_until_no_jobs(timeout=60)

    # one local worker (cheaper to start on a busy machine; the store does not depend on the
    # worker count)
    with connect(load_cluster_spec(workers=1), quiet=True) as client:
        assert run_sweep(build_sweep(SPEC), tmp_path / "local.zarr", client, quiet=True).complete
    t.append(time.perf_counter())
    dt = np.diff(t)
    print(f"SLURM jobs {sorted(submitted)} seen running in squeue during the sweep; (kernels "
          f"loaded, compiled) per worker {sorted(use.values())}; squeue empty {gone:.1f} s "
          f"after the close; seconds: compile {dt[0]:.1f}, jobs up {dt[1]:.1f}, sweep {dt[2]:.1f}, "
          f"the rest and the local run {dt[3]:.1f}")
    assert_same_store(tmp_path / "slurm.zarr", tmp_path / "local.zarr")

"""Test-wide settings.

Hypothesis runs derandomized by default so that the suite gives the same verdict on every
machine (CI included); a failure it found once is kept as an explicit @example. To explore new
random cases locally: HYPOTHESIS_PROFILE=explore python -m pytest tests/test_invariants.py"""
import os
import subprocess
import sys
import time

import pytest
from hypothesis import settings

settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# One build of the kernels for every protocol (kernels/specialize.py): the suite runs every
# family, and a build per family would cost minutes of compilation each on a fresh machine.
# test_kernel_families.py runs the default policy and checks it against this one. Set before
# any Dask worker starts, so the workers inherit it.
os.environ.setdefault("EXTOLL_VEC_KERNELS", "shared")


_COMPILED = pytest.StashKey[float]()


def pytest_configure(config):
    """With parallel test workers (pytest-xdist's -n), compile the builds the suite runs once,
    before the workers start: each would otherwise compile the same build at the same time."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    t0 = time.perf_counter()
    # the suite's build and test_kernel_families' build, one process each, at once
    builds = [subprocess.Popen([sys.executable, "-m", "extoll_vec.cli", "compile", "--family",
                                family], env=dict(os.environ, EXTOLL_VEC_KERNELS="family"),
                               stdout=subprocess.DEVNULL)
              for family in ("shared", "extoll")]
    if any([p.wait() for p in builds]):
        raise pytest.UsageError("extoll-vec compile failed (its error is above)")
    config.stash[_COMPILED] = time.perf_counter() - t0


def pytest_report_header(config):
    if _COMPILED in config.stash:
        return (f"kernels compiled (or loaded) before the workers started: "
                f"{config.stash[_COMPILED]:.0f} s")


@pytest.fixture(scope="module")
def client2():
    """A LocalCluster of 2 worker processes for a test module's sweeps (real processes: the
    sweep tests compare what they store with what one process computes)."""
    from extoll_vec.sweep.cluster import connect, load_cluster_spec
    with connect(load_cluster_spec(workers=2), quiet=True) as client:
        client.wait_for_workers(2)
        yield client


@pytest.fixture(scope="session")
def target_cluster(tmp_path_factory):
    """A cluster.yaml (kind address) naming one 2-worker LocalCluster, started as `tables
    --workers 2` starts it, for every quick target a test process runs: each `tables` run
    connects to it instead of starting its own cluster and loading the kernels on its workers
    again. Starting a LocalCluster from the CLI is tested by test_sweep_dask.py."""
    from extoll_vec.sweep.cluster import connect, load_cluster_spec
    from stores import address_cluster
    with connect(load_cluster_spec(workers=2), quiet=True) as client:
        client.wait_for_workers(2)
        yield address_cluster(tmp_path_factory.mktemp("cluster") / "cluster.yaml", client)


@pytest.fixture(scope="module")
def out(tmp_path_factory, target_cluster, request):
    """A target test module's output directory, holding the cluster.yaml its targets run on
    (test_extoll_targets.run_target)."""
    d = tmp_path_factory.mktemp(request.module.__name__.removeprefix("test_"))
    (d / "cluster.yaml").write_text(target_cluster.read_text())
    return d

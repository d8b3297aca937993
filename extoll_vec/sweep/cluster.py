"""Which Dask cluster a sweep runs on (cluster.yaml), and starting or connecting to it.

cluster.yaml (at the repository root; see the comments there)::

    cluster:
      kind: local          # local | address | ssh | slurm | pbs
      local: {n_workers: 0, threads_per_worker: 1}        # 0 = one worker per core
      address: "tcp://scheduler:8786"                     # a running scheduler
      ssh: {hosts: [head, node1, node2]}                  # distributed.SSHCluster (asyncssh)
      slurm: {cores: 1, processes: 1, memory: 2GiB, walltime: "00:30:00"}   # dask-jobqueue
      pbs: {cores: 1, processes: 1, memory: 2GiB, walltime: "00:30:00"}
      scale: {jobs: 4}     # slurm/pbs: jobs (or workers) to request

Only the section named by `kind` is used; its keys are passed to the cluster class.

Threads per worker: a worker with one thread runs one batch at a time on it.
A worker this module starts with k > 1 threads (local threads_per_worker, ssh nthreads, slurm/
pbs cores / processes) declares the Dask resource ``batch: 1``; the sweep then asks one `batch`
per task, so the worker runs one batch at a time and advances k of its members at once on its
k threads (engine.Batch.run), instead of k batches side by side, each holding its own state.
A running scheduler's workers (kind address) do the same when started with ``--resources
batch=1``; without it they run one single-threaded batch per thread.
"""
from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import shutil
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..config import THREADS
from ..errors import ConfigError, SpecError

KINDS = ("local", "address", "ssh", "slurm", "pbs")
BATCH_RESOURCE = "batch"   # the Dask worker resource of one running batch (module docstring)
SECTIONS = KINDS + ("scale",)
DEFAULT_FILE = "cluster.yaml"


@dataclass(frozen=True)
class ClusterSpec:
    kind: str = "local"
    options: dict = field(default_factory=dict)   # the section of `kind`
    scale: dict = field(default_factory=dict)
    source: str = "built-in default"

    @property
    def workers(self) -> int | None:
        """Worker processes this spec starts (None when not known in advance)."""
        if self.kind == "local":
            return int(self.options.get("n_workers") or cpu_count())
        if self.kind in ("slurm", "pbs"):
            if "workers" in self.scale:
                return int(self.scale["workers"])
            if "jobs" in self.scale:
                return int(self.scale["jobs"]) * int(self.options.get("processes", 1))
        if self.kind == "ssh":
            return max(len(self.options.get("hosts", [])) - 1, 0) or None
        return None

    @property
    def threads_per_worker(self) -> int | None:
        """Threads of each worker this spec starts (None for kind address: the running
        workers tell, sweep.runner.member_threads)."""
        if self.kind == "local":
            return int(self.options.get("threads_per_worker") or 1)
        if self.kind == "ssh":
            return int((self.options.get("worker_options") or {}).get("nthreads") or 1)
        if self.kind in ("slurm", "pbs"):
            cores, procs = self.options.get("cores"), self.options.get("processes") or 1
            return max(int(cores) // int(procs), 1) if cores else None
        return None

    def describe(self) -> str:
        if self.kind == "local":
            k = self.threads_per_worker
            each = "; each runs one batch at a time, its members on the threads" if k > 1 else ""
            return (f"local, {self.workers} worker process(es) x {k} thread{'s' * (k > 1)}"
                    f"{each} ({self.source})")
        if self.kind == "address":
            return f"scheduler at {self.options.get('address')} ({self.source})"
        return f"{self.kind} ({self.source})"


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def load_cluster_spec(path: str | None = None, workers: int | None = None,
                      threads: int | None = None) -> ClusterSpec:
    """The cluster of a sweep: `path`, else ./cluster.yaml if present, else a LocalCluster with
    one single-threaded worker process per core. `workers` overrides the worker count of a
    local cluster (or the workers requested from SLURM/PBS); `threads` the threads per worker
    of a local cluster (sweep --threads-per-worker)."""
    if path is None and os.path.isfile(DEFAULT_FILE):
        path = DEFAULT_FILE
    spec = ClusterSpec() if path is None else _read(path)
    if threads is not None:
        THREADS.check("--threads-per-worker", threads)
        if spec.kind != "local":
            raise ConfigError("--threads-per-worker", f"applies to a local cluster, not to kind "
                                                      f"{spec.kind!r} ({spec.source}): set its "
                                                      "threads in the cluster file")
        spec = ClusterSpec("local", {**spec.options, "threads_per_worker": threads}, spec.scale,
                           spec.source + f", --threads-per-worker {threads}")
    if workers is not None:
        if workers < 1:
            raise ConfigError("--workers", f"got {workers}; allowed: an integer >= 1")
        if spec.kind == "local":
            spec = ClusterSpec("local", {**spec.options, "n_workers": workers}, spec.scale,
                               spec.source + f", --workers {workers}")
        elif spec.kind in ("slurm", "pbs"):
            spec = ClusterSpec(spec.kind, spec.options, {"workers": workers},
                               spec.source + f", --workers {workers}")
        else:
            raise ConfigError("--workers", f"applies to local, slurm and pbs clusters, not to "
                                           f"kind {spec.kind!r} ({spec.source})")
    return spec


def _read(path: str) -> ClusterSpec:
    from ..inputs import read_yaml_document
    data, pos = read_yaml_document(path, "cluster")   # unreadable or bad YAML: one SpecError

    def err(keypath: tuple, msg: str) -> SpecError:
        line, col = pos.get(keypath) or pos.get(keypath[:1]) or (None, None)
        return SpecError(path, ".".join(keypath), msg, line, col)

    if not isinstance(data, dict) or set(data) != {"cluster"}:
        raise err(("cluster",), "expected a single top-level mapping `cluster:`")
    c = data["cluster"]
    if not isinstance(c, dict):
        raise err(("cluster",), "must be a mapping")
    for k in c:
        if k not in ("kind",) + SECTIONS:
            raise err(("cluster", k), f"unknown key; allowed: kind, {', '.join(SECTIONS)}")
    kind = c.get("kind", "local")
    if kind not in KINDS:
        raise err(("cluster", "kind"), f"got {kind!r}; allowed: {' | '.join(KINDS)}")
    options = c.get(kind) or {}
    if kind == "address":
        if not isinstance(options, str):
            raise err(("cluster", "address"), "expected the scheduler address, e.g. "
                                              "tcp://host:8786")
        options = {"address": options}
    elif not isinstance(options, dict):
        raise err(("cluster", kind), "must be a mapping of keyword arguments")
    scale = c.get("scale") or {}
    if not isinstance(scale, dict) or set(scale) - {"jobs", "workers"} or len(scale) > 1:
        raise err(("cluster", "scale"), "expected {jobs: N} or {workers: N}")
    if kind == "local":
        bad = set(options) - {"n_workers", "threads_per_worker", "memory_limit",
                              "dashboard_address", "processes"}
        if bad:
            raise err(("cluster", "local", sorted(bad)[0]),
                      "unknown key; allowed: n_workers, threads_per_worker, memory_limit, "
                      "dashboard_address, processes")
    if kind == "ssh" and not options.get("hosts"):
        raise err(("cluster", "ssh"), "needs hosts: [scheduler host, worker hosts...]")
    if kind in ("local", "ssh"):       # the threads of a worker: config.THREADS allows them
        sub = options if kind == "local" else options.get("worker_options") or {}
        key = "threads_per_worker" if kind == "local" else "nthreads"
        if key in sub and not THREADS.admits(sub[key]):
            where = ("cluster", kind) + ((key,) if kind == "local" else ("worker_options", key))
            raise err(where, f"got {sub[key]!r}; allowed: {THREADS.allowed()}")
    return ClusterSpec(kind, dict(options), dict(scale), path)


def dashboard_available() -> bool:
    return importlib.util.find_spec("bokeh") is not None


@contextlib.contextmanager
def connect(spec: ClusterSpec, quiet: bool = False, echo=print) -> Iterator[Any]:
    """A distributed.Client on the cluster of `spec` (started here unless kind is address);
    prints the cluster and the dashboard address unless quiet. Closes what it started."""
    from distributed import Client
    level = logging.ERROR if quiet else logging.WARNING
    cluster = None
    try:
        try:
            if spec.kind == "address":
                client = Client(spec.options["address"], timeout="30s")
            else:
                cluster = _start(spec, level)
                client = Client(cluster)
        except OSError as exc:
            raise ConfigError(f"cluster.{spec.kind}", f"cannot start or connect: {exc}") from None
        try:
            if not quiet:
                echo(f"cluster: {spec.describe()}")
                if spec.kind == "address" or dashboard_available():
                    echo(f"dashboard: {client.dashboard_link}")
                else:
                    echo("dashboard: not available (pip install 'extoll-vec[dashboard]' for "
                         "bokeh)")
            yield client
        finally:
            if cluster is not None:   # its workers first: a worker whose heartbeat finds the
                try:                  # scheduler closed logs a traceback on the user's screen
                    client.retire_workers(close_workers=True)
                except Exception:     # (only a tidier end: everything computed is stored)
                    pass
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def _start(spec: ClusterSpec, level: int):
    opts = dict(spec.options)
    if spec.kind == "local":
        from distributed import LocalCluster
        opts.setdefault("threads_per_worker", 1)
        opts["n_workers"] = spec.workers
        opts.setdefault("processes", True)
        # without bokeh there is no dashboard: a random port for the scheduler's HTTP server
        opts.setdefault("dashboard_address", ":8787" if dashboard_available() else ":0")
        if spec.threads_per_worker > 1:
            opts["resources"] = {BATCH_RESOURCE: 1}
        return LocalCluster(silence_logs=level, **opts)
    if spec.kind == "ssh":
        if importlib.util.find_spec("asyncssh") is None:
            raise ConfigError("cluster.ssh", "needs asyncssh: pip install 'extoll-vec[ssh]'")
        from distributed import SSHCluster
        opts["worker_options"] = dict(opts.get("worker_options") or {})
        opts["worker_options"].setdefault("nthreads", 1)
        if spec.threads_per_worker > 1:
            opts["worker_options"]["resources"] = {BATCH_RESOURCE: 1}
        return SSHCluster(**opts)
    # slurm / pbs through dask-jobqueue
    if importlib.util.find_spec("dask_jobqueue") is None:
        raise ConfigError(f"cluster.{spec.kind}", "needs dask-jobqueue: pip install "
                                                  "'extoll-vec[jobqueue]'")
    import dask_jobqueue
    submit = {"slurm": "sbatch", "pbs": "qsub"}[spec.kind]
    if shutil.which(submit) is None:
        raise ConfigError(f"cluster.{spec.kind}", f"{submit} not found: run the sweep on a "
                                                  f"login node of the {spec.kind.upper()} system")
    cls = {"slurm": dask_jobqueue.SLURMCluster, "pbs": dask_jobqueue.PBSCluster}[spec.kind]
    if (spec.threads_per_worker or 1) > 1:
        opts["worker_extra_args"] = list(opts.get("worker_extra_args") or []) + [
            "--resources", f"{BATCH_RESOURCE}=1"]
    try:
        cluster = cls(**opts)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"cluster.{spec.kind}", str(exc)) from None
    cluster.scale(**(spec.scale or {"jobs": 1}))
    return cluster

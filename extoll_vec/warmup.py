"""``extoll-vec compile``: build the kernels ahead of time, into the cache a run would use.

A batch runs the kernels compiled for its protocols' family (kernels/specialize.py); the first
batch of a family on a machine compiles them, later ones load the machine code from the cache
directory (kernels/__init__.py). This command compiles the builds a cluster image, a shared
cache directory or a CI step should hold, one progress line per build, by building the smallest
valid configuration of each family and advancing it to cycle 0: the kernels' types do not
depend on a configuration's sizes, so that build is the one every configuration of the family
loads.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

# The examples tried, smallest first, for a family's smallest valid configuration.
_BASES = ("tiny", "dragonfly-72", "ib-latency", "lfc-unicast")
_MAILBOX = (None, 0, 64, 1024)   # None: the example's own mailbox_slots


def families() -> dict[str, tuple[str, ...]]:
    """The registered families (the record modules' short names) and their protocols."""
    from .protocols import registry
    out: dict[str, list[str]] = {}
    for name in registry.registered():
        out.setdefault(registry.family(name).rsplit(".", 1)[-1], []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def smallest_config(family: str):
    """A small valid configuration running one of the family's protocols."""
    from .errors import ExtollVecError
    from .examples import get_example
    for base in _BASES:
        cfg = get_example(base)
        for name in families()[family]:
            for slots in _MAILBOX:
                sets = {"protocol.name": name}
                if slots is not None:
                    sets["protocol.mailbox_slots"] = slots
                try:
                    return cfg.replace(**sets)
                except ExtollVecError:
                    continue
    raise RuntimeError(f"no example accepts a protocol of the family {family!r}")


def cache_use() -> tuple[int, int]:
    """(kernel functions this process loaded from the cache, kernel functions it compiled),
    over every kernel module and every family's copy of them (kernels/specialize.py): what
    shows that a worker found the builds `extoll-vec compile` left."""
    from numba.core.dispatcher import Dispatcher
    loaded = compiled = 0
    for name, mod in list(sys.modules.items()):
        if name.startswith("extoll_vec.kernels") and mod is not None:
            for v in vars(mod).values():
                if isinstance(v, Dispatcher) and v._cache.__class__.__name__ != "NullCache":
                    loaded += sum(v._cache_hits.values())
                    compiled += sum(v._cache_misses.values())
    return loaded, compiled


def compile_family(family: str) -> float:
    """Compile (or load from the cache) the build `family` runs on (under the kernel policy,
    EXTOLL_VEC_KERNELS), or with `shared` the one build for all protocols; profiled runs
    (Batch.run(profile=...)) use the same build. Returns the seconds it took."""
    from .engine import Batch
    if family == "shared":
        saved = os.environ.get("EXTOLL_VEC_KERNELS")
        os.environ["EXTOLL_VEC_KERNELS"] = "shared"   # any family's batch then runs it
        try:
            return compile_family(next(iter(families())))
        finally:
            if saved is None:
                del os.environ["EXTOLL_VEC_KERNELS"]
            else:
                os.environ["EXTOLL_VEC_KERNELS"] = saved
    t0 = time.perf_counter()
    Batch([smallest_config(family)]).warm()
    return time.perf_counter() - t0


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--family", action="append", default=[], metavar="NAME",
                   help="a protocol family to build (repeatable; default: every family); "
                        "`shared` is the one build for all protocols (EXTOLL_VEC_KERNELS=shared)")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="the cache directory to fill (default: EXTOLL_VEC_CACHE_DIR, "
                        "NUMBA_CACHE_DIR or the checkout's kernels/__pycache__)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="builds compiled at once, each in a process of its own (default: one "
                        "per core; each takes up to about 1 GB)")


def _compile_apart(wanted: list[str], jobs: int) -> None:
    """Each build in a process of its own, `jobs` at once; a line per build as it ends."""
    waiting, running = list(wanted), {}
    while waiting or running:
        while waiting and len(running) < jobs:
            f = waiting.pop(0)
            err = tempfile.TemporaryFile("w+")     # a pipe could fill while nobody reads it
            running[f] = (time.perf_counter(), err, subprocess.Popen(
                [sys.executable, "-m", "extoll_vec.cli", "compile", "--family", f, "--jobs", "1"],
                stdout=subprocess.DEVNULL, stderr=err))
        time.sleep(0.2)
        for f, (t0, err, proc) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[f]
            err.seek(0)
            text = err.read()
            err.close()
            if proc.returncode:
                for _, _, other in running.values():
                    other.kill()
                raise RuntimeError(f"compiling the {f} build failed:\n{text}")
            print(f"{f:<12} {time.perf_counter() - t0:7.1f} s", flush=True)


def _run(args: argparse.Namespace) -> int:
    from .errors import ConfigError
    known = families()
    wanted = list(dict.fromkeys(args.family or known))
    for f in wanted:
        if f not in known and f != "shared":
            raise ConfigError("--family", f"{f!r} is not one of {', '.join([*known, 'shared'])}")
    if args.jobs < 1:
        raise ConfigError("--jobs", f"got {args.jobs}; allowed: an integer >= 1")
    if args.cache_dir is not None:
        os.environ["EXTOLL_VEC_CACHE_DIR"] = args.cache_dir   # read when the kernels load
    from .kernels import CACHE_DIR
    print(f"cache {CACHE_DIR}", flush=True)
    t0 = time.perf_counter()
    if args.jobs > 1 and len(wanted) > 1:
        _compile_apart(wanted, args.jobs)
    else:
        for f in wanted:
            print(f"{f:<12} {compile_family(f):7.1f} s", flush=True)
    if len(wanted) > 1:
        print(f"{len(wanted)} builds in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


def register_cli(register) -> None:
    register("compile", "compile the kernels of every protocol family (or --family NAME) "
             "ahead of time", _configure, _run)

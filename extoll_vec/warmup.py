"""``extoll-vec compile``: build the kernels ahead of time, into the cache a run would use.

A batch runs the kernels compiled for its protocols' family (kernels/specialize.py); the first
batch of a family on a machine compiles them, later ones load the machine code from the cache
directory (kernels/__init__.py). This command compiles the builds a cluster image, a shared
cache directory or a CI step should hold, one progress line per build, by running the smallest
valid configuration of each family for a few cycles: the kernels' types do not depend on a
configuration's sizes, so that build is the one every configuration of the family loads.
"""
from __future__ import annotations

import argparse
import os
import sys
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


def compile_family(family: str) -> float:
    """Compile (or load from the cache) the build `family` runs on (under the kernel policy,
    EXTOLL_VEC_KERNELS); returns the seconds it took."""
    from .engine import Batch
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


def _run(args: argparse.Namespace) -> int:
    from .errors import ConfigError
    known = families()
    wanted = args.family or list(known)
    for f in wanted:
        if f not in known and f != "shared":
            raise ConfigError("--family", f"{f!r} is not one of {', '.join([*known, 'shared'])}")
    if args.cache_dir is not None:
        os.environ["EXTOLL_VEC_CACHE_DIR"] = args.cache_dir   # read when the kernels load
    from .kernels import CACHE_DIR
    print(f"cache {CACHE_DIR}", flush=True)
    total = 0.0
    for f in wanted:
        if f == "shared":      # the one build for all protocols: any family's batch runs it
            saved = os.environ.get("EXTOLL_VEC_KERNELS")
            os.environ["EXTOLL_VEC_KERNELS"] = "shared"
            try:
                s = compile_family(next(iter(known)))
            finally:
                if saved is None:
                    del os.environ["EXTOLL_VEC_KERNELS"]
                else:
                    os.environ["EXTOLL_VEC_KERNELS"] = saved
        else:
            s = compile_family(f)
        total += s
        print(f"{f:<12} {s:7.1f} s", flush=True)
    print(f"{'all':<12} {total:7.1f} s", file=sys.stderr if len(wanted) == 1 else sys.stdout)
    return 0


def register_cli(register) -> None:
    register("compile", "compile the kernels of every protocol family (or --family NAME) "
             "ahead of time", _configure, _run)

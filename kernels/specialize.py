"""The kernels compiled for one protocol family: a batch pays only for the hooks it can call.

The event loop (sim.advance) inlines every hook of the generated dispatch (kernels/__init__.py),
so each registered protocol grows the loop that every other one runs, and the hop is sensitive
to the loop's size (docs/design.md, "Kernels per protocol family"). A batch whose members all
run protocols of one family (one record module of protocols/registry.REGISTERED) therefore
runs a copy of the kernels bound to a dispatch generated for that family alone:

- the dispatch is generated (registry.dispatch_source(names)) into its own directory under the
  cache directory, ``set-<hash of its text>``, which also holds the copy's machine code (Numba
  names a cache file after the source file and function, not its globals: copies of one
  function must not share a directory);
- the kernel modules that reach the dispatch (directly, or through another such module) are
  copied: a new module object per module with the same globals except that dispatch
  functions, kernel functions of copied modules and copied modules are replaced by the
  copies; every function defined in a copied module is compiled afresh from its code object
  with its original decorator's options. Modules that do not reach the dispatch (the
  protocols' hook modules, common.py, wheel.py) are shared.

The copy runs the same source, so a member's results are bit-identical in either
(tests/test_kernel_families.py). ``EXTOLL_VEC_KERNELS`` picks the policy: ``family``
(default: one compilation per family used on the machine, each a few minutes once, then
cached) or ``shared`` (every batch runs the one build for all protocols: one compilation in
all, each run slower; the test suite uses it).
"""
from __future__ import annotations

import hashlib
import os
import sys
import threading
import types
from pathlib import Path

import numba
from numba.core import config as _numba_config
from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher

import extoll_vec.kernels as _kernels
from extoll_vec.errors import ConfigError
from extoll_vec.protocols import registry

POLICIES = ("family", "shared")
_BUILT: dict[str, dict] = {}   # dispatch text hash -> the copied modules by name
# one copy at a time: a copy sets Numba's process-wide CACHE_DIR while it decorates, and two
# batches of a multi-threaded Dask worker may ask for copies at once
_LOCK = threading.Lock()


def policy() -> str:
    """EXTOLL_VEC_KERNELS, checked (an unknown value is an error, not a silent default)."""
    got = os.environ.get("EXTOLL_VEC_KERNELS", "family")
    if got not in POLICIES:
        raise ConfigError("EXTOLL_VEC_KERNELS", f"{got!r} is not one of {', '.join(POLICIES)} "
                          "(environment variable; unset means family)")
    return got


def kernel_family(protocol_name: str) -> str:
    """What a batch is split on (engine.batch_key): the protocol's family, or "shared"."""
    return registry.family(protocol_name) if policy() == "family" else "shared"


def sim_for(protocol_names) -> types.ModuleType:
    """The sim module (start, advance) for a batch running these protocols: the family's copy
    when they are all of one family and the policy is "family", else kernels.sim."""
    names = set(protocol_names)
    families = {registry.family(n) for n in names}
    if policy() != "family" or len(families) != 1:
        return _kernels.sim
    fam = families.pop()
    members = tuple(p.name for p in registry.registered().values()
                    if registry.family(p.name) == fam)
    return _copy(registry.dispatch_source(members))["extoll_vec.kernels.sim"]


def _copy(text: str) -> dict[str, types.ModuleType]:
    tag = hashlib.sha256(text.encode()).hexdigest()[:12]
    with _LOCK:
        if tag not in _BUILT:
            _BUILT[tag] = _copy_into(text, tag)
    return _BUILT[tag]


def _copy_into(text: str, tag: str) -> dict[str, types.ModuleType]:
    where = Path(_kernels.CACHE_DIR) / f"set-{tag}"
    where.mkdir(exist_ok=True)
    saved = _numba_config.CACHE_DIR
    _numba_config.CACHE_DIR = str(where)   # read when a function is decorated (cache=True)
    try:
        dispatch = _kernels.load_dispatch(where, text, f"extoll_vec.kernels.dispatch@{tag}")
        return _rebind(_kernels.dispatch, dispatch, tag)
    finally:
        _numba_config.CACHE_DIR = saved


def _rebind(old: types.ModuleType, new: types.ModuleType, tag: str) -> dict:
    """Copies of the kernel modules reaching `old`, bound to `new` (see the module doc)."""
    prefix = _kernels.__name__ + "."
    mods = {n: m for n, m in list(sys.modules.items())
            if n.startswith(prefix) and "@" not in n and m is not None and m is not old}
    repl: dict[int, object] = {id(old): new}
    repl.update({id(v): getattr(new, k) for k, v in vars(old).items()
                 if isinstance(v, Dispatcher)})
    copied: dict[str, types.ModuleType] = {}
    grew = True
    while grew:                      # the modules reaching the dispatch, to a fixed point
        grew = False
        for n, m in mods.items():
            if n not in copied and any(id(v) in repl for v in vars(m).values()):
                copied[n] = types.ModuleType(f"{n}@{tag}")
                repl[id(m)] = copied[n]
                repl.update({id(f): None for f in _own(m)})
                grew = True
    for n, c in copied.items():
        c.__dict__.update(vars(mods[n]))
        c.__name__ = f"{n}@{tag}"    # the copies' symbols differ from the originals'
        sys.modules[c.__name__] = c
        for f in _own(mods[n]):
            pf = f.py_func
            g = types.FunctionType(pf.__code__, c.__dict__, pf.__name__, pf.__defaults__,
                                   pf.__closure__)
            g.__qualname__, g.__doc__, g.__module__ = pf.__qualname__, pf.__doc__, c.__name__
            options = {k: v for k, v in f.targetoptions.items() if k != "nopython"}
            repl[id(f)] = numba.njit(cache=not isinstance(f._cache, NullCache),
                                     pipeline_class=f._compiler.pipeline_class, **options)(g)
    for c in copied.values():
        for k, v in list(vars(c).items()):
            if repl.get(id(v)) is not None:
                setattr(c, k, repl[id(v)])
    return copied


def _own(m: types.ModuleType) -> list[Dispatcher]:
    """The kernel functions defined in module m (not imported into it)."""
    return [v for v in vars(m).values()
            if isinstance(v, Dispatcher) and v.py_func.__module__ == m.__name__]

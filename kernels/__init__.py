"""Numba kernels (installed as ``extoll_vec.kernels``) and the disk cache of their machine code.

Numba keys a cached function on its own source file only: a change in a helper it inlines
from another module, or in a constant of ``extoll_vec.dtypes`` frozen into it, would load the
stale machine code. So the cache lives in a directory named after a hash of every kernel
source, of the Numba-free modules the kernels compile or take constants from (``dtypes.py``,
``formulas.py``, ``protocols/fc_layout.py``) and of the numba version: any change compiles
afresh, and processes of the same version (Dask workers, later runs) share one cache. The
directory is ``$EXTOLL_VEC_CACHE_DIR`` or ``$NUMBA_CACHE_DIR`` or ``kernels/__pycache__`` (if
writable, else ``~/.cache/extoll-vec``), plus ``numba-<hash>``. Other ``numba-*`` siblings are
removed (in ``kernels/__pycache__`` at once; in a shared root once unused for a week).

The protocol hooks' dispatch module is generated from the protocol registry
(protocols/registry.py dispatch_source) into that directory as ``proto_dispatch.py`` (written
atomically, and only when its text changes, so that its cached machine code stays valid across
processes) and imported as ``extoll_vec.kernels.dispatch``; its text and the registry's record
modules are part of the hash. The routing dispatch is generated the same way from the routing
registry (routing/registry.py) as ``route_dispatch.py``, ``extoll_vec.kernels.route_dispatch``. A batch of one protocol family runs a copy of the kernels
bound to a dispatch of that family alone (specialize.py), cached in a subdirectory.
"""
import hashlib
import importlib.util
import os
import sys
import shutil
import time
from pathlib import Path

import numba
from numba.core import config as _numba_config

from extoll_vec import dtypes as _dtypes
from extoll_vec import formulas as _formulas
from extoll_vec.protocols import fc_layout as _fc_layout
from extoll_vec.protocols import registry as _registry
from extoll_vec.routing import registry as _routings

_HERE = Path(__file__).resolve().parent
_DISPATCH = _registry.dispatch_source()
_ROUTE_DISPATCH = _routings.dispatch_source()
_SOURCES = sorted(p for p in _HERE.rglob("*.py") if "__pycache__" not in p.parts) + [Path(m.__file__)
                                          for m in (_dtypes, _formulas, _fc_layout)] + sorted(
    {Path(f) for f in _registry.source_files() + _routings.source_files()})


# Bumped when a cache an earlier version wrote may be unusable though no source changed
# (2: test_nic_seams had written a test module's type into helpers' indexes)
CACHE_FORMAT = 2


def source_digest() -> str:
    h = hashlib.sha256(f"{numba.__version__} {CACHE_FORMAT}".encode())
    for p in _SOURCES:   # named by their place in the tree: family folders hold equal names
        h.update((p.relative_to(_HERE.parent) if p.is_relative_to(_HERE.parent)
                  else Path(p.name)).as_posix().encode())
        h.update(p.read_bytes())
    h.update(_DISPATCH.encode())
    h.update(_ROUTE_DISPATCH.encode())
    return h.hexdigest()[:16]


def load_dispatch(d: Path, text: str, name: str, file: str = "proto_dispatch.py"):
    """Write a generated dispatch module into the cache directory d (only if its text
    differs: Numba's cache index is keyed on the file's time stamp; atomically: processes
    sharing the cache write the same text) and import it as `name`."""
    path = d / file
    if not path.exists() or path.read_text() != text:
        tmp = d / f".{file}.{os.getpid()}.tmp"
        tmp.write_text(text)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def cache_dir() -> Path:
    base = os.environ.get("EXTOLL_VEC_CACHE_DIR") or os.environ.get("NUMBA_CACHE_DIR")
    shared = bool(base)
    if base:
        root = Path(base)
    else:
        root = _HERE / "__pycache__"
        try:
            root.mkdir(exist_ok=True)
            probe = root / f".probe-{os.getpid()}"
            probe.touch()
            probe.unlink()
        except OSError:
            root, shared = Path.home() / ".cache" / "extoll-vec", True
    d = root / f"numba-{source_digest()}"
    d.mkdir(parents=True, exist_ok=True)
    # in-tree caches belong to this checkout alone; a shared root may serve other versions
    # still in use, so there only caches unused for a week go
    keep_s = 7 * 86400 if shared else 0
    for old in root.glob("numba-*"):
        if old != d and time.time() - old.stat().st_mtime >= keep_s:
            shutil.rmtree(old, ignore_errors=True)
    return d


CACHE_DIR = cache_dir()   # this version's; specialize.py puts the family copies inside it
_saved = _numba_config.CACHE_DIR
_numba_config.CACHE_DIR = str(CACHE_DIR)
try:  # decorating with cache=True reads CACHE_DIR: every kernel module is decorated here
    dispatch = load_dispatch(CACHE_DIR, _DISPATCH, __name__ + ".dispatch")
    route_dispatch = load_dispatch(CACHE_DIR, _ROUTE_DISPATCH, __name__ + ".route_dispatch",
                                   "route_dispatch.py")
    from . import common, flowctl, host, network, nic, progstats, sim, wheel  # noqa: F401
finally:
    _numba_config.CACHE_DIR = _saved

"""The routing registry: one `Routing` record per routing function (`network.routing`), holding
everything the code outside its kernel needs to know of it, as protocols/registry.py does for
protocols.

A routing is its record (a module listed in REGISTERED, exposing ROUTINGS, a tuple of records)
and, unless it is the table routing, its route function in a Numba module. config.py takes the
allowed names, the VCs each needs and its checks from the records; engine/params.py writes its
kernel id; deadlock.py builds its channel dependency graph through the record's `edges`; and
kernels/__init__.py generates the kernels' routing dispatch from the records (dispatch_source):
one branch per route function over the kernel ids that use it.

Kernel ids are generated: a routing's position in registration order (the table routing is 0,
the kernels' fast path). They stay below dtypes.RT_FLAT, the bit of the flat VC assignment.
This module and the record modules are Numba-free (config.py imports them).
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Callable

from ..dtypes import RT_FLAT

# The record modules, in order (kernel ids follow it). Adding a routing adds one line here.
REGISTERED = (
    "extoll_vec.routing.table",         # table: the topology's own tables
    "extoll_vec.routing.dragonfly",     # valiant, ugal, par
    "extoll_vec.routing.valiant_mesh",  # valiant_mesh: a random intermediate node on a mesh
)

# The route function of a routing's kernel module, as the dispatch calls it:
#   f(S, T, par, b, r, p, v, h, mode) -> (output port, output VC), both int64
# for packet h entering input (p, v) of router r; mode = par[b, P_ROUTING] (kernel id | RT_FLAT).
ROUTE_ARGS = "S, T, par, b, r, p, v, h, mode"


def _no_problem(cfg) -> str | None:
    return None


@dataclass(frozen=True)
class Routing:
    name: str                       # network.routing in a configuration
    edges: Callable                 # edges(topo, flat) -> int64 [E, 2] (buffer, next buffer):
                                    # its channel dependency graph, or a superset (deadlock.py)
    hooks: str | None = None        # dotted Numba module with its route function (None: the
                                    # table routing, kernels/routing.py's fast path)
    function: str = "route"         # that function's name (ROUTE_ARGS)
    vcs: int | None = None          # VCs its layered assignment needs (None: the topology's)
    topologies: tuple[str, ...] = ()  # topology kinds it routes (empty: every kind)
    in_order: bool = True           # a pair's packets arrive in the order sent (the MPI model
                                    # needs it: a routing that may reorder runs only
                                    # network-only traffic)
    problem: Callable = _no_problem  # problem(RunConfig) -> what it needs besides the above, as
                                    # the "allowed" text of the refusal, or None
    note: str = ""                  # one line: what it is (error messages, `extoll-vec` help)


# ---- loading -----------------------------------------------------------------------------
_CACHE: dict[str, Routing] = {}
_IDS: dict[str, int] = {}


def registered() -> dict[str, Routing]:
    """name -> record of every registered routing, in registration order (names unique)."""
    if not _CACHE:
        out: dict[str, Routing] = {}
        for mod in REGISTERED:
            for rt in importlib.import_module(mod).ROUTINGS:
                assert rt.name not in out, f"routing {rt.name!r} registered twice"
                out[rt.name] = rt
        assert len(out) < RT_FLAT, f"more than {RT_FLAT - 1} routings: widen dtypes.RT_FLAT"
        assert next(iter(out)) == "table", "the table routing is kernel id 0 (the fast path)"
        _IDS.update({n: i for i, n in enumerate(out)})
        _CACHE.update(out)
    return _CACHE


def names() -> tuple[str, ...]:
    return tuple(registered())


def routing(name: str) -> Routing:
    try:
        return registered()[name]
    except KeyError:
        raise ValueError(f"unknown routing {name!r}") from None


def kernel_id(name: str) -> int:
    """par[P_ROUTING] of a member routed by `name` (with the layered VC assignment)."""
    registered()
    return _IDS[name]


# ---- the generated dispatch ----------------------------------------------------------------
def dispatch_source() -> str:
    """The source of the kernels' routing dispatch module: route(S, T, ..., mode) for every
    mode but the table fast path (mode 0, kernels/routing.py route_out). Routings that share a
    route function share one branch, so that the function is inlined once."""
    groups: dict[tuple[str, str], list[int]] = {}
    for name, rt in registered().items():
        if rt.hooks is not None:
            groups.setdefault((rt.hooks, rt.function), []).append(kernel_id(name))
    mods = sorted({m for m, _ in groups})
    alias = {m: f"_m{i}" for i, m in enumerate(mods)}
    lines = ['"""Generated by extoll_vec/routing/registry.py dispatch_source(): one branch per',
             'route function over the registered routings\' kernel ids. Do not edit."""',
             "import numpy as np",
             "",
             "from extoll_vec.dtypes import RT_FLAT",
             "from extoll_vec.kernels.jit import inner"]
    lines += [f"import {m} as {a}" for m, a in alias.items()]
    lines += ["", "", "@inner", f"def route({ROUTE_ARGS}):", "    rid = mode & (RT_FLAT - 1)"]
    for k, ((mod, fn), ids) in enumerate(groups.items()):
        test = " or ".join(f"rid == {i}" for i in ids)
        lines.append(f"    {'if' if k == 0 else 'elif'} {test}:")
        lines.append(f"        return {alias[mod]}.{fn}({ROUTE_ARGS})")
    lines.append("    # the table routing with the flat VC assignment: every hop on VC 0")
    lines.append("    return np.int64(T.route_port[r, S.pk[b, h].dnode]), np.int64(0)")
    return "\n".join(lines) + "\n"


def source_files() -> list[str]:
    """What the generated dispatch depends on besides kernels/*.py: the record modules, this
    module, and route modules outside kernels/ (kernels/__init__.py hashes them all)."""
    out = [importlib.import_module(m).__file__ for m in REGISTERED] + [__file__]
    out += [importlib.util.find_spec(rt.hooks).origin for rt in registered().values()
            if rt.hooks and not rt.hooks.startswith("extoll_vec.kernels.")]
    return out

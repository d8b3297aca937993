"""Command line: ``extoll-vec run | examples | ...``.

Subcommands live in a registry (SUBCOMMANDS). A module elsewhere in the package adds its own by
defining ``register_cli(register)`` and being listed in EXTENSION_MODULES; main() imports the
listed modules that exist and calls ``register_cli(register)``, where
``register(name, help, configure, run)`` takes ``configure(parser)`` to add arguments and
``run(args) -> int`` to execute. Keep the top level of such modules cheap to import (import dask,
numba or xarray inside ``run``): every invocation of the CLI imports them.

Every ExtollVecError (ConfigError, SimulationError, StoreError) becomes one line
``extoll-vec: error: <message>`` on stderr and exit code 2; usage errors also exit with 2.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from . import __version__
from .config import RunConfig, load_yaml
from .errors import ConfigError, ExtollVecError
from .protocols.registry import describe as describe_protocol
from .topology.registry import kind as topology_kind
from .workloads.registry import describe as describe_work

PROG = "extoll-vec"
EXIT_ERROR = 2

# Modules that may add subcommands (sweep, tables, ...); a missing module is skipped.
EXTENSION_MODULES = ("extoll_vec.sweep", "extoll_vec.analysis.tables", "extoll_vec.analysis.report",
                     "extoll_vec.analysis.store_report", "extoll_vec.warmup")


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


SUBCOMMANDS: dict[str, Subcommand] = {}
_LOADED: set[str] = set()
_INVOCATION: list[str] | None = None   # the command main() is running, while it runs


def invocation() -> list[str] | None:
    """The command line (``extoll-vec`` and its arguments) that main() is running, or None
    outside main() (the Python API): a sweep store keeps the command that created it, so that
    its report can say how it was made."""
    return None if _INVOCATION is None else list(_INVOCATION)


def register(name: str, help: str, configure: Callable[[argparse.ArgumentParser], None],
             run: Callable[[argparse.Namespace], int]) -> None:
    """Add a subcommand; a name registered twice is a bug."""
    if name in SUBCOMMANDS:
        raise RuntimeError(f"subcommand {name!r} registered twice")
    SUBCOMMANDS[name] = Subcommand(name, help, configure, run)


def _load_extensions() -> None:
    for modname in EXTENSION_MODULES:
        if modname in _LOADED:
            continue
        _LOADED.add(modname)
        try:
            spec = importlib.util.find_spec(modname)
        except ModuleNotFoundError:  # parent package missing
            spec = None
        if spec is None:
            continue
        hook = getattr(importlib.import_module(modname), "register_cli", None)
        if hook is not None:
            hook(register)


# ---- run -------------------------------------------------------------------------------------
def config_line(c: RunConfig) -> str:
    """One line describing a config."""
    topo = topology_kind(c.topology.kind).describe(c.topology)
    return f"{topo} | {describe_work(c)} | {describe_protocol(c.protocol)} | seed {c.seed}"


def summary(c: RunConfig, ds, wall_s: float, i: int = 0,
            extra: Sequence[tuple[str, str]] = ()) -> str:
    """One screen of results for point `i` of a result Dataset (plus `extra` rows)."""
    import numpy as np
    pt = ds.isel(point=i)
    n = c.n_ranks
    rows = [("config", config_line(c))]
    if c.workload.synthetic:
        rows += [
            ("accepted", f"{float(pt.accepted_flits_per_node_cycle):.4f} flits/node/cycle "
                         f"(offered {float(pt.offered_flits_per_node_cycle):.4f})"),
            ("mean latency", f"{float(pt.packet_latency_cycles_mean):.1f} cycles"),
        ]
    else:
        sent = pt.packets_sent.isel(rank=slice(0, n)).sum("rank")
        stall = pt.stall_us.isel(rank=slice(0, n))
        mbox = pt.mailbox_max_slots.isel(rank=slice(0, n))
        rows += [
            ("exec_time_us", f"{float(pt.exec_time_us):.3f}"),
            ("packets sent", ", ".join(f"{str(k)} {int(v)}"
                                       for k, v in zip(sent["kind"].values, sent.values))),
            ("mailbox max", f"{int(mbox.max())} slots (rank {int(np.argmax(mbox.values))})"),
            ("delayed sends", f"{int(pt.sends_delayed.isel(rank=slice(0, n)).sum())}"),
            ("stall", f"{float(stall.sum()):.3f} us total, {float(stall.max()):.3f} us max "
                      "per rank"),
        ]
    rows += [
        ("link util", f"{float(pt.max_link_utilization):.3f} (busiest link)"),
        ("simulated", f"{int(pt.simulated_cycles)} cycles "
                      f"({int(pt.simulated_cycles) * c.network.cycle_ns / 1000:.3f} us), "
                      f"{int(pt.packets_delivered)} packets delivered, "
                      f"{int(pt.events_processed)} events"),
        ("wall", f"{wall_s:.2f} s"),
        *extra,
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def apply_sets(cfg: RunConfig, sets: Sequence[str]) -> RunConfig:
    if not sets:
        return cfg
    from .config import show
    from .errors import SpecError
    from .inputs import parse_yaml_document
    overrides = {}
    for item in sets:
        key, eq, text = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError("--set", f"expected SECTION.FIELD=VALUE, got {show(item)}")
        try:
            overrides[key.strip()] = parse_yaml_document(text, None, key.strip())[0]
        except SpecError as exc:
            raise ConfigError(key.strip(), f"value {show(text)}: {exc.message}") from None
    return cfg.replace(**overrides)


def _progress_printer():
    if not sys.stderr.isatty():
        return None

    def show(frac: float) -> None:
        print(f"\r{PROG}: {100 * frac:5.1f}%", end="", file=sys.stderr, flush=True)
    return show


def _configure_run(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("config", nargs="?", metavar="CONFIG.yaml", help="run configuration file")
    src.add_argument("--example", metavar="NAME",
                     help="a named example (see `extoll-vec examples`)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                   help="override one parameter (YAML value), e.g. --set protocol.name=window; "
                        "repeatable")
    p.add_argument("-o", "--output", metavar="OUT.zarr", help="write the result store here")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing result store at OUT.zarr")


def _cmd_run(args: argparse.Namespace) -> int:
    if args.example is not None:
        from .examples import get_example
        cfg = get_example(args.example)
    else:
        cfg = load_yaml(args.config)
    cfg = apply_sets(cfg, args.set)
    from .engine.sizing import check_memory
    check_memory([cfg])       # too large for this machine: refused before anything is built
    if args.output is not None:
        from .dataset import check_writable
        check_writable(args.output, args.overwrite)  # fail before simulating, not after
    from . import engine
    from .dataset import write_zarr
    progress = _progress_printer()
    t0 = time.perf_counter()
    try:
        ds = engine.simulate([cfg], progress=progress)
    finally:
        if progress is not None:
            print(file=sys.stderr)
    wall = time.perf_counter() - t0
    extra = []
    if args.output is not None:
        extra.append(("wrote", str(write_zarr(ds, args.output, overwrite=args.overwrite))))
    print(summary(cfg, ds, wall, extra=extra))
    return 0


# ---- examples --------------------------------------------------------------------------------
def _configure_examples(p: argparse.ArgumentParser) -> None:
    pass


def _cmd_examples(args: argparse.Namespace) -> int:
    from .examples import EXAMPLES, describe
    width = max(map(len, EXAMPLES))
    for name in EXAMPLES:
        print(f"{name:<{width}}  {describe(name)}")
    return 0


register("run", "run one configuration and print a summary", _configure_run, _cmd_run)
register("examples", "list the named example configurations", _configure_examples, _cmd_examples)


# ---- entry point -----------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    """The parser of every registered subcommand, built once per set of them (argparse spends
    most of a refused command line's time building it; parse_args leaves it unchanged)."""
    key = tuple(SUBCOMMANDS)
    if _PARSER.get("key") != key:
        _PARSER.update(key=key, parser=_build_parser())
    return _PARSER["parser"]


_PARSER: dict = {}


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Batch simulator of end-to-end flow control in HPC interconnects.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for cmd in SUBCOMMANDS.values():
        sp = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.configure(sp)
        sp.set_defaults(_run=cmd.run)
    return parser


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    global _INVOCATION
    _load_extensions()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors (argparse exits with 2)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_ERROR)
    _INVOCATION = [PROG, *argv]
    try:
        return int(args._run(args) or 0)
    except ExtollVecError as exc:
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError as exc:   # an allocation outside the named ones (sizing.allocating)
        size = getattr(exc, "_total_size", None)
        what = f" ({size / 2**20:,.0f} MiB refused)" if size else ""
        print(f"{PROG}: error: out of memory{what}: give the run more memory or a smaller "
              "configuration", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    finally:
        _INVOCATION = None


if __name__ == "__main__":
    sys.exit(main())

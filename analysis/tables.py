"""`extoll-vec tables NAME [--from STORE.zarr ... | --from-rows ROWS.csv ... | --out DIR [--quick]
[--set KEY=VALUE ...]] [-o OUT.csv]`: a named target from a result store (or several read as
one), from the per-point rows earlier runs of it wrote (targets with a rows reader), or from the
target's own sweep run into DIR, varied by --set as `extoll-vec sweep` takes it (targets
registered with ``needs=NO_STORE`` need neither).

Kept cheap to import (the CLI imports it on every invocation); the work happens in registry.py
and the target modules.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path


def _configure(p: argparse.ArgumentParser) -> None:
    from ..sweep.cli import add_max_points_option, add_set_option
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="the target to compute; omit it to list the targets")
    p.add_argument("--from", dest="store", metavar="STORE.zarr", action="append",
                   help="compute from this result store (a sweep or `run -o` store); repeat "
                        "it to read the completed points of several stores as one (e.g. the "
                        "same spec run with more seeds into a second store)")
    p.add_argument("--from-rows", dest="rows", metavar="ROWS.csv", action="append",
                   help="compute from the per-point rows that runs of the target wrote with "
                        "--out (a target that reads rows says which file when refused); "
                        "repeat it to combine parts of one sweep run separately (each point "
                        "in one file only)")
    p.add_argument("-o", "--output", metavar="OUT.csv", help="also write the table as CSV")
    p.add_argument("--out", dest="out_dir", metavar="DIR",
                   help="write NAME.csv, NAME.png and NAME.html (the table, its figure and "
                        "the report of the store: `extoll-vec report`) into DIR; without "
                        "--from, first run the target's sweep into DIR/SPEC.zarr (an existing "
                        "store is resumed)")
    p.add_argument("--quick", action="store_true",
                   help="run the target's reduced-scale sweep (under a minute)")
    add_set_option(p)
    add_max_points_option(p)
    p.add_argument("--cluster", metavar="CLUSTER.yaml", help="cluster for the target's sweep "
                   "(default: ./cluster.yaml if present, else a local cluster)")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes of a local cluster")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _run(args: argparse.Namespace) -> int:
    from .registry import compute, get_target, load_targets, open_checked
    if args.name is None:
        targets = load_targets()
        width = max(map(len, targets), default=0)
        for t in targets.values():
            print(f"{t.name:<{width}}  {t.help}")
        return 0
    from ..errors import ConfigError
    tgt = get_target(args.name)  # unknown name: fail before opening anything
    check_output(args.output, "-o", directory=False)    # bad outputs: fail before computing
    check_output(args.out_dir, "--out", directory=True)
    store = args.store
    read = store is not None or args.rows is not None
    for given, option in ((args.sets, "--set"), (args.quick, "--quick")):
        if given and (read or not tgt.needs_store):
            raise ConfigError(option, f"not with --from or --from-rows: they are read as they "
                              f"are ({option} varies the sweep that --out DIR runs)" if read
                              else f"{tgt.name} runs no sweep")
    if not read and tgt.needs_store:
        store = run_target_sweep(tgt, args.out_dir, args.quick, args.cluster, args.workers,
                                 args.quiet, args.sets, args.max_points)
    since = time.time()
    # with --out the store's report reads all of it: read it once, for the table too
    ds = (open_checked(store, load=True)
          if args.out_dir is not None and store is not None and args.rows is None else None)
    try:
        table = compute(args.name, store, out_dir=args.out_dir, rows=args.rows, dataset=ds)
        print(table.to_text())
        if args.out_dir is not None:
            from .store_report import write_target_page
            print(f"wrote {write_target_page(args.name, table, store, args.out_dir, since, ds)}")
    finally:
        if ds is not None:
            ds.close()
    if args.output:
        out = Path(args.output)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(table.to_csv())
        except OSError as exc:
            from ..inputs import shown_path
            raise ConfigError("-o", f"cannot write {shown_path(out)}: {exc.strerror or exc}") \
                from None
        print(f"wrote {out}")
    return 0


def check_output(path, option: str, directory: bool) -> None:
    """ConfigError (one line, naming `option`) unless `path` can be written as a file
    (directory=False: -o OUT.csv) or be a directory to write into (directory=True: --out DIR),
    checked before anything is computed or written: an existing path of the other kind, a
    parent that is a file, an over-long name."""
    if path is None:
        return
    from ..errors import ConfigError
    from ..inputs import path_length_problem
    from ..inputs import shown_path
    from ..storage import is_url
    if is_url(path):
        raise ConfigError(option, f"{shown_path(path)} is a URL; give a local "
                                  f"{'directory' if directory else 'file'} (result stores may "
                                  "be URLs: --from, and `extoll-vec sweep -o`)")
    p = Path(path)
    shown = shown_path(p)
    too_long = path_length_problem(p)
    if too_long:
        raise ConfigError(option, f"{shown}: {too_long}")
    kind = "a directory to write into" if directory else "a file name such as OUT.csv"
    try:
        if p.is_dir() and not directory:
            raise ConfigError(option, f"{shown} is a directory; give {kind}")
        if p.exists() and not p.is_dir() and directory:
            raise ConfigError(option, f"{shown} is a file; give {kind}")
        if directory and (p / "zarr.json").exists():
            raise ConfigError(option, f"{shown} is a zarr store; give {kind} of its own")
        for parent in p.parents:
            if parent.exists() or parent.is_symlink():
                if not parent.is_dir():
                    raise ConfigError(option, f"{shown}: {shown_path(parent)} is a file, not a "
                                              f"directory; give {kind}")
                break
    except OSError as exc:
        raise ConfigError(option, f"{shown}: {exc.strerror or exc}") from None


def run_target_sweep(tgt, out_dir, quick: bool, cluster_file=None, workers=None,
                     quiet: bool = False, sets=(), max_points: int | None = None) -> Path:
    """Run (or resume) the target's sweep, with the --set overrides `sets`, into
    out_dir/<spec>.zarr; returns the store. (A store there of another sweep, e.g. the spec
    without the overrides, is refused: give such a variant its own DIR.)"""
    from ..errors import ConfigError
    from ..sweep.cli import execute
    from ..sweep.cluster import load_cluster_spec
    from ..sweep.spec import load_sweep
    from ..sweeps import spec_path
    name = tgt.spec_name(quick)
    if out_dir is None:
        raise ConfigError("--out", f"required: the folder where {tgt.name}'s sweep ({name}) "
                                   "stores its results (or --from STORE.zarr)")
    sweep = load_sweep(spec_path(name), sets,
                       **({} if max_points is None else {"max_points": max_points}))
    store = Path(out_dir) / f"{name.replace('/', '_')}.zarr"
    store.parent.mkdir(parents=True, exist_ok=True)
    execute(sweep, store, load_cluster_spec(cluster_file, workers), quiet=quiet)
    return store


def register_cli(register) -> None:
    register("tables", "compute a named table from a result store (--from STORE.zarr)",
             _configure, _run)

"""`extoll-vec tables NAME --from STORE.zarr [-o OUT.csv] [--out DIR]`: a named target from a
result store (targets marked ``needs_store = False`` run without --from).

Kept cheap to import (the CLI imports it on every invocation); the work happens in registry.py
and the target modules.
"""
from __future__ import annotations

import argparse
from pathlib import Path


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="the target to compute; omit it to list the targets")
    p.add_argument("--from", dest="store", metavar="STORE.zarr",
                   help="compute from this result store (a sweep or `run -o` store)")
    p.add_argument("-o", "--output", metavar="OUT.csv", help="also write the table as CSV")
    p.add_argument("--out", dest="out_dir", metavar="DIR",
                   help="also write NAME.csv (and the target's figures, if any) into DIR")


def _run(args: argparse.Namespace) -> int:
    from .registry import compute, get_target, load_targets
    if args.name is None:
        targets = load_targets()
        width = max(map(len, targets), default=0)
        for t in targets.values():
            print(f"{t.name:<{width}}  {t.help}")
        return 0
    get_target(args.name)  # unknown name: fail before opening anything
    table = compute(args.name, args.store, out_dir=args.out_dir)
    print(table.to_text())
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(table.to_csv())
        print(f"wrote {out}")
    return 0


def register_cli(register) -> None:
    register("tables", "compute a named table from a result store (--from STORE.zarr)",
             _configure, _run)

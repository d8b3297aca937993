"""Benchmark figures as data: every script here takes ``--record`` and then appends what it
printed, as one JSON line, to ``benchmarks/results.jsonl`` (or ``--record FILE``).

A record holds the benchmark's name, its arguments, the date, the git commit (with ``-dirty``
when the tree had uncommitted changes: such figures describe no commit), the machine, and the
printed table as ``columns`` and ``rows``. ``extoll-vec docs`` renders the latest records into
docs/benchmarks.md, so the figures quoted there are the ones a command wrote.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().with_name("results.jsonl")


def add_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--record", nargs="?", const=str(RESULTS), default=None, metavar="FILE",
                    help=f"append the figures to FILE (default {RESULTS.name} beside this "
                         "script) for docs/benchmarks.md")


def commit() -> str:
    """The checked-out commit, ``-dirty`` if tracked files (other than the results file) differ
    from it; "unknown" outside a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        rev = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=here, text=True,
                             capture_output=True, check=True).stdout.strip()
        # the results file itself does not count: appending a record must not make the next
        # benchmark of the same session "dirty"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ":(top)", ":(top,exclude)benchmarks/results.jsonl"],
                               cwd=here, text=True, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + ("-dirty" if dirty.strip() else "")


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numba
    import numpy
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": numpy.__version__, "numba": numba.__version__}


def save(args: argparse.Namespace, benchmark: str, columns: list[str], rows: list[list],
         argv: list[str] | None = None) -> None:
    """Append one record if --record was given; say where."""
    if args.record is None:
        return
    argv = sys.argv[1:] if argv is None else argv
    shown = [a for a in argv if not a.startswith("--record")]
    if args.record != str(RESULTS) and args.record in shown:
        shown.remove(args.record)
    rec = {"benchmark": benchmark, "args": shown,
           "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "commit": commit(), "machine": machine(), "columns": list(columns),
           "rows": [list(r) for r in rows]}
    path = Path(args.record)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")
    print(f"recorded in {path}", flush=True)

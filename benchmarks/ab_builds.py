"""Two builds side by side: the run time of one example on build A and build B, each pair of
runs at once on the two cores, cores swapped every pair; the mean and standard error of the
pair differences and of the ratios B/A.

    python benchmarks/ab_builds.py A_PYTHON B_PYTHON EXAMPLE [KEY=VALUE ...] [--pairs N] [--record]

A_PYTHON and B_PYTHON are interpreters of two environments, each with its own checkout
installed (e.g. `git worktree add /tmp/base main` and a venv there). Each run is a fresh
process that first advances EXAMPLE to cycle 0 (`Batch.warm`: its kernels loaded, or compiled
once into that checkout's cache), then times `Batch.run` of it (CPU seconds of the process);
the two builds must simulate the same cycles, events, packets and hops, or the script stops
(--model-changed: they may differ, for a change of the model's event loop).
This host's speed drifts between minutes, so only a pair's two runs are compared with each
other (docs/benchmarks.md).
"""
from __future__ import annotations

import argparse
import json
import statistics as st
import subprocess
import sys
import tempfile

from record import add_option, save

COLUMNS = ["example", "A", "B", "pairs", "A cpu s", "B cpu s", "B-A s", "se s", "B/A", "se"]

CHILD = r'''
import json, sys, time
from extoll_vec.engine import Batch
from extoll_vec.examples import get_example
name, sets = sys.argv[1], dict(kv.split("=", 1) for kv in sys.argv[2:])
def value(v):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v
sets = {k: value(v) for k, v in sets.items()}
cfg = get_example(name).replace(**sets)
b = Batch([cfg])
b.warm()   # the kernels loaded (or compiled) outside the timing: to cycle 0 simulates nothing
c0 = time.process_time()
b.run()
cpu = time.process_time() - c0
S = b.S
print(json.dumps(dict(cpu=cpu, cycles=int(S.now[0]), events=int(S.events[0]),
                      delivered=int(S.delivered[0]), hops=int(S.hops[0]))))
'''


def build_commit(python: str) -> str:
    """The commit of the checkout `python` runs extoll-vec from ("-dirty" if modified)."""
    where = subprocess.run([python, "-c", "import pathlib, extoll_vec; "
                            "print(pathlib.Path(extoll_vec.__file__).resolve().parents[1])"],
                           capture_output=True, text=True, check=True,
                           cwd=tempfile.gettempdir()).stdout.strip()   # (as run_pair's)
    git = ["git", "-C", where]
    rev = subprocess.run([*git, "rev-parse", "--short=10", "HEAD"], capture_output=True,
                         text=True).stdout.strip() or "unknown"
    dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no", "--",
                            ":(exclude)benchmarks/results.jsonl"],
                           capture_output=True, text=True).stdout.strip()
    return rev + ("-dirty" if dirty else "")


def run_pair(pythons, cores, args):
    # run outside any checkout: `python -c` puts the working directory first on sys.path, and
    # from the other build's checkout a child would import that build's package
    procs = [subprocess.Popen(["taskset", "-c", str(core), py, "-c", CHILD, *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=tempfile.gettempdir())
             for py, core in zip(pythons, cores)]
    out = []
    for p, py in zip(procs, pythons):
        so, se = p.communicate()
        if p.returncode:
            sys.exit(f"a run of {py} failed (exit {p.returncode}):\n{se[-2000:]}")
        out.append(json.loads(so.strip().splitlines()[-1]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a_python")
    ap.add_argument("b_python")
    ap.add_argument("example")
    ap.add_argument("sets", nargs="*", metavar="KEY=VALUE")
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--model-changed", action="store_true",
                    help="the builds model differently (a change of the event loop): compare "
                         "their times whatever they simulate, and print both runs' events")
    add_option(ap)
    args = ap.parse_args()
    commits = [build_commit(py) for py in (args.a_python, args.b_python)]
    runs = []
    for i in range(args.pairs):
        a, b = run_pair((args.a_python, args.b_python), (0, 1) if i % 2 == 0 else (1, 0),
                        [args.example, *args.sets])
        if any(a[k] != b[k] for k in ("cycles", "events", "delivered", "hops")):
            if not args.model_changed:
                sys.exit(f"the builds simulate differently: A {a}, B {b}")
            if i == 0:
                print(f"A: {a}\nB: {b}")
        runs.append((a["cpu"], b["cpu"]))
        print(f"pair {i}: A {a['cpu']:.2f} s  B {b['cpu']:.2f} s  B/A {b['cpu'] / a['cpu']:.3f}",
              flush=True)
    d = [b - a for a, b in runs]
    r = [b / a for a, b in runs]
    se = (lambda x: st.stdev(x) / len(x) ** 0.5 if len(x) > 1 else float("nan"))
    row = [" ".join([args.example, *args.sets]), *commits, len(runs),
           round(st.mean(a for a, _ in runs), 2),
           round(st.mean(b for _, b in runs), 2), round(st.mean(d), 3), round(se(d), 3),
           round(st.mean(r), 3), round(se(r), 3)]
    print(f"{row[0]}: A ({row[1]}) {row[4]} s, B ({row[2]}) {row[5]} s, B-A {row[6]:+} +- "
          f"{row[7]} s, B/A {row[8]} +- {row[9]} ({len(runs)} pairs)")
    # the interpreters' paths are this machine's: the record names the builds by commit
    save(args, "ab_builds", COLUMNS, [row], argv=[args.example, *args.sets,
                                                  "--pairs", str(args.pairs)]
         + (["--model-changed"] if args.model_changed else []))


if __name__ == "__main__":
    main()

"""The partial-deadlock check's cost (docs/routing.md): the same point with
limits.stall_check_cycles at its default and at 0, run at once, one per core, in pairs; the
ratio of simulated cycles per CPU second (off over on: above 1 means the check costs), mean and
standard error over the pairs. Both runs simulate the same cycles and events (checked).

    python lab/scripts/stall_check_cost.py POINT [--pairs 4]     POINT: an example name or p,a,h
"""
import argparse
import json
import subprocess
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("point")
ap.add_argument("--pairs", type=int, default=4)
ap.add_argument("--one", default=None)
a = ap.parse_args()


def config(point, check):
    from extoll_vec.examples import get_example
    over = {"network.deadlock_check": False}      # the check looks only at such runs
    if not check:
        over["limits.stall_check_cycles"] = 0
    if "," in point:
        p, aa, h = map(int, point.split(","))
        over.update({"topology.p": p, "topology.a": aa, "topology.h": h})
        return get_example("dragonfly-72").replace(**over)
    return get_example(point).replace(**over)


if a.one is not None:
    import time
    from extoll_vec.engine import Batch
    b = Batch([config(a.point, a.one == "on")])
    b.warm()
    c0 = time.process_time()
    b.run()
    cpu = time.process_time() - c0
    print(json.dumps({"cycles": int(b.S.now[0]), "events": int(b.S.events[0]), "cpu": cpu}))
    sys.exit()

ratios = []
for i in range(a.pairs):
    procs = {k: subprocess.Popen([sys.executable, __file__, a.point, "--one", k],
                                 stdout=subprocess.PIPE, text=True) for k in ("on", "off")}
    got = {k: json.loads(p.communicate()[0]) for k, p in procs.items()}
    assert got["on"]["events"] == got["off"]["events"], got
    rate = {k: g["cycles"] / g["cpu"] for k, g in got.items()}
    ratios.append(rate["off"] / rate["on"])
    print(f"pair {i}: on {rate['on']:.0f} off {rate['off']:.0f} cycles/CPU s, "
          f"off/on {ratios[-1]:.4f}", flush=True)
r = np.array(ratios)
print(f"{a.point}: off/on {r.mean():.4f} +- {r.std(ddof=1) / np.sqrt(len(r)):.4f} "
      f"({len(r)} pairs)")

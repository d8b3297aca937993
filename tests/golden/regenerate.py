"""Golden results of small sweeps: compute, store as reviewable JSON, compare.

    python tests/golden/regenerate.py            # recompute every tests/golden/specs/*.yaml
    python tests/golden/regenerate.py protocols  # only some of them

writes tests/golden/NAME.json: per point its axis labels and every result variable (rank
arrays cut to the point's ranks; one line per variable). Review the diff before committing:
a change in these files is a change in what the simulator computes.

Comparison (tests/test_golden.py): integers and strings exactly; floats with
|a - b| <= ATOL + RTOL * |b|; NaN (stored as null: not applicable) equals only NaN. The results
are deterministic functions of integer cycle counts, so the tolerance only absorbs
floating-point reassociation.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SPECS = HERE / "specs"
RTOL = 1e-9
ATOL = 1e-12


def spec_names() -> list[str]:
    return sorted(p.stem for p in SPECS.glob("*.yaml"))


def compute(sweep) -> dict:
    """Golden data of an expanded sweep (extoll_vec.sweep.Sweep), simulated in this process."""
    from extoll_vec.dataset import SCHEMA
    from extoll_vec.engine import simulate
    ds = simulate(list(sweep.configs))
    points = []
    for i, cfg in enumerate(sweep.configs):
        values = {}
        for name, var in SCHEMA.items():
            a = ds[name].values[i]
            # cut the rank / peer axes to the point's ranks (the rest is padding)
            a = a[tuple(slice(0, cfg.n_ranks) if d in ("rank", "peer") else slice(None)
                        for d in var.dims[1:])]
            values[name] = _nan_to_none(a.tolist())
        labels = {k: (v if isinstance(v, (int, float, str)) else str(v))
                  for k, v in sweep.labels(i).items()}
        points.append({"point": i, "labels": labels, "values": values})
    return {"sweep": sweep.name, "fingerprint": sweep.fingerprint, "points": points}


def _nan_to_none(v):
    """Strict JSON has no NaN: padding-free values only hold NaN for not-applicable figures."""
    if isinstance(v, list):
        return [_nan_to_none(x) for x in v]
    return None if isinstance(v, float) and math.isnan(v) else v


def load_spec(name: str):
    from extoll_vec.sweep import load_sweep
    return load_sweep(SPECS / f"{name}.yaml")


def load_golden(name: str) -> dict:
    return json.loads((HERE / f"{name}.json").read_text())


def dumps(data: dict) -> str:
    """JSON with one line per point header and per variable (diff-friendly)."""
    lines = ["{", f'  "sweep": {json.dumps(data["sweep"])},',
             f'  "fingerprint": {json.dumps(data["fingerprint"])},', '  "points": [']
    for j, p in enumerate(data["points"]):
        lines.append(f'    {{"point": {p["point"]}, "labels": {json.dumps(p["labels"])}, '
                     '"values": {')
        items = list(p["values"].items())
        for k, (name, v) in enumerate(items):
            comma = "," if k < len(items) - 1 else ""
            lines.append(f"      {json.dumps(name)}: {json.dumps(v, allow_nan=False)}{comma}")
        lines.append("    }}" + ("," if j < len(data["points"]) - 1 else ""))
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


def _close(a, b) -> bool:
    if a is None or b is None:                   # NaN (not applicable)
        return a is b
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= ATOL + RTOL * abs(b)
    return a == b


def compare(golden: dict, computed: dict) -> list[str]:
    """Differences between two golden data sets (empty when they agree)."""
    out = []
    if len(golden["points"]) != len(computed["points"]):
        return [f"{len(computed['points'])} points, golden has {len(golden['points'])}"]
    for g, c in zip(golden["points"], computed["points"]):
        where = f"point {g['point']} ({g['labels']})"
        if g["labels"] != c["labels"]:
            out.append(f"{where}: labels {c['labels']}")
        for name in sorted(set(c["values"]) - set(g["values"])):
            # a new output variable: it escapes the regression until the golden holds it
            out.append(f"{where}: {name} not in the golden data: regenerate")
        for name, gv in g["values"].items():
            cv = c["values"].get(name)
            ga, ca = np.asarray(gv, dtype=object).ravel(), np.asarray(cv, dtype=object).ravel()
            if name not in c["values"] or ga.shape != ca.shape:
                out.append(f"{where}: {name} missing or of another shape")
                continue
            bad = [k for k, (x, y) in enumerate(zip(ca, ga)) if not _close(x, y)]
            if bad:
                k = bad[0]
                out.append(f"{where}: {name}[{k}] = {ca[k]!r}, golden {ga[k]!r} "
                           f"({len(bad)} value(s) differ)")
    return out


def main(argv: list[str]) -> int:
    names = argv or spec_names()
    for name in names:
        sweep = load_spec(name)
        data = compute(sweep)
        (HERE / f"{name}.json").write_text(dumps(data))
        print(f"wrote {HERE / f'{name}.json'}: {len(data['points'])} points")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

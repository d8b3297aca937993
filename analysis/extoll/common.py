"""What the EXTOLL reproduction targets share: per-point figures from a result store.

- ``measured_us``: the time the paper reports for a point: IMB's pingpong figure (half a round
  trip per iteration; multi-pingpong: the slowest pair), or one execution of the workload (time
  from the first rank's mark 0 to the last rank's mark 1, divided by the iterations).
- ``measured``: what a per-rank counter gained between the rank's marks 0 and 1 (the measured
  part, warm-ups excluded); ``delayed_pct`` (the measured part) and ``run_delayed_pct`` (the
  whole run, for the static protocol's break-even arithmetic).
- ``overheads``: every flow-control point with its reference, the point of the same store whose
  configuration differs only in the protocol (protocol none, the paper's "very large receive
  buffers and no flow control"); overhead = measured / reference - 1. Points that differ only in
  the seed are replicates (a start skew makes them differ): times are averaged over them first.
- ``slots_per_process``: the paper's x axis, mailbox slots / processes.
- figures: ``figure`` (Agg, no pyplot) and ``write_outputs`` (NAME.csv + NAME.png).
- ``Points``: the points a target needs (its ``@target(..., needs=Points(...))``: flow-control
  protocols with their reference runs, workload kinds); the registry refuses a store without
  them before the target runs. ``require``: a finer condition of one target, the same refusal.
"""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ...config import ProtocolConfig, RunConfig, from_dict
from ..registry import Needs, Table, refusal


def completed_points(ds):
    """The completed points of a store (all points of a run store), not loaded."""
    if "completed" in ds:
        ds = ds.isel(point=np.flatnonzero(ds["completed"].values))
    return ds


def completed(ds):
    """The completed points of a store (all points of a run store), loaded."""
    return completed_points(ds).load()


FC_POINTS = "flow-control points completed together with their reference runs"


def require(ds, ok: bool, target: str, what: str) -> None:
    """Stop a target that lacks its points (a sweep still running, or another spec's store)
    with one error naming what it needs and what the store has (exit 2 on the CLI), before
    an empty table reaches the plotting code. For what the registry cannot check before the
    target runs (its declared Points come first)."""
    if not ok:
        raise refusal(ds, target, what)


@dataclasses.dataclass(frozen=True)
class Points(Needs):
    """A target's points: at least one completed point of a flow-control protocol in
    `protocols` (any of them) whose reference run (protocol none, otherwise the same
    configuration but the seed: overheads) is completed too, unless reference=False; only
    points of a workload kind in `workloads` count when it is given."""
    protocols: tuple[str, ...]
    workloads: tuple[str, ...] = ()
    reference: bool = True

    @property
    def what(self) -> str:
        kinds = f"{' or '.join(self.workloads)} " if self.workloads else ""
        ref = (" with their reference runs (protocol none, otherwise the same configuration)"
               if self.reference else "")
        return f"completed {kinds}points of the {' or '.join(self.protocols)} protocol{ref}"

    def missing(self, ds) -> str | None:
        cfgs = configs(completed_points(ds))
        if not cfgs:
            return "no completed point"
        if self.workloads:
            kinds = sorted({c.workload.kind for c in cfgs})
            cfgs = [c for c in cfgs if c.workload.kind in self.workloads]
            if not cfgs:
                return f"no {' or '.join(self.workloads)} point (workloads: {', '.join(kinds)})"
        protos = ", ".join(dict.fromkeys(c.protocol.name for c in cfgs))
        which = " or ".join(self.protocols)
        pts = [c for c in cfgs if c.protocol.name in self.protocols]
        if not pts:
            return f"no {which} point (protocols: {protos})"
        refs = {_reference_key(c) for c in cfgs if c.protocol.name == "none"}
        if self.reference and not any(_reference_key(c) in refs for c in pts):
            return f"no reference run (protocol none) of any {which} point (protocols: {protos})"
        return None


def configs(ds) -> list[RunConfig]:
    """The RunConfig of every point of ds, in order (also of a selection of a store's points:
    the attrs list every point of the store, the `point` coordinate says which ones ds has)."""
    every = json.loads(ds.attrs["configs"])
    if "point" in ds.coords:
        return [from_dict(every[int(p)]) for p in ds["point"].values]
    return [from_dict(d) for d in every]


def completed_configs(ds) -> list[RunConfig]:
    """The RunConfig of every completed point of a store, [] for a store without points (what
    a target's Needs.missing reads)."""
    return configs(completed(ds)) if ds.sizes.get("point", 0) else []


def measured_us(ds, i: int, cfg: RunConfig) -> float:
    """The time the paper reports for point i (module docstring)."""
    marks = ds.mark_time_us.values[i]
    # over every rank that passed the mark: in a multicast's latency only rank 0 passes mark 0
    # and only the members pass mark 1 (workloads/multicast.py)
    start, done = marks[:, 0], marks[:, 1]
    if np.isnan(start).all() or np.isnan(done).all():
        return float(ds.exec_time_us.values[i])
    span = float(np.nanmax(done) - np.nanmin(start))
    w = cfg.workload
    pingpong = w.kind == "multi_pingpong" or (w.kind == "imb" and w.benchmark == "PingPong")
    return span / (2 * w.iterations) if pingpong else span / w.iterations


def slots_per_process(cfg: RunConfig) -> float:
    n = cfg.n_ranks
    s = cfg.protocol.mailbox_slots / n
    return int(s) if s == int(s) else s


def _reference_key(cfg: RunConfig) -> str:
    return dataclasses.replace(cfg, protocol=ProtocolConfig(), seed=0).to_json()


def _replicate_key(cfg: RunConfig) -> str:
    return dataclasses.replace(cfg, seed=0).to_json()


def ratio_se_pct(times, ref_times) -> float:
    """Standard error, in %, of mean(times) / mean(ref_times) - 1 from the two samples'
    spread, first order (delta method): (T/R) * sqrt(sT^2/(nT T^2) + sR^2/(nR R^2)) with the
    sample standard deviations sT, sR; NaN with fewer than two values on either side."""
    if len(times) < 2 or len(ref_times) < 2:
        return float("nan")
    t, r = float(np.mean(times)), float(np.mean(ref_times))
    rel = (np.var(times, ddof=1) / (len(times) * t * t)
           + np.var(ref_times, ddof=1) / (len(ref_times) * r * r))
    return float(100.0 * t / r * np.sqrt(rel))


@dataclasses.dataclass
class Point:
    """One flow-control point with its reference. Points that differ only in the seed are
    replicates (workload.start_skew_ns; a sweep's `repeat`): time_us and ref_us are their means,
    so the overhead is mean / mean - 1, as the paper's averages over repetitions are."""
    indices: tuple[int, ...]      # positions among the completed points, one per replicate
    cfg: RunConfig                # the first replicate's
    times: tuple[float, ...]      # measured_us of each replicate (in indices' order)
    ref_times: tuple[float, ...]  # measured_us of each reference replicate

    @property
    def index(self) -> int:
        """The first replicate's position (for figures read off one run)."""
        return self.indices[0]

    @property
    def reps(self) -> int:
        return len(self.indices)

    @property
    def ref_reps(self) -> int:
        return len(self.ref_times)

    @property
    def replicates(self) -> int:
        """Runs behind the overhead on its thinner side (the point's or its reference's)."""
        return min(self.reps, self.ref_reps)

    @property
    def time_us(self) -> float:
        return float(np.mean(self.times))

    @property
    def ref_us(self) -> float:
        return float(np.mean(self.ref_times))

    @property
    def overhead_pct(self) -> float:
        return 100.0 * (self.time_us / self.ref_us - 1.0)

    @property
    def overhead_se_pct(self) -> float:
        """Standard error of overhead_pct from the replicates' spread: the ratio of two
        independent means, first order (delta method): (T/R) * sqrt(sT^2/(nT T^2) + sR^2/(nR
        R^2)), with the sample standard deviations sT, sR. NaN with fewer than two replicates
        on either side: one run per point says nothing of its own noise
        (lab/scripts/overhead_noise.py measures it separately)."""
        return ratio_se_pct(self.times, self.ref_times)

    def mean(self, per_point) -> float:
        """Mean of per_point(i) over the replicates."""
        return float(np.mean([per_point(i) for i in self.indices]))


def overheads(ds) -> list[Point]:
    """Every completed flow-control point (replicates merged) that has a completed reference;
    in the order of the first replicates."""
    cfgs = configs(ds)
    times = [measured_us(ds, i, c) for i, c in enumerate(cfgs)]
    # one entry per seed: a sweep stores one simulation once per point of any axis that does
    # not change it (the reference along slots_per_process), and a replicate counts once
    reps: dict[str, dict[int, int]] = {}
    for i, c in enumerate(cfgs):
        reps.setdefault(_replicate_key(c), {}).setdefault(c.seed, i)
    refs: dict[str, dict[int, float]] = {}
    for c, t in zip(cfgs, times):
        if c.protocol.name == "none":
            refs.setdefault(_reference_key(c), {}).setdefault(c.seed, t)
    out = []
    for by_seed in reps.values():
        idx = tuple(by_seed.values())
        c = cfgs[idx[0]]
        ref = refs.get(_reference_key(c))
        if c.protocol.name != "none" and ref:
            out.append(Point(idx, c, tuple(times[i] for i in idx), tuple(ref.values())))
    return out


def below_reference(points: list[tuple[str, float, float, int]]) -> str:
    """The paper's reference runs are the lower bound of the execution time (sections 5.3 and
    7.4): of (name, overhead %, its standard error, replicates) per point, those below 0 by more
    than two standard errors, as a sentence. Points without a standard error are not judged."""
    judged = [p for p in points if not math.isnan(p[2])]
    if not judged:
        return "reference as lower bound: one run per point, no standard error to judge by"
    below = [f"{n} ({o:+.1f} +- {se:.1f} %)" for n, o, se, _ in judged if o + 2 * se < 0]
    head = f"reference as lower bound ({min(p[3] for p in judged)}+ replicates per point): "
    if not below:
        return head + f"every one of {len(judged)} overheads >= 0 within 2 SE"
    return head + (f"{len(below)} of {len(judged)} overheads below 0 by more than 2 SE: "
                   + "; ".join(below))


def rank_sum(v, i: int) -> float:
    a = np.asarray(v.values[i])
    return float(np.nansum(np.where(a >= 0, a, 0)) if a.dtype.kind != "f" else np.nansum(a))


def measured(ds, name: str, i: int) -> np.ndarray:
    """Per rank of point i, what the counter `name` (sends_delayed, messages_received, stall_us,
    flow_control_cpu_us) gained in the measured part: between the rank's marks 0 and 1, the same
    part as measured_us, so warm-ups do not count. Ranks that did not pass both marks (outside
    the measured part, or rank padding) give 0. A point where no rank passed both marks has no
    measured part: its whole-run totals."""
    at = np.asarray(ds[f"{name}_at_mark"].values[i], dtype=np.float64)
    start, done = at[:, 0], at[:, 1]
    both = (start >= 0) & (done >= 0)        # False for the -1 and NaN of "never"
    if not both.any():
        total = np.asarray(ds[name].values[i], dtype=np.float64)
        return np.where(total >= 0, total, 0.0)
    return np.where(both, done - start, 0.0)


def delayed_pct(ds, i: int) -> float:
    """The paper's "% of delayed sends": messages that waited for credits, % of all messages
    received, in the measured part only (`measured`, the part measured_us times; warm-ups
    excluded; messages through LiMIC count in the total, never as delayed)."""
    msgs = float(measured(ds, "messages_received", i).sum())
    return 100.0 * float(measured(ds, "sends_delayed", i).sum()) / max(msgs, 1.0)


def run_delayed_pct(ds, i: int) -> float:
    """delayed_pct over the whole run, warm-ups included: what the static protocol's break-even
    arithmetic (es.stall_free) predicts, so only the checks of that prediction read it."""
    return 100.0 * rank_sum(ds.sends_delayed, i) / max(rank_sum(ds.messages_received, i), 1.0)


def label(cfg: RunConfig, labels: dict[str, Any] | None = None) -> str:
    """A short name of a point's workload (the sweep's case label when given)."""
    if labels:
        return str(next(iter(labels.values())))
    w = cfg.workload
    if w.kind == "alltoall" and (w.groups > 1 or 0 < w.group_size < w.ranks):
        # concurrent groups as the Spanish paper names them (4x256), and "+barrier" where the
        # ranks outside the groups wait in a barrier (Figure 10's 512 + barrier)
        size = w.group_size or w.ranks // w.groups
        name = f"{w.groups}x{size}" if w.groups > 1 else f"{size}"
        return name + ("+barrier" if w.groups * size < w.ranks else "")
    return f"{w.kind}-{w.ranks}"


def case_labels(ds) -> list[str]:
    """Per completed point, the label of the store's first zipped sweep axis (e.g. `case`)."""
    axes = json.loads(ds.attrs.get("sweep_axes", "[]"))
    for a in axes:
        if a["coord"] in ds.coords and a["keys"] and len(a["keys"]) > 1:
            return [str(x) for x in ds[a["coord"]].values]
    return [label(c) for c in configs(ds)]


def figure(ncols: int = 1, nrows: int = 1, width: float = 5.5, height: float = 4.2):
    """Figure + Agg canvas, no pyplot (no global backend, nothing left open)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    return fig, fig.subplots(nrows, ncols, squeeze=False)


def write_outputs(table: Table, fig, out_dir, name: str) -> tuple[Path, Path]:
    """DIR/NAME.csv, DIR/NAME.png and, if the table has notes (its reading of itself),
    DIR/NAME.notes.txt, which docs/ quotes through `extoll-vec docs`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = out / f"{name}.csv", out / f"{name}.png"
    csv_path.write_text(table.to_csv())
    notes = out / f"{name}.notes.txt"
    if table.notes:
        notes.write_text("".join(n.strip() + "\n" for n in table.notes))
    elif notes.exists():
        notes.unlink()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig)
    fig.savefig(png_path, dpi=110)
    return csv_path, png_path

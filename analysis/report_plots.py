"""The figures of `extoll-vec report`: one per swept axis, the sweep's main result against it.

The main result is the overhead against the reference run where the store has flow-control
points with their references (analysis/extoll/common.overheads: replicates merged, the
standard error from their spread), else the time the papers report (time_us; replicates: mean
and standard error), else the accepted throughput of synthetic traffic. Each figure draws one
line per combination of the other axes while there are at most MAX_SERIES of them (axes of
names before axes of numbers, fewer values first); the axes left over are averaged, and the
figure says so (the mean over unlike configurations has no error bar: its spread is not noise).
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass
from itertools import product

import numpy as np

from .stats import mean_and_se

MAX_SERIES = 8
REPLICATE_KEYS = (["seed"],)       # an axis that only sets the seed holds replicates


@dataclass
class Plot:
    axis: str          # the swept axis on x
    png: bytes
    caption: str


@dataclass
class Metric:
    name: str          # the summary column
    label: str         # the y axis
    about: str         # what it is, for the caption
    values: list[tuple[dict, float, float, int]]   # per plotted entry: labels, mean, SE, runs


def _is_replicates(axis: dict) -> bool:
    return axis["name"] == "rep" or axis.get("keys") in REPLICATE_KEYS


def _numeric(labels) -> bool:
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in labels)


def metric(ds, table, axes: list[dict]) -> Metric | None:
    """The main result per plotted entry (labels: axis coord -> label, without replicate
    axes), from the completed points of the loaded store `ds` and its summary `table`."""
    coords = [a["coord"] for a in axes if not _is_replicates(a)]
    col = {c: i for i, c in enumerate(table.columns)}
    if not table.rows:
        return None
    from .extoll.common import overheads
    points = overheads(ds) if "overhead_pct" in col else []
    if any(math.isfinite(p.overhead_pct) for p in points):
        values = []
        for p in points:
            labels = {c: _label(ds[c].values[p.index]) for c in coords}
            values.append((labels, p.overhead_pct, p.overhead_se_pct, p.replicates))
        return Metric("overhead_pct", "overhead (%)", "100 x (time / the reference's time "
                      "- 1), the reference the same configuration without flow control "
                      "(protocol none)", values)
    for name, label, about in (("time_us", "time (us)", "the time the papers report"),
                               ("accepted", "accepted (flits/node/cycle)",
                                "the accepted throughput"),
                               ("exec_time_us", "execution time (us)", "the whole run's time")):
        if name not in col:
            continue
        groups: dict[tuple, list[float]] = {}
        for r in table.rows:
            y = r[col[name]]
            if isinstance(y, (int, float)) and math.isfinite(y):
                groups.setdefault(tuple(_label(r[col[c]]) for c in coords), []).append(y)
        if groups:
            values = [(dict(zip(coords, k)), *mean_and_se(ys), len(ys))
                      for k, ys in groups.items()]
            return Metric(name, label, about, values)
    return None


def _label(v):
    v = v.item() if hasattr(v, "item") else v
    return v if isinstance(v, (int, float, bool)) else str(v)


def _series_axes(others: list[dict]) -> tuple[list[dict], list[dict]]:
    """The other axes that get a line per combination of values, and those averaged."""
    order = sorted(others, key=lambda a: (_numeric(a["labels"]), len(a["labels"])))
    lines, rest, n = [], [], 1
    for a in order:
        if n * len(a["labels"]) <= MAX_SERIES:
            lines.append(a)
            n *= len(a["labels"])
        else:
            rest.append(a)
    return lines, rest


def plots(ds, table, axes: list[dict]) -> tuple[list[Plot], str]:
    """One Plot per swept axis of two or more values, and a sentence on what was not plotted
    (empty when everything was)."""
    swept = [a for a in axes if not _is_replicates(a) and len(a["labels"]) > 1]
    if not axes:
        return [], "a single run has no swept axis to plot"
    if not swept:
        return [], "no axis of two or more values (other than replicates) to plot against"
    m = metric(ds, table, axes)
    if m is None:
        return [], "no completed point with a result to plot"
    reps = [a["name"] for a in axes if _is_replicates(a)]
    return [_plot(m, a, [b for b in swept if b is not a], reps) for a in swept], ""


def _plot(m: Metric, axis: dict, others: list[dict], reps: list[str]) -> Plot:
    from .extoll.common import figure
    lines, rest = _series_axes(others)
    xs = [_label(x) for x in axis["labels"]]
    numeric = _numeric(xs)
    combos = list(product(*[[_label(x) for x in a["labels"]] for a in lines]))
    fig, ax = figure(width=5.8, height=4.2 if len(combos) > 1 else 3.5)
    ax = ax[0][0]
    present = {x for labels, *_ in m.values for x in [labels.get(axis["coord"])]}
    shown = [x for x in xs if x in present]
    pos = {x: (x if numeric else k) for k, x in enumerate(shown)}
    errors = False
    drawn = 0
    for s, combo in enumerate(combos):
        want = dict(zip((a["coord"] for a in lines), combo))
        pts: dict = {}
        for labels, y, se, n in m.values:
            if all(labels.get(c) == v for c, v in want.items()) and math.isfinite(y):
                pts.setdefault(labels.get(axis["coord"]), []).append((y, se, n))
        if not pts:
            continue
        x_here = [x for x in shown if x in pts]
        ys, ses = [], []
        for x in x_here:
            group = pts[x]
            if len(group) == 1:
                ys.append(group[0][0])
                ses.append(group[0][1])
            else:     # averaged over the axes in `rest`: no error bar (see the module doc)
                ys.append(float(np.mean([g[0] for g in group])))
                ses.append(math.nan)
        dodge = 0.0 if numeric else 0.08 * (s - (len(combos) - 1) / 2)
        px = [pos[x] + dodge for x in x_here]
        label = ", ".join(str(v) for v in combo) or m.label
        yerr = np.where(np.isfinite(ses), ses, 0.0)
        errors = errors or bool(np.isfinite(ses).any())
        ax.errorbar(px, ys, yerr=yerr if np.isfinite(ses).any() else None, marker="o",
                    markersize=4, capsize=3, linewidth=1.4 if numeric else 0.8,
                    linestyle="-" if numeric else ":", label=label)
        drawn += 1
    if numeric:
        vals = [float(x) for x in shown]
        if len(vals) > 1 and min(vals) > 0 and max(vals) / min(vals) >= 16:
            ax.set_xscale("log")
        ax.set_xticks(vals, [str(x) for x in shown])
        ax.minorticks_off()
    else:
        ax.set_xticks(range(len(shown)), [str(x) for x in shown],
                      rotation=30 if max((len(str(x)) for x in shown), default=0) > 8 else 0)
        ax.set_xlim(-0.5, len(shown) - 0.5)
    if m.name == "overhead_pct":
        ax.axhline(0.0, color="0.6", linewidth=0.8)
    ax.set_xlabel(axis["name"])
    ax.set_ylabel(m.label)
    ax.set_title(f"{m.label} against {axis['name']}", fontsize=11)
    ax.grid(True, alpha=0.3)
    if drawn > 1:     # under the axes: inside, it would hide markers
        fig.legend(fontsize=7.5, loc="outside lower center", title_fontsize=7.5,
                   ncols=min(drawn, 4), title=", ".join(a["name"] for a in lines))
    png = io.BytesIO()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig)
    fig.savefig(png, format="png", dpi=96)
    caption = [f"{m.label}: {m.about}."]
    if lines:
        caption.append(f"One line per {' and '.join(a['name'] for a in lines)}.")
    if rest:
        caption.append(f"Each marker is the mean over {', '.join(a['name'] for a in rest)} "
                       "(more combinations than lines can show).")
    runs = sorted({n for _, _, _, n in m.values})
    if errors:
        caption.append(f"Bars: standard error over the replicates ({'/'.join(map(str, runs))} "
                       f"per point{', axis ' + ', '.join(reps) if reps else ''}).")
    elif max(runs, default=1) < 2:
        caption.append("One run per point: no error bars.")
    return Plot(axis["name"], png.getvalue(), " ".join(caption))

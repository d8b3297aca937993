"""Target `extoll_reference`: the paper's four reference times against the simulation with the
defaults in force (section 5.3; the defaults come from analysis/extoll/calibration.py, which fits two
of the four cases).

Columns: case, paper_us, simulated_us, fitted (the case took part in the fit), error_pct.
"""
from __future__ import annotations

from .calibration import CASES
from .common import (case_labels, completed, completed_points, configs, figure,
                            measured_us, write_outputs)
from ..registry import Needs, Table, target

COLUMNS = ["case", "paper_us", "simulated_us", "fitted", "error_pct"]


class ReferenceCases(Needs):
    """Completed runs without flow control of the paper's reference cases, labelled by their
    case (the zipped axis of sweeps/extoll/reference.yaml), and nothing else."""
    what = ("completed runs without flow control (protocol none) of the paper's reference "
            f"cases ({', '.join(CASES)}), labelled by case")

    def missing(self, ds) -> str | None:
        sel = completed_points(ds)
        cfgs = configs(sel)
        if not cfgs:
            return "no completed point"
        other = [f"{lab} (protocol {c.protocol.name})" if lab in CASES else lab
                 for lab, c in zip(case_labels(sel), cfgs)
                 if lab not in CASES or c.protocol.name != "none"]
        if not other:
            return None
        other = list(dict.fromkeys(other))
        more = f" and {len(other) - 5} more" if len(other) > 5 else ""
        return f"points of other cases: {', '.join(other[:5])}{more}"


@target("extoll_reference", "EXTOLL reference times (section 5.3) simulated vs the paper: "
        "multi-pingpong at 1 and 14 hops, alltoall of 256 and 1024 ranks (calibration)",
        sweep=True, needs=ReferenceCases())
def extoll_reference(ds, out_dir=None) -> Table:
    ds = completed(ds)
    rows = []
    for i, (case, cfg) in enumerate(zip(case_labels(ds), configs(ds))):
        paper = CASES[case][1]
        sim = measured_us(ds, i, cfg)
        rows.append([case, paper, sim, CASES[case][2], 100.0 * (sim / paper - 1.0)])
    fitted = [r for r in rows if r[3]]
    held = [r for r in rows if not r[3]]
    notes = [
        "fitted: " + ", ".join(f"{r[0]} {r[4]:+.1f} %" for r in fitted) + " (acceptance: 5 %)",
        "held out: " + ", ".join(f"{r[0]} {r[4]:+.1f} %" for r in held) + " (acceptance: 15 %)",
        "pingpong: half a round trip per iteration, slowest of 16 pairs (IMB); alltoall: one "
        "alltoall, first rank in to last rank out",
    ]
    table = Table(f"extoll_reference: {len(rows)} reference runs without flow control",
                  COLUMNS, rows, notes)
    if out_dir is not None:
        fig, ((ax,),) = figure()
        x = range(len(rows))
        ax.bar([i - 0.2 for i in x], [r[1] for r in rows], 0.4, label="paper")
        ax.bar([i + 0.2 for i in x], [r[2] for r in rows], 0.4, label="simulated")
        for i, r in enumerate(rows):
            ax.annotate(f"{r[4]:+.1f}%{'' if r[3] else ' (held out)'}", (i, max(r[1], r[2])),
                        ha="center", va="bottom", fontsize=8)
        ax.set_xticks(list(x), [r[0] for r in rows])
        ax.set_yscale("log")
        ax.set_ylabel("time (us)")
        ax.set_title("Reference times without flow control")
        ax.legend()
        write_outputs(table, fig, out_dir, "extoll_reference")
    return table

"""Targets `extoll_table1` and `extoll_memory`: the EXTOLL paper's closed-form tables.

Pure formulas (extoll_vec.protocols.extoll.static), no simulation and no result store: the
``ds`` argument the registry passes is ignored. Each target returns a registry ``Table`` whose
rows carry the computed values, the paper's published values (analysis/extoll/paper_values.py) and,
per row, whether they agree; with ``out_dir`` it also writes ``<name>.csv`` and ``<name>.png``
there. Both are registered with ``needs=NO_STORE`` so that the `tables` command can run them
without ``--from``.

- extoll_table1: section 5.2 Table 1, thresholds by Eq. 1 and the wrong formulas (a), (b);
  compared exactly (integers).
- extoll_memory: section 7.5 Table 3, Eq. 8 per receiver in MB (2**20 bytes); compared to the
  printed precision (see ``printed_match``).
- ``table2_eq5``: the Eq. 5 prediction column for a later `extoll_table2` (whose simulated column
  comes from sweeps); a helper, deliberately not registered as a target.
"""
from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Any, Sequence

from ...protocols.extoll import static as es
from . import paper_values as pv
from .common import write_outputs as _write
from ..registry import NO_STORE, Table, target


def _figure(ncols: int = 1):
    from .common import figure
    fig, axes = figure(ncols)
    return fig, axes[0]

TABLE1_COLUMNS = ["credit_quota", "credit_slots", "eq1", "formula_a", "formula_b",
                  "paper_eq1", "paper_formula_a", "paper_formula_b", "matches_paper",
                  "formula_a_deadlocks", "formula_b_overflows"]
MEMORY_COLUMNS = ["processes", "static_mb", "dynamic_mb", "paper_static_mb", "paper_dynamic_mb",
                  "static_matches", "dynamic_matches"]
TABLE2_EQ5_COLUMNS = ["credit_slots", "eq5_slots", "eq5_data_region", "eq4_exact_slots",
                      "paper_slots", "eq5_matches_paper"]


# ---- helpers --------------------------------------------------------------------------------
def printed_match(value: float, printed: str) -> str:
    """How ``value`` agrees with a number printed as ``printed``: the rule for Table 3.

    Returns "exact" if equal, otherwise "rounded" and/or "truncated" when ``printed`` equals the
    value rounded half-up or truncated to the printed number of decimals, else "" (no match).
    Both roundings are accepted because Table 3 uses both (1.1465 -> 1.14 and 73.375 -> 73.3 are
    truncated, 4.586 -> 4.6 is rounded); the result says which one held for each cell.
    """
    p = Decimal(printed)
    v = Decimal(value)   # exact binary value of the float
    if v == p:
        return "exact"
    quantum = Decimal(1).scaleb(p.as_tuple().exponent)
    how = [name for name, mode in (("rounded", ROUND_HALF_UP), ("truncated", ROUND_DOWN))
           if v.quantize(quantum, rounding=mode) == p]
    return "/".join(how)


# ---- Table 1 --------------------------------------------------------------------------------
def table1_rows() -> list[list[Any]]:
    """One row per row of the paper's Table 1, computed, with the paper's values and checks."""
    rows = []
    for q, s, p1, pa, pb in pv.TABLE1:
        t1, ta, tb = es.threshold(q, s), es.formula_a(q, s), es.formula_b(q, s)
        rows.append([q, s, t1, ta, tb, p1, pa, pb, (t1, ta, tb) == (p1, pa, pb),
                     not es.is_live(q, ta), not es.is_safe(q, s, tb)])
    return rows


@target("extoll_table1", "EXTOLL paper Table 1: credit-return thresholds by Eq. 1 and the wrong "
                         "formulas (a), (b), vs the published values (no store needed)",
        needs=NO_STORE)
def extoll_table1(ds=None, out_dir=None) -> Table:
    rows = table1_rows()
    n_ok = sum(r[8] for r in rows)
    bad_a = [f"{r[0]}/{r[1]}" for r in rows if r[9]]
    bad_b = [f"{r[0]}/{r[1]}" for r in rows if r[10]]
    assert all(es.is_safe(r[0], r[1], r[2]) and es.is_live(r[0], r[2]) for r in rows)
    notes = [
        f"{n_ok} of {len(rows)} rows equal {pv.TABLE1_WHERE} exactly",
        "eq1 = quota div (slots + 1) + 1 (Eq. 1); formula_a = quota div slots + 1; "
        "formula_b = quota div slots",
        "Eq. 1 is safe and live on every row; formula (a) deadlocks (threshold > quota) at "
        f"quota/slots {', '.join(bad_a) or 'none'}; formula (b) overflows the credit region "
        f"((slots + 1) * threshold <= quota) at {', '.join(bad_b) or 'none'}",
    ]
    table = Table(f"extoll_table1: credit-return threshold, {len(rows)} rows of Table 1",
                  list(TABLE1_COLUMNS), rows, notes)
    if out_dir is not None:
        fig, (ax,) = _figure()
        x = range(len(rows))
        for j, (label, marker) in enumerate((("Eq. 1", "o"), ("formula (a)", "s"),
                                             ("formula (b)", "^"))):
            line, = ax.plot(x, [r[2 + j] for r in rows], marker=marker, label=label)
            ax.plot(x, [r[5 + j] for r in rows], linestyle="none", marker=marker, markersize=12,
                    markerfacecolor="none", color=line.get_color())
        ax.plot([], [], linestyle="none", marker="o", markersize=12, markerfacecolor="none",
                color="gray", label="paper (hollow)")
        ax.set_xticks(list(x), [f"{r[0]}/{r[1]}" for r in rows], rotation=45)
        ax.set_xlabel("credit quota / credit slots")
        ax.set_ylabel("threshold (packets)")
        ax.set_yscale("log")
        ax.set_title("EXTOLL Table 1: credit-return threshold")
        ax.legend()
        _write(table, fig, out_dir, "extoll_table1")
    return table



# ---- Table 3 --------------------------------------------------------------------------------
def memory_rows() -> list[list[Any]]:
    """One row per column of the paper's Table 3: Eq. 8 in MB, the printed values, agreement."""
    rows = []
    for n, ps, pd in pv.table3_rows():
        s, d = es.static_memory_mb(n), es.dynamic_memory_mb(n)
        rows.append([n, s, d, float(ps), float(pd), bool(printed_match(s, ps)),
                     bool(printed_match(d, pd))])
    return rows


@target("extoll_memory", "EXTOLL paper Table 3: memory per receiver (MB) by Eq. 8, static and "
                         "dynamic, vs the published values (no store needed)",
        needs=NO_STORE)
def extoll_memory(ds=None, out_dir=None) -> Table:
    rows = memory_rows()
    how = []
    for (n, ps, pd), r in zip(pv.table3_rows(), rows):
        for kind, v, p in (("static", r[1], ps), ("dynamic", r[2], pd)):
            how.append(f"  {n} processes {kind}: Eq. 8 {v:.6g} MB, paper {p}: "
                       f"{printed_match(v, p) or 'DIFFERS'}")
    cells = sum(r[5] + r[6] for r in rows)
    notes = [
        f"{cells} of {2 * len(rows)} cells agree with {pv.TABLE3_WHERE} to the printed "
        "precision (the printed value is Eq. 8 rounded half-up or truncated to its decimals)",
        "Eq. 8: static 4n + 2 + 4096n bytes, dynamic 150n + 1024n bytes; MB = 2**20 bytes, "
        "1K processes = 1024",
        *how,
    ]
    table = Table(f"extoll_memory: memory per receiver in MB, {len(rows)} columns of Table 3",
                  list(MEMORY_COLUMNS), rows, notes)
    if out_dir is not None:
        fig, (ax,) = _figure()
        n = [r[0] for r in rows]
        for j, label in ((1, "static"), (2, "dynamic")):
            line, = ax.plot(n, [r[j] for r in rows], marker="o", label=f"{label}, Eq. 8")
            ax.plot(n, [r[j + 2] for r in rows], linestyle="none", marker="o", markersize=12,
                    markerfacecolor="none", color=line.get_color(), label=f"{label}, paper")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(n, list(pv.TABLE3_PROCESSES))
        ax.set_xlabel("processes")
        ax.set_ylabel("memory per receiver (MB = 2^20 B)")
        ax.set_title("EXTOLL Table 3: flow-control memory per receiver")
        ax.legend()
        _write(table, fig, out_dir, "extoll_memory")
    return table



# ---- Table 2 (prediction column only) ---------------------------------------------------------
def eq5_column(credit_slots: Sequence[int] = (1, 2, 3, 4, 5),
               packets_per_message: int = es.PACKETS_PER_2KB_MESSAGE) -> list[int]:
    """Eq. 5 receive-buffer prediction (slots per process) for each number of credit slots."""
    return [es.stabilizing_slots(s, packets_per_message) for s in credit_slots]


def table2_eq5(credit_slots: Sequence[int] = (1, 2, 3, 4, 5),
               packets_per_message: int = es.PACKETS_PER_2KB_MESSAGE) -> Table:
    """Eq. 5 prediction for Table 2, for a later `extoll_table2` that adds the simulated column.

    Columns: credit_slots, eq5_slots (Eq. 5 as printed), eq5_data_region (its quota part),
    eq4_exact_slots (the exact minimum of Eq. 4 plus the credit slots), paper_slots (Table 2 as
    published, measured by the authors from Figure 6(b); None for the 1-slot row, printed
    "Unknown; >> 64 slots") and eq5_matches_paper (None where the paper gives no number).
    """
    rows = []
    for s, e5 in zip(credit_slots, eq5_column(credit_slots, packets_per_message)):
        paper = pv.TABLE2.get(s)
        p = paper[0] if paper else None
        rows.append([s, e5, e5 - s, es.stabilizing_slots(s, packets_per_message, exact=True), p,
                     None if p is None else e5 == p])
    notes = [f"Eq. 5 with {packets_per_message} packets per message; paper: {pv.TABLE2_WHERE}"]
    return Table("Eq. 5 receive buffer at which the static overhead stabilizes",
                 list(TABLE2_EQ5_COLUMNS), rows, notes)

"""The families_frontier target at its --quick scale, end to end through the CLI on a real
LocalCluster into a real zarr store: every family on both machines, finite overheads, memory
counted as each paper counts it, the frontier columns consistent with the rows, and the
outputs equal to docs/data/quick's copies; and examples/frontier.ipynb executed on that store
in a real Jupyter kernel (nbclient), so the notebook cannot go stale."""
from __future__ import annotations

import math
import os
from collections import defaultdict
from pathlib import Path

import pytest

from test_extoll_targets import PNG_MAGIC, finite, run_target

from extoll_vec.analysis.frontier import FAMILIES, LIMITS, pareto

pytestmark = pytest.mark.slow   # a real cluster: the full suite only


NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "frontier.ipynb"


@pytest.fixture(scope="module")
def rows(out):
    rows = run_target(out, "families_frontier")
    for m in ("mesh", "dragonfly"):
        assert (out / f"families_frontier_{m}.png").read_bytes().startswith(PNG_MAGIC)
    return rows


def test_every_family_on_every_machine_and_workload(rows):
    cells = defaultdict(set)
    for r in rows:
        cells[(r["machine"], r["workload"], r["slow"])].add(r["family"])
    assert {c[0] for c in cells} == {"mesh 2x2x2", "dragonfly 72"}
    assert {c[2] for c in cells} == {"none", "1 at 4x"}
    assert {c[1] for c in cells} == {"IMB Bcast 2048 B", "pairwise 2048 B"}
    assert len(cells) == 2 * 2 * 2                     # machines x workloads x slow
    for fams in cells.values():
        assert fams == set(FAMILIES)
    finite(rows, "memory_kib", "overhead_pct")
    assert all(int(r["replicates"]) == 2 for r in rows)


def test_memory_as_each_paper_counts_it(rows):
    for r in rows:
        m, ranks, kib = r["machine"], int(r["ranks"]), float(r["memory_kib"])
        nodes = 8 if m.startswith("mesh") else 72
        n, what = r["setting"].split(" ", 1) if " " in r["setting"] else (r["setting"], "")
        if r["family"].startswith("EXTOLL"):
            assert kib == int(n) * ranks * 64 / 1024                 # slots x 64 B
        elif r["family"] == "LFC":
            assert ranks == nodes                                     # one rank per NI
            assert kib == int(n) * (nodes - 1) * 256 / 1024           # NI buffers
        elif r["family"] == "Portals chunked":
            chunk, c = int(r["setting"].split()[1]), int(r["setting"].split("c=")[1])
            assert kib == (1 + c) * chunk / 1024
        else:                         # IB: 2 KB buffers posted, at least the pre-post each
            per = int(n.split("/")[0])
            assert kib >= per * (ranks - 1) * 2 - 1e-9


def test_frontier_columns_follow_from_the_rows(rows):
    cells = defaultdict(list)
    for r in rows:
        cells[(r["machine"], r["workload"], r["slow"], r["family"])].append(r)
    for group in cells.values():
        pts = [(float(r["memory_kib"]), float(r["overhead_pct"])) for r in group]
        assert [r["pareto"] == "True" for r in group] == pareto(pts)
        for col, limit in zip(("min_for_3pct", "min_for_10pct"), LIMITS):
            ok = [p for p in pts if p[1] < limit]
            marked = [p for r, p in zip(group, pts) if r[col] == "True"]
            assert len(marked) == (1 if ok else 0)
            if ok:
                assert marked[0][0] == min(m for m, _ in ok) and marked[0][1] < limit
    # a family's least memory for 3 % is at least its least memory for 10 %
    for group in cells.values():
        m3 = [float(r["memory_kib"]) for r in group if r["min_for_3pct"] == "True"]
        m10 = [float(r["memory_kib"]) for r in group if r["min_for_10pct"] == "True"]
        if m3:
            assert m10 and m10[0] <= m3[0]
    assert not any(math.isnan(float(r["overhead_pct"])) for r in rows)


def test_the_notebook_draws_the_frontier_from_the_store(rows, out, monkeypatch):
    """Every cell runs; the table it prints names a family per machine, workload and slow
    setting, as the target's notes do; the last cell draws a figure."""
    import nbformat
    from nbclient import NotebookClient
    monkeypatch.setenv("FRONTIER_STORE", str(out / "families_frontier.quick.zarr"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(out)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    text = "".join(o.get("text", "") for o in code[2].outputs)
    assert "points; sweep families_frontier_quick" in "".join(
        o.get("text", "") for o in code[1].outputs)
    best = {(r["machine"], r["workload"], r["slow"]) for r in rows if r["min_for_3pct"] == "True"}
    assert len(text.strip().splitlines()) == len(best)
    assert any("image/png" in o.get("data", {}) for o in code[3].outputs)
    assert os.environ["FRONTIER_STORE"].endswith(".zarr")

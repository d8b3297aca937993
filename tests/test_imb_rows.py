"""`extoll-vec tables extoll_imb --from-rows`: Figure 27's table combined from the per-benchmark
rows of runs over benchmark groups equals the table of the whole sweep (docs/data/quick holds
both, written by one --quick run), and rows it cannot use are refused with one line, exit 2."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from extoll_vec.cli import main

QUICK = Path(__file__).resolve().parents[1] / "docs" / "data" / "quick"


def split(tmp_path: Path, groups: list[set[str]]) -> list[str]:
    """docs/data/quick/extoll_imb_benchmarks.csv split by benchmark into one file per group
    (the rest into a last file)."""
    with open(QUICK / "extoll_imb_benchmarks.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    header = list(rows[0])
    parts = [[r for r in rows if r["benchmark"] in g] for g in groups]
    parts.append([r for r in rows if not any(r["benchmark"] in g for g in groups)])
    paths = []
    for k, part in enumerate(parts):
        path = tmp_path / f"part{k}.csv"
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, header, lineterminator="\n")
            w.writeheader()
            w.writerows(part)
        paths.append(str(path))
    return paths


def rows_args(paths) -> list[str]:
    return [a for p in paths for a in ("--from-rows", p)]


def test_groups_combine_to_the_whole_sweeps_table(tmp_path, capsys):
    paths = split(tmp_path, [{"Alltoall", "Alltoallv"}, {"PingPong", "Reduce", "Gatherv"}])
    out = tmp_path / "out"
    assert main(["tables", "extoll_imb", *rows_args(paths), "--out", str(out)]) == 0
    assert (out / "extoll_imb.csv").read_text() == (QUICK / "extoll_imb.csv").read_text()
    assert (out / "extoll_imb_benchmarks.csv").read_text() == \
        (QUICK / "extoll_imb_benchmarks.csv").read_text()
    notes = (out / "extoll_imb.notes.txt").read_text().splitlines()
    assert notes[:-1] == (QUICK / "extoll_imb.notes.txt").read_text().splitlines()
    assert notes[-1].startswith("computed from the rows of ") and "part2.csv" in notes[-1]
    assert (out / "extoll_imb.png").read_bytes().startswith(b"\x89PNG")
    # negative control: a group left out changes the average (the check can fail)
    assert main(["tables", "extoll_imb", *rows_args(paths[1:]), "-o", str(tmp_path / "t.csv")]) == 0
    assert (tmp_path / "t.csv").read_text() != (QUICK / "extoll_imb.csv").read_text()


@pytest.mark.parametrize("case, needle", [
    ("twice", "Alltoall dynamic at 8 slots per process is in both"),
    ("foreign", "is not an extoll_imb_benchmarks.csv: no benchmark, overhead_pct"),
    ("bad value", "line 2: not a benchmark row"),
    ("missing", "cannot read"),
    ("other target", "extoll_patterns is computed from a result store only; targets that read "
                     "rows: extoll_imb"),
    ("with store", "--set: not with --from or --from-rows"),
])
def test_rows_it_cannot_use_are_refused(tmp_path, capsys, case, needle):
    paths = split(tmp_path, [{"Alltoall"}])
    name = "extoll_imb"
    extra = []
    if case == "twice":
        paths = [paths[0], paths[0]]
    elif case == "foreign":
        Path(paths[0]).write_text((QUICK / "extoll_imb.csv").read_text())
    elif case == "bad value":
        text = Path(paths[0]).read_text().splitlines()
        cells = text[1].split(",")
        cells[3] = "fast"
        Path(paths[0]).write_text("\n".join([text[0], ",".join(cells), *text[2:]]) + "\n")
    elif case == "missing":
        paths = [str(tmp_path / "none.csv")]
    elif case == "other target":
        name = "extoll_patterns"
    elif case == "with store":
        extra = ["--set", "repeat=2"]
    out = tmp_path / "out"
    assert main(["tables", name, *rows_args(paths), "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err
    assert not out.exists()      # refused before anything is written

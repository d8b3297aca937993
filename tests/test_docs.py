"""The documentation is data: README and docs/ stay what their sources give.

- Every generated block in docs/ (and README) is what `extoll-vec docs` renders from the CSVs
  in docs/data/ and benchmarks/results.jsonl (`--check`), and a stale block is caught.
- The CSVs of the targets that need no simulation equal what the targets compute now (the
  simulated ones are compared where the suite runs them: tests/test_extoll_targets.py).
- The README keeps the shape the project promises: its title, one sentence, then the two
  commands, the second the one .ci/run runs; about 200 lines at most, every doc it links exists.
- docs/papers.md names every paper and links each to its reproduction pages, and every
  reproduction page is linked from it.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from extoll_vec.analysis.registry import compute
from extoll_vec.analysis.report import number, regenerate
from extoll_vec.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "data"


def test_generated_blocks_are_current(capsys):
    assert main(["docs", "--root", str(ROOT), "--check"]) == 0, capsys.readouterr().out


def test_a_stale_block_is_caught_and_regenerated(tmp_path, capsys):
    """Negative control: change a number in a copy's CSV; --check fails naming the file, a
    plain run rewrites the block, and then --check passes."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    if (ROOT / "lab").is_dir():      # the lab record: its pages and the data docs/ reads
        shutil.copytree(ROOT / "lab", tmp_path / "lab")
    (tmp_path / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "results.jsonl", tmp_path / "benchmarks")
    csv = tmp_path / "docs" / "data" / "extoll_table1.csv"
    csv.write_text(csv.read_text().replace("100,2,34,", "100,2,35,", 1))
    assert main(["docs", "--root", str(tmp_path), "--check"]) == 1
    assert "stale: docs/reproduction/extoll.md" in capsys.readouterr().out
    assert main(["docs", "--root", str(tmp_path)]) == 0
    assert "| 100 | 2 | 35 |" in (tmp_path / "docs" / "reproduction" / "extoll.md").read_text()
    assert regenerate(tmp_path, check=True) == []


def test_a_bad_block_is_one_line_naming_the_place(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text(
        "a\n<!-- generated: table nowhere.csv -->\n<!-- end generated -->\n"
        "<!-- generated: table y.csv colums=a -->\n<!-- end generated -->\n")
    assert main(["docs", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("extoll-vec: error: docs/x.md:2: docs/nowhere.csv: no such CSV")
    assert err.count("\n") == 1 and "Traceback" not in err
    (tmp_path / "docs" / "y.csv").write_text("a,b\n1,2\n")
    (tmp_path / "docs" / "x.md").write_text(
        "a\n<!-- generated: table y.csv columns=a -->\n<!-- end generated -->\n"
        "<!-- generated: table y.csv colums=a -->\n<!-- end generated -->\n")
    assert main(["docs", "--root", str(tmp_path)]) == 2
    assert "docs/x.md:4: unknown option 'colums'" in capsys.readouterr().err
    assert main(["docs", "--root", str(tmp_path / "none")]) == 2


@pytest.mark.parametrize("name", ["extoll_table1", "extoll_memory", "extoll_buffer_bounds"])
def test_unsimulated_target_csvs_are_what_the_targets_give(name, tmp_path):
    compute(name, None, out_dir=tmp_path)
    for suffix in (".csv", ".notes.txt"):
        assert (tmp_path / f"{name}{suffix}").read_text() == \
            (DATA / f"{name}{suffix}").read_text(), \
            f"regenerate: extoll-vec tables {name} --out docs/data"


@pytest.mark.parametrize("text, shown", [
    ("278515.08", "278,515"), ("50.0391", "50.04"), ("-0.00182554", "-0.001826"),
    ("37", "37"), ("12345", "12,345"), ("True", "True"), ("nan", ""), ("0.0", "0"),
    ("1025.0000019073486", "1,025"), ("4.003908157348633", "4.004"), ("0.56", "0.56"),
    ("9.4", "9.4"), ("18900000.0", "18,900,000")])
def test_numbers_are_shown_without_exponents(text, shown):
    assert number(text) == shown


def test_readme_starts_with_the_two_commands_and_stays_short():
    """The title line, one sentence, then the two commands, the second the one .ci/run runs."""
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[0] == "# extoll-vec" and lines[1] == ""
    fence = lines.index("```sh")
    sentence = " ".join(lines[2:fence]).strip()
    assert lines[fence - 1] == "" and sentence.endswith(".") and "." not in sentence[:-1], sentence
    assert lines[fence + 3] == "```"
    install, tests = lines[fence + 1], lines[fence + 2]
    assert "pip install -e" in install and "extoll-vec sweep sweeps/smoke.yaml" in install
    # the test extras (pytest, an S3 server, a Jupyter kernel: a minute of pip) with the suite
    assert tests == '.venv/bin/pip install -e ".[test]" && .venv/bin/python -m pytest -q'
    assert "-m pytest -q" in (ROOT / ".ci" / "run").read_text()
    assert len(lines) <= 200
    for link in re.findall(r"\]\(((?:docs/|lab/)[^)#]*)", "\n".join(lines)):
        assert (ROOT / link).exists(), link


def test_every_paper_has_a_reproduction_page():
    """docs/papers.md has one entry per paper, each linking to existing reproduction pages, and
    every reproduction page is linked from it."""
    pages = sorted(p.name for p in (ROOT / "docs" / "reproduction").glob("*.md"))
    assert pages == ["extoll.md", "extoll_conference.md", "extoll_dynamic.md", "families.md",
                     "ib_families.md", "infiniband.md", "lfc.md", "nas_skeletons.md", "portals.md"]
    text = (ROOT / "docs" / "papers.md").read_text()
    entries = re.split(r"^## ", text, flags=re.M)[1:]
    assert [e.splitlines()[0] for e in entries] == [
        "EXTOLL journal paper", "EXTOLL conference paper", "Schneider et al.", "Liu and Panda",
        "Bhoedjang, Rühl and Bal"]
    linked = set()
    for entry in entries:
        links = re.findall(r"\]\(reproduction/([^)#]+)\)", entry)
        assert links, entry.splitlines()[0]
        for link in links:
            assert (ROOT / "docs" / "reproduction" / link).is_file(), link
        linked.update(links)
    assert linked == set(pages)

"""`extoll-vec docs [--check]`: regenerate the tables in docs/ and lab/ from the data they
report.

A Markdown file under ``docs/`` or ``lab/`` (or README.md) marks a generated block with two
comments::

    <!-- generated: table data/extoll_table1.csv columns=credit_slots,eq1 digits=3 -->
    ...replaced on every run...
    <!-- end generated -->

Kinds of block (paths are relative to the Markdown file):

- ``table CSV [columns=a,b,...] [where=col:v1|v2[;col2:v]] [digits=N] [notes]``: the CSV that a
  target wrote (``extoll-vec tables NAME --out DIR``) as a Markdown table; ``columns`` picks
  and orders columns, ``where`` keeps rows whose column has one of the values (conditions
  joined by ``;`` must all hold: ``where=view:in;alltoall:39|119``), ``digits`` is
  the significant digits of non-integral floats (4); ``notes`` appends the lines of
  ``NAME.notes.txt`` beside the CSV (the target's reading of its table), if present.
- ``benchmarks NAME [last=N] [merge]``: the last N records (3) of benchmark ``NAME`` in
  ``benchmarks/results.jsonl`` (written by ``python benchmarks/NAME.py --record``), each as a
  heading line (date, commit, machine, arguments) and its table; with ``merge``, one table
  of all their rows with the arguments as the first column.
- ``variants PREFIX``: the recorded variants of ``lab/variants.yaml`` (analysis/variants.py)
  whose target starts with PREFIX: each one's `extoll-vec sweep` and `extoll-vec tables`
  commands, its cost and the notes of the spec file it replaced.

So a number in docs comes from a file a command wrote, and ``--check`` (run by the test suite)
fails when a block is not what its data gives: the docs cannot go stale against the data.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import re
import shlex
from pathlib import Path

from ..errors import ConfigError

BLOCK = re.compile(r"(<!-- generated: (?P<spec>.*?) -->\n)(?P<body>.*?)(<!-- end generated -->)",
                   re.S)
RESULTS = Path("benchmarks") / "results.jsonl"


def number(text: str, digits: int = 4) -> str:
    """A CSV cell for reading: integers as they are, floats to `digits` significant digits
    without exponents (so 278515.0 stays 278,515 and 0.012345 becomes 0.01235), or to fewer
    decimals if the cell has fewer (0.56 stays 0.56)."""
    try:
        v = float(text)
    except ValueError:
        return text
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return text
    if re.fullmatch(r"[+-]?\d+", text.strip()) or (v.is_integer() and abs(v) >= 10 ** digits):
        return f"{int(v):,}" if abs(v) >= 10_000 else str(int(v))
    if v == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(v)))))
    given = re.fullmatch(r"[+-]?\d*\.(\d+)", text.strip())   # a value written already rounded
    if given:                                                   # keeps its own precision
        decimals = min(decimals, len(given.group(1)))
    return f"{v:,.{decimals}f}"


def markdown(columns: list[str], rows: list[list[str]]) -> str:
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(map(esc, columns)) + " |",
             "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _options(words: list[str], allowed: set[str], where: str) -> dict[str, str]:
    opts = {}
    for w in words:
        k, eq, v = w.partition("=")
        if k not in allowed:
            raise ConfigError(where, f"unknown option {k!r}; allowed: {', '.join(sorted(allowed))}")
        opts[k] = v if eq else ""
    return opts


def table_block(csv_path: Path, opts: dict[str, str], where: str, root: Path) -> str:
    def shown(path: Path) -> str:          # as the block's place is named: from the root
        try:
            return str(path.resolve().relative_to(root.resolve()))
        except ValueError:
            return str(path)

    if not csv_path.is_file():
        raise ConfigError(where, f"{shown(csv_path)}: no such CSV (write it with `extoll-vec "
                                 f"tables NAME --out {shown(csv_path.parent)}`)")
    with open(csv_path, newline="", encoding="utf-8") as fh:
        data = list(csv.reader(fh))
    header, rows = data[0], data[1:]
    cols = opts["columns"].split(",") if opts.get("columns") else header
    missing = [c for c in cols if c not in header]
    if missing:
        raise ConfigError(where, f"{csv_path.name} has no column {missing[0]!r}; it has "
                                 f"{', '.join(header)}")
    for cond in filter(None, opts.get("where", "").split(";")):
        col, _, vals = cond.partition(":")
        if col not in header:
            raise ConfigError(where, f"{csv_path.name} has no column {col!r}")
        keep = set(vals.split("|"))
        rows = [r for r in rows if r[header.index(col)] in keep]
    digits = int(opts.get("digits") or 4)
    idx = [header.index(c) for c in cols]
    out = markdown(cols, [[number(r[i], digits) for i in idx] for r in rows])
    notes = csv_path.with_suffix(".notes.txt")
    if "notes" in opts and notes.is_file():
        out += "\n" + "".join(f"- {line}\n" for line in notes.read_text().splitlines()
                              if line.strip())
    return out


def read_results(root: Path) -> list[dict]:
    path = root / RESULTS
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def benchmarks_block(root: Path, name: str, opts: dict[str, str], where: str) -> str:
    records = [r for r in read_results(root) if r["benchmark"] == name]
    if not records:
        raise ConfigError(where, f"no record of benchmark {name!r} in {RESULTS} (run "
                                 f"`python benchmarks/{name}.py --record`)")
    records = records[-int(opts.get("last") or 3):]
    if "merge" in opts:   # several runs of one benchmark with other arguments, as one table
        cols = records[-1]["columns"]
        if any(r["columns"] != cols for r in records):
            raise ConfigError(where, f"merge: the last records of {name!r} have other columns")
        heads = sorted({(r["date"][:10], r["commit"], r["machine"]["cpu"],
                         r["machine"]["cores"]) for r in records})
        head = "; ".join(f"{d}, commit `{c}`, {cpu} ({n} cores)" for d, c, cpu, n in heads)
        rows = [[" ".join(r.get("args", [])) or "(defaults)"] + [number(str(v)) for v in row]
                for r in records for row in r["rows"]]
        return f"*{head}*\n\n" + markdown(["arguments"] + cols, rows)
    parts = []
    for r in records:
        args = " ".join(r.get("args", [])) or "(defaults)"
        m = r["machine"]
        head = (f"{r['date'][:10]}, commit `{r['commit']}`, {m['cpu']} ({m['cores']} cores), "
                f"arguments `{args}`")
        if r.get("source"):
            head += f"; {r['source']}"
        parts.append(f"*{head}*\n\n" + markdown(r["columns"],
                                                [[number(str(v)) for v in row]
                                                 for row in r["rows"]]))
    return "\n".join(parts)


def _wrapped(command: str) -> str:
    """A long shell command with one option and its value per line."""
    words = shlex.split(command)
    lines, cur = [], []
    for w in words:
        if w.startswith("-") and cur and len(cur) > 1:
            lines.append(shlex.join(cur))
            cur = []
        cur.append(w)
    lines.append(shlex.join(cur))
    return " \\\n  ".join(lines)


def variants_block(root: Path, prefix: str, where: str) -> str:
    from .variants import VARIANTS_FILE, load_variants, sweep_command, tables_command
    variants = load_variants(root)
    names = [n for n, v in variants.items() if v["target"].startswith(prefix)]
    if not names:
        raise ConfigError(where, f"no variant of a target starting with {prefix!r} in "
                                 f"{VARIANTS_FILE}")
    parts = []
    for n in names:
        v = variants[n]
        notes = "\n".join("> " + line if line else ">" for line in v["notes"].splitlines())
        parts.append(f"**`{n}`** (target `{v['target']}`, about {v['minutes']} minutes on 2 "
                     f"workers)\n\n```sh\n{_wrapped(sweep_command(variants, n))}\n"
                     f"{tables_command(variants, n)}\n```\n\n"
                     f"Notes of the spec file it replaces:\n\n"
                     f"{notes}\n")
    return "\n".join(parts)


def render(md_path: Path, root: Path) -> str:
    """The file's text with every generated block regenerated."""
    text = md_path.read_text(encoding="utf-8")

    def one(m: re.Match) -> str:
        line = text.count("\n", 0, m.start()) + 1
        where = f"{md_path.relative_to(root)}:{line}"
        words = shlex.split(m.group("spec"))
        if not words:
            raise ConfigError(where, "empty generated block; allowed: table, benchmarks, variants")
        kind, args = words[0], words[1:]
        if kind == "table" and args:
            body = table_block(md_path.parent / args[0],
                               _options(args[1:], {"columns", "where", "digits", "notes"}, where),
                               where, root)
        elif kind == "benchmarks" and args:
            body = benchmarks_block(root, args[0], _options(args[1:], {"last", "merge"}, where),
                                    where)
        elif kind == "variants" and len(args) == 1:
            body = variants_block(root, args[0], where)
        else:
            raise ConfigError(where, f"got {m.group('spec')!r}; allowed: `table CSV [options]`, "
                                     "`benchmarks NAME [last=N]` or `variants PREFIX`")
        return m.group(1) + body + m.group(4)

    return BLOCK.sub(one, text)


def documents(root: Path) -> list[Path]:
    docs = root / "docs"
    if not docs.is_dir():
        raise ConfigError("--root", f"{root}: no docs/ folder here; run it in the repository "
                                    "root or give --root")
    lab = root / "lab"                  # the lab record: generated blocks there too
    return (sorted(docs.rglob("*.md")) + (sorted(lab.rglob("*.md")) if lab.is_dir() else [])
            + [p for p in [root / "README.md"] if p.is_file()])


def regenerate(root: Path, check: bool = False) -> list[Path]:
    """Rewrite every generated block under root; with check, write nothing. Returns the
    files that changed (or would change)."""
    changed = []
    for md in documents(root):
        new = render(md, root)
        if new != md.read_text(encoding="utf-8"):
            changed.append(md)
            if not check:
                md.write_text(new, encoding="utf-8")
    return changed


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", default=".", metavar="DIR",
                   help="the repository root holding docs/ (default: the current folder)")
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 if a generated block is stale")


def _run(args: argparse.Namespace) -> int:
    root = Path(args.root)
    changed = regenerate(root, check=args.check)
    for md in changed:
        print(f"{'stale' if args.check else 'regenerated'}: {md.relative_to(root)}")
    if not changed:
        print("docs: every generated block is current")
    return 1 if args.check and changed else 0


def register_cli(register) -> None:
    register("docs", "regenerate the tables in docs/ and lab/ from target CSVs and benchmark "
                     "records",
             _configure, _run)

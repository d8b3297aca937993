"""Bad inputs by family, and the harness that feeds each one to the command line.

Every case is an `extoll-vec` command line run in a folder of its own that holds copies of a
few valid inputs (a config, a spec, a run store, a sweep store, stores of reference-only and
static-only points). The verdict of a case: the command must exit with 2, print at most three
lines on stderr and no traceback, finish within the time limit, and leave every file that was
in the folder before byte-identical. The families:

- ``config-field``: every field of every config section (read from the declared Bounds, so a
  new field is covered) set by ``run --set`` to values of the wrong type, non-finite, out of
  range or absurdly large;
- ``config-file``: the same through config files, unknown and near-miss keys, duplicates,
  wrong structure;
- ``file``: empty, null, binary, undecodable, compressed, deeply nested, directory, looping,
  missing, FIFO and over-long paths given to ``run``, ``sweep`` and ``tables``;
- ``spec``: sweep specs from the grammar with a bad part (``sweep --dry-run``), and ``--set``;
- ``store``: damaged stores on resume, dry-run and ``tables``;
- ``table``: a target on a store without its points, bad output paths, unknown names.

``tests/test_bad_input_fuzz.py`` runs a sample in the suite; ``benchmarks/fuzz_bad_input.py``
runs them all and prints the counts per family.
"""
from __future__ import annotations

import contextlib
import dataclasses
import gzip
import hashlib
import io
import math
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import yaml

TIME_LIMIT_S = 30

TINY_SPEC = {"name": "fuzz", "base": {"example": "tiny"},
             "axes": {"protocol.name": ["none", "static"], "slots_per_process": [40]},
             "derived": {"protocol.mailbox_slots":
                         "0 if protocol.name == 'none' else slots_per_process * workload.ranks"}}


@dataclass(frozen=True)
class Case:
    family: str
    label: str
    argv: tuple[str, ...]                       # "{d}" stands for the case's folder
    files: dict[str, bytes] = field(default_factory=dict, compare=False, hash=False)
    prepare: Callable[[Path], None] | None = field(default=None, compare=False, hash=False)


@dataclass
class Outcome:
    case: Case
    rc: int | None
    stderr: str
    seconds: float
    changed: list[str]

    @property
    def lines(self) -> int:
        return len(self.stderr.strip().splitlines())

    @property
    def problems(self) -> list[str]:
        out = []
        if self.rc is None:
            out.append(f"hang (> {TIME_LIMIT_S} s)")
        elif self.rc == 0:
            out.append("accepted")
        elif self.rc != 2:
            out.append(f"exit {self.rc}")
        if "Traceback" in self.stderr:
            out.append("traceback")
        if self.lines > 3:
            out.append(f"{self.lines} lines")
        if self.changed:
            out.append(f"changed {self.changed[:3]}")
        return out


# ---- the valid inputs each case folder starts from -------------------------------------------
def build_fixtures(root: Path) -> Path:
    """A folder with valid inputs, made once (real simulations of the 16-rank example):
    run.zarr (a `run -o` store), sweep.zarr (a 2-point sweep store: reference and static),
    ref.zarr (reference points only), static.zarr (static points only), spec.yaml, cfg.yaml."""
    from extoll_vec.dataset import write_zarr
    from extoll_vec.engine import run_batch, simulate
    from extoll_vec.examples import get_example
    from extoll_vec.sweep import build_sweep
    from extoll_vec.sweep.store import StoreWriter, prepare_store
    root.mkdir(parents=True, exist_ok=True)
    tiny = get_example("tiny")
    static = tiny.replace(**{"protocol.name": "static", "protocol.mailbox_slots": 640})
    write_zarr(simulate([tiny]), root / "run.zarr")
    write_zarr(simulate([tiny, tiny.replace(seed=1)]), root / "ref.zarr")
    write_zarr(simulate([static]), root / "static.zarr")
    (root / "spec.yaml").write_text(yaml.safe_dump(TINY_SPEC, sort_keys=False))
    (root / "cfg.yaml").write_text("topology: {kind: mesh, dims: [2, 2]}\n"
                                   "mpi: {ranks_per_node: 4}\n"
                                   "workload: {kind: alltoall, ranks: 16}\n")
    sweep = build_sweep(TINY_SPEC, default_name="fuzz")
    prepare_store(root / "sweep.zarr", sweep)
    res = run_batch(list(sweep.configs))
    StoreWriter(root / "sweep.zarr").write(list(range(sweep.n_points)), res)
    return root


def _digest(folder: Path) -> dict[str, str]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def run_case(case: Case, fixtures: Path, work: Path) -> Outcome:
    """Run one case in a fresh folder under `work` holding copies of the fixtures its command
    line names."""
    from extoll_vec.cli import main
    d = work / f"case{abs(hash(case)) % 10**12}"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    for entry in fixtures.iterdir():      # the valid inputs the command line names
        if any(entry.name in a for a in case.argv):
            if entry.is_dir():
                shutil.copytree(entry, d / entry.name, symlinks=True)
            else:
                shutil.copy2(entry, d / entry.name)
    for name, data in case.files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
    if case.prepare is not None:
        case.prepare(d)
    before = _digest(d)
    argv = [a.replace("{d}", str(d)) for a in case.argv]
    err, out = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT_S)
    t0 = time.perf_counter()
    cwd = os.getcwd()
    try:
        os.chdir(d)
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                rc = main(argv)
            except _Timeout:
                rc = None
            except BaseException as exc:     # noqa: BLE001 - an escaped exception is a defect
                import traceback
                err.write("Traceback (escaped main)\n" + "".join(
                    traceback.format_exception(exc)))
                rc = 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        os.chdir(cwd)
    seconds = time.perf_counter() - t0
    after = _digest(d)
    changed = [k for k, v in before.items() if after.get(k) != v]
    shutil.rmtree(d, ignore_errors=True)
    return Outcome(case, rc, err.getvalue(), seconds, changed)


# ---- values that no field accepts, and values outside a field's bounds ------------------------
def yaml_text(v) -> str:
    """A value as it is written after --set KEY= (YAML flow style)."""
    if isinstance(v, float):
        if math.isnan(v):
            return ".nan"
        if math.isinf(v):
            return ".inf" if v > 0 else "-.inf"
    return yaml.safe_dump(v, default_flow_style=True, width=10**6).strip().removesuffix("...").strip()


def bad_values(bounds) -> list:
    """Values the field's declared bounds refuse (wrong type, non-finite, out of range)."""
    wrong_type = ["abc", {"a": 1}, [1, [2]], None]
    if bounds.kind == "int":
        vals = wrong_type + [1.5, float("nan"), float("inf"), -float("inf"), True, 10**30,
                             -10**30, 1e30, bounds.lo - 1, bounds.hi + 1, "12"]
    elif bounds.kind == "float":
        vals = wrong_type + [float("nan"), float("inf"), -float("inf"), True, 10**400, 1e300,
                             -1e300, "1.5", bounds.hi * 10 + 1]
        vals.append(bounds.lo if bounds.lo_open else bounds.lo - abs(bounds.lo) - 1)
    elif bounds.kind == "bool":
        vals = wrong_type + [2, 0.5, "yess", "True ", float("nan")]
    elif bounds.kind == "str":
        c = bounds.choices[0]
        vals = wrong_type + [7, True, "", c.upper() if c.upper() != c else c + "x", c[:-1],
                             c + " ", "x" * 10_000]
    else:   # ints
        lo, hi = bounds.lo, bounds.hi
        vals = ["abc", {"a": 1}, 7, [lo - 1], [hi + 1], [1.5], [float("nan")], [10**30],
                [True], [[1]], list(range(bounds.length[1] + 1))]
        if bounds.length[0]:
            vals.append([])
    out, seen = [], set()
    for v in vals:
        key = yaml_text(v)
        if key not in seen and not bounds.admits(v):
            seen.add(key)
            out.append(v)
    return out


def config_fields() -> Iterator[tuple[str, object]]:
    """(dotted name, Bounds) of every config field, and `seed`."""
    from extoll_vec.config import SECTIONS, RunConfig, bounds
    for sec, cls in SECTIONS.items():
        declared = bounds(cls)
        for f in dataclasses.fields(cls):
            yield f"{sec}.{f.name}", declared[f.name]   # a field without Bounds: KeyError
    yield "seed", bounds(RunConfig)["seed"]


def typos(word: str) -> list[str]:
    out = {word[:-1], word + "s", word.upper(), word[1:] + word[0], word.replace("_", "-"),
           word.replace("_", ""), word[:1] + word[2:] if len(word) > 2 else word + "x"}
    out.discard(word)
    return sorted(out)


# ---- the families -------------------------------------------------------------------------------
def config_field_cases() -> list[Case]:
    out = []
    for name, b in config_fields():
        for v in bad_values(b):
            t = yaml_text(v)
            out.append(Case("config-field", f"--set {name}={t[:40]}",
                            ("run", "--example", "tiny", "--set", f"{name}={t}")))
    return out


def config_file_cases() -> list[Case]:
    from extoll_vec.config import SECTIONS
    out = []
    for name, b in config_fields():       # one value of each kind per field, in a file
        sec, _, fld = name.rpartition(".")
        for v in bad_values(b)[:: max(1, len(bad_values(b)) // 3)][:3]:
            text = (f"{sec}:\n  {fld}: {yaml_text(v)}\n" if sec else
                    f"workload: {{ranks: 16}}\n{fld}: {yaml_text(v)}\n")
            out.append(Case("config-file", f"file {name}: {yaml_text(v)[:30]}",
                            ("run", "{d}/bad.yaml"), {"bad.yaml": text.encode()}))
    for sec, cls in SECTIONS.items():
        for t in typos(sec):
            out.append(Case("config-file", f"section typo {t}", ("run", "{d}/bad.yaml"),
                            {"bad.yaml": f"{t}: {{}}\n".encode()}))
        for f in dataclasses.fields(cls):
            for t in typos(f.name)[:3]:
                out.append(Case("config-file", f"key typo {sec}.{t}", ("run", "{d}/bad.yaml"),
                                {"bad.yaml": f"{sec}: {{{t}: 1}}\n".encode()}))
    structure = {
        "list at top": "- topology: {kind: mesh}\n",
        "scalar at top": "42\n",
        "section a list": "topology: [mesh]\n",
        "section a scalar": "protocol: static\n",
        "duplicate section": "protocol: {name: static}\nprotocol: {name: none}\n",
        "duplicate key": "protocol: {name: static, name: none}\n",
        "seed a string": "seed: abc\n",
        "seed non-finite": "seed: .nan\n",
        "two documents": "seed: 1\n---\nseed: 2\n",
        "tab indent": "protocol:\n\tname: static\n",
        "unclosed flow": "protocol: {name: static\n",
        "bad anchor": "protocol: *nowhere\n",
        "python tag": "seed: !!python/object/apply:os.system ['true']\n",
        "binary tag": "seed: !!binary aGVsbG8=\n",
        "set tag": "protocol: !!set {a, b}\n",
        "timestamp seed": "seed: 2001-12-14\n",
        "non-string key": "protocol: {1: static}\n",
        "null section key": "~: {}\n",
        "huge mapping key": "x" * 200_000 + ": 1\n",
    }
    for label, text in structure.items():
        out.append(Case("config-file", label, ("run", "{d}/bad.yaml"), {"bad.yaml": text.encode()}))
    return out


def _symlink_loop(d: Path) -> None:
    os.symlink(d / "loop2", d / "loop1")
    os.symlink(d / "loop1", d / "loop2")


def _fifo(d: Path) -> None:
    os.mkfifo(d / "fifo.yaml")


def _dangling(d: Path) -> None:
    os.symlink(d / "nowhere", d / "dangling.yaml")


def file_cases() -> list[Case]:
    docs = {
        "empty": b"", "whitespace": b"  \n\t\n", "null": b"null\n", "tilde": b"~\n",
        "only a comment": b"# nothing\n", "document marker": b"---\n",
        "binary": bytes(range(256)) * 4, "latin-1": "seed: 1 # caf\xe9\n".encode("latin-1"),
        "utf-16": "seed: 1\n".encode("utf-16"), "gzip": gzip.compress(b"seed: 1\n"),
        "nested lists": b"[" * 20_000, "nested maps": b"{a: " * 20_000,
        "NUL bytes": b"seed: 1\x00\x00\n",
    }
    out = []
    commands = {"run": ("run", "{d}/f.yaml"), "sweep": ("sweep", "{d}/f.yaml", "--dry-run")}
    for cmd, argv in commands.items():
        for label, data in docs.items():
            out.append(Case("file", f"{cmd}: {label}", argv, {"f.yaml": data}))
        for label, path, prep in [("directory", "{d}/run.zarr", None),
                                  ("symlink loop", "{d}/loop1", _symlink_loop),
                                  ("missing", "{d}/nowhere.yaml", None),
                                  ("dangling symlink", "{d}/dangling.yaml", _dangling),
                                  ("FIFO", "{d}/fifo.yaml", _fifo),
                                  ("long name", "{d}/" + "x" * 5000 + ".yaml", None),
                                  ("long path", "{d}/" + "/".join(["y" * 200] * 30), None),
                                  ("NUL in name", "{d}/a\x00b.yaml", None)]:
            argv2 = tuple(path if a == "{d}/f.yaml" else a for a in argv)
            out.append(Case("file", f"{cmd}: {label}", argv2, prepare=prep))
    for label, target in [("long name", "{d}/" + "x" * 300 + ".zarr"),
                          ("under a file", "{d}/cfg.yaml/r.zarr"),
                          ("onto a file", "{d}/cfg.yaml")]:
        out.append(Case("file", f"run -o {label}", ("run", "--example", "tiny", "-o", target)))
    for label, path, prep in [("a file", "{d}/cfg.yaml", None), ("missing", "{d}/none.zarr", None),
                              ("empty dir", "{d}/empty", lambda d: (d / "empty").mkdir()),
                              ("symlink loop", "{d}/loop1", _symlink_loop),
                              ("long name", "{d}/" + "x" * 5000 + ".zarr", None),
                              ("FIFO", "{d}/fifo.yaml", _fifo)]:
        out.append(Case("file", f"tables --from: {label}", ("tables", "summary", "--from", path),
                        prepare=prep))
    return out


def _spec(**changes) -> bytes:
    s = dict(TINY_SPEC)
    for k, v in changes.items():
        if v is ...:
            s.pop(k, None)
        else:
            s[k] = v
    return yaml.safe_dump(s, sort_keys=False, width=10**6).encode()


def spec_cases() -> list[Case]:
    dry = ("sweep", "{d}/s.yaml", "--dry-run")
    axes = dict(TINY_SPEC["axes"])
    bad_specs: dict[str, bytes] = {
        "unknown top key": _spec(axis={}),
        "name a list": _spec(name=["a"]), "name empty": _spec(name="  "),
        "description a map": _spec(description={"a": 1}),
        "base a list": _spec(base=["tiny"]), "base example a list": _spec(base={"example": ["tiny"]}),
        "base example unknown": _spec(base={"example": "tinyy"}),
        "base variant a list": _spec(base={"variant": ["a"]}),
        "base variant unknown": _spec(base={"variant": "fifo_16"}),
        "base unknown section": _spec(base={"protocl": {}}),
        "base section a list": _spec(base={"protocol": [1]}),
        "axes a list": _spec(axes=["protocol.name"]),
        "derived a list": _spec(derived=["x"]),
        "repeat negative": _spec(repeat=-1), "repeat zero": _spec(repeat=0),
        "repeat huge": _spec(repeat=100_000_000_000), "repeat a string": _spec(repeat="3"),
        "repeat NaN": _spec(repeat=float("nan")), "repeat float": _spec(repeat=2.5),
        "repeat bad key": _spec(repeat={"count": 2, "sed": 1}),
        "repeat seeds dup": _spec(repeat={"seeds": [1, 1]}),
        "repeat seeds huge": _spec(repeat="SEEDS").replace(
            b"SEEDS", ("{seeds: [" + ", ".join(map(str, range(150_000))) + "]}").encode()),
        "repeat seed inf": _spec(repeat={"count": 2, "seed": float("inf")}),
        "repeat seed huge": _spec(repeat={"count": 2, "seed": 10**30}),
    }
    bad_axes = {
        "empty list": [], "a scalar": 5, "a string": "abc", "range NaN start": {"range": [float("nan"), 5, 1]},
        "range NaN step": {"range": [1, 5, float("nan")]}, "range inf stop": {"range": [1, float("inf"), 1]},
        "range zero step": {"range": [1, 5, 0]}, "range wrong way": {"range": [5, 1, 1]},
        "range strings": {"range": ["a", "b", "c"]}, "range 4 items": {"range": [1, 2, 3, 4]},
        "range huge": {"range": [1, 10**12, 1]}, "range factor 1": {"range": {"start": 1, "stop": 8, "factor": 1}},
        "range factor 0": {"range": {"start": 1, "stop": 8, "factor": 0}},
        "range factor NaN": {"range": {"start": 1, "stop": 8, "factor": float("nan")}},
        "range bad key": {"range": {"start": 1, "stop": 8, "stpe": 1}},
        "range and list": {"range": [1, 2, 1], "values": [1]},
        "zip unequal": {"zip": {"protocol.window": [1, 2], "protocol.threshold": [1]}},
        "zip empty": {"zip": {}}, "zip a list": {"zip": [1, 2]},
        "zip unknown key": {"zip": {"protocol.windw": [1, 2]}},
        "labels mismatch": {"zip": {"protocol.window": [1, 2]}, "labels": ["a"]},
        "labels dup": {"zip": {"protocol.window": [1, 2]}, "labels": ["a", "a"]},
    }
    for label, val in bad_axes.items():
        name = "slots_per_process" if "zip" not in str(val) and "labels" not in label else "w"
        bad_specs[f"axis {label}"] = _spec(axes={**axes, name: val})
    many = {f"a{i}": {"range": [1, 100, 1]} for i in range(6)}
    bad_specs["six 100-point axes"] = _spec(axes=many, derived={
        "seed": " + ".join(f"a{i}" for i in range(6))})
    bad_specs["axis huge list"] = _spec(axes={**axes, "seed": "SEEDS"}).replace(
        b"SEEDS", ("[" + ", ".join(map(str, range(150_000))) + "]").encode())
    for name, b in config_fields():      # one bad value per field as an axis
        vals = bad_values(b)
        if vals and name not in ("protocol.name", "protocol.mailbox_slots"):
            bad_specs[f"axis {name}"] = _spec(axes={**axes, name: [vals[len(vals) // 2]]})
    exprs = {"string bomb": "'a' * 10 ** 12", "list bomb": "[0] * 10 ** 10",
             "power tower": "(9 ** 64) ** 64", "huge shift": "1 << 10 ** 9",
             "division by zero": "1 // 0", "unknown name": "slots * 2", "syntax": "1 +",
             "attribute": "().__class__", "lambda": "(lambda: 1)()", "import": "__import__('os')",
             "comprehension": "[x for x in range(10 ** 9)]", "negative": "-5",
             "inf": "1e308 * 10", "nan": "float('nan')", "string": "'abc'",
             "huge int": "10 ** 60", "long text": "1 + " * 20_000 + "1",
             "nested parens": "(" * 5000 + "1" + ")" * 5000}
    for label, e in exprs.items():
        bad_specs[f"derived {label}"] = _spec(derived={"protocol.mailbox_slots": e})
    bad_specs["derived unknown key"] = _spec(derived={"protocol.mailbx": "1"})
    bad_specs["derived an axis key"] = _spec(derived={"protocol.name": "'static'"})
    bad_specs["derived not a string"] = _spec(derived={"protocol.mailbox_slots": [1]})
    out = [Case("spec", label, dry, {"s.yaml": text}) for label, text in bad_specs.items()]
    sets = ["axes.slots_per_process=[]", "axes.slots_per_process={range: [1, .inf, 1]}",
            "repeat=-3", "repeat.count=10000000000000", "base.example=[tiny]", "nonsense=1",
            "protocol.name=[static]", "axes.protocol.name=[statc]", "network.cycle_ns=.inf",
            "derived.protocol.mailbox_slots='a' * 10 ** 12", "=1", "name", "base.protocol=5",
            "axes.slots_per_process={range: [1, 1000000000000, 1]}", "host.pio_ns=1e30",
            "workload.iterations=1000000000000000000000000000000", "seed=-1"]
    for s in sets:
        out.append(Case("spec", f"--set {s[:40]}", dry + ("--set", s)))
    return out


# store damages: (label, function(store path)) applied to a copy of a valid store
def _garbage(p: Path) -> None:
    p.write_bytes(b"\x00garbage\xff" * 7)


def _chunk_files(store: Path, var: str) -> list[Path]:
    return sorted(f for f in (store / var).rglob("*") if f.is_file() and f.name != "zarr.json")


def _attr(store: Path, key: str, value) -> None:
    import json
    meta = json.loads((store / "zarr.json").read_text())
    meta["attributes"][key] = value
    (store / "zarr.json").write_text(json.dumps(meta))


def _damages() -> dict[str, Callable[[Path], None]]:
    import json

    def drop_completed_meta(s: Path) -> None:
        meta = json.loads((s / "zarr.json").read_text())
        meta.get("consolidated_metadata", {}).get("metadata", {}).pop("completed", None)
        (s / "zarr.json").write_text(json.dumps(meta))
        shutil.rmtree(s / "completed")

    def completed_shape(s: Path) -> None:
        import zarr
        g = zarr.open_group(str(s), mode="r+")
        del g["completed"]
        g.create_array("completed", shape=(7,), dtype="bool")
    return {
        "completed chunk garbage": lambda s: [_garbage(f) for f in _chunk_files(s, "completed")],
        "data chunk garbage": lambda s: _garbage(_chunk_files(s, "exec_time_us")[0]),
        "configs attribute garbage": lambda s: _attr(s, "configs", "{not json"),
        "sweep_axes attribute garbage": lambda s: _attr(s, "sweep_axes", "[1, 2"),
        "completed missing": drop_completed_meta,
        "completed wrong shape": completed_shape,
        "variable folder deleted": lambda s: shutil.rmtree(s / "exec_time_us"),
        "zarr.json missing": lambda s: (s / "zarr.json").unlink(),
        "zarr.json garbage": lambda s: _garbage(s / "zarr.json"),
        "schema version": lambda s: _attr(s, "schema_version", 999),
        "fingerprint changed": lambda s: _attr(s, "sweep_fingerprint", "0" * 64),
        "variable metadata garbage": lambda s: _garbage(s / "packets_sent" / "zarr.json"),
    }


def store_cases() -> list[Case]:
    out = []
    for label, damage in _damages().items():
        prep = (lambda dmg: (lambda d: dmg(d / "sweep.zarr")))(damage)
        for cmd, argv in {"resume": ("sweep", "{d}/spec.yaml", "-o", "{d}/sweep.zarr"),
                          "dry-run": ("sweep", "{d}/spec.yaml", "-o", "{d}/sweep.zarr",
                                      "--dry-run"),
                          "tables": ("tables", "summary", "--from", "{d}/sweep.zarr")}.items():
            if cmd == "tables" and "fingerprint" in label:
                continue    # the fingerprint tells sweeps apart on resume; a read needs none
            out.append(Case("store", f"{cmd}: {label}", argv, prepare=prep))
        if any(w in label for w in ("completed", "sweep_axes", "fingerprint")):
            continue                          # what only a sweep store has
        prep_run = (lambda dmg: (lambda d: dmg(d / "run.zarr")))(damage)
        out.append(Case("store", f"run store tables: {label}",
                        ("tables", "summary", "--from", "{d}/run.zarr"), prepare=prep_run))
    out.append(Case("store", "resume a store of another spec",
                    ("sweep", "{d}/other.yaml", "-o", "{d}/sweep.zarr"),
                    {"other.yaml": _spec(axes={"protocol.name": ["none"]})}))
    out.append(Case("store", "run -o onto a sweep store",
                    ("run", "--example", "tiny", "-o", "{d}/sweep.zarr")))
    out.append(Case("store", "run -o onto a run store", ("run", "--example", "tiny", "-o",
                                                         "{d}/run.zarr")))
    out.append(Case("store", "foreign zarr", ("tables", "summary", "--from", "{d}/foreign.zarr"),
                    prepare=lambda d: __import__("zarr").open_group(str(d / "foreign.zarr"),
                                                                    mode="w").create_array(
                        "x", shape=(3,), dtype="i4")))
    return out


def table_cases() -> list[Case]:
    from extoll_vec.analysis.registry import load_targets
    out = []
    for name, t in load_targets().items():
        if not t.needs_store or name == "summary":
            continue
        for store in ("ref.zarr", "static.zarr"):
            out.append(Case("table", f"{name} on {store}", ("tables", name, "--from",
                                                            "{d}/" + store)))
        for ty in typos(name)[:2]:
            out.append(Case("table", f"unknown target {ty}", ("tables", ty, "--from",
                                                              "{d}/run.zarr")))
    outputs = {"-o onto a directory": ("-o", "{d}/run.zarr"),
               "-o under a file": ("-o", "{d}/cfg.yaml/out.csv"),
               "-o long name": ("-o", "{d}/" + "x" * 300 + ".csv"),
               "--out onto a file": ("--out", "{d}/cfg.yaml")}
    for label, opt in outputs.items():
        out.append(Case("table", label, ("tables", "summary", "--from", "{d}/run.zarr") + opt))
    out.append(Case("table", "--out onto a file (no store)", ("tables", "extoll_table1",
                                                              "--out", "{d}/cfg.yaml")))
    out.append(Case("table", "--set with --from", ("tables", "summary", "--from", "{d}/run.zarr",
                                                   "--set", "seed=1")))
    out.append(Case("table", "--quick with --from", ("tables", "extoll_patterns", "--quick",
                                                     "--from", "{d}/ref.zarr")))
    return out


FAMILIES: dict[str, Callable[[], list[Case]]] = {
    "config-field": config_field_cases, "config-file": config_file_cases, "file": file_cases,
    "spec": spec_cases, "store": store_cases, "table": table_cases}


def all_cases() -> list[Case]:
    cases = [c for make in FAMILIES.values() for c in make()]
    seen, out = set(), []
    for c in cases:             # distinct inputs only
        key = (c.argv, tuple(sorted(c.files.items())), c.label)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out

"""Bad input, stores and tables: a damaged store, a store without a
target's points and a bad output path are each refused through the CLI with exit 2 and one line
``extoll-vec: error: ...`` naming the array, attribute, points or path (no traceback), and a
refused command changes no byte of what was there. Valid variants (a store without consolidated
metadata, a symlinked store) are still read, giving the same table.

One small real store per module (a 2-point sweep of `example: tiny`, protocol none and static,
simulated once); each damage works on a copy of it."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from extoll_vec.cli import main
from extoll_vec.dataset import build_dataset, write_zarr
from extoll_vec.engine import run_batch
from extoll_vec.sweep import build_sweep
from extoll_vec.sweep.store import StoreWriter, check_store, prepare_store, resume_mask
from extoll_vec.errors import StoreError

SPEC = {"name": "bad-input", "base": {"example": "tiny"},
        "axes": {"protocol.name": ["none", "static"]},
        "derived": {"protocol.mailbox_slots":
                    "0 if protocol.name == 'none' else 16 * workload.ranks"}}


def _sweep_store(path: Path, spec: dict, results: dict, rows: list[int]) -> Path:
    sw = build_sweep(spec)
    prepare_store(path, sw)
    StoreWriter(path).write(list(range(sw.n_points)),
                            {k: np.asarray(v)[rows] for k, v in results.items()})
    path.with_suffix(".yaml").write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """The module's real stores: `full` (none + static), `refs` (only the reference point),
    `static` (only the static point), `run` (a `run -o` store of the reference point); the
    last three reuse the full store's simulated results (the simulation is deterministic)."""
    root = tmp_path_factory.mktemp("stores")
    sw = build_sweep(SPEC)
    res = run_batch(list(sw.configs))
    one = {**SPEC, "axes": {"protocol.name": ["none"]}}
    out = {"full": _sweep_store(root / "full.zarr", SPEC, res, [0, 1]),
           "refs": _sweep_store(root / "refs.zarr", {**one, "name": "refs"}, res, [0]),
           "static": _sweep_store(root / "static.zarr",
                                  {**SPEC, "name": "static",
                                   "axes": {"protocol.name": ["static"]}}, res, [1])}
    out["run"] = write_zarr(build_dataset([sw.configs[0]], {k: np.asarray(v)[[0]]
                                                              for k, v in res.items()}),
                            root / "run.zarr")
    return out


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch):
    """A resume that gets past the checks would start a cluster: fail at once instead."""
    from extoll_vec.sweep import cluster

    def refuse(*a, **k):
        raise AssertionError("a refused store got as far as starting a cluster")
    monkeypatch.setattr(cluster, "connect", refuse)


def digest(folder: Path) -> dict[str, str]:
    """Every file below `folder` (and symlink targets, folders) with its SHA-256."""
    out = {}
    for f in sorted(folder.rglob("*")):
        rel = str(f.relative_to(folder))
        if f.is_symlink():
            out[rel] = "-> " + os.readlink(f)
        elif f.is_file():
            out[rel] = hashlib.sha256(f.read_bytes()).hexdigest()
        else:
            out[rel] = "dir"
    return out


def refused(capsys, argv: list[str], folder: Path, *needles: str) -> str:
    """Run the CLI: exit 2, one line `extoll-vec: error: ...` holding every needle, no
    traceback, nothing below `folder` changed. Returns the line."""
    capsys.readouterr()
    before = digest(folder)
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("extoll-vec: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)
    assert digest(folder) == before, f"{argv} changed files"
    return err


# ---- damages ---------------------------------------------------------------------------------
def _edit_root(p: Path, fn) -> None:
    meta = json.loads((p / "zarr.json").read_text())
    fn(meta)
    (p / "zarr.json").write_text(json.dumps(meta))


def _edit_array(p: Path, name: str, fn, consolidated: bool = True) -> None:
    f = p / name / "zarr.json"
    meta = json.loads(f.read_text())
    fn(meta)
    f.write_text(json.dumps(meta))
    if consolidated:
        _edit_root(p, lambda m: fn(m["consolidated_metadata"]["metadata"][name]))


def _set_attr(name: str, value):
    return lambda p: _edit_root(p, lambda m: m["attributes"].update({name: value}))


def _bad_config(p: Path) -> None:
    configs = json.loads(json.loads((p / "zarr.json").read_text())["attributes"]["configs"])
    configs[1]["protocol"]["name"] = "nope"
    _set_attr("configs", json.dumps(configs))(p)


def _replace_by(kind: str):
    def damage(p: Path) -> None:
        shutil.rmtree(p)
        if kind == "file":
            p.write_bytes(os.urandom(64))
        elif kind == "empty":
            p.mkdir()
        else:   # a zarr store of another program
            xr.Dataset({"temperature": ("time", np.arange(5.0))}).to_zarr(
                p, zarr_format=3, consolidated=False)
    return damage


GARBAGE = b"\x28\xb5\x2f\xfdgarbage, not a zstd frame\x00\xff"

# name: (damage, what the message names, replaceable: the advice is --overwrite)
DAMAGES = {
    "completed chunk": (lambda p: (p / "completed/c/1").write_bytes(GARBAGE),
                        "array completed: chunk completed/c/1 cannot be decoded", True),
    "data chunk": (lambda p: (p / "exec_time_us/c/1").write_bytes(GARBAGE),
                   "array exec_time_us: chunk exec_time_us/c/1 cannot be decoded", True),
    "rank data chunk": (lambda p: (p / "mark_time_us/c/0/0/0").write_bytes(GARBAGE),
                        "array mark_time_us: chunk mark_time_us/c/0/0/0", True),
    "coordinate chunk": (lambda p: (p / "protocol_name/c/0").write_bytes(GARBAGE),
                         "array protocol_name: chunk protocol_name/c/0", True),
    "configs garbage": (_set_attr("configs", "[{garbage"), "attribute configs is not JSON", True),
    "configs not a list": (_set_attr("configs", "{}"), "attribute configs is not a JSON list",
                           True),
    "configs bad point": (_bad_config, "attribute configs: point 1: ConfigError: protocol.name",
                          True),
    "configs missing": (lambda p: _edit_root(p, lambda m: m["attributes"].pop("configs")),
                        "attribute configs is missing", True),
    "sweep_axes garbage": (_set_attr("sweep_axes", "{{"), "attribute sweep_axes is not JSON",
                           True),
    "sweep_axes wrong": (_set_attr("sweep_axes", "[]"),
                         "attribute sweep_axes describes 1 points, attribute configs 2", True),
    "completed unlisted": (lambda p: _edit_root(
        p, lambda m: m["consolidated_metadata"]["metadata"].pop("completed")),
        "array completed is missing from the store's metadata (zarr.json)", True),
    "completed folder": (lambda p: shutil.rmtree(p / "completed"),
                         "array completed is missing (no completed/zarr.json)", True),
    "completed shape": (lambda p: _edit_array(p, "completed", lambda m: m.update(shape=[1])),
                        "array completed has shape (1,): 1 along point, where the store has 2 "
                        "points", True),
    "completed shape own": (lambda p: _edit_array(p, "completed", lambda m: m.update(shape=[5]),
                                                  consolidated=False),
                            "array completed: its shape differs between zarr.json ([2]) and "
                            "completed/zarr.json ([5])", True),
    "data folder": (lambda p: shutil.rmtree(p / "exec_time_us"),
                    "array exec_time_us is missing (no exec_time_us/zarr.json)", True),
    "data unlisted": (lambda p: _edit_root(
        p, lambda m: m["consolidated_metadata"]["metadata"].pop("stall_us")),
        "array stall_us is missing from the store's metadata", True),
    "data shape": (lambda p: _edit_array(p, "rank_time_us", lambda m: m.update(shape=[2, 8])),
                   "array rank_time_us has shape (2, 8): 8 along rank, where the store has 16 "
                   "in its other arrays", True),
    "data dims": (lambda p: _edit_array(p, "stall_us",
                                        lambda m: m.update(dimension_names=["point", "peer"])),
                  "array stall_us has dimensions ('point', 'peer'), expected ('point', 'rank')",
                  True),
    "zarr.json missing": (lambda p: (p / "zarr.json").unlink(),
                          "its root metadata zarr.json is missing", False),
    "zarr.json garbage": (lambda p: (p / "zarr.json").write_bytes(b"\x00\xffgarbage{"),
                          "zarr.json is not JSON", True),
    "zarr.json not a group": (lambda p: (p / "zarr.json").write_text("[1, 2]"),
                              "zarr.json is not the metadata of a zarr format 3 group", True),
    "store is a file": (_replace_by("file"), "exists and is not a zarr store (a file", False),
    "empty directory": (_replace_by("empty"), "an empty directory, not a zarr store", False),
    "another program's store": (_replace_by("foreign"),
                                "not an extoll-vec result store (no schema_version attribute",
                                True),
}

COMMANDS = {
    "resume": lambda spec, p: ["sweep", str(spec), "-o", str(p), "--quiet"],
    "dry-run": lambda spec, p: ["sweep", str(spec), "--dry-run", "-o", str(p)],
    "tables": lambda spec, p: ["tables", "summary", "--from", str(p)],
    # with --out the store is read into memory once, for the table and its report page
    "tables --out": lambda spec, p: ["tables", "summary", "--from", str(p), "--out",
                                     str(p.parent / "out")],
}
ADVICE = {("resume", True): "choose another path or overwrite it explicitly (--overwrite)",
          ("resume", False): "choose another path (-o)",
          ("tables", True): "compute it again into another path (or over it with --overwrite)",
          ("tables", False): "give the path of a result store"}


def _copy(stores, tmp_path: Path, which: str = "full") -> tuple[Path, Path]:
    src = stores[which]
    store = tmp_path / "case" / src.name
    shutil.copytree(src, store)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    return store, spec


@pytest.mark.slow     # every damage x every command: the inner loop has the other tests here
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_store_is_refused_in_one_line_untouched(stores, tmp_path, capsys, damage,
                                                        command):
    store, spec = _copy(stores, tmp_path)
    fn, names, replaceable = DAMAGES[damage]
    fn(store)
    advice = ADVICE[("tables" if command.startswith("tables") else "resume", replaceable)]
    refused(capsys, COMMANDS[command](spec, store), tmp_path, f"{store}: ", names, advice)


@pytest.mark.parametrize("damage", ["data folder", "data chunk", "configs garbage",
                                    "zarr.json missing"])
def test_damaged_run_store_is_refused(stores, tmp_path, capsys, damage):
    store, _ = _copy(stores, tmp_path, "run")
    fn, names, replaceable = DAMAGES[damage]
    fn(store)
    if damage == "data chunk":   # a run store has one point: chunk 0
        (store / "exec_time_us/c/0").write_bytes(GARBAGE)
        names = "array exec_time_us: chunk exec_time_us/c/0"
    refused(capsys, ["tables", "summary", "--from", str(store)], tmp_path, names,
            ADVICE[("tables", replaceable)])


def test_second_of_merged_stores_damaged(stores, tmp_path, capsys):
    store, _ = _copy(stores, tmp_path)
    shutil.rmtree(store / "stall_us")
    refused(capsys, ["tables", "summary", "--from", str(stores["full"]), "--from", str(store)],
            tmp_path, f"{store}: damaged store: array stall_us is missing")


def test_check_store_is_the_one_diagnosis(stores, tmp_path):
    """check_store itself (what resume, --dry-run and tables call): a whole store passes; a
    damaged one raises StoreError; a missing one is "no such result store"."""
    check_store(stores["full"], "resume", build_sweep(SPEC))
    check_store(stores["run"], "read")
    with pytest.raises(StoreError, match="no such result store"):
        check_store(tmp_path / "missing.zarr")
    with pytest.raises(StoreError, match="not a sweep store"):
        check_store(stores["run"], "resume")
    store, _ = _copy(stores, tmp_path)
    (store / "completed/c/0").write_bytes(GARBAGE)
    check_store(store, "read", deep=False)     # metadata only: the chunk is not read
    with pytest.raises(StoreError, match="chunk completed/c/0"):
        check_store(store, "read")


def test_unusable_paths(stores, tmp_path, capsys):
    """A symbolic link to itself and a name over the system's limit: one line, for tables and
    for the sweep command's check of an existing -o (store.resume_mask)."""
    loop = tmp_path / "loop.zarr"
    loop.symlink_to(loop)
    long = tmp_path / ("a" * 300 + ".zarr")
    refused(capsys, ["tables", "summary", "--from", str(loop)], tmp_path,
            "loop.zarr: is a symbolic link to nothing (broken or a loop)")
    refused(capsys, ["tables", "summary", "--from", str(tmp_path / ("a" * 5000))], tmp_path,
            "...", "aaaa (", " characters): cannot be read: File name too long")
    sw = build_sweep(SPEC)
    assert resume_mask(tmp_path / "new.zarr", sw) is None
    assert resume_mask(stores["full"], sw).tolist() == [True, True]
    with pytest.raises(StoreError, match="symbolic link to nothing"):
        resume_mask(loop, sw)
    with pytest.raises(StoreError, match="cannot be used: File name too long; choose another"):
        resume_mask(long, sw)


# ---- valid variants ------------------------------------------------------------------------
def _table(capsys, store) -> str:
    capsys.readouterr()
    assert main(["tables", "summary", "--from", str(store)]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("variant", ["no consolidated metadata", "symlink"])
def test_valid_variants_are_accepted(stores, tmp_path, capsys, variant):
    store, spec = _copy(stores, tmp_path)
    if variant == "symlink":
        target, store = store, tmp_path / "link.zarr"
        store.symlink_to(target, target_is_directory=True)
    else:
        _edit_root(store, lambda m: m.pop("consolidated_metadata"))
    want = _table(capsys, stores["full"])
    before = digest(tmp_path)
    assert _table(capsys, store) == want and "static" in want
    # resume: every point is there; --dry-run: both listed as done
    assert main(["sweep", str(spec), "-o", str(store), "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == want.strip()
    assert main(["sweep", str(spec), "--dry-run", "-o", str(store)]) == 0
    assert capsys.readouterr().out.count(" done ") == 2
    assert digest(tmp_path) == before


# ---- targets refuse a store without their points -------------------------------------------
MISSING = {   # target: (in the store of reference points only, in the store of static points)
    "extoll_reference": ("points of other cases: alltoall-16", "points of other cases: "
                         "alltoall-16"),
    "extoll_static_overhead": ("no static point (protocols: none)",
                               "no reference run (protocol none) of any static point "
                               "(protocols: static)"),
    "extoll_table2": ("no static point", "no reference run (protocol none) of any static point"),
    "extoll_piggyback": ("no static point", "no reference run (protocol none) of any static"),
    "extoll_components": ("no static or dynamic point (protocols: none)",
                          "no reference run (protocol none) of any static or dynamic point"),
    "extoll_patterns": ("no static or dynamic point", "no reference run (protocol none) of any "
                        "static or dynamic point"),
    "extoll_conference_patterns": ("no static or dynamic point", "no reference run (protocol "
                                   "none) of any static or dynamic point"),
    "extoll_limic": ("no static or dynamic point", "no reference run (protocol none)"),
    "extoll_imb": ("no imb point (workloads: alltoall)", "no imb point (workloads: alltoall)"),
    "extoll_credit_evolution": ("no multiphase point (workloads: alltoall)",
                                "no multiphase point"),
    "portals_slow_nodes": ("no completed pairwise-traffic point",) * 2,
    "portals_fecn": ("no completed pairwise-traffic point",) * 2,
    "portals_rdrp": ("no completed pairwise-traffic point",) * 2,
    "portals_mpi_slow": ("no imb point (workloads: alltoall)",) * 2,
    "ib_latency": ("no completed latency point of an IB scheme",) * 2,
    "ib_bandwidth": ("no completed bandwidth point of an IB scheme",) * 2,
    "ib_nas_ecm": ("no completed nas point under ib_static with 100 buffers",) * 2,
    "ib_nas_buffers": ("no completed nas point under ib_dynamic",) * 2,
    "ib_nas_prepost": ("no completed nas point",) * 2,
    "lfc_multicast": ("no completed LFC multicast benchmark point",) * 2,
    "lfc_recovery_overhead": ("no completed LFC multicast benchmark point",) * 2,
    "lfc_trees": ("no completed LFC multicast benchmark point",) * 2,
    "lfc_vs_fmmc": ("no completed LFC multicast benchmark point",) * 2,
    "ib_families": ("no completed reference point of IB",
                    "no completed reference point of EXTOLL or IB"),
    "families_frontier": ("no completed point of a family with its reference",
                          "no completed reference point"),
}


def _store_targets():
    from extoll_vec.analysis.registry import ANY_STORE, load_targets
    return [t for t in load_targets().values() if t.needs_store and t.needs is not ANY_STORE]


def test_every_target_with_needs_is_checked_here():
    assert sorted(t.name for t in _store_targets()) == sorted(MISSING)


@pytest.mark.slow     # every target on two stores
@pytest.mark.parametrize("which", ["refs", "static"])
def test_targets_refuse_a_store_without_their_points(stores, tmp_path, capsys, which):
    out = tmp_path / "out"
    for tgt in _store_targets():
        lacking = MISSING[tgt.name][["refs", "static"].index(which)]
        refused(capsys, ["tables", tgt.name, "--from", str(stores[which]), "--out", str(out)],
                stores[which].parent, f"--from: {tgt.name} needs {tgt.needs.what}; this store "
                f"(sweep {which}) has 1 of 1 points completed, with ", lacking)
        assert not out.exists()


def _completed_points_of(sweep) -> xr.Dataset:
    """What a target's needs read of a finished store of `sweep` (configs, axes, completed),
    without simulating it."""
    index = np.array([sweep.index(i) for i in range(sweep.n_points)], dtype=np.int64)
    ds = xr.Dataset({"completed": ("point", np.ones(sweep.n_points, dtype=bool))},
                    coords={"point": np.arange(sweep.n_points)},
                    attrs={"configs": json.dumps([c.to_dict() for c in sweep.configs]),
                           "sweep_axes": json.dumps([a.to_json() for a in sweep.axes]),
                           "sweep_name": sweep.name})
    for k, a in enumerate(sweep.axes):
        if a.coord not in ds.coords:
            ds.coords[a.coord] = ("point", np.asarray(a.labels)[index[:, k]])
    return ds


@pytest.mark.parametrize("quick", [True, False], ids=["quick", "paper"])
def test_every_targets_own_sweep_has_the_points_it_needs(quick):
    """The declared needs refuse no store of a target's own spec (quick or paper scale) nor
    of the variants of its spec (lab/variants.yaml)."""
    from extoll_vec.analysis.registry import get_target
    from extoll_vec.analysis.variants import load_variants
    from extoll_vec.sweep import load_sweep
    from extoll_vec.sweeps import spec_path
    VARIANTS = load_variants(Path(__file__).resolve().parents[1])
    for tgt in _store_targets():
        sweep = load_sweep(spec_path(tgt.spec_name(quick)))
        assert tgt.needs.missing(_completed_points_of(sweep)) is None, tgt.name
    for name, v in ([] if quick else VARIANTS.items()):
        tgt = get_target(v["target"])
        sweep = load_sweep(spec_path(tgt.spec_name()), v["sets"])
        assert tgt.needs.missing(_completed_points_of(sweep)) is None, name


def test_targets_take_a_store_with_their_points(stores, capsys):
    for name in ("extoll_static_overhead", "extoll_table2", "summary"):
        assert main(["tables", name, "--from", str(stores["full"])]) == 0, name
        assert "alltoall-16" in capsys.readouterr().out or name == "summary"


def test_a_target_must_declare_its_needs():
    from extoll_vec.analysis.registry import TARGETS, target
    before = dict(TARGETS)
    with pytest.raises(TypeError, match="needs"):
        target("no_needs", "forgot them")(lambda ds: None)
    with pytest.raises(TypeError, match="needs"):
        target("bad_needs", "not a Needs", needs="static")
    assert TARGETS == before


# ---- output paths ----------------------------------------------------------------------------
def test_output_path_errors(stores, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    (tmp_path / "adir").mkdir()
    full = ["tables", "summary", "--from", str(stores["full"])]
    long = tmp_path / ("a" * 300 + ".csv")
    store = digest(stores["full"])
    for argv, needles in [
            ([*full, "-o", str(tmp_path / "adir")], ["-o: ", "adir is a directory"]),
            ([*full, "-o", str(afile / "t.csv")], ["-o: ", "afile is a file, not a directory"]),
            ([*full, "--out", str(afile)], ["--out: ", "afile is a file"]),
            ([*full, "--out", str(afile / "sub")], ["--out: ", "is a file, not a directory"]),
            ([*full, "--out", str(stores["full"])], ["--out: ", "is a zarr store"]),
            ([*full, "-o", str(long)], ["-o: ", "file name too long (304 bytes; allowed: at "
                                        "most 255)"]),
            (["tables", "extoll_table1", "--out", str(afile)], ["--out: ", "is a file"])]:
        refused(capsys, argv, tmp_path, *needles)
    assert digest(stores["full"]) == store      # --out onto the store wrote nothing into it

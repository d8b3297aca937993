"""`extoll-vec tables NAME --from STORE.zarr`: the target registry and the summary target, on
stores filled with made-up results (no simulation)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from extoll_vec.cli import main
from extoll_vec.dataset import build_dataset, write_zarr
from extoll_vec.examples import get_example
from extoll_vec.sweep import build_sweep, load_sweep
from extoll_vec.sweep.store import StoreWriter, prepare_store

from test_sweep_store import SPEC, fake_results


def sweep_store(tmp_path, points):
    sw = build_sweep(SPEC)
    path = tmp_path / "s.zarr"
    prepare_store(path, sw)
    w = StoreWriter(path)
    for p in points:
        w.write([p], fake_results([sw.configs[p]], p))
    return sw, path


def test_list_unknown_and_missing_store(tmp_path, capsys):
    assert main(["tables"]) == 0
    assert capsys.readouterr().out.startswith("summary")
    assert main(["tables", "nope", "--from", "x.zarr"]) == 2
    assert "unknown target 'nope'; allowed: summary" in capsys.readouterr().err
    assert main(["tables", "summary"]) == 2
    assert "--from: required" in capsys.readouterr().err
    assert main(["tables", "summary", "--from", str(tmp_path / "none.zarr")]) == 2
    assert "no such result store" in capsys.readouterr().err


def test_summary_of_a_partial_sweep(tmp_path, capsys):
    sw, path = sweep_store(tmp_path, [3, 0, 9])
    csv = tmp_path / "out" / "t.csv"
    assert main(["tables", "summary", "--from", str(path), "-o", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "summary of store-test: 3 points" in out and "(3 of 16 points completed)" in out
    lines = csv.read_text().splitlines()
    assert lines[0] == ("point,protocol_name,sizes,protocol_window,rep,time_us,overhead_pct,"
                        "stall_us_per_rank,control_packets,sends_delayed,mailbox_max,"
                        "max_link_util,exec_time_us")
    rows = [r.split(",") for r in lines[1:]]
    assert [r[0] for r in rows] == ["0", "3", "9"]                 # grid order
    assert rows[2][1:5] == ["window", "16", "4", "1"]
    res = fake_results([sw.configs[9]], 9)
    assert float(rows[2][12]) == res["exec_time_us"][0]           # CSV floats round-trip
    at = res["sends_delayed_at_mark"][0]          # the timed part: between marks 0 and 1
    both = (at[:, 0] >= 0) & (at[:, 1] >= 0)
    assert both.any() and int(rows[2][9]) == int(np.where(both, at[:, 1] - at[:, 0], 0).sum())
    st = res["stall_us_at_mark"][0]               # per rank, the timed part, as a mean
    want = np.where(both, st[:, 1] - st[:, 0], 0.0).mean()
    assert float(rows[2][7]) == pytest.approx(want, rel=1e-12)
    assert "sends_delayed: sends of the timed part that waited" in out   # the line under it
    # the point that ran without flow control is the others' reference (none here): NaN
    assert all(r[6] == "nan" for r in rows)


def test_summary_of_a_run_store(tmp_path, capsys):
    cfg = get_example("tiny")
    path = write_zarr(build_dataset([cfg], fake_results([cfg])), tmp_path / "run.zarr")
    assert main(["tables", "summary", "--from", str(path)]) == 0
    out = capsys.readouterr().out
    assert "summary of run: 1 points" in out and "protocol_name" in out
    lines = out.splitlines()
    assert lines[-1].startswith("sends_delayed: ")       # the note under the one row
    assert np.isfinite(float(lines[-2].split()[3]))


def test_out_dir_writes_name_csv(tmp_path, capsys):
    _, path = sweep_store(tmp_path, [1, 2])
    assert main(["tables", "summary", "--from", str(path), "--out", str(tmp_path / "o")]) == 0
    lines = (tmp_path / "o" / "summary.csv").read_text().splitlines()
    assert lines[0].startswith("point,") and len(lines) == 3


@pytest.mark.slow
def test_extoll_targets_refuse_a_store_without_their_points(tmp_path, capsys):
    """A store of another spec, or one whose sweep is still running, has none of the points an
    EXTOLL target needs (here: no flow-control point has its reference): one line naming what
    the target needs and what the store holds, exit 2, no traceback, nothing written."""
    _, path = sweep_store(tmp_path, [3, 0, 9])
    out = tmp_path / "out"
    for name in ("extoll_patterns", "extoll_limic", "extoll_imb", "extoll_static_overhead",
                 "extoll_piggyback", "extoll_components", "extoll_table2",
                 "extoll_credit_evolution"):
        assert main(["tables", name, "--from", str(path), "--out", str(out)]) == 2, name
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert f"--from: {name} needs " in err, err
        assert "this store (sweep store-test) has 3 of 16 points completed" in err, err
    assert not out.exists() or not any(out.iterdir())


# ---- the catalogue of specs: one per target, named after it; variants are --set commands -------
SWEEPS = Path(__file__).resolve().parents[1] / "sweeps"


def test_every_spec_in_sweeps_is_one_targets_spec_or_quick_spec():
    """sweeps/ holds smoke.yaml and, per target with a sweep of its own, its spec and quick
    spec, named after it (extoll_X: extoll/X.yaml, name extoll_X; extoll/X.quick.yaml, name
    extoll_X_quick); nothing else (variants are commands: lab/variants.yaml)."""
    import yaml

    from extoll_vec.analysis.registry import load_targets
    from extoll_vec.sweeps import spec_path
    owner = {}
    for t in load_targets().values():
        if not t.sweep:
            continue
        for quick in (False, True):
            path = spec_path(t.spec_name(quick)).resolve()
            assert path.is_file(), f"{t.name} has no {path.relative_to(SWEEPS)}"
            want = t.sweep_name + ("_quick" if quick else "")
            assert yaml.safe_load(path.read_text())["name"] == want, path
            # a spec is one target's, or shared by the targets that name it
            assert owner.get(path, t.sweep_name) == t.sweep_name, \
                f"{path} belongs to {owner[path]} and {t.name}"
            owner[path] = t.sweep_name
    assert len(owner) >= 18                        # the nine simulated EXTOLL targets
    files = {p.resolve() for p in SWEEPS.rglob("*.yaml")} - {(SWEEPS / "smoke.yaml").resolve()}
    assert sorted(map(str, files - set(owner))) == []      # no spec without its target
    assert files == set(owner)


def test_every_variant_command_expands_to_the_sweep_it_measured():
    """lab/variants.yaml: each removed one-off spec as a --set command on its target's spec.
    The command's sweep has the fingerprint of the removed file (recorded there), so a store
    written from the file is resumed and read by the command; a change of the catalogue spec
    or of a model default that breaks this fails here."""
    from extoll_vec.analysis.registry import get_target
    from extoll_vec.analysis.variants import load_variants, sweep_command, tables_command
    from extoll_vec.sweeps import spec_path
    VARIANTS = load_variants(SWEEPS.parent)     # the repository root
    assert VARIANTS
    for name, v in VARIANTS.items():
        assert set(v) <= {"target", "sets", "fingerprint", "minutes", "notes", "read_with"}
        tgt = get_target(v["target"])
        family = tgt.spec_name().split("/")[0]
        sweep = load_sweep(spec_path(tgt.spec_name()), v["sets"])
        assert sweep.n_points >= 1 and sweep.name == f"{family}_{name}", name
        assert sweep.fingerprint == v["fingerprint"], (
            f"{name}: `{sweep_command(VARIANTS, name)}` is no longer the sweep its measurements "
            "were made with (stores written before are not resumed): fix the --set arguments, or "
            "re-measure and record the new fingerprint")
        assert v["notes"].strip() and v["minutes"] > 0
        assert v.get("read_with", name) in VARIANTS
        assert tables_command(VARIANTS, name).startswith(f"extoll-vec tables {tgt.name} --from ")
        assert not (SWEEPS / family / f"{name}.yaml").exists()


def test_set_varies_a_targets_own_sweep_and_not_a_store(tmp_path, capsys, monkeypatch):
    from extoll_vec.analysis.registry import get_target
    from extoll_vec.analysis.tables import run_target_sweep
    from extoll_vec.sweep import cli as sweep_cli
    ran = []
    monkeypatch.setattr(sweep_cli, "execute", lambda sweep, store, *a, **k: ran.append(sweep))
    store = run_target_sweep(get_target("extoll_patterns"), tmp_path, True,
                             sets=["axes.slots_per_process=[8, 16]", "repeat=2"])
    assert store == tmp_path / "extoll_patterns.quick.zarr"
    (sw,) = ran
    assert sw.shape == (5, 3, 2, 2) and sw.sets == ("axes.slots_per_process=[8, 16]", "repeat=2")
    _, path = sweep_store(tmp_path, [0])
    for argv, needle in [
            (["extoll_patterns", "--from", str(path)], "--set: not with --from or --from-rows: "
                                                       "they are read as they are"),
            (["extoll_table1"], "--set: extoll_table1 runs no sweep"),
            (["extoll_patterns", "--quick", "--out", str(tmp_path)],
             "--set repeat=two: repeat: expected a count")]:
        set_ = ["--set", "repeat=two"]
        assert main(["tables", *argv, *set_]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"extoll-vec: error: {needle}"), err

"""The sweep store: creation, region writes, completion mask, reopening, dense form, refusal.

No simulation here: results are made-up arrays of the engine's shapes."""
from __future__ import annotations

import os
import signal
import warnings

import numpy as np
import pytest
import yaml
import zarr

from extoll_vec.cli import main
from extoll_vec.dataset import CONSOLIDATED_V3_WARNING, SCHEMA, configs_of, result_sizes
from extoll_vec.dtypes import KIND_CLASSES
from extoll_vec.errors import StoreError
from extoll_vec.sweep import build_sweep, dense, open_sweep, sweep_axes
from extoll_vec.sweep.store import (StoreWriter, check_same_sweep, deferred_interrupt,
                                    prepare_store, read_completed)

SPEC = {
    "name": "store-test",
    "base": {"example": "tiny", "protocol": {"mailbox_slots": 64}},
    "axes": {
        "protocol.name": ["backpressure", "window"],
        # 16 and 8 ranks: the store's rank axis is the larger, smaller points are padded
        "sizes": {"zip": {"workload.ranks": [16, 8], "mpi.ranks_per_node": [4, 2]}},
        "protocol.window": [4, 8],
    },
    "repeat": 2,
    "derived": {"protocol.threshold": "protocol.window // 2"},
}


def fake_results(configs, seed: int = 0) -> dict[str, np.ndarray]:
    """Arrays as engine.run_batch returns them for one batch (rank axis = the batch's ranks)."""
    rng = np.random.default_rng(seed)
    sizes = result_sizes(configs)
    out = {}
    for name, var in SCHEMA.items():
        shape = tuple(sizes[d] for d in var.dims)
        out[name] = (rng.random(shape) * 100 if var.dtype.kind == "f"
                     else rng.integers(0, 1000, shape)).astype(var.dtype)
    return out


@pytest.fixture
def sweep():
    return build_sweep(SPEC, default_name="x")


def test_created_store_is_empty_and_complete_in_layout(tmp_path, sweep):
    path = tmp_path / "s.zarr"
    done = prepare_store(path, sweep)
    assert not done.any() and done.shape == (16,)
    ds = open_sweep(path)
    assert dict(ds.sizes) == {"point": 16, "rank": 16, "peer": 16, "kind": 3, "ctrl": 4, "mark": 8,
                              "snapshot": 0}
    assert not ds.completed.values.any()
    assert np.isnan(ds.exec_time_us.values).all() and (ds.packets_sent.values == -1).all()
    for name in SCHEMA:   # one chunk per point along `point`
        assert ds[name].encoding["chunks"][0] == 1, name
    assert ds.attrs["sweep_fingerprint"] == sweep.fingerprint
    assert ds.attrs["sweep_name"] == "store-test" and ds.attrs["git_revision"]
    assert [c.to_dict() for c in configs_of(ds)] == [c.to_dict() for c in sweep.configs]
    assert [a["coord"] for a in sweep_axes(ds)] == ["protocol_name", "sizes", "protocol_window",
                                                    "rep"]
    assert list(ds["sizes"].values[:8]) == [16, 16, 16, 16, 8, 8, 8, 8]   # first zip key
    assert list(ds.rep.values[:4]) == [0, 1, 0, 1]
    # no leftovers of the aside-and-rename creation
    assert sorted(os.listdir(tmp_path)) == ["s.zarr"]


def test_region_writes_mask_padding_and_resume(tmp_path, sweep):
    path = tmp_path / "s.zarr"
    prepare_store(path, sweep)
    w = StoreWriter(path)
    # a batch of 8-rank points, given out of order and not contiguous
    pts = [7, 5, 12]
    cfgs = [sweep.configs[p] for p in pts]
    assert {c.n_ranks for c in cfgs} == {8}
    res = fake_results(cfgs, 1)
    w.write(pts, res)
    done = read_completed(path)
    assert np.flatnonzero(done).tolist() == [5, 7, 12]
    ds = open_sweep(path)
    for j, p in enumerate(pts):
        for name, var in SCHEMA.items():
            got = np.array(ds[name].values[p])
            want = np.asarray(res[name][j])
            inner = tuple(slice(0, n) for n in want.shape)
            np.testing.assert_array_equal(got[inner], want)
            pad = got.copy()
            pad[inner] = var.fill
            assert (np.isnan(pad).all() if var.dtype.kind == "f" else (pad == -1).all())
    assert np.isnan(ds.exec_time_us.values[6])
    # resuming the same sweep returns the mask; completed_only drops the rest
    assert prepare_store(path, sweep).sum() == 3
    part = open_sweep(path, completed_only=True)
    assert part.point.values.tolist() == [5, 7, 12]


def test_dense_form_follows_the_grid(tmp_path, sweep):
    path = tmp_path / "s.zarr"
    prepare_store(path, sweep)
    w = StoreWriter(path)
    for p in range(sweep.n_points):
        w.write([p], {k: v for k, v in fake_results([sweep.configs[p]], p).items()})
    ds = open_sweep(path)
    d = dense(ds)
    assert d.exec_time_us.dims == ("protocol_name", "sizes", "protocol_window", "rep")
    assert d.exec_time_us.shape == (2, 2, 2, 2)
    assert d.rank_time_us.dims[-1] == "rank"
    assert list(d.protocol_name.values) == ["backpressure", "window"]      # spec order
    assert list(d.protocol_window.values) == [4, 8]
    for p in range(sweep.n_points):
        idx = sweep.index(p)
        assert d.exec_time_us.values[idx] == ds.exec_time_us.values[p]
        assert d.seed.values[idx] == sweep.configs[p].seed
    sel = d.exec_time_us.sel(protocol_name="window", sizes=8, protocol_window=4, rep=1)
    assert float(sel) == ds.exec_time_us.values[sweep.n_points // 2 + 4 + 1]


def test_other_spec_is_refused_and_overwrite_replaces(tmp_path, sweep, capsys):
    path = tmp_path / "s.zarr"
    prepare_store(path, sweep)
    other = build_sweep({**SPEC, "repeat": 3})
    with pytest.raises(StoreError, match="holds a different sweep"):
        check_same_sweep(path, other)
    # through the CLI: exit 2, one line, before any cluster starts
    spec_file = tmp_path / "other.yaml"
    spec_file.write_text("base: {example: tiny}\n")
    assert main(["sweep", str(spec_file), "-o", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "holds a different sweep" in err
    assert "--overwrite" in err
    # --overwrite (prepare_store(overwrite=True)) starts from an empty store of the new spec
    assert not prepare_store(path, other, overwrite=True).any()
    assert open_sweep(path).sizes["point"] == other.n_points


def test_store_of_another_schema_version_is_refused_untouched(tmp_path, sweep, capsys):
    """A store written by an older extoll-vec (other result variables) cannot take this
    version's points: refused before any computing, exit 2, one line, nothing changed."""
    path = tmp_path / "old.zarr"
    prepare_store(path, sweep)
    zarr.open_group(path, mode="r+").attrs["schema_version"] = 1
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=CONSOLIDATED_V3_WARNING)
        zarr.consolidate_metadata(path)
    before = sorted((p.relative_to(path), p.stat().st_mtime_ns) for p in path.rglob("*"))
    with pytest.raises(StoreError, match="schema version 1"):
        check_same_sweep(path, sweep)
    spec_file = tmp_path / "same.yaml"
    spec_file.write_text(yaml.safe_dump(SPEC))
    assert main(["sweep", str(spec_file), "-o", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot be resumed" in err and "--overwrite" in err
    assert sorted((p.relative_to(path), p.stat().st_mtime_ns) for p in path.rglob("*")) == before


def test_refuses_non_sweep_paths(tmp_path, sweep):
    f = tmp_path / "file.zarr"
    f.write_text("x")
    with pytest.raises(StoreError):
        prepare_store(f, sweep)
    d = tmp_path / "dir.zarr"
    d.mkdir()
    with pytest.raises(StoreError):
        prepare_store(d, sweep)
    with pytest.raises(StoreError, match="no such result store"):
        open_sweep(tmp_path / "missing.zarr")


def test_ctrl_c_waits_for_the_write():
    hits = []
    with pytest.raises(KeyboardInterrupt):
        with deferred_interrupt():
            os.kill(os.getpid(), signal.SIGINT)
            hits.append("after the signal, still inside")
    assert hits == ["after the signal, still inside"]


def test_network_only_sweep_has_no_rank_axis(tmp_path):
    sw = build_sweep({"base": {"example": "uniform",
                               "topology": {"dims": [2, 2]}},
                      "axes": {"workload.injection_rate": [0.1, 0.2]}})
    path = tmp_path / "u.zarr"
    prepare_store(path, sw)
    StoreWriter(path).write([1], fake_results([sw.configs[1]]))
    ds = open_sweep(path, completed_only=True)
    assert ds.sizes["rank"] == 0 and ds.point.values.tolist() == [1]


def test_stores_carry_consolidated_metadata(tmp_path, sweep):
    """Sweep and result stores: the root zarr.json holds every array's metadata (one read opens
    the store), and a region write does not need it rewritten."""
    import json
    path = tmp_path / "s.zarr"
    prepare_store(path, sweep)
    meta = json.loads((path / "zarr.json").read_text())["consolidated_metadata"]["metadata"]
    assert set(SCHEMA) | {"completed", "point"} <= set(meta)
    StoreWriter(path).write([1], fake_results([sweep.configs[1]]))
    assert json.loads((path / "zarr.json").read_text())["consolidated_metadata"]["metadata"] == meta
    assert open_sweep(path).completed.values.sum() == 1


def test_any_fsspec_url_is_a_store_and_file_urls_are_local_paths(tmp_path, sweep):
    """storage.location: memory:// (an fsspec file system in this process) takes a sweep store
    as s3:// does (created by upload, checked, written, resumed, refused); file:// is a path."""
    from extoll_vec.storage import LocalStore, RemoteStore, location
    url = f"memory://stores/{tmp_path.name}/s.zarr"
    assert isinstance(location(url), RemoteStore)
    assert isinstance(location(f"file://{tmp_path}/s.zarr"), LocalStore)
    assert location(f"file://{tmp_path}/s.zarr").path == tmp_path / "s.zarr"
    assert not prepare_store(url, sweep).any()
    StoreWriter(url).write([5, 7], fake_results([sweep.configs[5], sweep.configs[7]], 3))
    assert np.flatnonzero(prepare_store(url, sweep)).tolist() == [5, 7]      # resumed
    assert open_sweep(url, completed_only=True).point.values.tolist() == [5, 7]
    with pytest.raises(StoreError, match="holds a different sweep"):
        check_same_sweep(url, build_sweep({**SPEC, "repeat": 3}))
    # the same through a file:// URL and the plain path: one store
    local = f"file://{tmp_path}/l.zarr"
    prepare_store(local, sweep)
    assert sorted(os.listdir(tmp_path)) == ["l.zarr"]
    assert read_completed(tmp_path / "l.zarr").shape == (16,)

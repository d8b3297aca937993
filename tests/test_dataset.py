"""Result schema, Dataset building, zarr round trip and store refusal."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import extoll_vec
from extoll_vec.config import RunConfig
from extoll_vec.dataset import (CONFIG_COORDS, SCHEMA, SCHEMA_VERSION, build_dataset, configs_of,
                                open_result, result_sizes, schema_problems, write_zarr)
from extoll_vec.dtypes import KIND_CLASSES
from extoll_vec.errors import StoreError
from extoll_vec.examples import get_example

def sample_configs() -> list[RunConfig]:
    tiny = get_example("tiny")                                           # 16 ranks
    small = tiny.replace(**{"mpi.ranks_per_node": 2, "workload.ranks": 8,
                            "protocol.name": "window", "protocol.mailbox_slots": 32})  # 8 ranks
    uniform = get_example("uniform")                                     # network-only: 0 ranks
    return [tiny, small, uniform.replace(seed=3)]


def sample_arrays(configs: list[RunConfig]) -> dict[str, np.ndarray]:
    """Arrays shaped as the engine hands them over (test data for build_dataset)."""
    rng = np.random.default_rng(1)
    n_ranks = [c.n_ranks for c in configs]
    sizes = result_sizes(configs)
    out = {}
    for name, var in SCHEMA.items():
        shape = tuple(sizes[d] for d in var.dims)
        if var.dtype.kind == "f":
            a = rng.random(shape) * 100
        else:
            a = rng.integers(0, 1000, shape).astype(var.dtype)
        for d in ("rank", "peer"):
            if d in var.dims:
                for i, n in enumerate(n_ranks):
                    a[(i,) + (slice(None),) * (var.dims.index(d) - 1) + (slice(n, None),)] = var.fill
        out[name] = a
    return out


@pytest.fixture
def ds() -> xr.Dataset:
    configs = sample_configs()
    return build_dataset(configs, sample_arrays(configs), attrs={"note": "test"})


# ---- schema and building ---------------------------------------------------------------------
def test_schema_covers_every_variable(ds):
    assert set(ds.data_vars) == set(SCHEMA)
    for name, var in SCHEMA.items():
        v = ds[name]
        assert v.dims == var.dims and v.dtype == var.dtype
        assert v.attrs["units"] and v.attrs["description"], name
    for name in ds.coords:
        assert ds[name].attrs.get("description"), name


def test_dims_coords_and_attrs(ds):
    assert dict(ds.sizes) == {"point": 3, "rank": 16, "peer": 16, "kind": 3, "ctrl": 4,
                              "mark": 8, "snapshot": 0}
    assert [str(k) for k in ds["kind"].values] == list(KIND_CLASSES)
    assert len(CONFIG_COORDS) == sum(
        len(dataclasses.fields(getattr(RunConfig(), f.name))) if f.name != "seed" else 1
        for f in dataclasses.fields(RunConfig))
    for name, *_ in CONFIG_COORDS:
        assert ds[name].dims == ("point",)
    assert list(ds.topology_dims.values) == ["2x2", "2x2", "4x4x4"]
    assert list(ds.protocol_name.values) == ["none", "window", "none"]
    assert list(ds.workload_ranks.values) == [16, 8, 1024]
    assert list(ds.seed.values) == [0, 0, 3]
    assert ds.mpi_limic.dtype == bool and ds.network_cycle_ns.dtype == np.float64
    for name in ("topology_kind", "topology_dims", "protocol_name", "kind"):
        assert ds[name].dtype.kind == "T", name          # variable-length StringDType
    assert ds.attrs["extoll_vec_version"] == extoll_vec.__version__
    assert ds.attrs["schema_version"] == SCHEMA_VERSION
    assert ds.attrs["note"] == "test"
    assert json.loads(ds.attrs["configs"]) == json.loads(
        json.dumps([c.to_dict() for c in sample_configs()]))
    assert configs_of(ds) == sample_configs()
    assert schema_problems(ds) == []


def test_padding_is_checked():
    configs = sample_configs()
    arrays = sample_arrays(configs)
    arrays["stall_us"][1, 12] = 1.0                     # point 1 has 8 ranks
    with pytest.raises(ValueError, match="stall_us"):
        build_dataset(configs, arrays)


def test_arrays_must_match_schema():
    configs = sample_configs()
    arrays = sample_arrays(configs)
    with pytest.raises(ValueError, match="missing"):
        build_dataset(configs, {k: v for k, v in arrays.items() if k != "exec_time_us"})
    with pytest.raises(ValueError, match="unknown"):
        build_dataset(configs, {**arrays, "bogus": arrays["exec_time_us"]})
    with pytest.raises(ValueError, match="shape"):
        build_dataset(configs, {**arrays, "exec_time_us": arrays["exec_time_us"][:2]})
    with pytest.raises(ValueError, match="dtype"):
        build_dataset(configs, {**arrays, "simulated_cycles": arrays["exec_time_us"]})
    with pytest.raises(ValueError, match="reserved"):
        build_dataset(configs, arrays, attrs={"configs": "x"})
    # a safe cast is accepted
    ok = build_dataset(configs, {**arrays, "simulated_cycles": np.array([1, 2, 3], np.int32)})
    assert ok.simulated_cycles.dtype == np.int64


def test_all_network_only_has_empty_rank_axis():
    configs = [get_example("uniform")]
    ds = build_dataset(configs, sample_arrays(configs))
    assert ds.sizes["rank"] == 0


# ---- zarr --------------------------------------------------------------------------------------
def test_round_trip(ds, tmp_path):
    path = tmp_path / "r.zarr"
    write_zarr(ds, path)
    back = open_result(path).load()
    xr.testing.assert_identical(ds, back)               # values, coords, attrs
    for name in ds.variables:
        assert back[name].dtype == ds[name].dtype, name
        assert back[name].attrs == ds[name].attrs, name
    assert back.attrs == ds.attrs
    assert configs_of(back) == sample_configs()
    # no leftovers beside the store
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.zarr"]


def test_write_is_warning_free(ds, tmp_path, recwarn):
    write_zarr(ds, tmp_path / "r.zarr")
    open_result(tmp_path / "r.zarr").load()
    assert not [w for w in recwarn.list], [str(w.message) for w in recwarn.list]


def _snapshot(path: Path) -> dict:
    return {str(p.relative_to(path)): (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
            for p in sorted(path.rglob("*"))}


def test_refuses_to_overwrite(ds, tmp_path):
    path = tmp_path / "r.zarr"
    write_zarr(ds, path)
    before = _snapshot(path)
    other = ds.assign(exec_time_us=ds.exec_time_us * 2)
    with pytest.raises(StoreError) as exc:
        write_zarr(other, path)
    assert str(path) in str(exc.value) and "exists" in str(exc.value)
    assert _snapshot(path) == before
    write_zarr(other, path, overwrite=True)
    np.testing.assert_array_equal(open_result(path).exec_time_us.values, other.exec_time_us.values)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.zarr"]


def test_overwrite_only_replaces_a_zarr_store(ds, tmp_path):
    precious = tmp_path / "notes"
    precious.mkdir()
    (precious / "thesis.txt").write_text("do not delete")
    with pytest.raises(StoreError, match="not a zarr store"):
        write_zarr(ds, precious, overwrite=True)
    assert (precious / "thesis.txt").read_text() == "do not delete"
    afile = tmp_path / "file.zarr"
    afile.write_text("x")
    with pytest.raises(StoreError):
        write_zarr(ds, afile, overwrite=True)
    assert afile.read_text() == "x"


def test_write_creates_parent_dirs(ds, tmp_path):
    write_zarr(ds, tmp_path / "out" / "deep" / "r.zarr")
    assert open_result(tmp_path / "out" / "deep" / "r.zarr").sizes["point"] == 3


def test_open_missing(tmp_path):
    with pytest.raises(StoreError) as exc:
        open_result(tmp_path / "nope.zarr")
    assert str(tmp_path / "nope.zarr") in str(exc.value)


def test_open_foreign_store(tmp_path):
    path = tmp_path / "foreign.zarr"
    xr.Dataset({"temperature": ("time", np.arange(5.0))}).to_zarr(
        path, zarr_format=3, consolidated=False)
    with pytest.raises(StoreError) as exc:
        open_result(path)
    msg = str(exc.value)
    assert str(path) in msg and "not an extoll-vec result" in msg and "\n" not in msg


def test_open_store_with_wrong_variables(ds, tmp_path):
    path = tmp_path / "partial.zarr"
    ds.drop_vars(["stall_us"]).to_zarr(path, zarr_format=3, consolidated=False)
    with pytest.raises(StoreError, match="stall_us"):
        open_result(path)


def test_store_written_before_a_config_field_existed_reads_its_default(ds, tmp_path):
    """config.ADDED_FIELDS: a store without network_nic_packet_ns (written before the field
    existed) opens, with the default beside every point; any other missing coordinate is still
    an error (negative control)."""
    path = tmp_path / "old.zarr"
    ds.drop_vars(["network_nic_packet_ns"]).to_zarr(path, zarr_format=3, consolidated=False)
    back = open_result(path)
    assert (back["network_nic_packet_ns"].values == 0.0).all()
    assert back["network_nic_packet_ns"].dims == ("point",)
    path2 = tmp_path / "older.zarr"
    ds.drop_vars(["network_nic_fifo_packets"]).to_zarr(path2, zarr_format=3, consolidated=False)
    with pytest.raises(StoreError, match="coordinate network_nic_fifo_packets missing"):
        open_result(path2)


@pytest.mark.parametrize("garbage", ["files", "zarr.json", "file"])
def test_open_corrupt_store(tmp_path, garbage):
    path = tmp_path / "corrupt.zarr"
    if garbage == "file":
        path.write_bytes(os.urandom(64))
    else:
        path.mkdir()
        (path / "data").write_bytes(os.urandom(256))
        (path / "junk.txt").write_text("{{{ not json")
        if garbage == "zarr.json":
            (path / "zarr.json").write_bytes(b"\x00\xffgarbage{")
    with pytest.raises(StoreError) as exc:
        open_result(path)
    msg = str(exc.value)
    assert str(path) in msg and "\n" not in msg


def test_cli_refuses_existing_output_before_running(ds, tmp_path):
    path = tmp_path / "r.zarr"
    write_zarr(ds, path)
    before = _snapshot(path)
    proc = subprocess.run([sys.executable, "-m", "extoll_vec.cli", "run", "--example", "tiny",
                           "-o", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "exists" in proc.stderr
    assert _snapshot(path) == before


# ---- with the real engine ----------------------------------------------------------------------
def test_engine_result_matches_schema():
    from extoll_vec import engine
    assert set(engine.RESULT_VARIABLES) == set(SCHEMA)
    configs = [get_example("tiny")]
    res = engine.simulate(configs)
    assert schema_problems(res) == []
    assert res.sizes["rank"] == 16
    assert float(res.exec_time_us[0]) > 0
    assert int(res.packets_sent.sel(kind="data").sum()) > 0


@pytest.mark.slow
def test_cli_run_tiny_writes_store(tmp_path):
    path = tmp_path / "tiny.zarr"
    proc = subprocess.run([sys.executable, "-m", "extoll_vec.cli", "run", "--example", "tiny",
                           "-o", str(path)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "exec_time_us" in proc.stdout and "wall" in proc.stdout
    res = open_result(path)
    assert res.sizes["point"] == 1 and list(res.protocol_name.values) == ["none"]
    assert configs_of(res) == [get_example("tiny")]


def test_summary_mpi_and_network_only(ds):
    from extoll_vec.cli import summary
    configs = sample_configs()
    mpi = summary(configs[1], ds, 1.5, i=1, extra=[("wrote", "x.zarr")])
    for word in ("exec_time_us", "packets sent", "data", "control", "rma", "mailbox max",
                 "delayed sends", "stall", "link util", "wall", "wrote"):
        assert word in mpi
    net = summary(configs[2], ds, 1.5, i=2)
    assert "accepted" in net and "latency" in net and "mailbox" not in net
    assert len(mpi.splitlines()) <= 24

"""One zarr store per sweep: created up front, filled batch by batch, resumable.

Layout: a result Dataset (dataset.SCHEMA, config coordinates, attrs) over the sweep's full point
axis, plus
- ``completed`` (bool, point): True once a point's results are in the store. Unfinished points
  read as padding (NaN / -1) and completed False;
- one coordinate per sweep axis that is not a config coordinate already (zipped axes, ``rep``);
- attrs ``sweep_name``, ``sweep_fingerprint`` (identity of the points: spec.fingerprint),
  ``sweep_spec`` (the spec file text), ``sweep_axes`` (JSON: name, keys, coord, labels of every
  axis, in grid order), ``git_revision``, plus dataset.py's version, schema and configs.

Every variable is chunked one point per chunk along ``point``, so writes of different points
never touch the same chunk file. The client writes a finished batch's points (data first, then
``completed``) with Ctrl-C deferred until the write is done, so an interrupted sweep leaves a
valid store whose completed points are exactly the finished ones.

Zarr format 3 with consolidated metadata, as dataset.py. The metadata is written once, at
creation, and never changes: batches write only chunks of existing arrays (data, then mask).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import StoreError
from .spec import Sweep

MASK = "completed"
SWEEP_ATTRS = ("sweep_name", "sweep_fingerprint", "sweep_spec", "sweep_axes", "git_revision")


# ---- provenance ----------------------------------------------------------------------------------
def git_revision() -> str:
    """The source checkout's commit (+ "-dirty" with uncommitted changes), or "unknown".

    Read-only: --no-optional-locks keeps git from refreshing the index."""
    src = Path(__file__).resolve().parent
    git = ["git", "--no-optional-locks", "-C", str(src)]
    try:
        rev = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        if rev.returncode != 0:
            return "unknown"
        dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# ---- creating and checking -----------------------------------------------------------------------
def _template(sweep: Sweep):
    """The store's Dataset with lazy (dask) fill values for the data and the mask."""
    import dask.array as da

    from ..dataset import SCHEMA, build_dataset, result_sizes

    configs = list(sweep.configs)
    sizes = result_sizes(configs)
    fills = {name: np.broadcast_to(np.array(var.fill, var.dtype),
                                   tuple(sizes[d] for d in var.dims))
             for name, var in SCHEMA.items()}
    attrs = {"sweep_name": sweep.name, "sweep_fingerprint": sweep.fingerprint,
             "sweep_spec": sweep.text,
             "sweep_axes": json.dumps([a.to_json() for a in sweep.axes], separators=(",", ":")),
             "git_revision": git_revision()}
    ds = build_dataset(configs, fills, attrs=attrs)
    encoding = {}
    for name, var in SCHEMA.items():
        shape = tuple(sizes[d] for d in var.dims)
        chunks = tuple(1 if d == "point" else max(sizes[d], 1) for d in var.dims)
        ds[name] = (var.dims, da.full(shape, var.fill, dtype=var.dtype,
                                      chunks=(sizes["point"],) + shape[1:]), ds[name].attrs)
        encoding[name] = {"chunks": chunks, "fill_value": var.fill}
    ds.coords["point"] = ("point", np.arange(sizes["point"], dtype=np.int64),
                          {"description": "point number in the sweep (row-major grid order)"})
    ds[MASK] = (("point",), da.zeros(sizes["point"], dtype=bool, chunks=sizes["point"]),
                {"description": "the point's results are in the store"})
    encoding[MASK] = {"chunks": (1,), "fill_value": False}
    index = np.array([sweep.index(i) for i in range(len(configs))], dtype=np.int64)
    for k, a in enumerate(sweep.axes):
        if a.coord not in ds.coords:
            labels = np.asarray(a.labels)
            if labels.dtype.kind == "U":
                labels = labels.astype(np.dtypes.StringDType())
            ds.coords[a.coord] = ("point", labels[index[:, k]],
                                  {"description": f"sweep axis {a.name} ({', '.join(a.keys)})"})
    return ds, encoding


def create_store(path: str | os.PathLike, sweep: Sweep, overwrite: bool = False) -> Path:
    """Create the empty store of a sweep (written aside, then renamed into place)."""
    from ..dataset import to_zarr_consolidated, write_atomically
    ds, encoding = _template(sweep)
    return write_atomically(path, overwrite, lambda tmp: to_zarr_consolidated(
        ds, tmp, mode="w-", compute=False, encoding=encoding))


def _open_group(path: str | os.PathLike, mode: str = "r"):
    import zarr
    p = Path(path)
    if not (p / "zarr.json").is_file():
        raise StoreError(path, "not a zarr format 3 store (no zarr.json)")
    try:
        return zarr.open_group(str(p), mode=mode, zarr_format=3)
    except Exception as exc:  # zarr raises many types for a damaged store
        raise StoreError(path, f"unreadable zarr store ({type(exc).__name__})") from None


def prepare_store(path: str | os.PathLike, sweep: Sweep, overwrite: bool = False) -> np.ndarray:
    """Make `path` the store of `sweep` and return its completed mask (bool per point).

    A missing path is created; an existing store of the same sweep is resumed; with
    overwrite=True an existing store is replaced. Anything else raises StoreError."""
    p = Path(path)
    if overwrite or not (p.exists() or p.is_symlink()):
        create_store(p, sweep, overwrite)
        return np.zeros(sweep.n_points, dtype=bool)
    check_same_sweep(p, sweep)
    return read_completed(p)


def check_same_sweep(path: str | os.PathLike, sweep: Sweep) -> None:
    """StoreError unless the store at `path` holds exactly the points of `sweep`."""
    p = Path(path)
    if not p.is_dir():
        raise StoreError(path, "exists and is not a zarr store; refusing to overwrite it")
    attrs = dict(_open_group(p).attrs)
    if "sweep_fingerprint" not in attrs:
        raise StoreError(path, "exists and is not a sweep store (no sweep_fingerprint); choose "
                               "another path or overwrite it explicitly (--overwrite)")
    from ..dataset import version_problem
    version = version_problem(attrs)
    if version is not None:
        # its arrays are not this version's: resuming would compute points it cannot store
        raise StoreError(path, f"{version}; it cannot be resumed: choose another path or "
                               "overwrite it explicitly (--overwrite)")
    if attrs["sweep_fingerprint"] != sweep.fingerprint:
        n = len(json.loads(attrs.get("configs", "[]")))
        raise StoreError(path, f"holds a different sweep ({attrs.get('sweep_name')!r}, {n} "
                               f"points) than {sweep.path or sweep.name} ({sweep.name!r}, "
                               f"{sweep.n_points} points); choose another path or overwrite it "
                               "explicitly (--overwrite)")


def read_completed(path: str | os.PathLike) -> np.ndarray:
    return np.asarray(_open_group(path)[MASK][:], dtype=bool)


# ---- writing -------------------------------------------------------------------------------------
@contextlib.contextmanager
def deferred_interrupt():
    """Hold Ctrl-C (SIGINT) until the block is done, then raise KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda *a: received.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            raise KeyboardInterrupt


def _runs(points: Sequence[int]) -> list[tuple[int, int, int]]:
    """(first row, start point, stop point) of each run of consecutive points."""
    out, row = [], 0
    pts = list(points)
    while row < len(pts):
        end = row + 1
        while end < len(pts) and pts[end] == pts[end - 1] + 1:
            end += 1
        out.append((row, pts[row], pts[end - 1] + 1))
        row = end
    return out


class StoreWriter:
    """Writes finished points into a sweep store (one process at a time: the client)."""

    def __init__(self, path: str | os.PathLike):
        from ..dataset import SCHEMA
        self.path = Path(path)
        self.group = _open_group(path, mode="r+")
        self.arrays = {name: self.group[name] for name in SCHEMA}
        self.mask = self.group[MASK]
        self.schema = SCHEMA

    def _padded(self, name: str, a: np.ndarray) -> np.ndarray:
        from ..dataset import pad_points
        return pad_points(np.asarray(a), self.schema[name], tuple(self.arrays[name].shape[1:]))

    def write(self, points: Sequence[int], arrays: Mapping[str, Any]) -> None:
        """Store the results of `points` (ascending; row j of every array is points[j])."""
        order = np.argsort(points, kind="stable")
        pts = [int(points[j]) for j in order]
        data = {name: self._padded(name, np.asarray(arrays[name])[order]) for name in self.schema}
        try:
            with deferred_interrupt():
                for row, a, b in _runs(pts):
                    for name, arr in self.arrays.items():
                        arr[a:b] = data[name][row:row + b - a]
                for row, a, b in _runs(pts):
                    self.mask[a:b] = True
        except OSError as exc:
            raise StoreError(self.path, f"cannot write: {exc.strerror or exc}") from None


# ---- reading -------------------------------------------------------------------------------------
def open_sweep(path: str | os.PathLike, completed_only: bool = False, chunks: Any = None):
    """The Dataset of a result store (a sweep store or an `extoll-vec run -o` store).

    completed_only=True drops the points a sweep has not finished yet. Raises StoreError for a
    missing, unreadable or foreign store."""
    from ..dataset import open_result
    ds = open_result(path, chunks=chunks)
    if completed_only and MASK in ds:
        ds = ds.isel(point=np.flatnonzero(ds[MASK].values))
    return ds


def sweep_axes(ds) -> list[dict]:
    """The axes of a sweep Dataset in grid order: dicts with name, keys, coord, labels.
    Empty for a store that is not a sweep."""
    return json.loads(ds.attrs.get("sweep_axes", "[]"))


def dense(ds):
    """The sweep as an N-D Dataset: the point axis reshaped into one dimension per sweep axis
    (named by the axis coordinate, labelled in spec order). Needs every point (the full store,
    not completed_only); unfinished points hold padding and completed=False. Loads the data."""
    import xarray as xr
    axes = sweep_axes(ds)
    shape = tuple(len(a["labels"]) for a in axes)
    if int(np.prod(shape)) != ds.sizes["point"]:
        raise ValueError(f"dense() needs all {int(np.prod(shape))} points of the sweep, the "
                         f"Dataset has {ds.sizes['point']}")
    dims = tuple(a["coord"] for a in axes)
    data_vars, coords = {}, {}
    for name, var in ds.variables.items():
        if "point" not in var.dims:
            target = coords if name in ds.coords else data_vars
            target[name] = var
            continue
        if name in dims:
            continue
        v = var.transpose("point", ...)
        new_dims = dims + v.dims[1:]
        values = np.asarray(v.values).reshape(shape + v.shape[1:])
        target = coords if name in ds.coords else data_vars
        target[name] = xr.Variable(new_dims, values, v.attrs)
    for a, d in zip(axes, dims):
        labels = np.asarray(ds[a["coord"]].values).reshape(shape)
        labels = np.moveaxis(labels, dims.index(d), 0).reshape(len(a["labels"]), -1)[:, 0]
        coords[d] = xr.Variable((d,), labels, ds[a["coord"]].attrs)
    return xr.Dataset(data_vars, coords=coords, attrs=ds.attrs)


def open_merged(paths: Sequence[str | os.PathLike]):
    """The completed points of several result stores as one Dataset, for the targets that
    average replicates (analysis/extoll_common.overheads): a sweep extended by more seeds in a
    second store (the same spec with ``repeat: {count: N, seed: S}`` moved on) is read as if
    one sweep had run them all. Points renumbered 0..N-1 in the stores' order; attrs
    ``configs`` lists them (so extoll_common.configs reads them as usual), ``sweep_name`` joins
    the names, and the other sweep attrs, which describe one spec's grid, are dropped (dense()
    does not apply). A point present in two stores is simulated identically (determinism) and
    the targets count a seed once. Raises StoreError naming the store whose variables or sizes
    differ from the first one's, or the store holding a point whose results differ from its copy
    in an earlier store (stores of two model versions: merging them would mix two models)."""
    import xarray as xr
    if len(paths) == 1:
        return open_sweep(paths[0])
    parts, configs, names = [], [], []
    seen: dict[str, tuple[int, int, int]] = {}   # config -> store, position, point
    for p in paths:
        ds = open_sweep(p, completed_only=True)
        every = json.loads(ds.attrs.get("configs", "[]"))
        sel = ([int(i) for i in ds["point"].values] if "point" in ds.coords   # a sweep's
               else list(range(ds.sizes.get("point", 0))))                        # a run's
        if not sel:
            raise StoreError(p, "has no completed points to merge")
        opened, ds = ds, ds.drop_vars([MASK], errors="ignore").load()
        opened.close()
        if parts:
            first = parts[0]
            if set(ds.variables) != set(first.variables):
                diff = sorted(set(ds.variables) ^ set(first.variables))
                raise StoreError(p, f"cannot be merged with {paths[0]}: variables differ "
                                    f"({', '.join(diff[:5])}); allowed: stores of the same "
                                    "kind of sweep (e.g. one spec with other seeds)")
            for d, n in ds.sizes.items():
                if d != "point" and first.sizes.get(d) != n:
                    raise StoreError(p, f"cannot be merged with {paths[0]}: dimension {d} has "
                                        f"{n} entries here, {first.sizes.get(d)} there; "
                                        "allowed: stores whose runs have the same sizes")
        for j, i in enumerate(sel):
            key = json.dumps(every[i], sort_keys=True)
            if key not in seen:
                seen[key] = (len(parts), j, i)
            elif seen[key][0] < len(parts):          # a copy in an earlier store
                k, jk, ik = seen[key]
                _same_results(parts[k].isel(point=[jk]), ds.isel(point=[j]),
                              (paths[k], ik), (p, i))
        configs += [every[i] for i in sel]
        names.append(ds.attrs.get("sweep_name", Path(p).name))
        parts.append(ds)
    merged = xr.concat(parts, dim="point", data_vars="all", coords="different",
                       compat="equals", join="exact", combine_attrs="drop")
    merged = merged.assign_coords(point=np.arange(merged.sizes["point"]))
    attrs = {k: v for k, v in parts[0].attrs.items() if k not in SWEEP_ATTRS}
    attrs.update(configs=json.dumps(configs), sweep_name=" + ".join(names))
    merged.attrs = attrs
    return merged


def _same_results(a, b, where_a, where_b) -> None:
    """Equal configurations simulate bit-identically (a, b: one point each); a copy that
    differs comes from another version of the model (git_revision says which)."""
    for name in a.data_vars:
        if not np.array_equal(a[name].values, b[name].values, equal_nan=True):
            raise StoreError(where_b[0], f"point {where_b[1]} has the configuration of point "
                             f"{where_a[1]} of {where_a[0]} but another {name} (git revisions "
                             f"{a.attrs.get('git_revision', '?')} and "
                             f"{b.attrs.get('git_revision', '?')}): stores of different model "
                             "versions cannot be merged; allowed: stores whose equal points "
                             "hold equal results")

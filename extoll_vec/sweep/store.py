"""One zarr store per sweep: created up front, filled batch by batch, resumable.

Layout: a result Dataset (dataset.SCHEMA, config coordinates, attrs) over the sweep's full point
axis, plus
- ``completed`` (bool, point): True once a point's results are in the store. Unfinished points
  read as padding (NaN / -1) and completed False;
- one coordinate per sweep axis that is not a config coordinate already (zipped axes, ``rep``);
- attrs ``sweep_name``, ``sweep_fingerprint`` (identity of the points: spec.fingerprint),
  ``sweep_spec`` (the spec file text), ``sweep_axes`` (JSON: name, keys, coord, labels of every
  axis, in grid order), ``git_revision``, plus dataset.py's version, schema and configs; a
  store created by the command line also ``sweep_command`` (the command, shell-quoted) and
  ``sweep_directory`` (where it ran: the command's relative paths start there).

Every variable is chunked one point per chunk along ``point``, so writes of different points
never touch the same chunk file. The client writes a finished batch's points (data first, then
``completed``) with Ctrl-C deferred until the write is done, so an interrupted sweep leaves a
valid store whose completed points are exactly the finished ones.

Zarr format 3 with consolidated metadata, as dataset.py. The metadata is written once, at
creation, and never changes: batches write only chunks of existing arrays (data, then mask).

A store is a local path or a URL (``s3://bucket/sweep.zarr``, any fsspec URL): every function
here takes either, through storage.location, with the same checks and messages; open_store
is the one call a reader needs.
"""
from __future__ import annotations

import contextlib
import json
from collections import Counter
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import StoreError
from ..inputs import shown_path
from ..storage import location
from .spec import Sweep

MASK = "completed"
SWEEP_ATTRS = ("sweep_name", "sweep_fingerprint", "sweep_spec", "sweep_axes", "git_revision",
               "sweep_command", "sweep_directory")


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


def command_attrs() -> dict[str, str]:
    """The command line creating a store (cli.invocation) as its attributes, for the report's
    "made by"; none from the Python API, whose stores of equal sweeps stay equal attribute for
    attribute."""
    import shlex

    from ..cli import invocation
    argv = invocation()
    if argv is None:
        return {}
    try:
        here = os.getcwd()
    except OSError:             # the directory was removed under the process
        here = "unknown"
    return {"sweep_command": shlex.join(argv), "sweep_directory": here}


# ---- creating and checking -----------------------------------------------------------------------
def _template(sweep: Sweep):
    """The store's Dataset with lazy (dask) fill values for the data and the mask."""
    import dask.array as da

    from ..dataset import build_dataset, result_sizes, schema_for

    configs = list(sweep.configs)
    sizes = result_sizes(configs)
    # the results of every point plus the outputs of the protocols the sweep runs
    schema = schema_for(configs)
    fills = {name: np.broadcast_to(np.array(var.fill, var.dtype),
                                   tuple(sizes[d] for d in var.dims))
             for name, var in schema.items()}
    attrs = {"sweep_name": sweep.name, "sweep_fingerprint": sweep.fingerprint,
             "sweep_spec": sweep.text,
             "sweep_axes": json.dumps([a.to_json() for a in sweep.axes], separators=(",", ":")),
             "git_revision": git_revision(), **command_attrs()}
    ds = build_dataset(configs, fills, attrs=attrs)
    encoding = {}
    for name, var in schema.items():
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


def create_store(path: str | os.PathLike, sweep: Sweep, overwrite: bool = False) -> Path | str:
    """Create the empty store of a sweep (written aside, then renamed into place; at a URL
    written locally, then uploaded)."""
    from ..dataset import to_zarr_consolidated, write_atomically
    ds, encoding = _template(sweep)
    return write_atomically(path, overwrite, lambda tmp: to_zarr_consolidated(
        ds, tmp, mode="w-", compute=False, encoding=encoding))


def _open_group(path: str | os.PathLike, mode: str = "r"):
    import zarr
    loc = location(path)
    try:
        there = loc.is_file("zarr.json")
    except OSError as exc:
        raise StoreError(shown_path(path), f"cannot be read: {exc.strerror or exc}") from None
    if not there:
        raise StoreError(path, "not a zarr format 3 store (no zarr.json)")
    try:
        return zarr.open_group(loc.zarr_store(read_only=mode == "r"), mode=mode, zarr_format=3)
    except Exception as exc:  # zarr raises many types for a damaged store
        raise StoreError(path, f"unreadable zarr store ({type(exc).__name__})") from None


def prepare_store(path: str | os.PathLike, sweep: Sweep, overwrite: bool = False) -> np.ndarray:
    """Make `path` the store of `sweep` and return its completed mask (bool per point).

    A missing path is created; an existing store of the same sweep is resumed; with
    overwrite=True an existing store is replaced. Anything else raises StoreError."""
    if not overwrite:
        done = resume_mask(path, sweep)
        if done is not None:
            return done
    create_store(path, sweep, overwrite)
    return np.zeros(sweep.n_points, dtype=bool)


def check_same_sweep(path: str | os.PathLike, sweep: Sweep) -> None:
    """StoreError unless the store at `path` is whole (check_store) and holds exactly the
    points of `sweep`."""
    check_store(path, "resume", sweep)


def read_completed(path: str | os.PathLike) -> np.ndarray:
    return np.asarray(_open_group(path)[MASK][:], dtype=bool)


def resume_mask(path: str | os.PathLike, sweep: Sweep) -> np.ndarray | None:
    """For `extoll-vec sweep SPEC -o PATH` (resume and --dry-run, without --overwrite): None
    when nothing is at PATH (the sweep creates its store there), else the completed mask of the
    store of `sweep` there, checked whole first (check_same_sweep). StoreError, one line, for
    anything else: a damaged store, another sweep's, a file, a broken or looping symbolic link,
    a name the system cannot take, storage that cannot be reached."""
    loc = location(path)
    try:
        there = loc.exists() or loc.is_symlink()
    except OSError as exc:
        raise StoreError(shown_path(path), f"cannot be used: {exc.strerror or exc}; choose "
                                           "another path (-o)") from None
    if not there:
        return None
    check_same_sweep(path, sweep)
    return read_completed(path)


# ---- checking an existing store ------------------------------------------------------------------
# What to do about a store that cannot be used: replace it (--overwrite; dataset.check_writable
# replaces only a zarr store) or give another path.
_FIX = {
    "resume": ("it cannot be resumed: choose another path or overwrite it explicitly "
               "(--overwrite)", "choose another path (-o); --overwrite replaces only a zarr store"),
    "read": ("it cannot be read: compute it again into another path (or over it with "
             "--overwrite)", "give the path of a result store (--from)"),
}
READ_BLOCK_BYTES = 64 << 20   # the deep check decodes arrays this much at a time
REMOTE_ARRAYS_AT_ONCE = 8     # ... and at a URL this many arrays at once


def _short(exc: BaseException, width: int = 80) -> str:
    """`exc` in a few words: type and message, on one line."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 at byte {exc.start}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    msg = " ".join(str(exc).split())
    msg = msg if len(msg) <= width else msg[:width] + "..."
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _json_file(loc, *parts: str):
    """The JSON document of a metadata file of the store at `loc` (ValueError/OSError when it
    is not one)."""
    return json.loads(loc.read_bytes(*parts))


def check_store(path: str | os.PathLike, for_what: str = "read", sweep: Sweep | None = None,
                deep: bool = True, decode: bool = True) -> None:
    """StoreError, in one line naming the array, attribute or path and what to do, unless the
    existing store at `path` is a whole extoll-vec result store; reads only, changes nothing.

    for_what: "resume" (`extoll-vec sweep SPEC -o EXISTING`, with or without --dry-run: a sweep
    store is needed, and with `sweep` it must hold exactly that sweep's points) or "read"
    (`tables --from`: a sweep store or a `run -o` store). Checked, in order: the path is a
    directory with a zarr format 3 group's zarr.json; its attributes (schema_version of this
    version, configs a JSON list of configs, the sweep attributes of a sweep store); every
    variable of dataset.SCHEMA, the config coordinates, the sweep axes' coordinates and
    ``completed`` (sweep stores) present, in the store's metadata and on disk, with their
    dimensions, data types and shapes (one size per dimension; ``point``: one per config); with
    deep=True, every config parses and (unless decode=False: the caller reads every chunk
    itself) every chunk of every array decodes. A store without consolidated metadata is
    read through its arrays' own metadata (valid); a symbolic link is followed. `path`: a
    local path or a URL (storage.location)."""
    from ..config import ADDED_FIELDS, from_dict
    from ..dataset import CONFIG_COORDS, PROTOCOL_SCHEMA, SCHEMA, version_problem
    damaged, foreign = _FIX[for_what]
    loc = location(path)

    def bad(what: str, replaceable: bool = True) -> StoreError:
        return StoreError(path, f"{what}; {damaged if replaceable else foreign}")

    try:
        exists, is_dir = loc.exists(), loc.is_dir()
        if not exists:
            if loc.is_symlink():
                raise bad("is a symbolic link to nothing (broken or a loop)", False)
            raise StoreError(path, "no such result store")
        if not is_dir:
            raise bad("exists and is not a zarr store (a file, not a directory)", False)
        if not loc.is_file("zarr.json"):
            if loc.is_file(".zgroup"):
                raise bad("a zarr format 2 store; extoll-vec results are zarr format 3")
            entries = loc.children()
            if not entries:
                raise bad("an empty directory, not a zarr store", False)
            if any(loc.is_file(e, "zarr.json") for e in entries):
                raise bad("damaged store: its root metadata zarr.json is missing", False)
            raise bad("not a zarr store (no zarr.json)", False)
        try:
            meta = _json_file(loc, "zarr.json")
        except (ValueError, RecursionError) as exc:
            raise bad(f"damaged store: zarr.json is not JSON ({_short(exc)})") from None
    except OSError as exc:
        raise StoreError(shown_path(path), f"cannot be read: {exc.strerror or exc}") from None
    if (not isinstance(meta, dict) or meta.get("zarr_format") != 3
            or meta.get("node_type") != "group"):
        raise bad("damaged store: zarr.json is not the metadata of a zarr format 3 group")
    attrs = meta.get("attributes", {})
    if not isinstance(attrs, dict):
        raise bad("damaged store: zarr.json: attributes is not a mapping")
    if "schema_version" not in attrs:
        raise bad("not an extoll-vec result store (no schema_version attribute: a zarr store "
                  "of another program)")
    version = version_problem(attrs)
    if version is not None:
        raise bad(version)

    def json_attr(name: str, kind: type):
        text = attrs.get(name)
        if not isinstance(text, str):
            raise bad(f"damaged store: attribute {name} is "
                      f"{'missing' if text is None else 'not a JSON string'}")
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise bad(f"damaged store: attribute {name} is not JSON ({_short(exc)})") from None
        if not isinstance(value, kind):
            raise bad(f"damaged store: attribute {name} is not a JSON {kind.__name__}")
        return value

    configs = json_attr("configs", list)
    if not configs or not all(isinstance(c, dict) for c in configs):
        raise bad("damaged store: attribute configs is not a list of configurations")
    n = len(configs)

    # ---- arrays: which there are -----------------------------------------------------------
    consolidated = meta.get("consolidated_metadata")
    listed = None
    if consolidated is not None:
        listed = consolidated.get("metadata") if isinstance(consolidated, dict) else None
        if not isinstance(listed, dict):
            raise bad("damaged store: zarr.json: consolidated_metadata is not valid")
    try:
        on_disk = {e for e in loc.children() if loc.is_file(e, "zarr.json")}
    except OSError as exc:
        raise StoreError(shown_path(path), f"cannot be read: {exc.strerror or exc}") from None
    names = set(listed) if listed is not None else on_disk

    # ---- a sweep store's attributes ----------------------------------------------------------
    is_sweep = "sweep_fingerprint" in attrs or MASK in names or MASK in on_disk
    if for_what == "resume" and "sweep_fingerprint" not in attrs:
        raise StoreError(path, "exists and is not a sweep store (no sweep_fingerprint); choose "
                               "another path or overwrite it explicitly (--overwrite)")
    axes = []
    if is_sweep:
        for name in SWEEP_ATTRS:
            if name in attrs and not isinstance(attrs[name], str):
                raise bad(f"damaged store: attribute {name} is not a string")
        if "sweep_fingerprint" not in attrs:
            raise bad("damaged store: attribute sweep_fingerprint is missing")
        axes = json_attr("sweep_axes", list)
        for a in axes:
            if not (isinstance(a, dict) and isinstance(a.get("coord"), str)
                    and isinstance(a.get("labels"), list)):
                raise bad("damaged store: attribute sweep_axes is not a list of axes")
        if int(np.prod([len(a["labels"]) for a in axes])) != n:
            raise bad(f"damaged store: attribute sweep_axes describes "
                      f"{int(np.prod([len(a['labels']) for a in axes]))} points, attribute "
                      f"configs {n}")
    if sweep is not None and attrs["sweep_fingerprint"] != sweep.fingerprint:
        raise StoreError(path, f"holds a different sweep ({attrs.get('sweep_name')!r}, {n} "
                               f"points) than {sweep.path or sweep.name} ({sweep.name!r}, "
                               f"{sweep.n_points} points); choose another path or overwrite it "
                               "explicitly (--overwrite)")
    if deep:
        for i, c in enumerate(configs):
            try:
                from_dict(c)
            except Exception as exc:  # noqa: BLE001 - any failure is a damaged attribute
                raise bad(f"damaged store: attribute configs: point {i}: {_short(exc, 60)}") \
                    from None

    # ---- arrays: present, consistent metadata, shapes ----------------------------------------
    required = list(SCHEMA) + ([MASK] if is_sweep else []) + ["kind"]
    required += [c for c, section, fld, _ in CONFIG_COORDS
                 if f"{section}.{fld}" not in ADDED_FIELDS]
    required += [a["coord"] for a in axes]
    for name in required:
        if name not in names:
            where = (" from the store's metadata (zarr.json)" if name in on_disk else
                     f" (no {name}/zarr.json)")
            raise bad(f"damaged store: array {name} is missing{where}")
    expected = {MASK: (("point",), "bool")}
    expected.update({k: (v.dims, v.dtype.name) for k, v in PROTOCOL_SCHEMA.items()})
    expected.update({k: (v.dims, v.dtype.name) for k, v in SCHEMA.items()})
    order = list(dict.fromkeys(required + sorted(names)))
    try:
        loc.prefetch([f"{name}/zarr.json" for name in order if name in on_disk])
    except OSError as exc:
        raise StoreError(shown_path(path), f"cannot be read: {exc.strerror or exc}") from None
    shapes = {}
    for name in order:
        if not loc.is_file(name, "zarr.json"):
            raise bad(f"damaged store: array {name} is missing (no {name}/zarr.json)")
        try:
            own = _json_file(loc, name, "zarr.json")
        except (ValueError, RecursionError, OSError) as exc:
            raise bad(f"damaged store: {name}/zarr.json is not JSON ({_short(exc)})") \
                from None
        arr = listed[name] if listed is not None else own
        if not (isinstance(own, dict) and isinstance(arr, dict)):
            raise bad(f"damaged store: array {name}: its metadata is not a mapping")
        if listed is not None:
            for key in ("node_type", "shape", "data_type", "dimension_names"):
                if own.get(key) != arr.get(key):
                    raise bad(f"damaged store: array {name}: its {key} differs between "
                              f"zarr.json ({arr.get(key)}) and {name}/zarr.json "
                              f"({own.get(key)})")
        shape, dims = arr.get("shape"), arr.get("dimension_names")
        if (arr.get("node_type") != "array" or not isinstance(shape, list)
                or not all(isinstance(s, int) and s >= 0 for s in shape)
                or not isinstance(dims, list) or len(dims) != len(shape)
                or not all(d is None or isinstance(d, str) for d in dims)):
            raise bad(f"damaged store: array {name}: its metadata has no valid shape and "
                      "dimension names")
        if name in expected:
            want_dims, want_type = expected[name]
            if tuple(dims) != want_dims:
                raise bad(f"damaged store: array {name} has dimensions {tuple(dims)}, "
                          f"expected {want_dims}")
            if arr.get("data_type") != want_type:
                raise bad(f"damaged store: array {name} has data type {arr.get('data_type')}, "
                          f"expected {want_type}")
        shapes[name] = list(zip(dims, shape))
    # one size per dimension: `point` one per config, any other the size most arrays give it
    votes: dict[str, Counter] = {}
    for pairs in shapes.values():
        for d, s in pairs:
            votes.setdefault(d, Counter())[s] += 1
    sizes = {d: c.most_common(1)[0][0] for d, c in votes.items()}
    sizes["point"] = n
    for name, pairs in shapes.items():
        for d, s in pairs:
            if s != sizes[d]:
                has = (f"{n} points (attribute configs)" if d == "point" else
                       f"{sizes[d]} in its other arrays")
                raise bad(f"damaged store: array {name} has shape "
                          f"{tuple(s for _, s in pairs)}: {s} along {d}, where the store has "
                          f"{has}")
    if deep and decode:
        _check_chunks(loc, order, bad)


def _check_chunks(loc, names: Sequence[str], bad) -> None:
    """Decode every chunk of the arrays `names` (a block of points at a time); StoreError
    naming the first chunk that does not decode."""
    import zarr
    try:
        group = zarr.open_group(loc.zarr_store(read_only=True), mode="r", zarr_format=3)
    except Exception as exc:  # noqa: BLE001 - zarr raises many types for a damaged store
        raise bad(f"damaged store: unreadable zarr group ({_short(exc, 60)})") from None

    def problem(name: str) -> StoreError | None:
        try:
            _check_array(group, name, bad)
        except StoreError as exc:
            return exc
        return None

    if loc.remote:   # a request per chunk: several arrays at once, each a round trip apart
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(REMOTE_ARRAYS_AT_ONCE) as pool:
            found = list(pool.map(problem, names))
    else:
        found = map(problem, names)
    for exc in found:
        if exc is not None:
            raise exc


def _check_array(group, name: str, bad) -> None:
    """StoreError naming the first chunk of array `name` that does not decode."""
    import itertools
    try:
        arr = group[name]
    except Exception as exc:  # noqa: BLE001
        raise bad(f"damaged store: array {name} is unreadable ({_short(exc, 60)})") from None
    if arr.ndim == 0 or arr.size == 0:
        blocks = [None]
    else:
        per_point = max(arr.size // arr.shape[0] * max(arr.dtype.itemsize, 1), 1)
        step = max(READ_BLOCK_BYTES // per_point // arr.chunks[0], 1) * arr.chunks[0]
        blocks = [slice(a, a + step) for a in range(0, arr.shape[0], step)]
    for block in blocks:
        try:
            arr[...] if block is None else arr[block]
            continue
        except Exception as exc:  # noqa: BLE001 - codecs raise many types for garbage
            first = exc
        # which chunk: try them one by one
        start = 0 if block is None else block.start
        stop = arr.shape[0] if arr.ndim else 0
        stop = stop if block is None else min(block.stop, stop)
        grid = [range(-(-s // c)) for s, c in zip(arr.shape, arr.chunks)]
        if grid:
            grid[0] = range(start // arr.chunks[0], -(-stop // arr.chunks[0]))
        for idx in itertools.product(*grid):
            try:
                arr[tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, arr.chunks))]
            except Exception as exc:  # noqa: BLE001
                key = "/".join(["c", *map(str, idx)])
                raise bad(f"damaged store: array {name}: chunk {name}/{key} cannot be "
                          f"decoded ({_short(exc, 60)})") from None
        raise bad(f"damaged store: array {name} cannot be read ({_short(first, 60)})")


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
        from ..dataset import PROTOCOL_SCHEMA, SCHEMA
        self.path = path
        self.group = _open_group(path, mode="r+")
        # SCHEMA always; a protocol's outputs where the store has them (the sweep runs it)
        self.schema = {**SCHEMA, **{k: v for k, v in PROTOCOL_SCHEMA.items()
                                    if k in self.group}}
        self.arrays = {name: self.group[name] for name in self.schema}
        self.mask = self.group[MASK]

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
    """The Dataset of a result store (a sweep store or an `extoll-vec run -o` store), at a
    local path or a URL (s3://bucket/sweep.zarr, any fsspec URL).

    completed_only=True drops the points a sweep has not finished yet. Raises StoreError for a
    missing, unreadable or foreign store."""
    from ..dataset import open_result
    check_store(path, "read", deep=False)
    ds = open_result(path, chunks=chunks)
    if completed_only and MASK in ds:
        ds = ds.isel(point=np.flatnonzero(ds[MASK].values))
    return ds


open_store = open_sweep   # the name commands that take a STORE argument read it by


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

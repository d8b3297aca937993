"""Result schema -> xarray.Dataset -> zarr store.

SCHEMA declares every result variable once (dims, dtype, units, description); build_dataset()
turns the engine's arrays into a Dataset from it, write_zarr() stores it and open_result() reads
it back, refusing stores that are missing, unreadable or not extoll-vec results.

Layout of a result Dataset:
- dims ``point`` (one per RunConfig, in order), ``rank`` and ``peer`` (padded to the largest
  rank count among the points: NaN for floats, -1 for ints; length 0 when every point is
  network-only), ``kind`` (packet classes, dtypes.KIND_CLASSES), ``ctrl`` (control packet
  types, dtypes.CTRL_CLASSES), ``mark`` (program marks 0..MAX_MARKS-1) and ``snapshot`` (credit
  snapshots, padded to the most any point takes); result_sizes() gives them all;
- every config parameter as a coordinate along ``point`` named ``<section>_<field>``
  (``protocol_name``, ``workload_ranks``, ``topology_dims`` as a string like "4x4x4", ``seed``);
- attrs: ``extoll_vec_version``, ``schema_version`` and ``configs`` (a JSON list of each
  point's RunConfig.to_dict()).

Storage choices:
- zarr format 3 with consolidated metadata (one read of the root zarr.json opens the whole
  store, which matters for stores of thousands of arrays on network file systems). zarr warns
  at every such write that consolidated metadata "is currently not part in the Zarr format 3
  specification"; to_zarr_consolidated silences exactly that warning. Reads use the
  consolidated metadata and fall back to the arrays' own for stores written without it.
- Strings are numpy StringDType (variable length). Fixed-width ``<U`` strings warn
  ``FixedLengthUTF32`` on format 3, and object strings read back as StringDType anyway; using
  StringDType in memory too keeps a round trip dtype-identical.
- A store is written to a hidden sibling directory and renamed into place, so an existing store
  is never touched unless overwrite=True, and a failed write leaves no half-written store.
  A store at a URL (storage.py: object storage, any fsspec URL) is written locally and
  uploaded, its root metadata last.
"""
from __future__ import annotations

import dataclasses
import json
import os
import warnings
from typing import Callable
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import xarray as xr

from . import __version__
from .config import ADDED_FIELDS, RunConfig, from_dict
from .dtypes import CTRL_CLASSES, KIND_CLASSES, MAX_MARKS
from .errors import StoreError
from .protocols.registry import all_outputs, protocol

SCHEMA_VERSION = 4   # 2: credit_snapshot_in; 3: *_at_mark; 4: measured_cycles, converged;
                     # stores of another version are refused
STR = np.dtypes.StringDType()
RESERVED_ATTRS = ("extoll_vec_version", "schema_version", "configs")


@dataclass(frozen=True)
class Variable:
    dims: tuple[str, ...]
    dtype: np.dtype
    units: str
    description: str

    @property
    def fill(self):
        """Padding value along the rank axis."""
        return np.nan if self.dtype.kind == "f" else -1


_F, _I = np.dtype(np.float64), np.dtype(np.int64)
P, PR, PRK = ("point",), ("point", "rank"), ("point", "rank", "kind")
PRM = ("point", "rank", "mark")

SCHEMA: dict[str, Variable] = {
    "exec_time_us": Variable(P, _F, "us", "time until the last rank finished its program"),
    "rank_time_us": Variable(PR, _F, "us", "time each rank finished its program"),
    "packets_sent": Variable(PRK, _I, "packets", "packets sent by each rank, by packet class"),
    "sends_delayed": Variable(PR, _I, "messages",
                              "messages whose sending had to wait for flow-control credits"),
    "mailbox_max_slots": Variable(PR, _I, "slots", "most mailbox slots in use at once"),
    "stall_us": Variable(PR, _F, "us",
                         "time the CPU waited for flow-control credits or NIC back-pressure"),
    "messages_received": Variable(PR, _I, "messages", "messages received by each rank"),
    "control_sent": Variable(("point", "rank", "ctrl"), _I, "packets",
                             "control packets written by each rank, by type: credit packets, "
                             "compulsory credit return requests and responses; piggyback: data "
                             "packets that carried credits"),
    "flow_control_cpu_us": Variable(PR, _F, "us", "CPU time spent on flow control: credit "
                                    "operations, writing and retrieving control packets"),
    "mark_time_us": Variable(PRM, _F, "us",
                             "when each rank passed each mark of its program (0: start of the "
                             "measured part, 1: its end; multiphase: 2+p after phase p); NaN: "
                             "never"),
    # the counters above as they stood when each rank passed each mark: the measured part of a
    # run is the difference of two marks (analysis.extoll.common.measured), warm-ups excluded
    "sends_delayed_at_mark": Variable(PRM, _I, "messages", "sends_delayed when each rank passed "
                                      "each mark; -1: never"),
    "messages_received_at_mark": Variable(PRM, _I, "messages", "messages_received when each "
                                          "rank passed each mark; -1: never"),
    "stall_us_at_mark": Variable(PRM, _F, "us", "stall_us when each rank passed each mark; NaN: "
                                 "never"),
    "flow_control_cpu_us_at_mark": Variable(PRM, _F, "us", "flow_control_cpu_us when each rank "
                                            "passed each mark; NaN: never"),
    "credit_snapshot": Variable(("point", "snapshot", "peer"), _I, "credits",
                                "credits the recording rank owned towards each peer at each "
                                "snapshot (multiphase: rank 0, before every alltoall); -1: none"),
    "credit_snapshot_in": Variable(("point", "snapshot", "peer"), _I, "credits",
                                   "credits each peer owned towards the recording rank at the "
                                   "same snapshots (the recording rank as receiver); -1: none"),
    "max_link_utilization": Variable(P, _F, "1", "busiest router-to-router or terminal link: "
                                     "busy cycles / simulated cycles"),
    "accepted_flits_per_node_cycle": Variable(P, _F, "flits/(node*cycle)",
                                              "network-only traffic: flits delivered in the "
                                              "measurement window (NaN for MPI workloads)"),
    "offered_flits_per_node_cycle": Variable(P, _F, "flits/(node*cycle)",
                                             "network-only traffic: flits generated in the "
                                             "measurement window (NaN for MPI workloads)"),
    "packet_latency_cycles_mean": Variable(P, _F, "cycles",
                                           "network-only traffic: mean creation-to-tail-delivery "
                                           "latency of packets created in the measurement window "
                                           "(NaN for MPI workloads)"),
    "measured_cycles": Variable(P, _I, "cycles",
                                "network-only traffic: the measurement window the throughput "
                                "and latency cover (the last one with workload.sample_cycles; "
                                "-1 for MPI workloads)"),
    "converged": Variable(P, _I, "1", "network-only traffic with workload.sample_cycles: 1 if "
                                      "two successive windows' throughputs came within "
                                      "converge_tolerance, 0 if measure_cycles ran out first "
                                      "(-1: not applicable)"),
    "simulated_cycles": Variable(P, _I, "cycles", "network cycles simulated"),
    "packets_delivered": Variable(P, _I, "packets", "packets delivered to their destination NIC"),
    "events_processed": Variable(P, _I, "events", "simulator events processed"),
}
# The registered protocols' own outputs (protocols/registry.py Output), declared there with
# dims and units. A Dataset holds those of the protocols its points run (schema_for), so that
# results of the other protocols (and their goldens and stores) are unchanged by a new one.
PROTOCOL_SCHEMA: dict[str, Variable] = {
    name: Variable(tuple(o.dims), np.dtype(o.dtype), o.units, o.description)
    for name, o in all_outputs().items()}


def schema_for(configs: Iterable[RunConfig]) -> dict[str, Variable]:
    """SCHEMA plus the outputs of the protocols that `configs` run."""
    used = {c.protocol.name for c in configs}
    own = {k for name in used for k in protocol(name).outputs}
    return {**SCHEMA, **{k: v for k, v in PROTOCOL_SCHEMA.items() if k in own}}


# ---- config parameters as coordinates ----------------------------------------------------------
def _config_fields() -> list[tuple[str, str | None, str, Any]]:
    """(coordinate name, section or None, field, default) for every RunConfig parameter."""
    out = []
    root = RunConfig.__dataclass_fields__
    for f in dataclasses.fields(RunConfig):
        if f.default_factory is not dataclasses.MISSING:  # a section
            section = f.default_factory()
            for g in dataclasses.fields(section):
                out.append((f"{f.name}_{g.name}", f.name, g.name, getattr(section, g.name)))
        else:
            out.append((f.name, None, f.name, root[f.name].default))
    return out


CONFIG_COORDS = _config_fields()


def _coord_array(values: list, default: Any) -> np.ndarray:
    if isinstance(default, bool):
        return np.array(values, dtype=bool)
    if isinstance(default, int):
        return np.array(values, dtype=np.int64)
    if isinstance(default, float):
        return np.array(values, dtype=np.float64)
    if isinstance(default, tuple):
        return np.array(["x".join(str(v) for v in t) for t in values], dtype=STR)
    return np.array([str(v) for v in values], dtype=STR)


def config_coords(configs: list[RunConfig]) -> dict[str, tuple]:
    coords = {}
    for name, section, fld, default in CONFIG_COORDS:
        objs = [getattr(c, section) if section else c for c in configs]
        values = [getattr(o, fld) for o in objs]
        dotted = f"{section}.{fld}" if section else fld
        coords[name] = ("point", _coord_array(values, default),
                        {"description": f"config parameter {dotted}"})
    return coords


# ---- building ------------------------------------------------------------------------------------
def result_sizes(configs: Iterable[RunConfig]) -> dict[str, int]:
    """Sizes of every dimension of the result Dataset of `configs` (known before running)."""
    from .workloads import snapshot_count
    configs = list(configs)
    n = max(c.n_ranks for c in configs)
    return {"point": len(configs), "rank": n, "peer": n, "kind": len(KIND_CLASSES),
            "ctrl": len(CTRL_CLASSES), "mark": MAX_MARKS,
            "snapshot": max(snapshot_count(c) for c in configs),
            "node": max(c.n_nodes for c in configs)}


def pad_points(rows: Iterable[np.ndarray], var: "Variable", shape: tuple[int, ...]) -> np.ndarray:
    """Stack per-point arrays (rows of one variable) into [points, *shape], padding the rank,
    peer and snapshot axes (which differ between batches) with the variable's fill."""
    rows = [np.asarray(r) for r in rows]
    out = np.full((len(rows),) + shape, var.fill, dtype=var.dtype)
    for i, r in enumerate(rows):
        out[(i,) + tuple(slice(0, n) for n in r.shape)] = r
    return out


def build_dataset(configs: Iterable[RunConfig], arrays: Mapping[str, Any],
                  attrs: Mapping[str, Any] | None = None) -> xr.Dataset:
    """The result Dataset of `configs` from the engine's `arrays` (one row per config, in order).

    Raises ValueError when arrays do not match SCHEMA (missing or unknown names, wrong shapes,
    unsafe dtypes, non-padding values beyond a point's rank count): that is a bug, not user input.
    """
    configs = list(configs)
    if not configs:
        raise ValueError("build_dataset needs at least one config")
    # SCHEMA is required; the outputs of the protocols the configs run are taken if given, and
    # other protocols' outputs (engine results hold every registered one) are left out
    allowed = schema_for(configs)
    missing = [k for k in SCHEMA if k not in arrays]
    unknown = [k for k in arrays if k not in SCHEMA and k not in PROTOCOL_SCHEMA]
    if missing or unknown:
        raise ValueError(f"arrays do not match SCHEMA: missing {missing}, unknown {unknown}")
    n_ranks = [c.n_ranks for c in configs]
    sizes = result_sizes(configs)
    data_vars = {}
    for name, var in allowed.items():
        if name not in arrays:
            continue
        a = np.asarray(arrays[name])
        shape = tuple(sizes[d] for d in var.dims)
        if a.shape != shape:
            raise ValueError(f"{name}: shape {a.shape}, expected {shape} for dims {var.dims}")
        if a.dtype != var.dtype:
            if not np.can_cast(a.dtype, var.dtype, "safe"):
                raise ValueError(f"{name}: dtype {a.dtype} cannot be cast safely to {var.dtype}")
            a = a.astype(var.dtype)
        if "rank" in var.dims:
            for i, n in enumerate(n_ranks):
                pad = a[i, n:]
                ok = np.isnan(pad).all() if var.dtype.kind == "f" else (pad == -1).all()
                if not ok:
                    raise ValueError(f"{name}: point {i} has {n} ranks but values beyond them "
                                     f"are not padding ({var.fill})")
        data_vars[name] = (var.dims, a, {"units": var.units, "description": var.description})
    coords = config_coords(configs)
    coords["kind"] = ("kind", np.array(KIND_CLASSES, dtype=STR),
                      {"description": "packet class (data: eager data and rendezvous requests; "
                                      "control: flow-control packets; rma: RMA get/data)"})
    coords["ctrl"] = ("ctrl", np.array(CTRL_CLASSES, dtype=STR),
                      {"description": "control packet type (dtypes.CT_*)"})
    coords["mark"] = ("mark", np.arange(MAX_MARKS, dtype=np.int64),
                      {"description": "program mark index (workloads.MARK_*)"})
    ds_attrs = {"extoll_vec_version": __version__, "schema_version": SCHEMA_VERSION,
                "configs": json.dumps([c.to_dict() for c in configs], separators=(",", ":"))}
    for k, v in (attrs or {}).items():
        if k in RESERVED_ATTRS:
            raise ValueError(f"attrs: {k!r} is reserved")
        ds_attrs[k] = v
    return xr.Dataset(data_vars, coords=coords, attrs=ds_attrs)


def configs_of(ds: xr.Dataset) -> list[RunConfig]:
    """The RunConfigs of a result Dataset, one per point (from its `configs` attribute)."""
    return [from_dict(d) for d in json.loads(ds.attrs["configs"])]


# ---- checking --------------------------------------------------------------------------------
def version_problem(attrs: Mapping[str, Any]) -> str | None:
    """Why a store with these attributes is not of this schema version (None if it is)."""
    if "schema_version" not in attrs:
        return "no schema_version attribute (not written by extoll-vec)"
    if attrs["schema_version"] != SCHEMA_VERSION:
        return (f"schema version {attrs['schema_version']!r}, this extoll-vec "
                f"({__version__}) reads {SCHEMA_VERSION}")
    return None


def schema_problems(ds: xr.Dataset) -> list[str]:
    """What makes `ds` not a result Dataset of this schema version (empty list if nothing)."""
    version = version_problem(ds.attrs)
    if version is not None:
        return [version]
    problems = []
    for k in RESERVED_ATTRS:
        if k not in ds.attrs:
            problems.append(f"no {k} attribute")
    for name, var in SCHEMA.items():
        if name not in ds.data_vars:
            problems.append(f"variable {name} missing")
            continue
        v = ds[name]
        if v.dims != var.dims:
            problems.append(f"variable {name} has dims {v.dims}, expected {var.dims}")
        if v.dtype != var.dtype:
            problems.append(f"variable {name} has dtype {v.dtype}, expected {var.dtype}")
    if "kind" not in ds.coords or [str(k) for k in ds["kind"].values] != list(KIND_CLASSES):
        problems.append(f"coordinate kind is not {list(KIND_CLASSES)}")
    for name, section, fld, _default in CONFIG_COORDS:
        if name not in ds.coords and f"{section}.{fld}" not in ADDED_FIELDS:
            problems.append(f"coordinate {name} missing")
    return problems


def _add_later_coords(ds: xr.Dataset) -> xr.Dataset:
    """A store written before a config field existed holds results of the model at that field's
    default (config.ADDED_FIELDS): give it the coordinate with that value."""
    for name, section, fld, default in CONFIG_COORDS:
        if name not in ds.coords and f"{section}.{fld}" in ADDED_FIELDS:
            ds = ds.assign_coords({name: ("point", _coord_array([default] * ds.sizes["point"],
                                                                default),
                                          {"description": f"config parameter {section}.{fld} "
                                           "(not in the store: written before it existed)"})})
    return ds


def _is_zarr_store(p: Path) -> bool:
    return p.is_dir() and ((p / "zarr.json").is_file() or (p / ".zgroup").is_file())


def check_writable(path: str | os.PathLike, overwrite: bool = False) -> Path | str:
    """Raise StoreError unless write_zarr(..., path, overwrite) may write there (touches nothing).

    Call it before a long simulation so a bad output path fails first. `path`: a local path
    or a URL (storage.location)."""
    from .inputs import path_length_problem, shown_path
    from .storage import location
    loc = location(path)
    if loc.remote:
        try:
            if loc.exists():
                if not overwrite:
                    raise StoreError(path, "already exists; choose another path or overwrite "
                                           "it explicitly (--overwrite)")
                if not (loc.is_file("zarr.json") or loc.is_file(".zgroup")):
                    raise StoreError(path, "exists and is not a zarr store; refusing to "
                                           "overwrite it")
        except OSError as exc:
            raise StoreError(path, f"cannot be used: {exc.strerror or exc}") from None
        return loc.url
    p = loc.path
    too_long = path_length_problem(p)
    if too_long:
        raise StoreError(shown_path(str(path)), too_long)
    try:
        if p.exists() or p.is_symlink():
            if not overwrite:
                raise StoreError(path, "already exists; choose another path or overwrite it "
                                       "explicitly (--overwrite)")
            if p.is_symlink():
                raise StoreError(path, "is a symbolic link; refusing to replace it")
            if not _is_zarr_store(p):
                raise StoreError(path, "exists and is not a zarr store; refusing to overwrite "
                                       "it")
        elif p.parent.exists() and not p.parent.is_dir():
            raise StoreError(path, f"parent {p.parent} is not a directory")
    except OSError as exc:
        raise StoreError(shown_path(str(path)), f"cannot be used: {exc.strerror or exc}") \
            from None
    return p


# ---- writing and reading -------------------------------------------------------------------------
def write_zarr(ds: xr.Dataset, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write a result Dataset as a zarr format 3 store at `path` (local, or a URL).

    An existing path raises StoreError unless overwrite=True, and even then only an existing zarr
    store is replaced. The store is written beside `path` and renamed into place."""
    problems = schema_problems(ds)
    if problems:
        raise ValueError("not a result Dataset: " + "; ".join(problems))
    return write_atomically(path, overwrite, lambda tmp: to_zarr_consolidated(ds, tmp, mode="w-"))


CONSOLIDATED_V3_WARNING = "Consolidated metadata is currently not part in the Zarr format 3"


def to_zarr_consolidated(ds: xr.Dataset, target, **kwargs):
    """ds.to_zarr in zarr format 3 with consolidated metadata, without zarr's warning that
    consolidated metadata is not in the format 3 specification yet (module docstring)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=CONSOLIDATED_V3_WARNING)
        return ds.to_zarr(target, zarr_format=3, consolidated=True, **kwargs)


def write_atomically(path: str | os.PathLike, overwrite: bool,
                     write: Callable[[Path], object]) -> Path | str:
    """Run write(tmp) on a hidden sibling of `path`, then rename it into place, so a failed
    write leaves nothing behind. The rules of check_writable apply before and at the rename.
    For a URL, tmp is a local temporary directory uploaded to `path` (storage.RemoteStore:
    the root metadata last; with overwrite the old store is deleted first)."""
    p = check_writable(path, overwrite)
    if not isinstance(p, Path):
        return _write_remote(path, overwrite, write)
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    tmp = p.parent / f".{p.name}.partial-{token}"
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        if p.exists() or p.is_symlink():
            check_writable(path, overwrite)  # appeared meanwhile: same rules
            old = p.parent / f".{p.name}.old-{token}"
            os.rename(p, old)
            os.rename(tmp, p)
            shutil.rmtree(old)
        else:
            os.rename(tmp, p)
    except OSError as exc:
        raise StoreError(path, f"cannot write: {exc.strerror or exc}") from None
    except (MemoryError, RuntimeError) as exc:
        # zarr writes through a pool of threads: under an address-space limit (ulimit -v) a
        # thread's stack may not fit any more, or an array
        if isinstance(exc, RuntimeError) and "can't start new thread" not in str(exc):
            raise
        raise StoreError(path, "cannot write: out of memory (a writer thread or an array did "
                               "not fit); nothing was written") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return p


def _write_remote(url: str, overwrite: bool, write: Callable[[Path], object]) -> str:
    import tempfile

    from .storage import location
    with tempfile.TemporaryDirectory(prefix="extoll-vec-store-") as tmp:
        local = Path(tmp) / "store.zarr"
        write(local)
        loc = location(url)
        try:
            if loc.exists():
                check_writable(url, overwrite)  # appeared meanwhile: same rules
                loc.remove()
            loc.upload(local)
        except OSError as exc:
            raise StoreError(url, f"cannot write: {exc.strerror or exc}") from None
    return loc.url


def open_zarr_consolidated(p, chunks: Any = None) -> xr.Dataset:
    """xr.open_zarr through the consolidated metadata; the arrays' own for older stores.
    `p`: a local path or a storage location."""
    from .storage import location
    loc = p if hasattr(p, "zarr_store") else location(p)
    consolidated = "consolidated_metadata" in json.loads(loc.read_bytes("zarr.json"))
    return xr.open_zarr(loc.zarr_store(read_only=True), zarr_format=3,
                        consolidated=consolidated, chunks=chunks)


def open_result(path: str | os.PathLike, chunks: Any = None) -> xr.Dataset:
    """Open a result store written by write_zarr (or a sweep), at a local path or a URL;
    lazily, without dask by default (pass chunks={} or "auto" for dask arrays). Raises
    StoreError for a missing, unreadable or foreign store."""
    from .storage import location
    loc = location(path)
    try:
        if not loc.exists():
            raise StoreError(path, "no such result store")
        if not loc.is_dir():
            raise StoreError(path, "not a zarr store (a file, not a directory)")
        if not loc.is_file("zarr.json"):
            if loc.is_file(".zgroup"):
                raise StoreError(path, "zarr format 2 store; extoll-vec results are zarr "
                                       "format 3")
            raise StoreError(path, "not a zarr store (no zarr.json)")
        ds = open_zarr_consolidated(loc, chunks)
    except StoreError:
        raise
    except Exception as exc:  # zarr/xarray raise many types for a damaged store
        msg = " ".join(str(exc).split())
        if len(msg) > 200:
            msg = msg[:200] + "..."
        raise StoreError(path, f"unreadable zarr store ({type(exc).__name__}: {msg})") from None
    problems = schema_problems(ds)
    if problems:
        ds.close()
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise StoreError(path, "not an extoll-vec result: " + "; ".join(problems[:3]) + more)
    return _add_later_coords(ds)

"""Named analysis targets (`extoll-vec tables NAME --from STORE.zarr | --out DIR [--quick]`).

A target turns a result Dataset into a Table. Modules listed in TARGET_MODULES define targets
with the @target decorator; they are imported on first use, so adding a target is adding a
module to that list. A target may have a sweep spec of its own (``@target(..., sweep=True)``),
found by its name (or one it shares with other targets: ``@target(..., sweep="NAME")``):
target ``FAMILY_REST`` is computed from the installed ``extoll_vec.sweeps``
file ``FAMILY/REST.yaml`` (``extoll_patterns``: ``sweeps/extoll/patterns.yaml``, whose ``name:``
is the target's), and ``FAMILY/REST.quick.yaml`` at reduced scale (``name: NAME_quick``).
`extoll-vec tables NAME --out DIR` then runs that sweep into ``DIR/FAMILY_REST[.quick].zarr``
(resuming it) and computes the target from it. sweeps/ holds nothing else but smoke.yaml
(tests/test_sweep_tables.py checks it); variants of a target's sweep are ``--set`` commands
(lab/variants.yaml).

Every target declares what it needs of a store (``@target(..., needs=...)``, required): a Needs
saying which points (extoll_common.Points: protocols, workloads, reference runs), ANY_STORE
(any result store) or NO_STORE (computed without one). compute() checks the store first
(sweep.store.check_store: a damaged store is refused naming the array or attribute), then the
target's needs (a store without the points is refused naming what is missing), and only then
calls the target.

A target may also be computed from the per-point rows a previous run of it wrote
(``extoll-vec tables NAME --from-rows ROWS.csv ...``), when its module registers a reader with
@rows_reader(NAME): parts of one sweep run at different times (e.g. the IMB benchmarks in
groups) are then combined into the one table without their stores.
"""
from __future__ import annotations

import csv
import importlib
import inspect
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError

TARGET_MODULES = ("extoll_vec.analysis.summary", "extoll_vec.analysis.extoll.tables",
                  "extoll_vec.analysis.extoll.reference", "extoll_vec.analysis.extoll.static",
                  "extoll_vec.analysis.extoll.dynamic", "extoll_vec.analysis.extoll.imb",
                  "extoll_vec.analysis.extoll.bounds", "extoll_vec.analysis.portals.targets",
                  "extoll_vec.analysis.portals.mpi_slow",
                  "extoll_vec.analysis.infiniband.micro", "extoll_vec.analysis.infiniband.nas",
                  "extoll_vec.analysis.infiniband.families", "extoll_vec.analysis.lfc.targets",
                  "extoll_vec.analysis.frontier")


@dataclass
class Table:
    """Rows of values under named columns, printable as text or CSV."""
    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)

    @staticmethod
    def _text(v: Any) -> str:
        if isinstance(v, float):
            return "nan" if math.isnan(v) else f"{v:.6g}"
        return str(v)

    def to_text(self) -> str:
        cells = [self.columns] + [[self._text(v) for v in r] for r in self.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.columns))]
        lines = [self.title]
        for j, r in enumerate(cells):
            lines.append("  ".join(c.rjust(w) for c, w in zip(r, widths)).rstrip())
            if j == 0:
                lines.append("  ".join("-" * w for w in widths))
        return "\n".join(lines + self.notes)

    def to_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(self.columns)
        for r in self.rows:
            w.writerow([repr(v) if isinstance(v, float) else v for v in r])
        return out.getvalue()


class Needs:
    """What a target needs of a result store. `what` says it (in the refusal: "NAME needs
    WHAT"); missing(ds) returns what the store lacks in a few words, or None when it has it
    (ds: the store as opened, completed mask included). This base needs a store, any store."""
    what = "a result store"

    def missing(self, ds) -> str | None:
        return None


ANY_STORE = Needs()                    # any result store (e.g. summary)
NO_STORE = Needs()                     # computed without a store (closed forms)


@dataclass(frozen=True)
class Target:
    name: str
    help: str
    compute: Callable[[Any], Table]    # result Dataset -> Table
    sweep: bool | str = False          # has a sweep spec of its own (True) or a shared one
                                       # (its name): spec_name
    needs: Needs = ANY_STORE           # what it needs of a store (target(needs=...))
    from_rows: Callable | None = None  # (files, out_dir) -> Table: rows_reader

    def spec_name(self, quick: bool = False) -> str:
        """The installed spec of the target's sweep (extoll_vec.sweeps.spec_path): target
        ``FAMILY_REST`` -> ``FAMILY/REST`` (``.quick``); a shared sweep by its name."""
        if not self.sweep:
            raise ConfigError("--from", f"required: {self.name} has no sweep of its own; give "
                                        "the result store to compute it from")
        return spec_of(self.sweep_name) + (".quick" if quick else "")

    @property
    def sweep_name(self) -> str:
        """The `name:` of the target's sweep spec: its own name, or the shared sweep's."""
        return self.sweep if isinstance(self.sweep, str) else self.name

    @property
    def needs_store(self) -> bool:
        """False for targets that compute without a result store (needs=NO_STORE); they are
        called with ds=None."""
        return self.needs is not NO_STORE


# a target name's prefix -> its family's folder under sweeps/, where the two differ
FOLDERS = {"ib": "infiniband"}


def spec_of(name: str) -> str:
    """The spec (under sweeps/, without .yaml) of target `name`: ``extoll_imb`` ->
    ``extoll/imb``, the part before the first ``_`` the family's folder (FOLDERS)."""
    family, _, rest = name.partition("_")
    return f"{FOLDERS.get(family, family)}/{rest}" if rest else name


TARGETS: dict[str, Target] = {}
_loaded = False


def target(name: str, help: str, *, needs: Needs, sweep: bool | str = False):
    """Decorator registering `fn(ds) -> Table` as target `name`, which needs `needs` of a store
    (a Needs, ANY_STORE or NO_STORE: required, so that no target forgets to say it); with
    sweep=True computed from its own sweep spec, found by its name: spec_of; with sweep=NAME
    from the sweep spec NAME shares with other targets (one store: the tables of one
    experiment, e.g. ``ib_nas`` for Liu and Panda's Table 1, Table 2 and Figures 9-10)."""
    if not isinstance(needs, Needs):
        raise TypeError(f"target {name!r}: needs must be a Needs, ANY_STORE or NO_STORE")

    def deco(fn: Callable[[Any], Table]) -> Callable[[Any], Table]:
        if name in TARGETS:
            raise RuntimeError(f"target {name!r} registered twice")
        TARGETS[name] = Target(name, help, fn, sweep, needs)
        if needs is NO_STORE:
            fn.needs_store = False    # the function says it too (called with ds=None)
        return fn
    return deco


def rows_reader(name: str, rows_file: str):
    """Decorator registering `fn(files, out_dir=None) -> Table` as the way to compute target
    `name` from the per-point rows its runs write as `rows_file` (``--from-rows``): `files` is
    a list of (path, [row dict, ...]) read from CSV; fn validates the columns and values and
    raises ConfigError("--from-rows", ...) for a file it cannot use."""
    def deco(fn):
        from dataclasses import replace
        if name not in TARGETS:
            raise RuntimeError(f"rows_reader: no target {name!r} registered before it")
        fn.rows_file = rows_file
        TARGETS[name] = replace(TARGETS[name], from_rows=fn)
        return fn
    return deco


def read_rows(paths) -> list[tuple[str, list[dict]]]:
    """The CSV files `paths` as (shown path, [row dict, ...]); a file that cannot be read or is
    not CSV with a header is refused naming it (ConfigError on --from-rows)."""
    from ..inputs import shown_path
    files = []
    for path in paths:
        shown = shown_path(Path(path))
        try:
            with open(path, newline="") as fh:
                rows = list(csv.DictReader(fh))
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise ConfigError("--from-rows", f"cannot read {shown}: "
                                             f"{getattr(exc, 'strerror', None) or exc}") from None
        files.append((shown, rows))
    return files


def refusal(ds, name: str, what: str, lacking: str | None = None) -> ConfigError:
    """The error of target `name` given a store without what it needs: one line naming what it
    needs, what the store has and lacks, and what to do (exit 2 on the CLI)."""
    total = len(json.loads(ds.attrs.get("configs", "[]")))
    done = (int(ds["completed"].values.sum()) if "completed" in ds.variables
            else ds.sizes.get("point", 0))
    sweep = ds.attrs.get("sweep_name", "?")
    has = f"this store (sweep {sweep}) has {done} of {total} points completed"
    has += f", with {lacking}" if lacking else ""
    todo = (f"finish its sweep (rerunning it resumes) or give the store of {name}'s own spec"
            if done < total else f"give the store of {name}'s own spec")
    return ConfigError("--from", f"{name} needs {what}; {has}: {todo}")


def load_targets() -> dict[str, Target]:
    global _loaded
    if not _loaded:
        _loaded = True
        for mod in TARGET_MODULES:
            importlib.import_module(mod)
        # listed in TARGET_MODULES order, whichever module a caller imported first
        order = sorted(TARGETS.values(),
                       key=lambda t: TARGET_MODULES.index(t.compute.__module__)
                       if t.compute.__module__ in TARGET_MODULES else len(TARGET_MODULES))
        ranked = {t.name: t for t in order}
        TARGETS.clear()
        TARGETS.update(ranked)
    return TARGETS


def get_target(name: str) -> Target:
    targets = load_targets()
    if name not in targets:
        raise ConfigError("tables", f"unknown target {name!r}; allowed: {', '.join(targets)}")
    return targets[name]


def compute(name: str, path=None, out_dir=None, rows=None, dataset=None) -> Table:
    """Target `name` from the result store at `path` (None only for targets that need none),
    or from the completed points of a list of stores read as one (store.open_merged: replicates
    of one spec spread over stores), or from the per-point row files `rows` (paths of CSV
    files a run of the target wrote; targets with a rows_reader).

    With out_dir, a target whose function takes ``out_dir`` writes its own files there (CSV,
    figures); for any other target the table is written as ``out_dir/NAME.csv``.

    dataset: the Dataset of `path` as the caller already opened and read or checked it
    (open_checked; `tables --out` reads the store once for the table and its report, a sweep
    sums up the store it has just written or deep-checked): not checked, opened or closed
    here."""
    tgt = get_target(name)
    if rows is not None:
        if tgt.from_rows is None:
            can = [f"{t.name} ({t.from_rows.rows_file})" for t in load_targets().values()
                   if t.from_rows is not None]
            raise ConfigError("--from-rows", f"{name} is computed from a result store only; "
                                             f"targets that read rows: {', '.join(can)}")
        if path is not None:
            raise ConfigError("--from-rows", "not with --from: give the stores or the rows")
    elif path is None and tgt.needs_store:
        raise ConfigError("--from", f"required: the result store to compute {name} from")
    fn = tgt.compute if rows is None else tgt.from_rows
    own = out_dir is not None and "out_dir" in inspect.signature(fn).parameters
    kwargs = {"out_dir": out_dir} if own else {}
    try:
        if rows is not None:
            table = fn(read_rows(rows), **kwargs)
        elif path is None:
            table = tgt.compute(None, **kwargs)
        else:
            ds = open_checked(path) if dataset is None else dataset
            try:
                lacking = tgt.needs.missing(ds)
                if lacking is not None:
                    raise refusal(ds, name, tgt.needs.what, lacking)
                table = tgt.compute(ds, **kwargs)
            finally:
                if dataset is None:
                    ds.close()
        if out_dir is not None and not own:
            out = Path(out_dir)
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{name}.csv").write_text(table.to_csv())
    except OSError as exc:
        if out_dir is None:
            raise
        raise ConfigError("--out", f"cannot write into {out_dir}: "
                          f"{exc.strerror or exc}") from None
    return table


def open_checked(path, load: bool = False):
    """The Dataset of the store at `path` (or of a list of stores read as one:
    store.open_merged), checked whole first (store.check_store, deep: configs parse, chunks
    decode): a damaged store is refused naming its array or attribute. load=True reads it into
    memory, which decodes every chunk: the check then skips them, and only a failed read
    checks them, for its message."""
    from ..errors import StoreError
    from ..sweep.store import _short, check_store, open_merged, open_sweep
    many = isinstance(path, (list, tuple))
    paths = list(path) if many else [path]
    for p in paths:
        check_store(p, "read", decode=not load)
    ds = open_merged(paths) if many else open_sweep(path)
    if not load:
        return ds
    try:
        return ds.load()
    except Exception as exc:  # noqa: BLE001 - codecs raise many types for a damaged chunk
        ds.close()
        for p in paths:
            check_store(p, "read")
        raise StoreError(paths[0], f"cannot be read ({_short(exc, 60)})") from None

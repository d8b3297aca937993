"""`extoll-vec report STORE [-o REPORT.html]`: one self-contained HTML page of a result store:
the sweep's description, axes and point count, the summary table (`sweep` prints the same),
a figure per swept axis (report_plots.py), the failed points (the error log beside the store:
sweep/runner.read_error_log), the points not computed, and the command that made the store
(its attribute ``sweep_command``, recorded when the command line created it) with the spec.
`extoll-vec tables NAME --out DIR` writes such a page as DIR/NAME.html, the target's table
and figure first (write_target_page).

The store is opened by one call of sweep.store.open_sweep. Kept cheap to import: the CLI imports
it on every invocation.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import time
from pathlib import Path

from ..errors import ConfigError, StoreError

MAX_LABELS = 24          # an axis's labels listed in the facts table


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", metavar="STORE", help="a result store (a sweep or `run -o` store)")
    p.add_argument("-o", "--output", metavar="REPORT.html",
                   help="where to write the page (default: beside the store, NAME.html for "
                        "NAME.zarr)")


def default_output(store) -> Path:
    """NAME.html beside NAME.zarr (in the current directory for a store given by URL)."""
    text = os.fspath(store).rstrip("/")
    name = text.rsplit("/", 1)[-1] or "store"
    stem = name[:-len(".zarr")] if name.endswith(".zarr") and name != ".zarr" else name
    if "://" in text:
        return Path(stem + ".html")
    return Path(text).with_name(stem + ".html")


def _run(args: argparse.Namespace) -> int:
    from .tables import check_output
    out = Path(args.output) if args.output is not None else default_output(args.store)
    check_output(out, "-o", directory=False)
    with _Writer(out, "-o") as writer:        # an unwritable -o: refused before the work
        from .registry import open_checked
        try:
            ds = open_checked(args.store, load=True)
        except StoreError as exc:     # its hint names tables' option; here STORE is positional
            raise StoreError(exc.path, exc.message.replace(" (--from)", "")) from None
        try:
            report = build_report(ds, args.store)
        finally:
            ds.close()
        from .report_html import page
        writer.write(page(report))
    print(f"wrote {out}")
    return 0


class _Writer:
    """The output file, opened (as a temporary beside it) before anything is computed and put
    in place only when the page is whole: an unwritable path is one line, exit 2, and an
    interrupted report leaves no half page."""

    def __init__(self, path: Path, option: str):
        self.path, self.option = path, option
        self.tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")

    def _refuse(self, exc: OSError) -> ConfigError:
        from ..inputs import shown_path
        return ConfigError(self.option, f"cannot write {shown_path(self.path)}: "
                                        f"{exc.strerror or exc}")

    def __enter__(self):
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.fh = open(self.tmp, "w", encoding="utf-8")
        except OSError as exc:
            raise self._refuse(exc) from None
        return self

    def write(self, text: str) -> None:
        try:
            self.fh.write(text)
            self.fh.close()
            os.replace(self.tmp, self.path)
        except OSError as exc:
            raise self._refuse(exc) from None

    def __exit__(self, *exc) -> None:
        self.fh.close()
        try:
            self.tmp.unlink()
        except FileNotFoundError:
            pass


def _describe(ds, axes: list[dict], p: int) -> str:
    return ", ".join(f"{a['name']}={_text(ds[a['coord']].values[p])}" for a in axes
                     if a["coord"] in ds.coords) or "the base config"


def _text(v) -> str:
    v = v.item() if hasattr(v, "item") else v
    return str(v)


def _spec_description(spec: str) -> str:
    import yaml
    try:
        data = yaml.safe_load(spec)
    except yaml.YAMLError:
        return ""
    d = data.get("description") if isinstance(data, dict) else None
    return " ".join(d.split()) if isinstance(d, str) else ""


def build_report(ds, where, target=None, target_pngs=(), log=True):
    """The Report of the loaded result Dataset `ds` (read from `where`); with `target`, a
    target's Table (and its figures `target_pngs`, (name, PNG bytes)) comes first. log=False:
    no error log to read (stores merged from several)."""
    import numpy as np

    from .. import __version__
    from ..sweep.store import MASK, sweep_axes
    from .report_html import Report
    from .report_plots import plots
    from .summary import summary
    attrs = ds.attrs
    axes = sweep_axes(ds)
    n_all = ds.sizes["point"]
    done = (np.asarray(ds[MASK].values, dtype=bool) if MASK in ds
            else np.ones(n_all, dtype=bool))
    table = summary(ds)
    figures, no_plots = plots(ds.isel(point=np.flatnonzero(done)), table, axes)
    is_sweep = "sweep_fingerprint" in attrs
    name = attrs.get("sweep_name", "run")
    failed, missing = [], []
    logged = {}
    if log and not done.all():
        from ..sweep.runner import read_error_log
        logged = read_error_log(where)
    for p in np.flatnonzero(~done).tolist():
        if p in logged:
            failed.append((p, _describe(ds, axes, p), logged[p]))
        else:
            missing.append((p, _describe(ds, axes, p)))
    failed_note = ""
    if failed:
        from ..sweep.runner import error_log_path
        failed_note = (f"Each failure's traceback and config (a file `extoll-vec run` takes) "
                       f"are in {error_log_path(where)}.")
    grid = " x ".join(str(len(a["labels"])) for a in axes)
    count = f"{n_all} on a {grid} grid" if axes else f"{n_all}"
    if is_sweep:
        count += (f": {int(done.sum())} completed, {len(failed)} failed, {len(missing)} not "
                  "computed")
    facts = [("store", os.fspath(where) if isinstance(where, (str, os.PathLike))
              else " + ".join(map(os.fspath, where))),
             ("kind", "sweep store" if is_sweep else
              "stores merged" if " + " in name else "single run (extoll-vec run -o)"),
             ("name", name), ("points", count)]
    for a in axes:
        labels = [str(x) for x in a["labels"]]
        shown = ", ".join(labels[:MAX_LABELS]) + (f", ... ({len(labels) - MAX_LABELS} more)"
                                                  if len(labels) > MAX_LABELS else "")
        keys = a.get("keys") or []
        sets = (f"; sets {', '.join(keys)}" if keys and keys != [a["name"]] else
                "; a variable the derived keys read" if not keys else "")
        facts.append((f"axis {a['name']}", f"{shown} ({len(labels)} values{sets})"))
    facts.append(("model version", attrs.get("git_revision", "unknown")))
    spec = attrs.get("sweep_spec", "")
    spec_label = "the sweep spec stored with the results"
    command, note = _command(attrs, where, is_sweep)
    if not spec and "configs" in attrs:
        import yaml
        cfgs = json.loads(attrs["configs"])
        spec = yaml.safe_dump(cfgs[0] if len(cfgs) == 1 else cfgs, sort_keys=False)
        spec_label = "the configuration stored with the results"
    title = f"Sweep {name}" if is_sweep else f"Result store {name}"
    if target is not None:
        title = f"{target.title.split(':')[0]} (target) from {name}"
    return Report(
        title=title, lead=_spec_description(spec) if is_sweep else "", facts=facts,
        summary=table, plots=figures, no_plots=no_plots, failed=failed,
        failed_note=failed_note, missing=missing, command=command, command_note=note,
        spec=spec, spec_label=spec_label, target=target, target_pngs=list(target_pngs),
        footer=f"written by extoll-vec {__version__} on {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")


def _command(attrs, where, is_sweep: bool) -> tuple[str, str]:
    """The command that made the store (as a shell snippet) and a sentence about it."""
    cmd = attrs.get("sweep_command")
    if cmd:
        here = attrs.get("sweep_directory", "")
        lines = ([f"cd {shlex.quote(here)}"] if here and here != "unknown" else []) + [cmd]
        return "\n".join(lines), ("The command that created the store (a rerun of the same "
                                  "command resumes it; its spec is below).")
    store = shlex.quote(os.fspath(where)) if isinstance(where, (str, os.PathLike)) else "STORE"
    if is_sweep:
        return (f"extoll-vec sweep SPEC.yaml -o {store}",
                "The store does not record the command that made it (made from Python, or by "
                "a version that did not record it); with the spec below saved as SPEC.yaml, "
                "this command computes the same points.")
    return ("extoll-vec run CONFIG.yaml -o OUT.zarr",
            "A single run's store records no command; its configuration is below (saved as "
            "CONFIG.yaml, this command runs it again).")


def write_target_page(name: str, table, store, out_dir, since: float, ds=None) -> Path:
    """DIR/NAME.html for `tables NAME --out DIR`: the target's table and the NAME.png it wrote
    (if written since `since`, a time.time()), then the report of the store it read (one
    store, several merged, or none: --from-rows and targets without a store); ds: that
    store's Dataset, already in memory (registry.open_checked), else it is read here."""
    from .report_html import Report, page
    out = Path(out_dir) / f"{name}.html"
    png = Path(out_dir) / f"{name}.png"
    pngs = []
    try:
        if png.is_file() and png.stat().st_mtime >= since - 1:
            pngs.append((png.name, png.read_bytes()))
    except OSError:
        pass
    with _Writer(out, "--out") as writer:
        if store is None:
            report = Report(title=f"{table.title.split(':')[0]} (target)", lead="", facts=[],
                            summary=None, target=table, target_pngs=pngs)
        else:
            from .registry import open_checked
            many = isinstance(store, (list, tuple)) and len(store) > 1
            if isinstance(store, (list, tuple)) and not many:
                store = store[0]
            own = ds is None
            ds = open_checked(store, load=True) if own else ds
            try:
                report = build_report(ds, store, table, pngs, log=not many)
            finally:
                if own:
                    ds.close()
        writer.write(page(report))
    return out


def register_cli(register) -> None:
    register("report", "write one self-contained HTML page of a result store: description, "
                       "axes, summary table, a plot per axis, failed points, the command",
             _configure, _run)

"""Sweep specifications (YAML) -> the sweep's points: one RunConfig each, on a grid of axes.

A spec file (see sweeps/*.yaml)::

    name: smoke                       # identifier of the sweep (default: the file name)
    description: ...                  # optional, free text
    base:                             # the configuration every point starts from
      example: tiny                   #   optional: a named example (extoll-vec examples)
      protocol: {window: 8}           #   RunConfig sections, as in a config file
    axes:                             # the grid: the product of all axes, the first slowest
      protocol.name: [backpressure, window]                # a list of values
      protocol.mailbox_slots: {range: [512, 2048, 512]}    # start, stop (inclusive), step
      network.buffer_flits: {range: {start: 40, stop: 160, factor: 2}}   # geometric
      credits:                                             # a zipped axis (named): the keys
        zip: {protocol.window: [4, 8], protocol.threshold: [2, 4]}   # vary together
        labels: [small, large]                             # optional coordinate labels
      slots_per_process: [8, 16, 32]                       # a variable: not a config key,
                                                           # used by a derived expression
    repeat: {count: 3, seed: 100}     # optional: innermost axis `rep`, seeds 100, 101, 102
                                      # (or {seeds: [1, 7, 9]}, or just a count)
    derived:                          # optional: fields computed per point, in order
      workload.ranks: "nodes * mpi.ranks_per_node"        # expressions: see sweep/expr.py
      protocol.mailbox_slots: "slots_per_process * workload.ranks"

Points are numbered in row-major order of the axes (the last axis, or `rep`, varies fastest),
so the point axis reshapes to the grid. Every error raises SpecError naming the file position
and the key; a point whose values do not make a valid RunConfig names the point and the key.

A sweep has at most `max_points` points (DEFAULT_MAX_POINTS; ``extoll-vec sweep --max-points
N`` raises it): the count is the product of the axis sizes and the repeat, checked before any
point is built, so a spec of 10^12 points is refused at once instead of expanding for ever. An
axis (a list, a range, a zipped list, repeat's seeds) of more values than that is refused as it
is read. Ranges take finite numbers only.

A variable axis sets no config field: its values are names the derived expressions see (and the
coordinate of the axis). It exists so that a sweep can run along the quantity a paper plots
(slots per process) while the configuration keeps the quantity the system has (the mailbox
size). An axis name that is neither a config key nor used by a derived expression is refused as
an unknown config key, so a typo is still caught.

A spec file can be varied from the command line without a copy of it: ``extoll-vec sweep
SPEC.yaml --set KEY=VALUE ...`` (load_sweep(path, sets), apply_sets). KEY addresses the
document (``axes.protocol.name``, ``repeat.seed``, ``base.workload.warmup`` or its shortcut
``workload.warmup``, ...), VALUE is YAML; errors in an overridden value name the ``--set``
argument instead of a line. The sweep's identity is its fingerprint, so a command equal in
effect to another spec file resumes (and reads) that file's stores.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import json
import math
import os
import shlex
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..config import SECTIONS, RunConfig, TopologyConfig, allowed_keys, from_dict
from ..errors import ConfigError, SpecError
from ..inputs import parse_yaml_document
from .expr import ExprError, brief, evaluate, names_in

TOP_KEYS = ("name", "description", "base", "axes", "repeat", "derived")
# Points of a sweep unless the caller allows more (extoll-vec sweep --max-points N). The largest
# shipped spec has 600 points; expanding and planning 100,000 points (the former cap of one
# axis, so every spec accepted before still is) takes under a minute and about 0.6 GiB, while
# their simulation at paper scale would take months: a larger sweep is a typo or belongs in
# several stores.
DEFAULT_MAX_POINTS = 100_000
# Seconds the derived expressions of all points may take together (one evaluation takes at most
# expr.MAX_SECONDS; those of a shipped spec take about 20 us a point).
DERIVED_SECONDS = 60.0
REP_AXIS = "rep"
# names a zipped axis may not take (dims, variables and coordinates of a result Dataset)
RESERVED_NAMES = {"point", "rank", "kind", "completed", REP_AXIS}


def config_keys() -> dict[str, Any]:
    """Every dotted RunConfig key (``protocol.name``, ..., ``seed``) -> its default."""
    out = {}
    for sec, cls in SECTIONS.items():
        inst = cls()
        for f in dataclasses.fields(cls):
            out[f"{sec}.{f.name}"] = getattr(inst, f.name)
    out["seed"] = 0
    return out


def coord_name(key: str) -> str:
    """The result Dataset coordinate of a config key (dataset.CONFIG_COORDS naming)."""
    return key.replace(".", "_")


def label_of(value: Any) -> Any:
    """A value as the result Dataset shows it (tuples as "4x4x4")."""
    if isinstance(value, (tuple, list)):
        return "x".join(str(v) for v in value)
    return value


@dataclass(frozen=True)
class Axis:
    """One dimension of the sweep grid."""
    name: str                      # config key (single-key axis), zip name, or "rep"
    keys: tuple[str, ...]          # config keys it sets
    values: tuple[tuple, ...]      # per position: one value per key
    labels: tuple                  # per position: the coordinate value
    coord: str                     # coordinate (along `point`) that holds the labels

    @property
    def size(self) -> int:
        return len(self.values)

    @property
    def variable(self) -> bool:
        """A variable axis: sets no config key, its values feed the derived expressions."""
        return not self.keys

    def to_json(self) -> dict:
        return {"name": self.name, "keys": list(self.keys), "coord": self.coord,
                "labels": [label_of(v) for v in self.labels],
                "values": [[label_of(v) if isinstance(v, tuple) else v for v in vs]
                           for vs in self.values]}


@dataclass(frozen=True)
class Sweep:
    """An expanded sweep: its axes and one validated RunConfig per grid point."""
    name: str
    axes: tuple[Axis, ...]
    configs: tuple[RunConfig, ...]
    path: str | None = None
    text: str = ""
    description: str = ""
    fingerprint: str = field(default="", compare=False)
    sets: tuple[str, ...] = ()     # the --set KEY=VALUE overrides applied to the file

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.size for a in self.axes)

    @property
    def n_points(self) -> int:
        return len(self.configs)

    def index(self, point: int) -> tuple[int, ...]:
        """Position of a point on every axis."""
        import numpy as np
        return tuple(int(i) for i in np.unravel_index(point, self.shape)) if self.axes else ()

    def labels(self, point: int) -> dict[str, Any]:
        """axis name -> label of a point."""
        return {a.name: a.labels[i] for a, i in zip(self.axes, self.index(point))}

    def describe(self, point: int) -> str:
        return ", ".join(f"{k}={label_of(v)}" for k, v in self.labels(point).items())


def fingerprint(axes: tuple[Axis, ...], configs: tuple[RunConfig, ...]) -> str:
    """Identity of a sweep: its axes and resolved configs (not the text, comments or names;
    config fields added later count only away from their defaults: config.ADDED_FIELDS)."""
    blob = json.dumps({"axes": [a.to_json() for a in axes],
                       "configs": [c.identity_dict() for c in configs]}, sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


# ---- command-line overrides ----------------------------------------------------------------------
SET_KEYS = ("name", "description", "repeat", "repeat.count", "repeat.seed", "repeat.seeds",
            "axes.AXIS", "derived.KEY", "base.example", "base.variant", "base.seed",
            "base.SECTION.FIELD")


def set_source(arg: str) -> str:
    """How a message names a --set argument: as it would be typed (shell-quoted, one line; a
    long one cut after 200 characters)."""
    text = " ".join(arg.splitlines())
    return "--set " + shlex.quote(text if len(text) <= 200 else text[:200] + "...")


def _set_keypath(key: str, arg: str) -> tuple:
    """The key path in the spec document that ``--set KEY=...`` addresses."""
    head, _, rest = key.partition(".")
    if key in ("name", "description", "repeat"):
        return (key,)
    if head == "repeat" and rest in ("count", "seed", "seeds"):
        return ("repeat", rest)
    if head in ("axes", "derived") and rest:
        return (head, rest)
    if head == "base":
        if rest in ("example", "variant", "seed"):
            return ("base", rest)
        head, _, rest = rest.partition(".")
        if head not in SECTIONS or not rest:
            raise SpecError(set_source(arg), key, "unknown key; allowed: base.example, "
                            "base.variant, base.seed, base.SECTION.FIELD with a section of "
                            f"{', '.join(SECTIONS)}")
    elif key == "seed":
        return ("base", "seed")
    elif head not in SECTIONS or not rest:
        raise SpecError(set_source(arg), key, f"unknown key; allowed: {', '.join(SET_KEYS)}, "
                        "or SECTION.FIELD and seed for base.SECTION.FIELD and base.seed "
                        f"(SECTION: {', '.join(SECTIONS)})")
    kp = ("base", head, rest)
    _check_key(f"{head}.{rest}", _Ctx(None, {}, {kp: arg}), kp, config_keys())
    return kp


def apply_sets(data: Any, sets: Sequence[str], path: str | None = None,
               positions: dict | None = None) -> tuple[Any, dict]:
    """Spec data with ``--set KEY=VALUE`` overrides applied in order; returns the new data and
    the overrides (key path -> argument) for build_sweep's messages. `positions` (yamlpos)
    loses the entries the overrides replace.

    VALUE is YAML. KEY is ``name``, ``description``, ``repeat`` (whole) or ``repeat.count`` /
    ``repeat.seed`` / ``repeat.seeds``; ``axes.AXIS`` (everything after ``axes.`` is the axis
    name, dots and all: an existing axis is replaced where it stands, a new one goes last);
    ``derived.KEY`` (the same); ``base.example``, ``base.variant``, ``base.seed`` or
    ``base.SECTION.FIELD``, and for those last two the shortcuts ``seed`` and
    ``SECTION.FIELD``. VALUE null removes the entry: an axis, a derived key, a base setting
    (back to the example's or the default value), repeat, description. A base config key that
    the merged spec's axes, derived keys or repeat also set is refused (the axis would win)."""
    positions = {} if positions is None else positions
    overrides: dict[tuple, str] = {}
    ctx = _Ctx(path, positions, overrides)
    data = {} if data is None else copy.deepcopy(data)
    if not isinstance(data, dict):
        return data, overrides  # build_sweep says what a spec is
    base_sets = []
    for arg in sets:
        key, eq, text = arg.partition("=")
        key = key.strip()
        if not eq or not key:
            raise SpecError(set_source(arg), "--set", "expected KEY=VALUE, e.g. repeat.count=3 "
                            "or 'axes.protocol.name=[static, dynamic]'")
        kp = _set_keypath(key, arg)
        try:   # the guards of every user document: depth, size, over-long numbers
            value, _ = parse_yaml_document(text, None, key)
        except SpecError as exc:
            raise SpecError(set_source(arg), key, exc.message) from None
        parent = data
        for n, k in enumerate(kp[:-1], 1):
            node = parent.get(k)
            if node is None and value is None:
                parent = {}    # nothing there to remove
                break
            if node is None:   # a mapping the file does not have: this --set made it
                node = parent[k] = {}
                overrides[kp[:n]] = arg
            elif k == "repeat" and isinstance(node, int) and not isinstance(node, bool):
                node = parent[k] = {"count": node}
            elif not isinstance(node, dict):
                raise ctx.error(kp[:n], f"is not a mapping: --set {key} cannot set an entry in it")
            parent = node
        for table in (positions, overrides):   # what the file (or an earlier --set) said there
            for p in [p for p in table if p[:len(kp)] == kp]:
                del table[p]
        if value is None and kp[0] in ("axes", "derived") and kp[-1] not in parent:
            what = "axis" if kp[0] == "axes" else "derived key"
            raise SpecError(set_source(arg), key, f"no {what} {kp[-1]} to remove; the spec's: "
                            f"{', '.join(map(str, parent)) or 'none'}")
        if value is None:
            parent.pop(kp[-1], None)
        else:
            parent[kp[-1]] = value
        overrides[kp] = arg      # also a removal: a base key is then the example's (_base)
        if kp[0] == "base" and kp[1] not in ("example", "variant"):
            base_sets.append((arg, key, ".".join(kp[1:])))
    _refuse_shadowed(data, base_sets, ctx)
    return data, overrides


def _refuse_shadowed(data: dict, base_sets: list, ctx: "_Ctx") -> None:
    """SpecError for a --set of a base config key that an axis, a derived key or repeat of the
    merged spec sets at every point (the --set would change nothing)."""
    axes = data.get("axes") if isinstance(data.get("axes"), dict) else {}
    on_axis = {}
    for name, spec in axes.items():
        z = spec.get("zip") if isinstance(spec, dict) else None
        for k in (z if isinstance(z, dict) else (name,)):
            on_axis.setdefault(k, name)
    derived = data.get("derived") if isinstance(data.get("derived"), dict) else {}
    for arg, key, dotted in base_sets:
        if dotted in on_axis:
            a = on_axis[dotted]
            raise SpecError(set_source(arg), key, f"is set by axis {a} of the spec "
                            f"({ctx.where(('axes', a))}); change that axis (--set axes.{a}="
                            f"VALUES) or remove it (--set axes.{a}=null) instead")
        if dotted in derived:
            raise SpecError(set_source(arg), key, f"is derived by the spec (derived.{dotted}, "
                            f"{ctx.where(('derived', dotted))}); set the expression (--set "
                            f"derived.{dotted}=EXPR) or remove it (=null) instead")
        if dotted == "seed" and data.get("repeat") is not None:
            raise SpecError(set_source(arg), key, "is set by repeat (axis rep, "
                            f"{ctx.where(('repeat',))}); set repeat.seed instead")


def _sets_text(data: Any, sets: Sequence[str], path: str | None, default_name: str) -> str:
    """The store's spec text of a sweep with overrides: a header naming the file and the
    --set arguments, then the merged document (see load_sweep)."""
    import yaml
    if isinstance(data, dict) and "name" not in data:
        data = {"name": default_name, **data}
    head = [f"# {path or 'a spec'} with these overrides from the command line:"]
    head += [f"#   {set_source(a)}" for a in sets]
    head.append("# (the merged spec follows; the file's comments are not kept)")
    return "\n".join(head) + "\n" + yaml.safe_dump(data, sort_keys=False,
                                                    default_flow_style=None, width=100)


# ---- loading -------------------------------------------------------------------------------------
class _Ctx:
    """Raises SpecErrors with file positions, or naming the --set argument that gave the value.

    overrides maps the key path of every entry a --set replaced or added to that argument
    (apply_sets); the positions below such a path are gone (they were the file's). An error
    at or under an overridden entry is ``--set 'ARG': KEY: MESSAGE``; one at a file position
    with a --set below it says so."""

    def __init__(self, path: str | None, positions: dict, overrides: dict | None = None,
                 max_points: int = DEFAULT_MAX_POINTS):
        self.path, self.positions = path, positions
        self.overrides = {} if overrides is None else overrides
        self.max_points = max_points

    def _locate(self, keypath: tuple) -> str | tuple[int, int] | None:
        """The nearest enclosing entry's origin: a --set argument, or (line, column)."""
        for n in range(len(keypath), -1, -1):
            if keypath[:n] in self.overrides:
                return self.overrides[keypath[:n]]
            if self.positions.get(keypath[:n]):
                return self.positions[keypath[:n]]
        return None

    def where(self, keypath: tuple) -> str:
        """Where an entry comes from, for a message: ``--set 'ARG'`` or ``FILE:LINE``."""
        found = self._locate(tuple(keypath))
        if isinstance(found, str):
            return set_source(found)
        return ":".join(str(x) for x in (self.path or "the spec", found and found[0]) if x)

    def error(self, keypath: tuple, message: str, shown: str | None = None) -> SpecError:
        keypath = tuple(keypath)
        key = shown if shown is not None else ".".join(str(k) for k in keypath) or "spec"
        found = self._locate(keypath)
        below = list(dict.fromkeys(a for kp, a in self.overrides.items()
                                   if keypath and kp[:len(keypath)] == keypath and a != found))
        if below:
            message += " (after " + ", ".join(set_source(a) for a in below) + ")"
        if isinstance(found, str):
            return SpecError(set_source(found), key, message)
        line, col = found or (None, None)
        return SpecError(self.path, key, message, line, col)


def load_sweep(path: str | os.PathLike, sets: Sequence[str] = (),
               max_points: int = DEFAULT_MAX_POINTS) -> Sweep:
    """Read and expand a sweep spec file, with the command line's ``--set KEY=VALUE``
    overrides applied in order (apply_sets); SpecError for anything wrong in either, and for
    more than `max_points` points.

    With overrides, the text kept in the store (Sweep.text, attr ``sweep_spec``) is the merged
    document as YAML under a comment header naming the file and every ``--set``: the spec as
    it ran, loadable on its own (the file's comments are dropped: they describe the file's
    sweep, not this one). Without overrides it is the file's text, comments and all."""
    path = os.fspath(path)
    from ..inputs import read_document_text   # one reader for every file
    text = read_document_text(path, "spec")
    data, positions = parse_yaml_document(text, path, "spec")
    default_name = os.path.splitext(os.path.basename(path))[0]
    overrides: dict = {}
    if sets:
        data, overrides = apply_sets(data, sets, path, positions)
        text = _sets_text(data, sets, path, default_name)
    sweep = build_sweep(data, path=path, positions=positions, text=text,
                        default_name=default_name, overrides=overrides, max_points=max_points)
    return dataclasses.replace(sweep, sets=tuple(sets))


def build_sweep(data: Any, path: str | None = None, positions: dict | None = None,
                text: str = "", default_name: str = "sweep", overrides: dict | None = None,
                max_points: int = DEFAULT_MAX_POINTS) -> Sweep:
    """Expand spec data (as loaded from YAML) into a Sweep. overrides: key path -> the --set
    argument that gave the entry (apply_sets), for the error messages. A spec of more than
    `max_points` points is refused before any point is built."""
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 1:
        raise ConfigError("--max-points", f"got {max_points!r}; allowed: an integer >= 1")
    ctx = _Ctx(path, positions or {}, overrides, max_points)
    if not isinstance(data, dict):
        raise ctx.error((), f"a sweep spec is a mapping with keys {', '.join(TOP_KEYS)}")
    for k in data:
        if k not in TOP_KEYS:
            raise ctx.error((k,), f"unknown key; allowed: {', '.join(TOP_KEYS)}")
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise ctx.error(("name",), f"got {name!r}; allowed: a non-empty string")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ctx.error(("description",), "must be a string")
    known = config_keys()
    base, origin = _base(data.get("base"), ctx)
    raw_derived = data.get("derived")
    used = {n for v in (raw_derived.values() if isinstance(raw_derived, dict) else ())
            if isinstance(v, str) for n in names_in(v)}
    axes = _axes(data.get("axes"), ctx, known, used)
    grid = _count_points(axes, ctx)
    if "repeat" in data:
        if any("seed" in a.keys for a in axes):
            raise ctx.error(("repeat",), "seed is already an axis; use either repeat or a "
                                         "seed axis")
        axes.append(_repeat(data["repeat"], ctx, base.get("seed", 0), grid))
    for a in axes:
        for k in a.keys:
            origin[k] = ("axes", a.name) if a.name != REP_AXIS else ("repeat",)
    derived = _derived(data.get("derived"), ctx, known, axes)
    for k in derived:
        origin[k] = ("derived", k)
    configs = _expand(base, tuple(axes), derived, ctx, origin)
    if not text:  # built from data: keep the spec in the store as YAML all the same
        import yaml
        text = yaml.safe_dump(data, sort_keys=False)
    axes = _final_labels(tuple(axes), configs, ctx)
    return Sweep(name=name.strip(), axes=axes, configs=configs, path=path, text=text,
                 description=description, fingerprint=fingerprint(axes, configs))


def _base(raw: Any, ctx: _Ctx) -> tuple[dict, dict]:
    """The base config as a nested dict, and where each dotted key of it was set."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ctx.error(("base",), "must be a mapping of config sections (and `example`, "
                                   "`variant`)")
    raw = dict(raw)
    origin: dict[str, tuple] = {}
    if "example" in raw:
        from ..examples import EXAMPLES, get_example
        if not isinstance(raw["example"], str):
            raise ctx.error(("base", "example"), f"got {brief(raw['example'])}; allowed: the name "
                                                 f"of an example: {', '.join(EXAMPLES)}")
        try:
            base = get_example(raw.pop("example")).to_dict()
        except ConfigError as exc:
            raise ctx.error(("base", "example"), exc.message) from None
    else:
        base = RunConfig().to_dict()
    if "variant" in raw:
        from ..examples import MODEL_VARIANTS, variant_overrides
        if not isinstance(raw["variant"], str):
            raise ctx.error(("base", "variant"), f"got {brief(raw['variant'])}; allowed: the name "
                                                 f"of a model variant: {', '.join(MODEL_VARIANTS)}")
        try:
            over = variant_overrides(raw.pop("variant"))
        except ConfigError as exc:
            raise ctx.error(("base", "variant"), exc.message) from None
        for dotted, value in over.items():
            sec, name = dotted.split(".")
            base[sec][name] = value
            origin[dotted] = ("base", "variant")
    for kp in ctx.overrides:   # a base key a --set removed: its value comes from that --set
        if len(kp) > 1 and kp[0] == "base" and kp[1] not in ("example", "variant"):
            origin[".".join(kp[1:])] = kp
    allowed = list(SECTIONS) + ["seed", "example", "variant"]
    for sec, value in raw.items():
        if sec not in allowed:
            raise ctx.error(("base", sec), f"unknown section; allowed: {', '.join(allowed)}")
        if sec == "seed":
            base["seed"] = value
            origin["seed"] = ("base", "seed")
            continue
        if value is None:
            continue
        if not isinstance(value, dict):
            raise ctx.error(("base", sec), "must be a mapping of fields")
        fields = [f.name for f in dataclasses.fields(SECTIONS[sec])]
        for f, v in value.items():
            if f not in fields:
                raise ctx.error(("base", sec, f),
                                f"unknown key; allowed: {allowed_keys(fields, str(f))}",
                                f"{sec}.{f}")
            base[sec][f] = v
            origin[f"{sec}.{f}"] = ("base", sec, f)
    return base, origin


def _check_key(key: Any, ctx: _Ctx, keypath: tuple, known: dict) -> str:
    if not isinstance(key, str) or key not in known:
        sec = key.split(".")[0] if isinstance(key, str) else None
        if sec in SECTIONS:
            allowed = allowed_keys([k for k in known if k.startswith(sec + ".")], key)
            raise ctx.error(keypath, f"unknown config key; allowed: {allowed}", str(key))
        raise ctx.error(keypath, "unknown config key; allowed: SECTION.FIELD with a section "
                                 f"of {', '.join(SECTIONS)}, or seed (an axis may also be a "
                                 "variable that a derived expression uses)", str(key))
    return key


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _over_limit(ctx: _Ctx) -> str:
    return f"the limit of {ctx.max_points:,} points (--max-points N raises it)"


def _count_points(axes: list[Axis], ctx: _Ctx) -> int:
    """Points of the grid of `axes` (before repeat): the product of their sizes, refused above
    ctx.max_points before any point is built."""
    n = math.prod(a.size for a in axes)
    if n > ctx.max_points:
        grid = " x ".join(str(a.size) for a in axes)
        raise ctx.error(("axes",), f"{n:,} points (a {grid} grid) exceed {_over_limit(ctx)}")
    return n


def _values(raw: Any, ctx: _Ctx, keypath: tuple) -> list:
    """An axis' values: a list, or {range: [start, stop, step]} / {range: {start, stop,
    step | factor}} with an inclusive stop; at most ctx.max_points of them."""
    if isinstance(raw, list):
        if len(raw) > ctx.max_points:
            raise ctx.error(keypath, f"{len(raw):,} values: more than {_over_limit(ctx)}")
        vals = raw
    elif isinstance(raw, dict) and set(raw) == {"range"}:
        r = raw["range"]
        rp = keypath + ("range",)
        if isinstance(r, list) and len(r) == 3:
            r = dict(zip(("start", "stop", "step"), r))
        if not isinstance(r, dict) or set(r) - {"start", "stop", "step", "factor"} \
                or not {"start", "stop"} <= set(r) or len({"step", "factor"} & set(r)) != 1:
            raise ctx.error(rp, "expected [start, stop, step] or {start, stop, step} or "
                                "{start, stop, factor} (stop inclusive)")
        if not all(_number(v) for v in r.values()):
            raise ctx.error(rp, f"start, stop, step/factor must be numbers, got {brief(r, 120)}")
        if not all(_finite(v) for v in r.values()):
            raise ctx.error(rp, "start, stop, step/factor must be finite numbers within "
                                f"+-(2**63 - 1), got {brief(r, 120)}")
        vals = _range(r, ctx, rp)
    else:
        raise ctx.error(keypath, "expected a list of values or {range: [start, stop, step]}")
    if not vals:
        raise ctx.error(keypath, "empty axis (no values)")
    return vals


def _finite(v: int | float) -> bool:
    """A range bound the arithmetic below handles: finite, within the engine's int64."""
    if isinstance(v, float) and not math.isfinite(v):
        return False
    return abs(v) <= 2**63 - 1


def _range(r: dict, ctx: _Ctx, rp: tuple) -> list:
    """The values of a range whose bounds are finite numbers (_finite); the count is checked
    against ctx.max_points before the list is built."""
    start, stop = r["start"], r["stop"]
    ints = all(isinstance(v, int) for v in r.values())
    too_many = f"gives more values than {_over_limit(ctx)}"
    out: list = []
    if "step" in r:
        step = r["step"]
        if step == 0 or (stop - start) * step < 0:
            raise ctx.error(rp, f"step {step} never goes from {start} to {stop}")
        steps = (stop - start) / step
        if not steps < ctx.max_points:
            raise ctx.error(rp, too_many)
        n = int(math.floor(steps + 1e-9)) + 1
        out = [start + i * step if ints else round(start + i * step, 12) for i in range(n)]
    else:
        f = r["factor"]
        if start == 0 or f <= 0 or f == 1 or (stop / start < 1) != (f < 1) and stop != start \
                or stop == 0 or (start > 0) != (stop > 0):
            raise ctx.error(rp, f"factor {f} never goes from {start} to {stop}")
        if not (math.log(abs(stop)) - math.log(abs(start))) / math.log(f) < ctx.max_points:
            raise ctx.error(rp, too_many)
        v = start
        while (v <= stop * (1 + 1e-12)) if f > 1 else (v >= stop * (1 - 1e-12)):
            out.append(v if ints else round(v, 12))
            v = v * f
            if len(out) > ctx.max_points:
                break
    if len(out) > ctx.max_points:
        raise ctx.error(rp, too_many)
    return out


def _axes(raw: Any, ctx: _Ctx, known: dict, variables_used: set[str]) -> list[Axis]:
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise ctx.error(("axes",), "must be a mapping: config key -> values, or name -> {zip: ...}")
    axes, set_keys = [], {}
    for name, spec in raw.items():
        kp = ("axes", name)
        if isinstance(spec, dict) and "zip" in spec:
            extra = set(spec) - {"zip", "labels"}
            if extra:
                raise ctx.error(kp + (sorted(extra)[0],), "unknown key; allowed: zip, labels")
            if not isinstance(name, str) or not name.isidentifier() or name in known \
                    or name in RESERVED_NAMES or coord_name(name) in {coord_name(k) for k in known}:
                raise ctx.error(kp, "a zipped axis needs a new identifier as its name (not a "
                                    f"config key or one of {', '.join(sorted(RESERVED_NAMES))})",
                                str(name))
            z = spec["zip"]
            if not isinstance(z, dict) or not z:
                raise ctx.error(kp + ("zip",), "expected a mapping config key -> values")
            cols = {}
            for k, v in z.items():
                cols[_check_key(k, ctx, kp + ("zip", k), known)] = _values(v, ctx, kp + ("zip", k))
            lengths = {k: len(v) for k, v in cols.items()}
            if len(set(lengths.values())) != 1:
                raise ctx.error(kp + ("zip",), "zipped lists differ in length: " +
                                ", ".join(f"{k} has {n}" for k, n in lengths.items()))
            n = next(iter(lengths.values()))
            labels = spec.get("labels")
            if labels is not None:
                if not isinstance(labels, list) or len(labels) != n or not all(
                        isinstance(x, (str, int, float)) and not isinstance(x, bool)
                        for x in labels):
                    raise ctx.error(kp + ("labels",), f"expected {n} strings or numbers")
            keys = tuple(cols)
            values = tuple(tuple(cols[k][i] for k in keys) for i in range(n))
            axis = Axis(name, keys, values, tuple(labels) if labels else (), name)
        elif name in variables_used and name.isidentifier() and name not in RESERVED_NAMES \
                and name not in SECTIONS and name not in ("seed", "nodes"):
            # a variable: a name a derived expression uses (anything else is a typo)
            vals = _values(spec, ctx, kp)
            if not all(isinstance(v, str) or _number(v) and _finite(v) for v in vals):
                raise ctx.error(kp, "a variable takes numbers (finite, within +-(2**63 - 1)) "
                                    "or strings", name)
            axis = Axis(name, (), tuple((v,) for v in vals), tuple(vals), name)
        else:
            key = _check_key(name, ctx, kp, known)
            vals = _values(spec, ctx, kp)
            axis = Axis(key, (key,), tuple((v,) for v in vals), (), coord_name(key))
        for k in axis.keys:
            if k in set_keys:
                raise ctx.error(kp, f"{k} is already set by axis {set_keys[k]}", k)
            set_keys[k] = axis.name
        axes.append(axis)
    return axes


def _repeat(raw: Any, ctx: _Ctx, base_seed: Any, grid: int = 1) -> Axis:
    """The rep axis; with `grid` points on the other axes, at most ctx.max_points // grid
    repetitions (checked before the seeds are built)."""
    kp = ("repeat",)
    count_kp = kp if isinstance(raw, int) else kp + ("count",)
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = {"count": raw}
    if not isinstance(raw, dict) or set(raw) - {"count", "seed", "seeds"}:
        raise ctx.error(kp, "expected a count, {count: N, seed: S} or {seeds: [...]}")
    room = ctx.max_points // max(grid, 1)

    def too_many(n: int, what: str, keypath: tuple) -> SpecError:
        return ctx.error(keypath, f"{n:,} {what} x {grid:,} grid point(s) = {n * grid:,} points "
                                  f"exceed {_over_limit(ctx)}")

    if "seeds" in raw:
        if set(raw) != {"seeds"}:
            raise ctx.error(kp, "give either seeds or count (and seed), not both")
        seeds = raw["seeds"]
        if not isinstance(seeds, list) or not seeds:
            raise ctx.error(kp + ("seeds",), "expected a non-empty list of integers")
        if len(seeds) > room:
            raise too_many(len(seeds), "seeds", kp + ("seeds",))
    else:
        count, first = raw.get("count"), raw.get("seed", base_seed)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ctx.error(count_kp if "count" in raw else kp,
                            f"got {brief(count)}; allowed: an integer >= 1")
        if count > room:
            raise too_many(count, "repetitions", count_kp)
        if not isinstance(first, int) or isinstance(first, bool):
            raise ctx.error(kp + ("seed",), f"got {brief(first)}; allowed: an integer")
        seeds = [first + i for i in range(count)]
    seen: set = set()
    for i, s in enumerate(seeds):
        if not isinstance(s, int) or isinstance(s, bool):
            raise ctx.error(kp + ("seeds", i), f"got {brief(s)}; allowed: an integer",
                            f"repeat.seeds[{i}]")
        if s in seen:
            raise ctx.error(kp + ("seeds", i), f"duplicate seed {brief(s)}; seeds must be "
                                               "distinct", f"repeat.seeds[{i}]")
        seen.add(s)
    return Axis(REP_AXIS, ("seed",), tuple((s,) for s in seeds), tuple(range(len(seeds))), REP_AXIS)


def _derived(raw: Any, ctx: _Ctx, known: dict, axes: list[Axis]) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ctx.error(("derived",), "must be a mapping: config key -> expression")
    on_axes = {k: a.name for a in axes for k in a.keys}
    out = {}
    for k, v in raw.items():
        key = _check_key(k, ctx, ("derived", k), known)
        if key in on_axes:
            raise ctx.error(("derived", k), f"is set by axis {on_axes[key]}; a key is either an "
                                            "axis or derived")
        out[key] = v
    return out


def _env(d: dict, variables: dict) -> dict:
    env = dict(variables)
    env.update({sec: d[sec] for sec in SECTIONS})
    env["seed"] = d["seed"]
    try:
        topo = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d["topology"].items()}
        env["nodes"] = TopologyConfig(**topo).n_nodes
    except (TypeError, ValueError, ArithmeticError):
        env["nodes"] = None
    return env


def _set(d: dict, key: str, value: Any) -> None:
    if key == "seed":
        d["seed"] = value
    else:
        sec, f = key.split(".", 1)
        d[sec][f] = value


def _expand(base: dict, axes: tuple[Axis, ...], derived: dict, ctx: _Ctx,
            origin: dict) -> tuple[RunConfig, ...]:
    configs = []
    spent = 0.0     # in derived expressions, of DERIVED_SECONDS
    for n, combo in enumerate(itertools.product(*(range(a.size) for a in axes))):
        # base's sections hold scalars and lists that nothing below changes in place (_set
        # assigns; from_dict makes tuples): a copy of each section is a copy of the point
        d = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
        variables = {a.name: a.values[i][0] for a, i in zip(axes, combo) if a.variable}
        for a, i in zip(axes, combo):
            for k, v in zip(a.keys, a.values[i]):
                _set(d, k, copy.deepcopy(v))
        for k, v in derived.items():
            if isinstance(v, str):
                t0 = time.monotonic()
                try:
                    v = evaluate(v, _env(d, variables), seconds=DERIVED_SECONDS - spent)
                except ExprError as exc:
                    msg = str(exc)
                    if spent + time.monotonic() - t0 >= DERIVED_SECONDS:
                        msg = (f"the derived expressions took over {DERIVED_SECONDS:g} s for "
                               f"{n + 1:,} points; simplify them or sweep fewer points")
                    raise ctx.error(("derived", k), f"{msg} (point {n})", k) from None
                spent += time.monotonic() - t0
            _set(d, k, v)
        try:
            configs.append(from_dict(d))
        except ConfigError as exc:
            where = ", ".join(f"{a.name}={label_of(a.values[i][0])}" if len(a.keys) <= 1
                              else f"{a.name}[{i}]" for a, i in zip(axes, combo))
            field_ = exc.field if exc.field in origin else exc.field.split(".")[0]
            kp = origin.get(exc.field) or origin.get(field_) or (("axes",) if axes else ("base",))
            raise ctx.error(kp, f"{exc.message} (point {n}: {where or 'the base'})",
                            exc.field) from None
    return tuple(configs)


def _final_labels(axes: tuple[Axis, ...], configs: tuple[RunConfig, ...], ctx: _Ctx
                  ) -> tuple[Axis, ...]:
    """Give every axis its coordinate labels (as the result Dataset shows the values) and
    check they are distinct, so the point axis unstacks into the grid."""
    out = []
    stride = len(configs)
    for a in axes:
        stride //= a.size
        if a.labels:
            labels = tuple(a.labels)
        elif len(a.keys) == 1 and a.name != REP_AXIS:
            labels = tuple(label_of(_get(configs[i * stride], a.keys[0])) for i in range(a.size))
        else:  # zipped without labels: the first key's values if distinct, else 0..n-1
            first = tuple(label_of(v[0]) for v in a.values)
            ok = all(isinstance(x, (str, int, float)) for x in first) and \
                len(set(first)) == len(first)
            labels = first if ok else tuple(range(a.size))
        if len(set(labels)) != len(labels):
            kp = ("repeat",) if a.name == REP_AXIS else ("axes", a.name)
            seen: set = set()
            dup = next(x for x in labels if x in seen or seen.add(x))
            raise ctx.error(kp, f"duplicate value {brief(dup)} on the axis")
        out.append(dataclasses.replace(a, labels=labels))
    return tuple(out)


def _get(cfg: RunConfig, key: str) -> Any:
    if key == "seed":
        return cfg.seed
    sec, f = key.split(".", 1)
    return getattr(getattr(cfg, sec), f)

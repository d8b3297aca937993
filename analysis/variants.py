"""The recorded variants of the reproduction targets' sweeps, ``lab/variants.yaml``.

A variant is what a removed one-off spec file of sweeps/extoll/ ran, kept as an `extoll-vec
sweep` command on its target's own spec with ``--set`` overrides, with its cost and the notes
of what it measured. The file is the lab record's data, in the repository and not in the
installed package: the loader reads it from the repository root it is given. Its readers are
`extoll-vec docs` (generated blocks ``variants PREFIX``, analysis/report.py) and the tests that
check each command still expands to the sweep it measured (tests/test_sweep_tables.py,
tests/test_bad_input_store.py). The file's header describes the fields.
"""
from __future__ import annotations

import shlex
from pathlib import Path

from ..errors import ConfigError

VARIANTS_FILE = Path("lab") / "variants.yaml"
FIELDS = {"target", "sets", "fingerprint", "minutes", "notes", "read_with"}


def load_variants(root: Path) -> dict[str, dict]:
    """The variants of ``ROOT/lab/variants.yaml`` by name, in the file's order."""
    import yaml

    path = Path(root) / VARIANTS_FILE
    if not path.is_file():
        raise ConfigError(str(VARIANTS_FILE), f"{path}: no such file (the lab record is in the "
                                              "repository, not in the installed package)")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for name, v in data.items():
        if not isinstance(v, dict) or not {"target", "sets", "notes"} <= set(v) \
                or not set(v) <= FIELDS:
            raise ConfigError(f"{VARIANTS_FILE}: {name}",
                              f"expected the fields {', '.join(sorted(FIELDS))} (read_with "
                              "optional)")
    return data


def sweep_command(variants: dict[str, dict], name: str, out: str | None = None) -> str:
    """The `extoll-vec sweep` command of variant `name` (store: out, default out/NAME.zarr)."""
    from .registry import get_target
    v = variants[name]
    args = [a for s in v["sets"] for a in ("--set", s)]
    spec = get_target(v["target"]).spec_name()
    return shlex.join(["extoll-vec", "sweep", f"sweeps/{spec}.yaml", *args,
                       "-o", out or f"out/{name}.zarr"])


def tables_command(variants: dict[str, dict], name: str) -> str:
    """The `extoll-vec tables` command that reads variant `name`'s store (with read_with's)."""
    v = variants[name]
    stores = [s for s in (v.get("read_with"), name) if s]
    return shlex.join(["extoll-vec", "tables", v["target"],
                       *(a for s in stores for a in ("--from", f"out/{s}.zarr"))])

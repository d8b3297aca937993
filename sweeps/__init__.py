"""Sweep specifications (YAML), installed as ``extoll_vec.sweeps``: ``smoke.yaml`` (the README's
first command) and ``extoll/``, the catalogue of the EXTOLL reproduction targets of
``extoll-vec tables``: one spec per target that runs a sweep, named after it (target
``extoll_X``: ``extoll/X.yaml``, ``name: extoll_X``) and its reduced scale ``extoll/X.quick.yaml``
(``name: extoll_X_quick``); analysis/registry.spec_of. Variants of those sweeps are not files
but ``extoll-vec sweep extoll/X.yaml --set ...`` commands, recorded in the repository's
``lab/variants.yaml`` (not installed)."""
from __future__ import annotations

from importlib import resources
from pathlib import Path


def spec_path(name: str) -> Path:
    """The installed spec ``name`` (e.g. "extoll/static_overhead.quick"), as a file path."""
    return Path(str(resources.files(__name__).joinpath(f"{name}.yaml")))

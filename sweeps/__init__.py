"""Sweep specifications (YAML), installed as ``extoll_vec.sweeps``: ``smoke.yaml`` (the README's
first command) and ``extoll/`` (the specs behind the EXTOLL reproduction targets of
``extoll-vec tables``; ``NAME.quick.yaml`` is the reduced scale of ``NAME.yaml``)."""
from __future__ import annotations

from importlib import resources
from pathlib import Path


def spec_path(name: str) -> Path:
    """The installed spec ``name`` (e.g. "extoll/static_overhead.quick"), as a file path."""
    return Path(str(resources.files(__name__).joinpath(f"{name}.yaml")))

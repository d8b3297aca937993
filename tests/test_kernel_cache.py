"""The Numba cache of the kernels is keyed by their sources (kernels/__init__.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from numba.core import config as numba_config

from extoll_vec import kernels


def test_cache_dir_is_named_after_every_kernel_source_and_dtypes():
    d = kernels.cache_dir()
    assert d.name == f"numba-{kernels.source_digest()}"
    names = {p.name for p in kernels._SOURCES}
    assert {"sim.py", "network.py", "host.py", "nic.py", "flowctl.py", "dtypes.py"} <= names
    # the kernels were decorated with it; the user's own setting is left as it was
    assert Path(kernels.sim.advance._cache._cache_path).is_relative_to(d)
    assert numba_config.CACHE_DIR != str(d)


def test_a_change_in_an_inlined_helper_changes_the_digest(tmp_path, monkeypatch):
    """Numba alone keys sim.advance on sim.py only: a helper edited in network.py would load
    stale machine code. The digest covers every source."""
    before = kernels.source_digest()
    fake = tmp_path / "network.py"
    fake.write_text(Path(kernels.network.__file__).read_text() + "\n# edited\n")
    sources = [fake if p.name == "network.py" else p for p in kernels._SOURCES]
    monkeypatch.setattr(kernels, "_SOURCES", sources)
    assert kernels.source_digest() != before


def test_env_var_chooses_the_cache_root(tmp_path):
    code = "from extoll_vec import kernels; print(kernels.cache_dir())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "EXTOLL_VEC_CACHE_DIR": str(tmp_path)})
    assert Path(out.stdout.strip()).parent == tmp_path

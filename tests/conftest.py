"""Test-wide settings.

Hypothesis runs derandomized by default so that the suite gives the same verdict on every
machine (CI included); a failure it found once is kept as an explicit @example. To explore new
random cases locally: HYPOTHESIS_PROFILE=explore python -m pytest tests/test_invariants.py"""
import os

from hypothesis import settings

settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# One build of the kernels for every protocol (kernels/specialize.py): the suite runs every
# family, and a build per family would cost minutes of compilation each on a fresh machine.
# test_kernel_families.py runs the default policy and checks it against this one. Set before
# any Dask worker starts, so the workers inherit it.
os.environ.setdefault("EXTOLL_VEC_KERNELS", "shared")

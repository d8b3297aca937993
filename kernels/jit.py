"""The decorators of every kernel: one place for the compile options.

- ``inner``: a helper called only from other kernels. Inlined by LLVM (``forceinline``): a
  call would otherwise copy the whole State tuple of arrays. No CPython or C wrapper: nothing
  calls it from Python, and a wrapper that unboxes the 130-array State tuple costs more compile
  time than the helper itself (docs/design.md).
- ``entry``: a kernel the engine calls from Python (sim.start, sim.advance). ``nogil=True``:
  one call can run for minutes (a chunk of cycles of a batch of 1024-rank points); holding
  the GIL that long stops every other thread of the process, and a Dask worker whose
  heartbeat thread is stopped for minutes is declared dead and restarted, its batch rerun.
  Kernels touch no Python object, so releasing it is safe.
- ``outlined``: a helper on a rare path of one protocol (LFC's deadlock recovery), or the
  hooks of a protocol no other one's speed should pay for (FM/MC). Its own function, not
  inlined, so that its body does not grow the event loop that every protocol runs (the hop
  is sensitive to the loop's size: docs/design.md); a call copies the State tuple, so callers
  test the cheap condition first.
- ``analysis``: a static analysis called from Python that allocates its result (progstats),
  so it keeps Numba's reference counting.

All: ``cache=True`` (a second process loads the machine code instead of compiling; the cache
directory is chosen in ``kernels/__init__.py``) and ``error_model="numpy"`` (integer division
by zero does not raise from inside a kernel). ``entry`` and ``inner`` also ``_nrt=False``:
kernels never allocate, and without reference counting a State access costs no atomic
operations.
"""
from numba import njit

_OPTIONS = dict(cache=True, _nrt=False, error_model="numpy")

entry = njit(**_OPTIONS, nogil=True)
inner = njit(**_OPTIONS, forceinline=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
outlined = njit(**_OPTIONS, no_cpython_wrapper=True, no_cfunc_wrapper=True)
analysis = njit(cache=True, error_model="numpy")

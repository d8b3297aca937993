"""Compiler pipelines for kernels that are not entry points (jit.inner, jit.outlined).

Numba compiles every function into a library of its own and, to finish it, optimises the
library together with the IR of everything it calls and generates its machine code. A helper
that is only ever inlined into its callers thus had its whole call tree optimised and
compiled once per level above it, and its machine code was never run. This pipeline builds
such a helper into an `InlineOnlyLibrary`: its IR gets the function passes (as before), and
finishing it only links its callees' IR into it; the module passes and the machine code are
left to the entry point, which optimises each function of its call tree once. An outlined
kernel is built the same way and marked `noinline`: it stays one function of its own inside
the entry point's library.

An entry point's library (`EntryLibrary`) runs Numba's module pipeline without LLVM's loop
vectorizer: the event loop has no loop it vectorizes, and its analysis of every loop of the
inlined kernels cost about 4 % of a build (lab/compile_time.md). Only the kernels' libraries:
Numba's setting for other code in the process is left alone.
"""
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_lock import require_global_compiler_lock
from numba.core.compiler_machinery import LoweringPass, register_pass
from numba.core.typed_passes import AnnotateTypes, NativeLowering


class InlineOnlyLibrary(JITCodeLibrary):
    """A library whose IR is only linked into others: no module passes, no machine code."""

    def finalize(self):
        require_global_compiler_lock()
        self._raise_if_finalized()
        seen = set()
        for library in self._linking_libraries:
            if library not in seen:
                seen.add(library)
                self._reload_init.update(library._reload_init)
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        self._finalized = True

    def get_pointer_to_function(self, name):
        return 0   # no wrapper and no machine code: nothing calls it from Python

    @property
    def codegen(self):
        return _NoEnvironment(self._codegen)


class _NoEnvironment:
    """The codegen, but the environment of a function without machine code is not set (its
    global does not exist in the execution engine)."""

    def __init__(self, codegen):
        self._codegen = codegen

    def set_env(self, env_name, env):
        pass

    def __getattr__(self, name):
        return getattr(self._codegen, name)


class EntryLibrary(JITCodeLibrary):
    """An entry point's library: its final module optimised without the loop vectorizer."""

    def _optimize_final_module(self):
        codegen = self._codegen
        self._codegen = _NoLoopVectorizer(codegen)
        try:
            super()._optimize_final_module()
        finally:
            self._codegen = codegen


class _NoLoopVectorizer:
    """The codegen, but its module pass managers never vectorize loops."""

    def __init__(self, codegen):
        self._codegen = codegen

    def _module_pass_manager(self, **kwargs):
        return self._codegen._module_pass_manager(**{**kwargs, "loop_vectorize": False})

    def __getattr__(self, name):
        return getattr(self._codegen, name)


class _OwnLibrary(LoweringPass):
    """Before NativeLowering: the function is lowered into a library of `library` (a cached
    entry point's with object caching on, as NativeLowering's own library would be)."""
    library = JITCodeLibrary
    cached = False

    def __init__(self):
        LoweringPass.__init__(self)

    def run_pass(self, state):
        if state.library is None:
            codegen = state.targetctx.codegen()
            state.library = self.library(codegen, state.func_id.func_qualname)
            if self.cached:
                state.library.enable_object_caching()
        return False


@register_pass(mutates_CFG=False, analysis_only=False)
class EntryLowering(_OwnLibrary):
    _name = "extoll_vec_entry_library"
    library = EntryLibrary
    cached = True


@register_pass(mutates_CFG=False, analysis_only=False)
class InlineOnlyLowering(_OwnLibrary):
    _name = "extoll_vec_inline_only_library"
    library = InlineOnlyLibrary


@register_pass(mutates_CFG=False, analysis_only=False)
class MarkNotInlined(LoweringPass):
    _name = "extoll_vec_not_inlined"

    def __init__(self):
        LoweringPass.__init__(self)

    def run_pass(self, state):
        fn = state.library._final_module.get_function(state.cr.fndesc.mangled_name)
        fn.add_function_attribute("noinline")
        return False


def _pipeline(state, library_pass, *after_lowering):
    """Numba's nopython pipeline with library_pass before NativeLowering (after AnnotateTypes,
    the pass before it) and the passes after_lowering after it."""
    pm = DefaultPassBuilder.define_nopython_pipeline(state)
    pm.add_pass_after(library_pass, AnnotateTypes)
    for p in after_lowering:
        pm.add_pass_after(p, NativeLowering)
    pm.finalize()
    return [pm]


class EntryCompiler(CompilerBase):
    def define_pipelines(self):
        return _pipeline(self.state, EntryLowering)


class InlineOnlyCompiler(CompilerBase):
    def define_pipelines(self):
        return _pipeline(self.state, InlineOnlyLowering)


class OutlinedCompiler(CompilerBase):
    def define_pipelines(self):
        return _pipeline(self.state, InlineOnlyLowering, MarkNotInlined)

"""The state passed by reference: one pointer between kernels instead of a tuple of 130 arrays.

Numba passes a tuple argument flattened: every array of the State tuple becomes its fields
(data pointer, shape, strides, ...), about 1,200 scalar arguments per call, and each call site
of a kernel first builds and then takes apart that argument list. LLVM spent most of a cold
compile folding those copies away (lab/compile_time.md). An entry point
therefore stores each tuple once in its own stack frame (`by_ref`) and hands the kernels a
pointer to it, typed `Ref[tuple]`: `R.field` loads that array from the frame, with the same
type and the same semantics as `S.field`, so a kernel's source does not change. Once the
kernels are inlined into the entry point, the frame does not escape and LLVM turns the loads
back into the values they load (scalar replacement of aggregates, SROA); a call that is not
inlined (`jit.outlined`) would receive one pointer, not the tuple, but the outlined kernels
take the arrays they read instead, so that the frame never escapes.

The kernels are pure over the arrays either way: the results are bit-identical.
"""
import hashlib

import llvmlite.binding as _llvm
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import (infer_getattr, intrinsic, lower_getattr_generic, models,
                                  register_model)
from numba.core.typing.templates import AttributeTemplate


class Ref(types.Type):
    """A pointer to a named tuple (of arrays) that lives in an entry point's frame."""

    def __init__(self, tup: types.BaseNamedTuple):
        self.tup = tup
        super().__init__(name=f"Ref[{tup}]")

    @property
    def key(self):
        return self.tup

    @property
    def mangling_args(self):
        # a kernel's symbol names its argument types: the tuple's class and a digest of its
        # fields' types keep it short and still distinct per layout
        digest = hashlib.sha256(str(self.tup).encode()).hexdigest()[:16]
        return "Ref", (self.tup.instance_class.__name__, "h" + digest)


@register_model(Ref)
class RefModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, dmm.lookup(fe_type.tup).get_value_type().as_pointer())


@infer_getattr
class RefAttributes(AttributeTemplate):
    key = Ref

    def generic_resolve(self, typ, attr):
        if attr in typ.tup.fields:
            return typ.tup.types[typ.tup.fields.index(attr)]
        return None


def _load(builder, ptr):
    """The value at ptr, loaded scalar by scalar: an access to an array's data pointer or one
    shape then folds to the one load it needs. No `!invariant.load` mark, though the frame is
    never written after by_ref: with it the event loop ran 6-7 % slower (lab/compile_time.md)."""
    ty = ptr.type.pointee
    if isinstance(ty, (ir.LiteralStructType, ir.ArrayType)):
        n = len(ty.elements) if isinstance(ty, ir.LiteralStructType) else ty.count
        val = ir.Constant(ty, ir.Undefined)
        for j in range(n):
            val = builder.insert_value(val, _load(builder, cgutils.gep_inbounds(builder, ptr, 0, j)),
                                       j)
        return val
    return builder.load(ptr)


@lower_getattr_generic(Ref)
def _ref_getattr(context, builder, typ, val, attr):
    return _load(builder, cgutils.gep_inbounds(builder, val, 0, typ.tup.fields.index(attr)))


@intrinsic
def by_ref(typingctx, tup):
    """The named tuple `tup`, stored in the caller's frame, as a Ref to it. Only for entry
    points: the Ref is valid until the function that made it returns."""
    if not isinstance(tup, types.BaseNamedTuple):
        return None

    def codegen(context, builder, signature, args):
        return cgutils.alloca_once_value(builder, args[0])
    return Ref(tup)(tup), codegen


# SROA leaves an alloca of more than this many pieces in memory (LLVM's default, 1024): the
# State tuple's frame has about 1,200, and a frame left in memory makes every array access of
# the event loop a load. A process-wide LLVM option, which changes no other code's results.
_llvm.set_option("extoll-vec", "-sroa-max-alloca-slices=8192")

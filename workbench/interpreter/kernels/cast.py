"""CAST: convert the element type; the types come from the tensors (CastOptions is ignored, as
TFLite).  Types: float32, float64, float16, int64, int32, int16, int8, uint8, uint16, uint32, bool,
complex64 (not string).  Versions: v1; uint32 v2; int8 v3; uint16 v4; float64 or float16 v5 (int4,
bfloat16, int2 and uint4, v6-v8, are not implemented).

TFLite's rules (``cast.cc``), which are not numpy's ``astype``:

* float to integer *saturates*: NaN becomes the type's largest value, anything below its lowest
  value the lowest, anything above its largest value the largest, the rest is truncated toward
  zero.  "Above the largest" is tested in the source float type; when the largest integer does not
  fit exactly in it (int32 in float32: 2147483647 rounds up to 2^31) the bound is the float just
  below, so 2147483520.0f is the largest float32 that converts, 2147483648.0f already saturates;
* float16 is read through float32, and anything becomes float16 through float32 (IEEE
  round-to-nearest-even from float32), so a float64 or int64 is rounded twice on its way to float16;
* complex64 to anything but complex64 uses the real part only (to bool: ``real != 0``);
  anything to complex64 is ``(float32(x), 0)``;
* to bool is ``x != 0`` (NaN is true); from bool 0/1;
* integer to integer wraps around (C's conversion modulo 2^bits); integer to float rounds to nearest.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..context import is_string
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F16, F32
from ._elementwise import refuse

TYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8,
                                    np.uint8, np.uint16, np.uint32, np.bool_, np.complex64))
C64 = np.dtype(np.complex64)


@opdata
class CastData(OpData):
    from_type: str
    to_type: str
    rule: str


def saturate_float_to_int(v: np.ndarray, to: np.dtype) -> np.ndarray:
    """TFLite's SaturatingCastFloatingToInteger on a float32 or float64 array."""
    ft = v.dtype.type
    info = np.iinfo(to)
    lo = ft(info.min)
    hi = ft(info.max)
    if int(hi) > info.max:              # the largest integer rounded up in this float type
        hi = np.nextafter(hi, ft(0))
    out = np.empty(v.shape, to)
    nan = np.isnan(v)
    below = v < lo
    above = v > hi
    inside = ~(nan | below | above)
    out[inside] = np.trunc(v[inside]).astype(to)
    out[nan | above] = info.max
    out[below] = info.min
    return out


def reference(x: np.ndarray, to: np.dtype) -> np.ndarray:
    to = np.dtype(to)
    if x.dtype == C64 and to != C64:
        x = x.real                                   # float32
    if x.dtype == F16:
        x = x.astype(F32)                            # half is read through float
    if to == np.bool_:
        return x != 0
    if to == F16:
        with np.errstate(over="ignore"):
            return x.astype(F32).astype(F16)
    if to == C64:
        return x.copy() if x.dtype == C64 else x.astype(F32).astype(C64)
    if x.dtype.kind == "f" and to.kind in "iu":
        return saturate_float_to_int(x, to)
    with np.errstate(over="ignore"):
        return x.astype(to)


def rule(src: np.dtype, dst: np.dtype) -> str:
    """In words, for the OpData a notebook prints."""
    if src == dst:
        return "copy"
    if src == C64 and dst != C64:
        src, prefix = F32, "real part, then "
    else:
        prefix = ""
    if dst == np.bool_:
        return prefix + "x != 0"
    if src.kind in "f" and dst.kind in "iu":
        return prefix + "saturate, then truncate toward zero (NaN -> max)"
    if dst == F16:
        return prefix + "through float32, rounded to nearest even"
    if src.kind in "iub" and dst.kind in "iu":
        return prefix + ("0/1" if src == np.bool_ else "wrap around" if dst.itemsize < src.itemsize or
                         src.kind != dst.kind else "exact")
    return prefix + "C conversion"


@kernel(BuiltinOperator.CAST, versions=range(1, 6))
class Cast(Kernel):
    name = "cast"

    def prepare(self, context, node):
        x, y = node.inputs[0], node.outputs[0]
        src, dst = context.dtype(x), context.dtype(y)
        for t, dt, what in ((x, src, "input"), (y, dst, "output")):
            if dt not in TYPES:
                got = "string" if is_string(dt) else context.type_name(t)
                refuse(node, f"{what} '{context.name(t)}' is {got}; this kernel casts "
                             f"{'/'.join(str(d) for d in TYPES)}")
        context.set_output(y, context.shape(x), dst)
        return CastData(str(src), str(dst), rule(src, dst))

    def invoke(self, context, node, d):
        out = context.tensors[node.outputs[0]]
        out[...] = reference(context.tensors[node.inputs[0]], out.dtype)

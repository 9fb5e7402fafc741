"""What ADD, SUB and MUL do on plain (unquantized) int32, int64, uint32, float16 and complex64
tensors, beyond numpy's ufunc — facts of litert's add.cc / sub.cc / mul.cc, each checked against
ai-edge-litert's builtin kernels:

* integers: the C expression (wrapping on overflow, as x86 does), then the fused activation as
  ``CalculateActivationRange<T>`` of the tensor's own type — RELU [0, max], RELU6 [0, 6],
  RELU_N1_TO_1 [−1, 1]; TANH and SIGN_BIT are not applied.  For uint32 the −1 of RELU_N1_TO_1
  wraps to 2³²−1, so max(x, 2³²−1) then min(·, 1) makes every output 1 — what litert computes.
* float16: each element is computed in float32 and rounded to half (numpy's float16 ufuncs do
  the same), then clamped to the activation range intersected with half's finite range
  [−65504, 65504]: even with no activation an overflow or an infinite input ends at ±65504,
  never ±inf.  NaN stays NaN (the clamp is max-then-min, both keep a NaN).
* complex64 MUL: (a+bi)(c+di) = (ac − bd) + (ad + bc)i with each of the four products rounded to
  float32 before the sum; numpy's own complex64 multiply keeps more precision and differs in the
  last bit for about half of the values.  A fused activation is refused, as litert does.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ..registry import OpData, opdata
from ._common import F16, I32, I64, U32, activation_name, activation_range

C64 = np.dtype(np.complex64)
PLAIN = (I32, I64, U32, F16, C64)
HALF_MAX = 65504.0


@opdata
class PlainBinaryData(OpData):
    """ADD / SUB / MUL on unquantized int32 / int64 / uint32 / float16 / complex64."""

    output_shape: tuple
    broadcast: bool
    activation: str
    dtype: str
    output_activation_min: object     # int for integers, float for float16, None for complex64
    output_activation_max: object


def prepare_plain(kernel, context, node, dt) -> PlainBinaryData:
    a, b, y = node.inputs[0], node.inputs[1], node.outputs[0]
    sa, sb = context.shape(a), context.shape(b)
    try:
        out = tuple(np.broadcast_shapes(sa, sb))
    except ValueError:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): shapes {list(sa)} and {list(sb)} do "
                                 f"not broadcast") from None
    if context.dtype(y) != dt:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): {dt} inputs with a {context.dtype(y)} "
                                 f"output; TFLite needs the output type of the inputs")
    code = int(node.params.get("fused_activation_function", 0))
    if dt == C64:
        if code != 0:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): fused activation "
                                     f"{activation_name(code)} on complex64; TFLite refuses it ('Activation is "
                                     f"not allowed for COMPLEX64 input')")
        lo = hi = None
    elif dt == F16:
        lo, hi = activation_range(code)
        lo, hi = max(lo, -HALF_MAX), min(hi, HALF_MAX)
    else:
        lo, hi = integer_activation_range(code, dt)
        if dt.kind == "u":
            lo %= 1 << (8 * dt.itemsize)        # CalculateActivationRange<uint32_t>: −1 wraps around
    context.set_output(y, out, dt)
    return PlainBinaryData(out, sa != sb, activation_name(code), str(dt), lo, hi)


def integer_activation_range(code: int, dtype) -> tuple[int, int]:
    """``CalculateActivationRange<T>`` for an integer T: RELU [0, max], RELU_N1_TO_1 [−1, 1],
    RELU6 [0, 6], anything else the whole range of T."""
    info = np.iinfo(dtype)
    return {1: (0, int(info.max)), 2: (-1, 1), 3: (0, 6)}.get(int(code), (int(info.min), int(info.max)))


def complex_multiply(a, b) -> np.ndarray:
    """(a+bi)(c+di) with float32 products, as litert's complex64 MUL."""
    a, b = np.broadcast_arrays(np.asarray(a, C64), np.asarray(b, C64))
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    out = np.empty(a.shape, C64)
    out.real = ar * br - ai * bi
    out.imag = ar * bi + ai * br
    return out


def plain_binary(ufunc, a, b, d: PlainBinaryData) -> np.ndarray:
    """ADD / SUB / MUL on a plain type (``reference_ops::Add`` / ``Sub`` / ``Mul`` and their broadcast
    versions): numpy's ufunc — integers wrap as the C expression does on x86, float16 is computed in
    float32 and rounded to half — then the clamp (max, then min: NaN stays NaN); complex64 MUL by
    :func:`complex_multiply`, with no activation."""
    if d.dtype == "complex64":
        return complex_multiply(a, b)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(ufunc(a, b))
    np.maximum(out, np.asarray(d.output_activation_min).astype(out.dtype), out=out)
    np.minimum(out, np.asarray(d.output_activation_max).astype(out.dtype), out=out)
    return out

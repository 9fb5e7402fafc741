"""LOG_SOFTMAX over the last axis — float32 (v1), uint8 (v1), int8 (v2).

float32 (``optimized_ops::LogSoftmax``, Eigen, row by row; matched bit for bit on ai-edge-litert
2.3.0, tests/interpreter/test_float_softmax_bitexact.py): m = Eigen's max of the row; s = Eigen's sum of
exp(x − m) — the sum runs over an expression, so its packets of 4 start at the row's first value:
Eigen's polynomial packet exp on the first 4·⌊n/4⌋ values of the row, the C library's expf on the
last n mod 4, the packets folded in two accumulators, then (l0 + l2) + (l1 + l3), then the tail
values one by one; out = (x − m) − logf(s), every step rounded to float32.  The arithmetic lives
with SOFTMAX's (``softmax.log_softmax_f32`` / ``softmax.log_softmax_reference``).  A row holding a
NaN comes out all NaN (payload / sign not matched).

uint8 / int8 (``activations.cc`` LogSoftmaxPrepare / ``optimized_ops::LogSoftmax``, TFLite's
default kernel): the output must have scale 16/256 and zero point 255 (uint8) / 127 (int8).  Prepare
fills the softmax float table T[255 − k] = expf(−in_scale·k) (beta 1).  Per row, in float32:
sum = Σ T[255 − max + x]; log_sum = logf(sum); scale = in_scale/out_scale;
precomputed = (in_scale·max + log_sum) / out_scale; q = (int32)(rint(scale·x − precomputed) + out_zp)
(rint: ties to even; the addition in float32), clamped.

Absurd input scales (measured on ai-edge-litert 2.3.0, int8 and uint8, scales 1e-45 to 3e38):
TFLite's prepare takes every scale.  From about 1e30 on, in_scale·max, scale·x and their difference
overflow to ±inf or become NaN (inf − inf, inf·0); the float → int32 conversion is x86's (NaN and
values beyond int32 → INT32_MIN, see :func:`quant.log_softmax_output_int32_x86`), so those outputs
are the type's minimum; from in_scale·255 = inf on (≈ 1.3e36) every output is the minimum (−128 /
0).  Tiny scales make every table entry 1 and the output a constant.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from .. import quant
from ._common import F32
from ._unary import I8, U8, TYPE_RANGE, check_same_type
from .softmax import log_softmax_f32, log_softmax_reference, softmax_table


@opdata
class LogSoftmaxData(OpData):
    shape: tuple


@opdata
class LogSoftmaxQuantizedData(OpData):
    """TFLite's ``LogSoftmaxOpData`` on its optimized path (``SoftmaxParams`` table / scale / zero_point)."""

    shape: tuple
    dtype: str
    input_scale: float
    output_scale: float
    output_zero_point: int
    table: object              # float32 [256]: table[255 - k] = expf(-input_scale * k)


def reference(x: np.ndarray) -> np.ndarray:
    """float32: see :func:`softmax.log_softmax_reference` (the module docstring says the arithmetic)."""
    return log_softmax_reference(x)


def log_softmax_quantized(x: np.ndarray, d: LogSoftmaxQuantizedData, row_by_row: bool = False) -> np.ndarray:
    x2 = x.reshape(-1, x.shape[-1]).astype(np.int64)
    mx = x2.max(axis=1, keepdims=True)
    t = d.table[255 - mx + x2]
    s = np.zeros(x2.shape[0], np.float32)
    if row_by_row:
        for j in range(x2.shape[1]):                  # float32, left to right, as the C loop
            s = (s + t[:, j]).astype(np.float32)
    else:
        s = np.cumsum(t, axis=1, dtype=np.float32)[:, -1]
    log_sum = quant.libm_apply("logf", s)
    in_s, out_s = np.float32(d.input_scale), np.float32(d.output_scale)
    with np.errstate(over="ignore", invalid="ignore"):        # absurd scales: IEEE ±inf / NaN, as TFLite
        scale = np.float32(in_s / out_s)
        pre = (((in_s * mx[:, 0].astype(np.float32)).astype(np.float32) + log_sum).astype(np.float32) / out_s)
        lp = ((scale * x2.astype(np.float32)).astype(np.float32) - pre.astype(np.float32)[:, None]).astype(np.float32)
    q = quant.log_softmax_output_int32_x86(lp, d.output_zero_point)
    lo, hi = TYPE_RANGE[np.dtype(d.dtype)]
    return np.clip(q, lo, hi).astype(d.dtype).reshape(x.shape)


@kernel(BuiltinOperator.LOG_SOFTMAX, versions=(1, 2))
class LogSoftmax(Kernel):
    name = "log_softmax"

    def prepare(self, context, node):
        x, y = node.inputs[0], node.outputs[0]
        dt = context.expect_dtype(node, x, (F32, U8, I8))
        if dt == F32:
            context.set_output(y, context.shape(x), F32)
            return LogSoftmaxData(context.shape(x))
        check_same_type(context, node, dt)
        in_s, _ = quant.tensor_scale_zp(context, x)
        out_s, out_zp = quant.tensor_scale_zp(context, y)
        want_zp = 255 if dt == U8 else 127
        if float(np.float32(out_s)) != 16.0 / 256 or out_zp != want_zp:
            raise UnsupportedOpError(f"LOG_SOFTMAX (node {node.index}): a {dt} output needs scale 16/256 and zero "
                                     f"point {want_zp} (got {out_s:g}, {out_zp})")
        context.set_output(y, context.shape(x), dt)
        return LogSoftmaxQuantizedData(context.shape(x), str(dt), in_s, out_s, out_zp, softmax_table(in_s, 1.0))

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        if type(d) is LogSoftmaxQuantizedData:
            context.tensors[node.outputs[0]][...] = log_softmax_quantized(x, d)
            return
        log_softmax_f32(x, context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        if type(d) is LogSoftmaxQuantizedData:
            context.tensors[node.outputs[0]][...] = log_softmax_quantized(x, d, row_by_row=True)
            return
        context.tensors[node.outputs[0]][...] = reference(x)

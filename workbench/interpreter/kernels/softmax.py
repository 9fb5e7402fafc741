"""SOFTMAX (float32) over the last axis: exp(beta * (x - max)) / sum.

``beta`` comes from TFLite's parser view: an absent options table makes it 0 (every output equal).

int8 → int8 (version 2; output scale 1/256, zero point −128): TFLite's default CPU kernel, not the
fixed-point reference (TFLITE_FACTS §4.9 #2).  Prepare fills a float table
T[255 − k] = expf(−in_scale·beta·k), k = 0..255.  Per row: max = row max; t(x) = T[255 − max + x];
sum = Σ t in float32, left to right; inv = 1 / (sum · out_scale);
q = round_half_away(t(x) · inv) + out_zp, clamped.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from .._jit import njit
from .. import quant
from ._common import F32

I8 = np.dtype(np.int8)


@opdata
class SoftmaxInt8Data(OpData):
    beta: float
    axis: int
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int
    table: object              # float32 [256]: table[255 - k] = expf(-input_scale * beta * k)
    impl: str = "numba"


def softmax_table(input_scale: float, beta: float) -> np.ndarray:
    """PopulateSoftmaxLookupTable: scale = −in_scale·beta (float32), table[255 − v] = expf(scale · v)."""
    scale = np.float32(-np.float32(input_scale) * np.float32(beta))
    v = np.arange(256, dtype=np.float32)
    table = np.empty(256, np.float32)
    table[255 - np.arange(256)] = quant.float_fn("expf", (scale * v).astype(np.float32))
    return table


@njit
def softmax_int8_numba(x2, table, out_scale, out_zp, out2):
    rows, n = x2.shape
    for r in range(rows):
        mx = -128
        for j in range(n):
            if x2[r, j] > mx:
                mx = np.int64(x2[r, j])
        off = 255 - mx
        s = np.float32(0.0)
        for j in range(n):
            s += table[off + x2[r, j]]
        inv = np.float32(1.0) / (s * out_scale)
        for j in range(n):
            p = table[off + x2[r, j]] * inv
            a = np.floor(np.abs(np.float64(p)) + 0.5)
            q = np.int64(a) if p >= 0 else -np.int64(a)
            q += out_zp
            if q < -128:
                q = -128
            if q > 127:
                q = 127
            out2[r, j] = q


def reference_int8(x, d) -> np.ndarray:
    x2 = x.reshape(-1, x.shape[-1]).astype(np.int64)
    t = d.table[255 - x2.max(axis=1, keepdims=True) + x2]
    s = np.zeros(x2.shape[0], np.float32)
    for j in range(x2.shape[1]):                  # float32, left to right, as the C loop
        s = (s + t[:, j]).astype(np.float32)
    inv = (np.float32(1.0) / (s * np.float32(d.output_scale))).astype(np.float32)
    p = (t * inv[:, None]).astype(np.float32)
    q = quant.round_half_away(p) + d.output_zero_point
    return np.clip(q, -128, 127).astype(np.int8).reshape(x.shape)


@opdata
class SoftmaxData(OpData):
    beta: float
    axis: int


def reference(x: np.ndarray, beta: float) -> np.ndarray:
    z = (x.astype(np.float64) - x.max(axis=-1, keepdims=True)) * beta
    e = np.exp(z)
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


@kernel(BuiltinOperator.SOFTMAX, versions=(1, 2))
class Softmax(Kernel):
    name = "softmax"

    def prepare(self, context, node):
        x_t = node.inputs[0]
        dt = context.expect_dtype(node, x_t, (F32, I8))
        shape = context.shape(x_t)
        if dt == I8:
            in_s, in_zp = quant.tensor_scale_zp(context, x_t)
            out_s, out_zp = quant.tensor_scale_zp(context, node.outputs[0])
            context.set_output(node.outputs[0], shape, I8)
            beta = float(node.params["beta"])
            return SoftmaxInt8Data(beta, len(shape) - 1, in_s, in_zp, out_s, out_zp, softmax_table(in_s, beta))
        context.set_output(node.outputs[0], shape, F32)
        return SoftmaxData(float(node.params["beta"]), len(shape) - 1)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is SoftmaxInt8Data:
            n = x.shape[-1]
            softmax_int8_numba(x.reshape(-1, n), d.table, np.float32(d.output_scale), d.output_zero_point,
                               out.reshape(-1, n))
            return
        np.subtract(x, x.max(axis=-1, keepdims=True), out=out)
        if d.beta != 1.0:
            out *= np.float32(d.beta)
        np.exp(out, out=out)
        out /= out.sum(axis=-1, keepdims=True)

    def invoke_reference(self, context, node, d):
        if type(d) is SoftmaxInt8Data:
            context.tensors[node.outputs[0]][...] = reference_int8(context.tensors[node.inputs[0]], d)
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.beta)

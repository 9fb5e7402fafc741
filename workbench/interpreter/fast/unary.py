"""Speed layer for the element-wise unary ops: EXP, LOG, ELU, SIN, COS (float32 and, for SIN / COS,
float16), the float32 RELU family, and the quantized EXP, LOG, ELU, SQRT, RSQRT, ABS, RELU, RELU6,
RELU_N1_TO_1, RELU_0_TO_1.

* Quantized inputs are tables.  An element-wise op's output depends on the input *value* only, so
  bind evaluates the teaching layer's function once on every value of the input type (256 values
  for 8 bits, 65536 for int16) and the fast path indexes that table with the input's bit pattern
  ("lut" for TFLite's own LUT ops, "table" for the others).  The table holds the teaching layer's
  results, so it serves both variants (TFLite's two builds agree on these ops).
* float32 RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1 are one ``np.clip`` into the output ("clip").
* float32 EXP, LOG, ELU, SIN, COS run a numba loop over the elements: numba's ``math.exp`` /
  ``log`` / ``expm1`` / ``sin`` / ``cos`` on a float32 call the C library's expf, logf, expm1f,
  sinf, cosf — the functions the teaching layer writes out in numpy (``kernels/_libm.py``).
  Without JIT (``WORKBENCH_JIT=0``) the loop runs as Python and its ``native`` twins call the C
  library through ctypes.
"""

from __future__ import annotations

import math

import numpy as np

from ...perf.jit import native, njit
from ...schema.enums import BuiltinOperator as B
from .. import quant
from ..kernels._elementwise import ElementwiseData
from ..kernels._unary import LutData, ReluData, UnaryData, all_values, lut_lookup, relu_reference
from ..kernels.abs import AbsData, abs_quantized
from ..kernels.rsqrt import RsqrtInt8Data, rsqrt_int8
from ..kernels.sin import F16, half_result
from ..kernels.sqrt import SqrtQuantizedData, check_non_negative, sqrt_quantized
from ..variants import VARIANTS
from . import FastPath, fast_path

ALL = tuple(VARIANTS)


# ----------------------------------------------------------------------------------------------
# quantized: value tables


def bit_pattern(x: np.ndarray) -> np.ndarray:
    """``x`` read as unsigned integers of the same width (the index into a value table)."""
    x = np.ascontiguousarray(x)
    return x.view(np.uint8 if x.dtype.itemsize == 1 else np.uint16)


class ValueTable(FastPath):
    """out = table[bit pattern of x], the table computed at bind from the teaching layer's function;
    ``check(node, x, d)``, when given, runs first (SQRT / RSQRT refuse negative inputs)."""

    __slots__ = ("name", "table", "check")

    def __init__(self, name: str, dtype, fn, check=None):
        self.name, self.check = name, check
        self.table = np.asarray(fn(all_values(dtype)))

    def __call__(self, context, node, d) -> None:
        x = context.tensors[node.inputs[0]]
        if self.check is not None:
            self.check(node, x, d.input_zero_point, "Rsqrt" if node.op == B.RSQRT else "Sqrt")
        np.take(self.table, bit_pattern(x), out=context.tensors[node.outputs[0]])


@fast_path(B.EXP, LutData, variants=ALL)
@fast_path(B.LOG, LutData, variants=ALL)
@fast_path(B.ELU, LutData, variants=ALL)
def bind_lut(context, node, d):
    return ValueTable("lut", d.dtype, lambda v: lut_lookup(v, d))


@fast_path(B.RSQRT, LutData, variants=ALL)
def bind_rsqrt_int16(context, node, d):
    return ValueTable("lut", d.dtype, lambda v: lut_lookup(v, d), check_non_negative)


@fast_path(B.RSQRT, RsqrtInt8Data, variants=ALL)
def bind_rsqrt_int8(context, node, d):
    return ValueTable("table", np.int8, lambda v: rsqrt_int8(v, d), check_non_negative)


@fast_path(B.SQRT, SqrtQuantizedData, variants=ALL)
def bind_sqrt(context, node, d):
    return ValueTable("table", d.dtype, lambda v: sqrt_quantized(v, d), check_non_negative)


@fast_path(B.ABS, AbsData, variants=ALL)
def bind_abs(context, node, d):
    return ValueTable("table", d.dtype, lambda v: abs_quantized(v, d))


@fast_path(B.RELU, ReluData, variants=ALL)
@fast_path(B.RELU6, ReluData, variants=ALL)
@fast_path(B.RELU_N1_TO_1, ReluData, variants=ALL)
@fast_path(B.RELU_0_TO_1, ReluData, variants=ALL)
def bind_relu(context, node, d):
    return ValueTable("table", d.dtype, lambda v: relu_reference(v, d))


# ----------------------------------------------------------------------------------------------
# float32: the C library, one value at a time


def _libm_scalar(name: str, v):
    """The C library's float function on one float32 value (ctypes), numpy float64 if libm is missing."""
    fn = quant.prepare.libm_float(name)
    if fn is not None:
        return np.float32(fn(float(v)))
    with np.errstate(all="ignore"):
        return np.float32(getattr(np, name[:-1])(np.float64(v)))


@njit
def _expf_numba(v):
    return math.exp(v)


@njit
def _expm1f_numba(v):
    return math.expm1(v)


@njit
def _logf_numba(v):
    return math.log(v)


@njit
def _sinf_numba(v):
    return math.sin(v)


@njit
def _cosf_numba(v):
    return math.cos(v)


@native(lambda: _expf_numba.compile())
def expf1(v):
    return _libm_scalar("expf", v)


@native(lambda: _expm1f_numba.compile())
def expm1f1(v):
    return _libm_scalar("expm1f", v)


@native(lambda: _logf_numba.compile())
def logf1(v):
    return _libm_scalar("logf", v)


@native(lambda: _sinf_numba.compile())
def sinf1(v):
    return _libm_scalar("sinf", v)


@native(lambda: _cosf_numba.compile())
def cosf1(v):
    return _libm_scalar("cosf", v)


_F0 = np.float32(0)


@njit
def float_unary_loop(x, out, op):
    """``out[i] = f(x[i])`` over flat float32 arrays; ``op`` picks f:
    0 expf, 1 ELU (expm1f below 0), 2 logf, 3 sinf, 4 cosf."""
    for i in range(x.size):
        v = x[i]
        if op == 0:
            out[i] = expf1(v)
        elif op == 1:
            out[i] = expm1f1(v) if v < _F0 else v
        elif op == 2:
            out[i] = logf1(v)
        elif op == 3:
            out[i] = sinf1(v)
        else:
            out[i] = cosf1(v)


FLOAT_OPS = {"exp": 0, "elu": 1, "log": 2, "sin": 3, "cos": 4}


def run_float_unary(name: str, x: np.ndarray, out: np.ndarray) -> None:
    """:func:`float_unary_loop` on float32 ``x`` into ``out`` (same shape)."""
    xf = np.ascontiguousarray(x, np.float32).reshape(-1)
    with np.errstate(all="ignore"):         # WORKBENCH_JIT=0: numpy scalars warn about inf and NaN
        if out.flags.c_contiguous and out.dtype == np.float32:
            float_unary_loop(xf, out.reshape(-1), FLOAT_OPS[name])
        else:
            res = np.empty(xf.size, np.float32)
            float_unary_loop(xf, res, FLOAT_OPS[name])
            out[...] = res.reshape(out.shape)


class FloatLoop(FastPath):
    """One of the C library loops; float16 inputs (SIN, COS) widened to float32 and rounded back."""

    __slots__ = ("op",)
    name = "numba"

    def __init__(self, op: str):
        self.op = op

    def __call__(self, context, node, d) -> None:
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if x.dtype == F16:
            y = np.empty(x.shape, np.float32)
            run_float_unary(self.op, x.astype(np.float32), y)
            out[...] = half_result(x, y)
        else:
            run_float_unary(self.op, x, out)


@fast_path(B.EXP, UnaryData, variants=ALL)
@fast_path(B.LOG, UnaryData, variants=ALL)
@fast_path(B.ELU, UnaryData, variants=ALL)
def bind_float(context, node, d):
    return FloatLoop(node.op_name.lower())


@fast_path(B.SIN, ElementwiseData, variants=ALL)
@fast_path(B.COS, ElementwiseData, variants=ALL)
def bind_sin_cos(context, node, d):
    return FloatLoop(node.op_name.lower())


# ----------------------------------------------------------------------------------------------
# float32 RELU family: one clip into the output


class Clip(FastPath):
    """``np.clip`` between float32 bounds, straight into the output: NaN (payload and all) and −0.0
    pass unchanged, as the teaching layer's ``x < lo ? lo : (x > hi ? hi : x)`` leaves them.  (With
    an upper bound of None numpy takes ``maximum``, which turns −0.0 into +0.0: hence +inf for RELU.)"""

    __slots__ = ("lo", "hi")
    name = "clip"

    def __init__(self, lo: float, hi: float):
        self.lo, self.hi = np.float32(lo), np.float32(hi)

    def __call__(self, context, node, d) -> None:
        np.clip(context.tensors[node.inputs[0]], self.lo, self.hi, out=context.tensors[node.outputs[0]])


RELU_BOUNDS = {B.RELU: (0.0, np.inf), B.RELU6: (0.0, 6.0), B.RELU_N1_TO_1: (-1.0, 1.0), B.RELU_0_TO_1: (0.0, 1.0)}


@fast_path(B.RELU, UnaryData, variants=ALL)
@fast_path(B.RELU6, UnaryData, variants=ALL)
@fast_path(B.RELU_N1_TO_1, UnaryData, variants=ALL)
@fast_path(B.RELU_0_TO_1, UnaryData, variants=ALL)
def bind_relu_float(context, node, d):
    return Clip(*RELU_BOUNDS[node.op])

"""Speed layer for BATCH_MATMUL (int8 / int16 and hybrid): the integer products as one exact float
BLAS matmul (:func:`workbench.interpreter.quant.exact_matmul_dtype`), the requantization in numba
(quantized) or the hybrid row quantization in numba.

TFLite's builtin BATCH_MATMUL is its reference kernel, so these serve both variants.  float32 has no
fast path: the teaching layer's ``"blas"`` branch already is one numpy matmul.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..kernels.batch_matmul import BatchMatMulHybridData, BatchMatMulQuantizedData, hybrid_bmm_output, operands
from ..variants import VARIANTS
from . import FastPath, fast_path, requantize

BMM = BuiltinOperator.BATCH_MATMUL


class QuantizedBlas(FastPath):
    """int8 / int16: the zero-point-corrected operands multiplied in an exact float type, then the
    recipe's numba requantization (multiplier and shift repeated per output column once, here)."""

    __slots__ = ("name", "dtype", "zeros", "multipliers", "shifts")

    def __init__(self, dtype, d):
        self.name, self.dtype = f"blas({dtype.name}, exact)", dtype
        n = d.output_shape[-1] if d.output_shape else 1
        self.zeros = np.zeros(n, np.int64)
        self.multipliers = np.full(n, d.output_multiplier, np.int64)
        self.shifts = np.full(n, d.output_shift, np.int64)

    def __call__(self, context, node, d):
        t = context.tensors
        a, b = operands(t[node.inputs[0]], t[node.inputs[1]], d.adj_x, d.adj_y)
        out = t[node.outputs[0]]
        if d.recipe == "raw int32":
            out[...] = quant.wrap_int32_array(np.matmul(a.astype(self.dtype), b.astype(self.dtype)))
            return
        acc = np.matmul(a.astype(self.dtype) - d.lhs_zero_point, b.astype(self.dtype) - d.rhs_zero_point)
        n = len(self.zeros)
        args = (np.reshape(acc, (-1, n)), self.zeros, self.multipliers, self.shifts, d.output_zero_point,
                d.output_activation_min, d.output_activation_max, out.reshape(-1, n))
        if d.recipe == "int64":
            requantize.requantize_int64_rows_jit(*args)
        else:
            requantize.requantize_int32_rows_jit(*args, 0)


@fast_path(BMM, BatchMatMulQuantizedData, variants=tuple(VARIANTS))
def bind_quantized(context, node, d):
    ta, tb = context.dtype(node.inputs[0]), context.dtype(node.inputs[1])
    za, zb = (0, 0) if d.recipe == "raw int32" else (d.lhs_zero_point, d.rhs_zero_point)
    max_a = max(abs(int(np.iinfo(ta).min) - za), abs(int(np.iinfo(ta).max) - za))
    max_b = max(abs(int(np.iinfo(tb).min) - zb), abs(int(np.iinfo(tb).max) - zb))
    sa = context.shape(node.inputs[0])
    k = sa[-2] if d.adj_x else sa[-1]
    fdt = quant.exact_matmul_dtype(max_a, float(max_b) * max(k, 1))
    return None if fdt is None else QuantizedBlas(np.dtype(fdt), d)


class HybridBlas(FastPath):
    """Hybrid: lhs rows quantized by ``quantize_rows_jit``, the int8 product as one exact float matmul
    with the constant rhs, then ``hybrid_bmm_output``."""

    __slots__ = ("name", "weights", "input_quantized", "scaling_factors", "input_offsets")

    def __init__(self, weights, lhs_shape):
        self.name, self.weights = f"quantize(numba)+blas({weights.dtype.name}, exact)", weights
        self.input_quantized = np.zeros(lhs_shape, np.int8)
        self.scaling_factors = np.ones(lhs_shape[:-1], np.float32)
        self.input_offsets = np.zeros(lhs_shape[:-1], np.int32)

    def __call__(self, context, node, d):
        t = context.tensors
        a = t[node.inputs[0]]
        if d.adj_x:
            a = np.ascontiguousarray(np.swapaxes(a, -1, -2))
        k = a.shape[-1]
        sf, zp = self.scaling_factors.reshape(-1), self.input_offsets.reshape(-1)
        requantize.quantize_rows_jit(a.reshape(-1, k), d.asymmetric_quantize_inputs,
                                     self.input_quantized.reshape(-1, k), sf, zp)
        dot = np.matmul(self.input_quantized.astype(self.weights.dtype), self.weights)
        t[node.outputs[0]][...] = hybrid_bmm_output(dot, self.scaling_factors, self.input_offsets, d)


@fast_path(BMM, BatchMatMulHybridData, variants=tuple(VARIANTS))
def bind_hybrid(context, node, d):
    w = context.value(node.inputs[1])
    w64 = (np.swapaxes(w, -1, -2) if d.adj_y else w).astype(np.int64)       # [..., K, N]
    fdt = quant.exact_float_dtype(float(np.abs(w64).sum(axis=-2).max(initial=0)), input_abs_max=128)
    sa = tuple(context.shape(node.inputs[0]))
    lhs = sa[:-2] + ((sa[-1], sa[-2]) if d.adj_x else (sa[-2], sa[-1]))
    return HybridBlas(np.ascontiguousarray(w64, fdt), lhs)

"""Speed layer for FULLY_CONNECTED: weights packed once at prepare, the products as one BLAS matmul
(or the AVX-512 VNNI int8 dot product), the requantization in numba.

* integer products as one float matmul are exact when every partial sum fits the float type's
  mantissa (:func:`workbench.interpreter.quant.exact_float_dtype`, ``exact_matmul_dtype``): the
  weights are stored transposed in that type, the zero-point terms folded into the bias once;
* int8 products of at least ``vnni.MIN_MACS`` multiply-adds on a CPU with AVX-512 VNNI take
  :mod:`workbench.perf.vnni` on the weights packed for ``vpdpbusd`` (threads split the rows);
* float32 with constant weights and a few rows (a classifier) as one dot product an output in the
  kernel library (``FloatDot``), reading the weights as one stream from memory;
* the teaching layer (``kernels/fully_connected.py`` and its helpers) computes the same bits, except
  ``FloatDot``'s float sums, which are its own order (within float tolerance of the teaching layer's).

float32 ("blas", "dot"), int8 and uint8 reproduce litert-x86 only (numpy's BLAS order; ruy's ties-up final
shift); the 16x8, hybrid, 4-bit, int16-weights and sparse paths serve both variants (what differs
between the builds is fixed in their OpData at prepare, or nothing does).
"""

from __future__ import annotations

import numpy as np

from ...perf import blas, precompiled, vnni
from ...perf.jit import run_rows
from ...schema.enums import BuiltinOperator
from .. import quant
from ..kernels import _fc_hybrid, _fc_int4, _fc_int16_or_sparse
from ..kernels._common import apply_activation
from ..kernels.fully_connected import (
    FullyConnectedData,
    FullyConnectedInt8Data,
    FullyConnectedInt16Data,
    FullyConnectedUint8Data,
)
from ..variants import LITERT_X86, VARIANTS
from . import FastPath, fast_path, requantize
from .conv_2d import float_epilogue_rows, guard_limit, weight_bound

FC = BuiltinOperator.FULLY_CONNECTED
ALL = tuple(VARIANTS)
X86 = (LITERT_X86.name,)


def _bias(context, node, units, dtype=np.int64):
    """The constant bias as ``dtype`` (zeros without one), or None when the bias is not constant."""
    b_t = node.input(2)
    if b_t < 0:
        return np.zeros(units, dtype)
    b = context.value(b_t)
    return None if b is None else np.asarray(b).astype(dtype)


class FloatBlas(FastPath):
    """y = x·Wᵀ as one BLAS product (Wᵀ a view of the constant weights; :func:`workbench.perf.blas.matmul`
    cuts it among ``num_threads`` threads), then + bias and the clamp in one pass of row pieces on
    ``num_threads`` threads (``conv_2d.float_epilogue_rows``)."""

    __slots__ = ("name", "weights_t", "bias", "d")

    def __init__(self, weights_t, bias, d):
        self.name, self.weights_t, self.bias, self.d = "blas", weights_t, bias, d

    def _rows(self, context, node):
        """(input [batch, depth], output [batch, units], bias or None) of a library call, or None where a
        reshape of the input or output would copy (then this node's own ``__call__``)."""
        t, d = context.tensors, self.d
        x, out = t[node.inputs[0]], t[node.outputs[0]]
        if not (x.flags.c_contiguous and out.flags.c_contiguous and out.flags.writeable):
            return None
        b_t = node.input(2)
        bias = self.bias if self.bias is not None or b_t < 0 else t[b_t]
        return x.reshape(d.batch, d.depth), out.reshape(d.batch, d.units), bias

    def native_call(self, context, node):
        """The product, bias and clamp as one call of the library's ``fc_f32`` where :func:`blas.matmul`
        would cut the product among threads (:func:`blas.fc_call`): the node then joins the runs of
        library calls (:mod:`..fused`), and a network's last layers no longer return to Python."""
        rows, d = self._rows(context, node), self.d
        if rows is None:
            return None
        x2d, out2d, bias = rows
        wt = self.weights_t if self.weights_t is not None else context.tensors[node.inputs[1]].T
        return blas.fc_call(x2d, wt, out2d, context.num_threads, bias, np.float32(d.output_activation_min),
                            np.float32(d.output_activation_max))

    def __call__(self, context, node, d):
        t = context.tensors
        out2d = t[node.outputs[0]].reshape(d.batch, d.units)
        wt = self.weights_t if self.weights_t is not None else t[node.inputs[1]].T
        b_t = node.input(2)
        bias = self.bias
        if bias is None:
            bias = t[b_t] if b_t >= 0 else np.zeros(d.units, np.float32)
        with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
            blas.matmul(t[node.inputs[0]].reshape(d.batch, d.depth), wt, out2d, context.num_threads)
        run_rows(float_epilogue_rows, d.batch, context.num_threads, out2d, bias,
                 np.float32(d.output_activation_min), np.float32(d.output_activation_max), work=out2d.size * 8)


DOT_MAX_ROWS = 4
"""Rows of input up to which a float fully connected layer with constant weights takes :class:`FloatDot`
(a network's classifier has one); more rows take the BLAS product, which reuses each weight more."""


def _dot_function():
    """The kernel library's ``fc_dot_f32``, or None (no library, an older one, a CPU without AVX-512)."""
    def probe(fn):
        x, w, out = np.ones((1, 3), np.float32), np.ones((2, 3), np.float32), np.zeros((1, 2), np.float32)
        return fn(1, x, w, None, out, -1.0, 6.0, np.inf) == 0 and out.tolist() == [[3.0, 3.0]]
    return precompiled.native("fc_dot_f32", probe)


class FloatDot(FloatBlas):
    """y = clamp(x·Wᵀ + bias) as one call of the kernel library's ``fc_dot_f32``: each output one dot
    product of its weight row, read once from the first value to the last (the weights come from memory
    at every invoke, and one sequential stream reads them fastest: ~210 µs against ~330 µs for numpy's
    one-thread product, MobileNet v2's 1001 x 1280 classifier with the caches evicted).  Each output
    depends on its own row only, so one thread or two give the same bits, and the node joins the runs
    of library calls on one thread too (:mod:`..fused`).

    Its sums are its own (16 lanes, fused multiply-adds), within float32 rounding of the teaching
    layer's BLAS product, as the float convolution's ``igemm`` is of its teaching layer; the same guard
    as there (:func:`.conv_2d.guard_limit`): an input value that could make a partial sum overflow, or a
    NaN, and the library answers 1 without writing, and :class:`FloatBlas`'s product (the teaching
    layer's bits) runs instead, as it does where the library refuses the arrays."""

    __slots__ = ("weights", "fn", "limit")

    def __init__(self, weights, bias, d, fn):
        super().__init__(weights.T, bias, d)
        self.name, self.weights, self.fn = "dot(avx512)", weights, fn
        self.limit = float(guard_limit(weight_bound(weights.T)))

    def native_call(self, context, node):
        rows, d = self._rows(context, node), self.d
        if rows is None:
            return None                             # a reshape would copy: the BLAS product
        x2d, out2d, bias = rows
        threads = context.num_threads if d.batch * d.depth * d.units >= blas.MIN_SPLIT_WORK else 1
        return self.fn, (threads, x2d, self.weights, bias, out2d, float(d.output_activation_min),
                         float(d.output_activation_max), self.limit)

    def __call__(self, context, node, d):
        call = self.native_call(context, node)
        if call is None or call[0](*call[1]) != 0:
            super().__call__(context, node, d)


@fast_path(FC, FullyConnectedData, variants=X86)
def bind_float(context, node, d):
    w = context.value(node.input(1))
    b_t = node.input(2)
    bias = context.value(b_t) if b_t >= 0 else None
    bias = None if bias is None else np.ascontiguousarray(bias, np.float32)
    fn = _dot_function() if w is not None and d.batch <= DOT_MAX_ROWS else None
    if fn is not None:
        return FloatDot(np.ascontiguousarray(w, np.float32), bias, d, fn)
    return FloatBlas(np.asarray(w, np.float32).T if w is not None else None, bias, d)


class RowsBlas(FastPath):
    """int8 / uint8: the exact float product with (W − w_zp)ᵀ, then ``requantize_rows_jit``."""

    __slots__ = ("name", "weights_t", "bias_folded", "multipliers", "shifts", "half_up", "cols", "acc")

    def __init__(self, weights_t, bias_folded, multipliers, shifts, half_up, batch):
        fdt = weights_t.dtype
        self.name = f"blas({fdt.name}, exact)"
        self.weights_t, self.bias_folded, self.multipliers, self.shifts = weights_t, bias_folded, multipliers, shifts
        self.half_up = half_up
        self.cols = np.empty((batch, weights_t.shape[0]), fdt)
        self.acc = np.empty((batch, weights_t.shape[1]), fdt)

    def __call__(self, context, node, d):
        t = context.tensors
        np.copyto(self.cols, t[node.inputs[0]].reshape(d.batch, d.depth), casting="unsafe")
        np.matmul(self.cols, self.weights_t, out=self.acc)
        requantize.requantize_rows_jit(self.acc, self.bias_folded, self.multipliers, self.shifts, d.output_zero_point,
                                       d.output_activation_min, d.output_activation_max,
                                       t[node.outputs[0]].reshape(d.batch, d.units), self.half_up)


class Int8Vnni(FastPath):
    """int8 on the VNNI dot product: W − w_zp packed for ``vpdpbusd``, the input offset by 128."""

    __slots__ = ("name", "packed", "bias_folded", "half_up", "tables")

    def __init__(self, packed, bias_folded, half_up, d):
        self.name, self.packed, self.bias_folded, self.half_up = "vnni(int8, exact)", packed, bias_folded, half_up
        self.tables = vnni.tables_for(packed, bias_folded, d.output_multiplier, d.output_shift, d.output_zero_point,
                                      d.output_activation_min, d.output_activation_max, half_up)

    def __call__(self, context, node, d):
        t = context.tensors
        vnni.conv(t[node.inputs[0]].reshape(d.batch, 1, 1, d.depth), self.packed, self.bias_folded,
                  d.output_multiplier, d.output_shift, d.output_zero_point, d.output_activation_min,
                  d.output_activation_max, self.half_up, t[node.outputs[0]].reshape(d.batch, d.units),
                  (1, 1, 1, 1, 1, 1, 1, 1, 0, 0, d.input_zero_point + 128), context.num_threads, self.tables)


def _rows_blas(context, node, d, input_abs_max, multipliers, shifts):
    w, bias = context.value(node.input(1)), _bias(context, node, d.units)
    if w is None or bias is None:
        return None                            # weights or bias computed at run time: the teaching layer
    wm = w.astype(np.int64) - d.filter_zero_point                       # [units, K]
    fdt = quant.exact_float_dtype(float(np.abs(wm).sum(axis=1).max(initial=0)), input_abs_max=input_abs_max)
    return RowsBlas(np.ascontiguousarray(wm.T, fdt), bias - d.input_zero_point * wm.sum(axis=1), multipliers,
                    shifts, context.variant.final_shift == "ties-up", d.batch)


@fast_path(FC, FullyConnectedInt8Data, variants=X86)
def bind_int8(context, node, d):
    w, bias = context.value(node.input(1)), _bias(context, node, d.units)
    half_up = context.variant.final_shift == "ties-up"
    if (w is not None and bias is not None and vnni.worth_it(d.batch, d.depth, d.units)
            and -128 <= int(w.min(initial=0)) - d.filter_zero_point
            and int(w.max(initial=0)) - d.filter_zero_point <= 127):
        wm = (w.astype(np.int64) - d.filter_zero_point).astype(np.int8)       # [units, K]
        return Int8Vnni(vnni.pack_filter(wm), vnni.folded_bias(bias, wm, d.input_zero_point), half_up, d)
    return _rows_blas(context, node, d, 128, d.output_multiplier, d.output_shift)


@fast_path(FC, FullyConnectedUint8Data, variants=X86)
def bind_uint8(context, node, d):
    return _rows_blas(context, node, d, 255, np.full(d.units, d.output_multiplier, np.int64),
                      np.full(d.units, d.output_shift, np.int64))


class Int16Blas(FastPath):
    """16x8: the exact float product, then the node's recipe (int32: numba, ties up; double: numpy)."""

    __slots__ = ("name", "weights_t", "bias", "cols", "acc")

    def __init__(self, weights_t, bias, batch):
        self.name, self.weights_t, self.bias = f"blas({weights_t.dtype.name}, exact)", weights_t, bias
        self.cols = np.empty((batch, weights_t.shape[0]), weights_t.dtype)
        self.acc = np.empty((batch, weights_t.shape[1]), weights_t.dtype)

    def __call__(self, context, node, d):
        t = context.tensors
        bias = self.bias if self.bias is not None else t[node.input(2)].astype(np.int64)
        out2d = t[node.outputs[0]].reshape(d.batch, d.units)
        np.copyto(self.cols, t[node.inputs[0]].reshape(d.batch, d.depth), casting="unsafe")
        np.matmul(self.cols, self.weights_t, out=self.acc)
        if d.recipe == "int32":
            requantize.requantize_int32_rows_jit(self.acc, bias, d.output_multiplier, d.output_shift, 0,
                                                 d.output_activation_min, d.output_activation_max, out2d, d.units)
            return
        v = self.acc.astype(np.int64) + bias
        if d.accumulator == "int32":
            v = quant.wrap_int32_array(v)
        out2d[...] = quant.scale_by_double(v, d.effective_scale, 0, d.output_activation_min, d.output_activation_max)


@fast_path(FC, FullyConnectedInt16Data, variants=ALL)
def bind_int16(context, node, d):
    w = context.value(node.input(1))
    if w is None:
        return None
    wm = w.astype(np.int64) - d.filter_zero_point                          # [units, K]
    fdt = quant.exact_matmul_dtype(-quant.INT16_MIN, float(np.abs(wm).sum(axis=1).max(initial=0)))
    return None if fdt is None else Int16Blas(np.ascontiguousarray(wm.T, fdt), _bias(context, node, d.units), d.batch)


class HybridBlas(FastPath):
    """Hybrid: rows quantized by ``quantize_rows_jit``, the int8 product as one exact float matmul,
    the float tail of ``_fc_hybrid.hybrid_fc_output``.  Its buffers keep the last run-time
    quantization (input_quantized, scaling_factors, input_offsets, product_scales) for a learner."""

    __slots__ = ("name", "weights_t", "bias", "input_quantized", "scaling_factors", "input_offsets",
                 "product_scales", "cols", "acc")

    def __init__(self, name, weights_t, bias, batch):
        self.name, self.weights_t, self.bias = name, weights_t, bias
        k, units = weights_t.shape
        self.input_quantized = np.zeros((batch, k), np.int8)
        self.scaling_factors, self.input_offsets = np.ones(batch, np.float32), np.zeros(batch, np.int32)
        self.product_scales = np.zeros((batch, units), np.float32)
        self.cols, self.acc = np.empty((batch, k), weights_t.dtype), np.empty((batch, units), weights_t.dtype)

    def __call__(self, context, node, d):
        t = context.tensors
        x2 = t[node.inputs[0]].reshape(d.batch, d.depth)
        out2d = t[node.outputs[0]].reshape(d.batch, d.units)
        if not x2.any():
            out2d[...] = _fc_hybrid.zero_input_output(self.bias, out2d.shape, d.activation_code)
            return
        requantize.quantize_rows_jit(x2, d.asymmetric_quantize_inputs, self.input_quantized, self.scaling_factors,
                                     self.input_offsets)
        np.copyto(self.cols, self.input_quantized, casting="unsafe")
        np.matmul(self.cols, self.weights_t, out=self.acc)
        out2d[...] = _fc_hybrid.hybrid_fc_output(self.acc, self.input_offsets, d.row_sums, self.scaling_factors,
                                                 d.filter_scale, self.bias, d.activation_code, self.product_scales)


@fast_path(FC, _fc_hybrid.FullyConnectedHybridData, variants=ALL)
def bind_hybrid(context, node, d):
    w_t = node.input(1)
    w64 = context.value(w_t).astype(np.int64)
    fdt = quant.exact_float_dtype(float(np.abs(w64).sum(axis=1).max(initial=0)), input_abs_max=128)
    packed = context.packed_bits(w_t)
    name = (f"int{packed} weights (unpacked to int8), " if packed else "") + f"quantize(numba)+blas({fdt.name}, exact)"
    bias = _bias(context, node, d.units, np.float32) if node.input(2) >= 0 else None
    return HybridBlas(name, np.ascontiguousarray(w64.T, fdt), bias, d.batch)


class FourBitBlas(FastPath):
    """litert's 4-bit kernel: the packed nibbles' product as one exact float matmul."""

    __slots__ = ("name", "nibbles_t", "bias")

    def __init__(self, nibbles_t, bias):
        self.nibbles_t, self.bias = nibbles_t, bias
        self.name = (f"int4 weights, litert's 4-bit kernel (nibbles w+7, zero point -7; blas "
                     f"{nibbles_t.dtype.name}, exact)")

    def __call__(self, context, node, d):
        t = context.tensors
        q, sf = _fc_int4.quantize_rows_4bit(np.asarray(t[node.inputs[0]], np.float32).reshape(d.batch, d.depth))
        acc = q.astype(self.nibbles_t.dtype) @ self.nibbles_t
        t[node.outputs[0]].reshape(d.batch, d.units)[...] = _fc_int4.output_4bit(
            acc, q.astype(np.int64).sum(axis=1), sf, d.filter_scale, self.bias, d.activation_code)


@fast_path(FC, _fc_int4.FullyConnectedHybrid4BitData, variants=ALL)
def bind_4bit(context, node, d):
    nib = _fc_int4.packed_nibbles(context.value(node.input(1)))
    fdt = quant.exact_float_dtype(float(15 * d.depth), input_abs_max=128)
    bias = _bias(context, node, d.units, np.float32) if node.input(2) >= 0 else None
    return FourBitBlas(np.ascontiguousarray(nib.T, fdt), bias)


class Blockwise(FastPath):
    """litert's EvalBlockwise4Bit with the weights split into blocks (and summed) once."""

    __slots__ = ("name", "blocks", "block_sums", "bias")

    def __init__(self, blocks, block_sums, bias, block_size):
        self.blocks, self.block_sums, self.bias = blocks, block_sums, bias
        self.name = f"int4 weights, blockwise scales (block size {block_size}), litert's EvalBlockwise4Bit"

    def __call__(self, context, node, d):
        t = context.tensors
        t[node.outputs[0]].reshape(d.batch, d.units)[...] = _fc_int4.blockwise_sums(
            t[node.inputs[0]], self.blocks, self.block_sums, self.bias, d)


@fast_path(FC, _fc_int4.FullyConnectedBlockwise4BitData, variants=ALL)
def bind_blockwise(context, node, d):
    blocks = np.asarray(context.value(node.input(1)), np.int64).reshape(d.units, d.depth // d.block_size,
                                                                         d.block_size)
    bias = _bias(context, node, d.units, np.float32) if node.input(2) >= 0 else None
    return Blockwise(blocks, blocks.sum(axis=2).astype(np.float32), bias, d.block_size)


class Int16WeightsBlas(FastPath):
    """Version 7: the exact float64 product, then ``requantize_int64_rows_jit``."""

    __slots__ = ("name", "weights_t", "bias")

    def __init__(self, weights_t, bias):
        self.name, self.weights_t, self.bias = f"blas({weights_t.dtype.name}, exact)", weights_t, bias

    def __call__(self, context, node, d):
        t = context.tensors
        bias = self.bias if self.bias is not None else t[node.input(2)].astype(np.int64)
        acc = t[node.inputs[0]].reshape(d.batch, d.depth).astype(self.weights_t.dtype) @ self.weights_t
        requantize.requantize_int64_rows_jit(acc, bias, d.output_multiplier, d.output_shift, 0, d.output_activation_min,
                                             d.output_activation_max, t[node.outputs[0]].reshape(d.batch, d.units))


@fast_path(FC, _fc_int16_or_sparse.FullyConnectedInt16WeightsData, variants=ALL)
def bind_int16_weights(context, node, d):
    w = context.value(node.input(1))
    if w is None:
        return None
    wm = w.astype(np.int64) - d.filter_zero_point
    fdt = quant.exact_matmul_dtype(-quant.INT16_MIN, float(np.abs(wm).sum(axis=1).max(initial=0)))
    return None if fdt is None else Int16WeightsBlas(np.ascontiguousarray(wm.T, fdt), _bias(context, node, d.units))


class Sparse(FastPath):
    """Version 8 with the sparse weights decoded once: the teaching layer's sums (bit for bit)."""

    __slots__ = ("name", "weights", "bias")

    def __init__(self, name, weights, bias):
        self.name, self.weights, self.bias = name, weights, bias

    def __call__(self, context, node, d):
        t = context.tensors
        x2 = t[node.inputs[0]].reshape(d.batch, d.depth)
        out2d = t[node.outputs[0]].reshape(d.batch, d.units)
        if d.output_multiplier is not None:
            out2d[...] = _fc_int16_or_sparse.sparse_int8(x2, self.weights, self.bias, d)
            return
        out2d[...] = _fc_int16_or_sparse.sparse_float_stored(x2, self.weights, self.bias, d)
        apply_activation(out2d, d.output_activation_min, d.output_activation_max)


@fast_path(FC, _fc_int16_or_sparse.FullyConnectedSparseData, variants=X86)
def bind_sparse(context, node, d):
    w_t, b_t = node.input(1), node.input(2)
    values, sparsity = context.value(w_t), context.tensor_meta(w_t).sparsity
    bias = context.value(b_t) if b_t >= 0 else None
    if b_t >= 0 and bias is None:
        return None
    if d.output_multiplier is not None:
        return Sparse("int64", _fc_int16_or_sparse.densified(values, d, sparsity), bias)
    lanes = 4 if d.sparse_format == "1x4 blocks" else 1
    return Sparse(f"stored weights ({lanes} lane{'s' if lanes > 1 else ''})",
                  _fc_int16_or_sparse.stored_rows(values, d, sparsity, lanes), bias)

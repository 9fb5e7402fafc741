"""What the element-wise activations share: one input, the same shape out.

Float32 kernels subclass :class:`UnaryKernel` and override ``invoke`` / ``invoke_reference``.

Quantized inputs (uint8, int8, int16; which ones an op takes is its ``qtypes``) go through
``prepare_quantized`` (→ an OpData with TensorFlow Lite Micro's field names) and
``reference_quantized`` (the plain numpy arithmetic of TFLite's kernel, on any array of input
values).  Because an element-wise op's output depends on the input *value* only, the fast path
is a table: ``prepare`` evaluates ``reference_quantized`` once on every value of the input type
(256 values for 8 bits, 65536 for int16) and ``invoke`` indexes that table with the input's bit
pattern.  ``invoke_reference`` runs ``reference_quantized`` on the tensor itself; the tests check
that the two agree and that both agree with ai-edge-litert.

Two families live here:

* LUT activations (LOGISTIC, TANH, ELU, GELU, EXP, LOG ... on 8-bit types): TFLite itself builds
  a 256-entry table in prepare with ``LUTPopulate`` (float32: d = in_scale·(v − in_zp);
  y = f(d); q = round(y/out_scale) + out_zp, clamped), see :func:`workbench.interpreter.quant.lut_8bit`
  (and :func:`~workbench.interpreter.quant.lut_float_to_8bit` for the infinities and NaNs of absurd scales).
  For int16 it builds a 513-entry table that is read with linear interpolation
  (:func:`~workbench.interpreter.quant.lut_int16`, :func:`~workbench.interpreter.quant.lut_lookup_int16`).
* the RELU family (RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1; ``activations.cc`` ReluPrepare /
  QuantizedReluX): output_multiplier / output_shift from in_scale/out_scale (a float32 division,
  then QuantizeMultiplier), q = clamp(MBQM(x − in_zp) + out_zp) to
  [max(type_min, out_zp + round(lo/out_scale)), min(type_max, out_zp + round(hi/out_scale))].
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import UnsupportedOpError
from ..registry import Kernel, OpData, opdata
from .. import quant
from ._common import F32

I8 = np.dtype(np.int8)
U8 = np.dtype(np.uint8)
I16 = np.dtype(np.int16)
TYPE_RANGE = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32767)}


# ----------------------------------------------------------------------------------------------
# value tables: the fast path of every quantized element-wise op


def all_values(dtype) -> np.ndarray:
    """Every value of an 8- or 16-bit integer type, at the index of its unsigned bit pattern."""
    dtype = np.dtype(dtype)
    unsigned = np.uint8 if dtype.itemsize == 1 else np.uint16
    return np.arange(1 << (8 * dtype.itemsize)).astype(unsigned).view(dtype)


def bit_pattern(x: np.ndarray) -> np.ndarray:
    """``x`` read as unsigned integers of the same width (the index into a value table)."""
    x = np.ascontiguousarray(x)
    return x.view(np.uint8 if x.dtype.itemsize == 1 else np.uint16)


def value_table(dtype, fn) -> np.ndarray:
    """``fn`` evaluated on every value of ``dtype`` (see :func:`all_values`)."""
    return np.asarray(fn(all_values(dtype)))


def lookup(x: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    np.take(table, bit_pattern(x), out=out)


def clamp_to(v, dtype) -> np.ndarray:
    lo, hi = TYPE_RANGE[np.dtype(dtype)]
    return np.clip(v, lo, hi).astype(dtype)


def check_same_type(context, node, dt) -> None:
    """TFLite's ``TF_LITE_ENSURE_TYPES_EQ(input->type, output->type)``."""
    y = node.outputs[0]
    if context.dtype(y) != dt:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): input is {dt} but output "
                                 f"'{context.name(y)}' is {context.dtype(y)}; TFLite needs them equal")


def require_zero_points(node, what: str, *pairs) -> None:
    """int16 kernels are symmetric: TFLite checks ``zero_point == 0`` (``TF_LITE_ENSURE_EQ``)."""
    for name, zp in pairs:
        if zp != 0:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): {what} {name} zero point is {zp}; "
                                     f"TFLite's int16 kernel needs 0 (symmetric quantization)")


# ----------------------------------------------------------------------------------------------
# OpData


@opdata
class LutData(OpData):
    """A LUT activation on a quantized type (TFLite's ``OpData.lut_uint8 / lut_int8 / lut_int16``)."""

    shape: tuple
    dtype: str
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int
    function: str = ""                                              # what the table holds
    lut: object = dataclasses.field(default=None, repr=False)      # 256 (8-bit) or 513 (int16) entries
    table: object = dataclasses.field(default=None, repr=False)    # value table (fast path)
    impl: str = "lut"


@opdata
class ReluData(OpData):
    """RELU / RELU6 / RELU_N1_TO_1 / RELU_0_TO_1 on a quantized type (``ReluOpData`` + ``ReluParams``)."""

    shape: tuple
    dtype: str
    input_zero_point: int
    output_zero_point: int
    effective_scale: float          # input_scale / output_scale (float32 division, as TFLite)
    output_multiplier: int
    output_shift: int
    output_activation_min: int
    output_activation_max: int
    table: object = dataclasses.field(default=None, repr=False)
    impl: str = "table"


@opdata
class UnaryData(OpData):
    shape: tuple


QUANTIZED_DATA = (LutData, ReluData)


# ----------------------------------------------------------------------------------------------
# the LUT family


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def lut_reference(x: np.ndarray, d: LutData, transform) -> np.ndarray:
    """What a LUT entry holds, computed for the given values (8-bit) or read from the 513-entry
    table with interpolation (int16)."""
    dt = np.dtype(d.dtype)
    if dt == I16:
        return quant.lut_lookup_int16(x, d.lut).astype(I16)
    v = x.astype(np.int64)
    deq = (np.float32(d.input_scale) * (v - d.input_zero_point).astype(np.float32)).astype(np.float32)
    y = np.asarray(transform(deq), np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        r = quant.round_half_away((y * (np.float32(1.0) / np.float32(d.output_scale))).astype(np.float32))
        qf = (r.astype(np.float32) + np.float32(d.output_zero_point)).astype(np.float32)
    return quant.lut_float_to_8bit(qf, dt).astype(dt)


def prepare_lut(context, node, dt, transform, transform16=None, function: str = "") -> LutData:
    """The LUT for ``transform`` (8-bit: :func:`quant.lut_8bit`; int16: :func:`quant.lut_int16`
    with ``transform16``, a float32 function of float32 arrays, or ``transform``)."""
    x, y = node.inputs[0], node.outputs[0]
    in_s, in_zp = quant.tensor_scale_zp(context, x)
    out_s, out_zp = quant.tensor_scale_zp(context, y)
    if dt == I16:
        lut = quant.lut_int16(in_s, in_zp, out_s, out_zp, transform16 or transform)
    else:
        lut = quant.lut_8bit(in_s, in_zp, out_s, out_zp, transform, dt)
    return LutData(context.shape(x), str(dt), in_s, in_zp, out_s, out_zp, function or node.op_name.lower(), lut)


# ----------------------------------------------------------------------------------------------
# the RELU family


def relu_reference(x: np.ndarray, d: ReluData) -> np.ndarray:
    v = quant.multiply_by_quantized_multiplier_array(x.astype(np.int64) - d.input_zero_point, d.output_multiplier,
                                                     d.output_shift) + d.output_zero_point
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(d.dtype)


def prepare_relu(context, node, dt, lo_real: float, hi_real) -> ReluData:
    """ReluPrepare + QuantizedReluX: ``hi_real`` None is RELU's open upper end (the type maximum)."""
    x, y = node.inputs[0], node.outputs[0]
    in_s, in_zp = quant.tensor_scale_zp(context, x)
    out_s, out_zp = quant.tensor_scale_zp(context, y)
    if dt == I16:
        require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
    qmin, qmax = TYPE_RANGE[dt]
    lo = max(qmin, out_zp + int(quant.round_half_away(np.float32(lo_real) / np.float32(out_s))))
    hi = qmax if hi_real is None else min(qmax, out_zp + int(quant.round_half_away(np.float32(hi_real) /
                                                                                   np.float32(out_s))))
    eff = float(np.float32(in_s) / np.float32(out_s))
    m, sh = quant.quantize_multiplier(eff)
    return ReluData(context.shape(x), str(dt), in_zp, out_zp, eff, m, sh, lo, hi)


# ----------------------------------------------------------------------------------------------
# the kernel base class


class UnaryKernel(Kernel):
    """One input, one output of the same shape.

    Subclasses set ``dtypes`` (float types, handled by their own ``invoke``), ``qtypes`` (the
    quantized types TFLite's kernel takes) and, for quantized types, either ``lut`` (a float32
    transform: the LUT family) or ``relu_range`` ((lo, hi) in real numbers, hi None = open: the
    RELU family), or override ``prepare_quantized`` / ``reference_quantized``.
    """

    dtypes = (F32,)
    qtypes = ()
    lut = None            # float32 transform for the 8-bit / int16 LUT
    lut16 = None          # transform for the int16 LUT when it differs from ``lut``
    relu_range = None     # (act_min, act_max) in real numbers

    # -- quantized hooks -------------------------------------------------------------------------
    def prepare_quantized(self, context, node, dt):
        if self.lut is not None:
            return prepare_lut(context, node, dt, type(self).lut, type(self).lut16)
        if self.relu_range is not None:
            return prepare_relu(context, node, dt, *self.relu_range)
        raise NotImplementedError

    def reference_quantized(self, x: np.ndarray, d) -> np.ndarray:
        if type(d) is LutData:
            return lut_reference(x, d, type(self).lut)
        if type(d) is ReluData:
            return relu_reference(x, d)
        raise NotImplementedError

    def check_quantized_output(self, context, node, dt) -> np.dtype:
        """The output type for a quantized input (TFLite: the same type)."""
        check_same_type(context, node, dt)
        return dt

    # -- the Kernel interface --------------------------------------------------------------------
    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, tuple(self.dtypes) + tuple(self.qtypes))
        if dt in tuple(np.dtype(q) for q in self.qtypes):
            out_dt = self.check_quantized_output(context, node, dt)
            d = self.prepare_quantized(context, node, dt)
            if getattr(d, "table", False) is None:
                d = dataclasses.replace(d, table=value_table(dt, lambda v: self.reference_quantized(v, d)))
            context.set_output(node.outputs[0], context.shape(x), out_dt)
            return d
        context.set_output(node.outputs[0], context.shape(x), dt)
        return self.prepare_float(context, node, dt)

    def prepare_float(self, context, node, dt):
        return UnaryData(context.shape(node.inputs[0]))


def invoke_quantized(kernel, context, node, d, reference: bool = False) -> bool:
    """Run the quantized variant if ``d`` is one (value table, or ``reference_quantized``);
    returns True when it did."""
    if getattr(d, "table", None) is None:
        return False
    x = context.tensors[node.inputs[0]]
    out = context.tensors[node.outputs[0]]
    if reference:
        out[...] = kernel.reference_quantized(x, d)
    else:
        lookup(x, d.table, out)
    return True

"""What the element-wise activations share: one input, the same shape out.

Quantized inputs (uint8, int8, int16; which ones an op takes is its kernel's ``qtypes``) follow
one of two families, each with an OpData of TensorFlow Lite Micro's field names:

* LUT activations (EXP, LOG, ELU, and LOGISTIC, TANH, GELU ... on 8-bit types): TFLite builds a
  256-entry table in prepare with ``LUTPopulate`` (float32: d = in_scale·(v − in_zp); y = f(d);
  q = round(y/out_scale) + out_zp, clamped), see :func:`workbench.interpreter.quant.lut_8bit`
  (and :func:`~workbench.interpreter.quant.lut_float_to_8bit` for the infinities and NaNs of
  absurd scales); ``LUTLookup`` reads it.  For int16 it builds a 513-entry table read with linear
  interpolation (:func:`~workbench.interpreter.quant.lut_int16`,
  :func:`~workbench.interpreter.quant.lut_lookup_int16`).  → :class:`LutData`, :func:`lut_lookup`.
* the RELU family (RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1; ``activations.cc`` ReluPrepare /
  QuantizedReluX): output_multiplier / output_shift from in_scale/out_scale (a float32 division,
  then QuantizeMultiplier), q = clamp(MBQM(x − in_zp) + out_zp) to
  [max(type_min, out_zp + round(lo/out_scale)), min(type_max, out_zp + round(hi/out_scale))].
  → :class:`ReluData`, :func:`relu_reference`.

Float inputs call the C library per element (:func:`libm_f32`, glibc's functions written out in
numpy in ``_libm.py``) or Eigen's approximations (``_eigen.py``; its names are exported here too).
The speed layer (``fast/unary.py``) turns a quantized op into a table of every input value and
runs the float functions as compiled loops.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import UnsupportedOpError
from .. import quant
from ..registry import Kernel, OpData, opdata
from ._common import F32, I8, I16, U8
from ._eigen import (  # noqa: F401
    F32_LANES,
    eigen_erfc_f32,
    eigen_exp_packet_f32,
    eigen_logistic_f32,
    eigen_tanh_f32,
    packet_end,
    split_packets,
    twoprod_low_f32,
)
from ._libm import FUNCTIONS

TYPE_RANGE = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32767)}


def all_values(dtype) -> np.ndarray:
    """Every value of an 8- or 16-bit integer type, at the index of its unsigned bit pattern."""
    dtype = np.dtype(dtype)
    unsigned = np.uint8 if dtype.itemsize == 1 else np.uint16
    return np.arange(1 << (8 * dtype.itemsize)).astype(unsigned).view(dtype)


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


@np.errstate(all="ignore")
def libm_f32(name: str, x) -> np.ndarray:
    """The C library's float function ``name`` (``expf``, ``expm1f``, ``logf``, ``sinf``, ``cosf``,
    ``tanhf``, ``sqrtf``) on every element of a float32 array: glibc's arithmetic in numpy (``_libm``)."""
    x = np.asarray(x, np.float32)
    return np.asarray(FUNCTIONS[name](x), np.float32).reshape(x.shape)


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


@opdata
class UnaryData(OpData):
    shape: tuple


QUANTIZED_DATA = (LutData, ReluData)


# ----------------------------------------------------------------------------------------------
# the LUT family


def lut_lookup(x: np.ndarray, d: LutData) -> np.ndarray:
    """``LUTLookup``: an 8-bit value reads the entry at its byte (``(uint8)x``), an int16 value
    interpolates between two of the 513 entries (:func:`quant.lut_lookup_int16`)."""
    if np.dtype(d.dtype) == I16:
        return quant.lut_lookup_int16(x, d.lut).astype(I16)
    return d.lut[np.ascontiguousarray(x).view(np.uint8)]


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
    """``QuantizedReluX``: requantize x − in_zp by the output multiplier, add out_zp, clamp."""
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

    Subclasses set ``dtypes`` (the float and plain integer types), ``qtypes`` (the quantized types
    TFLite's kernel takes) and, for quantized types, either ``lut`` (a float32 transform: the LUT
    family) or ``relu_range`` ((lo, hi) in real numbers, hi None = open: the RELU family), or
    override ``prepare_quantized``; their ``invoke`` switches on the OpData's type."""

    dtypes = (F32,)
    qtypes = ()
    lut = None            # float32 transform for the 8-bit / int16 LUT
    lut16 = None          # transform for the int16 LUT when it differs from ``lut``
    relu_range = None     # (act_min, act_max) in real numbers

    def prepare_quantized(self, context, node, dt):
        if self.lut is not None:
            return prepare_lut(context, node, dt, type(self).lut, type(self).lut16)
        if self.relu_range is not None:
            return prepare_relu(context, node, dt, *self.relu_range)
        raise NotImplementedError

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, tuple(self.dtypes) + tuple(self.qtypes))
        if dt in tuple(np.dtype(q) for q in self.qtypes):
            check_same_type(context, node, dt)
            context.set_output(node.outputs[0], context.shape(x), dt)
            return self.prepare_quantized(context, node, dt)
        context.set_output(node.outputs[0], context.shape(x), dt)
        return UnaryData(context.shape(x))

"""GELU, ``approximate`` from GeluOptions — float32 (v1), uint8 / int8 (v2), int16 (v1: op_version.cc
has no int16 rule, and litert runs it at version 1):
  exact:        0.5 * x * (1 + erf(x / sqrt(2)))
  approximate:  0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))

TFLite has one GELU kernel (``gelu.cc``), so both builds compute the same bits: no variant.

uint8 / int8 (GeluPrepare): a 256-entry LUT built in prepare with TFLite's float32 transforms
(``reference_ops::GeluTransform``: 0.5f·x·erfcf(x·(−1/sqrt 2)), the erfc form;
``GeluTransformApproximate``: 0.5f·x·(1 + tanhf(sqrt(2/pi)·(x + 0.044715f·x·x·x)))).
int16: the same transforms in a 513-entry interpolated LUT (``LUTPopulate<int16_t>``, float32) —
established against litert, newer than the sources read for this file.

float32 (``reference_ops::Gelu``, an Eigen expression over the tensor — not the LUT transforms):
  exact:        (0.5·x)·erfc(x·(−1/sqrt 2)) with Eigen's float erfc (x clamped to ±11; a rational
                polynomial for |x| ≤ 1, exp(−x²)·P(1/x²)/(x·Q(1/x²)) above, where exp is Eigen's
                polynomial exp on packets of 4 and the C library's expf on the last n mod 4 values);
  approximate:  (0.5·x)·(1 + tanh(sqrt(2/pi)·(x + 0.044715·((x·x)·x)))) with Eigen's tanh.
Every operation rounds to float32 (no FMA); see ``_unary``'s float32 section.

The speed layer: ``workbench/interpreter/fast/activations.py``.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32
from ._unary import (
    I8,
    I16,
    U8,
    LutData,
    check_same_type,
    eigen_erfc_f32,
    eigen_tanh_f32,
    libm_f32,
    lut_lookup,
    prepare_lut,
    split_packets,
)

_NEG_SQRT1_2 = np.float32(-0.70710678118654752440)
_SQRT_2_OVER_PI = np.float32(1.12837916709551257390 * 0.70710678118654752440)


@opdata
class GeluData(OpData):
    shape: tuple
    approximate: bool


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def gelu_f32(d: np.ndarray) -> np.ndarray:
    """``GeluTransform``: 0.5f · x · erfcf(x · (float)(−M_SQRT1_2)), float32 (the LUT's transform)."""
    d = np.asarray(d, np.float32)
    e = quant.libm_apply("erfcf", (d * _NEG_SQRT1_2).astype(np.float32))
    return ((np.float32(0.5) * d).astype(np.float32) * e).astype(np.float32)


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def gelu_approximate_f32(d: np.ndarray) -> np.ndarray:
    """``GeluTransformApproximate`` in float32, evaluated left to right as the C expression."""
    d = np.asarray(d, np.float32)
    cube = (((np.float32(0.044715) * d).astype(np.float32) * d).astype(np.float32) * d).astype(np.float32)
    inner = (_SQRT_2_OVER_PI * (d + cube).astype(np.float32)).astype(np.float32)
    t = libm_f32("tanhf", inner)
    return ((np.float32(0.5) * d).astype(np.float32) * (np.float32(1) + t).astype(np.float32)).astype(np.float32)


@np.errstate(all="ignore")        # inf · 0 = NaN silently, as TFLite
def gelu_eigen_f32(x: np.ndarray, approximate: bool, packet: bool = True) -> np.ndarray:
    """The float32 GELU of ``reference_ops::Gelu`` (Eigen); ``packet`` picks erfc's packet code."""
    x = np.asarray(x, np.float32)
    half = (np.float32(0.5) * x).astype(np.float32)
    if approximate:
        cube = ((x * x).astype(np.float32) * x).astype(np.float32)
        inner = (_SQRT_2_OVER_PI * (x + (np.float32(0.044715) * cube).astype(np.float32))).astype(np.float32)
        return (half * (np.float32(1) + eigen_tanh_f32(inner)).astype(np.float32)).astype(np.float32)
    return (half * eigen_erfc_f32((x * _NEG_SQRT1_2).astype(np.float32), packet)).astype(np.float32)


def gelu_float(x: np.ndarray, approximate: bool) -> np.ndarray:
    """``reference_ops::Gelu`` over a float32 tensor: packets of 4, then the one-value tail."""
    return split_packets(x, lambda v: gelu_eigen_f32(v, approximate, True),
                         lambda v: gelu_eigen_f32(v, approximate, False))


@kernel(BuiltinOperator.GELU, versions=(1, 2))
class Gelu(Kernel):
    name = "gelu"

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, (F32, U8, I8, I16))
        shape = context.shape(x)
        approximate = bool(node.params.get("approximate", False))
        if dt == F32:
            context.set_output(node.outputs[0], shape, F32)
            return GeluData(shape, approximate)
        check_same_type(context, node, dt)
        d = prepare_lut(context, node, dt, gelu_approximate_f32 if approximate else gelu_f32,
                        function="gelu_approximate" if approximate else "gelu")
        context.set_output(node.outputs[0], shape, dt)
        return d

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        if type(d) is LutData:
            context.tensors[node.outputs[0]][...] = lut_lookup(x, d)
        else:
            context.tensors[node.outputs[0]][...] = gelu_float(x, d.approximate)

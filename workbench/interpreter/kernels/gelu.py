"""GELU, ``approximate`` from GeluOptions — float32 (v1), uint8 / int8 (v2), int16 (v1: op_version.cc
has no int16 rule, and litert runs it at version 1):
  exact:        0.5 * x * (1 + erf(x / sqrt(2)))
  approximate:  0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))

uint8 / int8 (``activations.cc`` GeluPrepare): a 256-entry LUT built in prepare with TFLite's
float32 transforms (``reference_ops::GeluTransform``: 0.5f·x·erfcf(x·(−1/sqrt 2)), the erfc form;
``GeluTransformApproximate``: 0.5f·x·(1 + tanhf(sqrt(2/pi)·(x + 0.044715f·x·x·x))).
int16: the same transforms in a 513-entry interpolated LUT (``LUTPopulate<int16_t>``, float32) —
established against litert, newer than the sources read for this file."""

import math

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import OpData, kernel, opdata
from .. import quant
from ._common import F32
from ._unary import I8, I16, U8, UnaryKernel, invoke_quantized, lut_reference, prepare_lut

_erf = np.frompyfunc(math.erf, 1, 1)
_NEG_SQRT1_2 = np.float32(-0.70710678118654752440)
_SQRT_2_OVER_PI = np.float32(1.12837916709551257390 * 0.70710678118654752440)


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def gelu_f32(d: np.ndarray) -> np.ndarray:
    """``GeluTransform``: 0.5f · x · erfcf(x · (float)(−M_SQRT1_2)), float32."""
    d = np.asarray(d, np.float32)
    e = quant.libm_apply("erfcf", (d * _NEG_SQRT1_2).astype(np.float32))
    return ((np.float32(0.5) * d).astype(np.float32) * e).astype(np.float32)


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def gelu_approximate_f32(d: np.ndarray) -> np.ndarray:
    """``GeluTransformApproximate`` in float32, evaluated left to right as the C expression."""
    d = np.asarray(d, np.float32)
    cube = (((np.float32(0.044715) * d).astype(np.float32) * d).astype(np.float32) * d).astype(np.float32)
    inner = (_SQRT_2_OVER_PI * (d + cube).astype(np.float32)).astype(np.float32)
    t = quant.libm_apply("tanhf", inner)
    return ((np.float32(0.5) * d).astype(np.float32) * (np.float32(1) + t).astype(np.float32)).astype(np.float32)


@opdata
class GeluData(OpData):
    shape: tuple
    approximate: bool


def reference(x: np.ndarray, approximate: bool) -> np.ndarray:
    v = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):      # -inf · 0 = nan silently, as TFLite
        if approximate:
            y = 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))
        else:
            y = 0.5 * v * (1.0 + _erf(v / math.sqrt(2.0)).astype(np.float64))
        return y.astype(np.float32)


@kernel(BuiltinOperator.GELU, versions=(1, 2))
class Gelu(UnaryKernel):
    name = "gelu"
    dtypes = (F32,)
    qtypes = (U8, I8, I16)

    def prepare_float(self, context, node, dt):
        return GeluData(context.shape(node.inputs[0]), bool(node.params.get("approximate", False)))

    def prepare_quantized(self, context, node, dt):
        approx = bool(node.params.get("approximate", False))
        return prepare_lut(context, node, dt, gelu_approximate_f32 if approx else gelu_f32,
                           function="gelu_approximate" if approx else "gelu")

    def reference_quantized(self, x, d):
        return lut_reference(x, d, gelu_approximate_f32 if d.function == "gelu_approximate" else gelu_f32)

    def invoke(self, context, node, d):
        if invoke_quantized(self, context, node, d):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.approximate)

    def invoke_reference(self, context, node, d):
        if invoke_quantized(self, context, node, d, reference=True):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.approximate)

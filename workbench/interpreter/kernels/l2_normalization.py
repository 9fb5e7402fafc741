"""L2_NORMALIZATION over the last axis: x / max(sqrt(sum(x^2)), 1e-6).

float32: in litert's float32 order (sequential sum, true division; see :func:`l2norm_float`).

TFLite's kernel only accepts fused activation NONE (checked in Prepare); so does this one.

Versions: float32 and uint8 → 1, int8 → 2 (no int16 in TFLite).  A quantized output must have scale
exactly 1/128 and zero point 0 (int8) or 128 (uint8): values in [−1, 1) as q/128.  Per row of the
last axis, all in integers:
  d = x − in_zp;  acc = Σ d² (int32);
  (inv, shift) = GetInvSqrtQuantizedMultiplierExp(acc, −1) — 1/sqrt(acc) as a fixed-point multiplier
  and a (right) shift, from five Newton-Raphson steps (:func:`quant.inv_sqrt_quantized_multiplier_exp`);
  int8:  out = clamp(MBQM(d, inv, shift + 7), −128, 127)        (· 128 folded into the shift)
  uint8: out = clamp(128 + MBQM_SmallerThanOne(128·d, inv, shift), 0, 255)
The input scale never enters: normalising removes it.  No epsilon either: a row of zeros has acc 0,
which the inverse square root treats as 1 (the outputs are then 0).

Both builds compute these bits (measured on ai-edge-litert 2.3.0 with its builtin and reference
kernels): no variant, and no speed layer — the numpy here is fast enough.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, U8, activation_name
from ._elementwise import refuse

EPSILON = 1e-6


@opdata
class L2NormalizationData(OpData):
    shape: tuple
    epsilon: float


@opdata
class L2NormalizationQuantizedData(OpData):
    shape: tuple
    dtype: str
    input_zero_point: int
    input_scale: float
    output_scale: float
    output_zero_point: int


def l2norm_float(x: np.ndarray) -> np.ndarray:
    """``reference_ops::L2Normalization`` on float32, as litert runs it in both builds: Σ x² added one
    value at a time in row order (``np.cumsum`` is sequential; ``sum`` would add pairwise), sqrt,
    ``std::max(norm, 1e-6)``, then a true division (not a multiplication by 1/norm)."""
    v = np.asarray(x, np.float32)
    if v.shape[-1] == 0:
        return v.copy()
    with np.errstate(over="ignore", invalid="ignore"):      # inf / inf = nan silently, as TFLite
        squares = (v * v).astype(np.float32)
        norm = np.sqrt(np.cumsum(squares, axis=-1, dtype=np.float32)[..., -1:]).astype(np.float32)
        norm = np.where(norm < np.float32(EPSILON), np.float32(EPSILON), norm).astype(np.float32)
        return (v / norm).astype(np.float32)


def _row_multipliers(acc: np.ndarray):
    pairs = [quant.inv_sqrt_quantized_multiplier_exp(int(a), -1) for a in acc.reshape(-1)]
    return (np.array([p[0] for p in pairs], np.int64).reshape(acc.shape),
            np.array([p[1] for p in pairs], np.int64).reshape(acc.shape))


def l2norm_quantized(x: np.ndarray, d) -> np.ndarray:
    """``reference_integer_ops::L2Normalization`` (int8) / ``reference_ops::L2Normalization`` (uint8),
    every row at once (the inverse square roots one row at a time)."""
    diff = x.astype(np.int64) - d.input_zero_point
    acc = (((diff * diff).sum(axis=-1, keepdims=True) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)   # int32
    inv, shift = _row_multipliers(acc)
    if x.dtype == I8:
        v = quant.multiply_by_quantized_multiplier_array(diff, inv, shift + 7)
        return np.clip(v, -128, 127).astype(np.int8)
    v = quant.rounding_divide_by_pot_array(quant.srdhm_array(128 * diff, inv), -shift)
    return np.clip(128 + v, 0, 255).astype(np.uint8)


@kernel(BuiltinOperator.L2_NORMALIZATION, versions=(1, 2))
class L2Normalization(Kernel):
    name = "l2_normalization"

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, (F32, U8, I8))
        act = int(node.params.get("fused_activation_function", 0))
        if act != 0:
            refuse(node, f"fused activation {activation_name(act)}; TFLite's kernel only accepts NONE")
        if len(context.shape(x)) == 0:
            refuse(node, "the input must have at least one dimension")
        if context.dtype(node.outputs[0]) != dt:
            refuse(node, f"the input is {dt} but the output is {context.dtype(node.outputs[0])}; TFLite needs them "
                         f"equal")
        context.set_output(node.outputs[0], context.shape(x), dt)
        if dt == F32:
            return L2NormalizationData(context.shape(x), EPSILON)
        in_s, in_zp = quant.tensor_scale_zp(context, x)
        out_s, out_zp = quant.tensor_scale_zp(context, node.outputs[0])
        want = 128 if dt == U8 else 0
        if float(np.float32(out_s)) != 1.0 / 128.0 or out_zp != want:
            refuse(node, f"a {dt} output needs scale 1/128 and zero point {want}, got {out_s} / {out_zp} "
                         f"(TFLite's Prepare checks both)")
        return L2NormalizationQuantizedData(context.shape(x), str(dt), in_zp, in_s, out_s, out_zp)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        if type(d) is L2NormalizationQuantizedData:
            context.tensors[node.outputs[0]][...] = l2norm_quantized(x, d)
        else:
            context.tensors[node.outputs[0]][...] = l2norm_float(x)

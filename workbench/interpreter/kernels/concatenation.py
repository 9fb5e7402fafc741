"""CONCATENATION along ``axis`` (negative counts from the end).

The options carry a fused activation, but TFLite's kernel refuses anything but NONE
(``params->activation != kTfLiteActNone`` fails in Prepare), and so does this one.

Types and versions (op_version.cc): float32, uint8, int32, int64, bool → 1; int8 → 2; int16 → 3;
uint32 → 4; float16 → 6 (LiteRT's newer rules; a plain copy).  int4 (5) is a type this
interpreter cannot hold.  What TFLite does with quantized inputs differs per type:

* uint8 — the only type that rescales (``ConcatenationWithScaling``).  An input whose scale and
  zero point equal the output's is copied; any other input goes through float32 arithmetic:
  scale = in_scale · (1 / out_scale), bias = −in_zp · scale, out = round(x · scale + bias) + out_zp
  (round half away from zero), clamped to [0, 255].
* int8 — Prepare requires every input to have the output's scale and zero point: a plain copy.
* int16 — Prepare requires zero point 0 everywhere but does NOT compare scales: the raw integers
  are copied even when the scales differ (the numbers then mean something else; TFLite does
  exactly this, so the workbench does too, and says so in ``ConcatenationData.rescaled``).

Both builds of TFLite compute the same bits (no variant), and numpy's concatenate is the whole
kernel (no speed layer).
"""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import I8, I16, U8, activation_name, activation_range, apply_activation, clamps, normalize_axis

TYPES = tuple(np.dtype(t) for t in (np.float32, np.float16, np.uint8, np.int8, np.int16, np.int32, np.int64,
                                    np.bool_, np.uint32))


@opdata
class ConcatenationData(OpData):
    axis: int
    output_shape: tuple
    activation: str
    output_activation_min: float
    output_activation_max: float
    # quantized inputs (uint8 / int8 / int16); empty for other types
    input_scales: tuple = ()
    input_zero_points: tuple = ()
    output_scale: float = 0.0
    output_zero_point: int = 0
    rescaled: tuple = ()          # per input: True when the uint8 values are requantized
    scale: tuple = ()             # per input: float32 in_scale · (1/out_scale) (uint8 only)
    bias: tuple = ()              # per input: float32 −in_zp · scale (uint8 only)


def requantize_uint8(x: np.ndarray, scale, bias, out_zp: int) -> np.ndarray:
    """``ConcatenationWithScaling``'s rescale of one uint8 input: round(x·scale + bias) + out_zp in
    float32 (round half away from zero), clamped to uint8."""
    v = (x.astype(np.float32) * np.float32(scale)).astype(np.float32) + np.float32(bias)
    r = quant.round_half_away(v.astype(np.float32)).astype(np.int64) + out_zp
    return np.clip(r, 0, 255).astype(np.uint8)


def concatenation(inputs, d, out: np.ndarray) -> None:
    """``reference_ops::Concatenation`` (``ConcatenationWithScaling`` for rescaled uint8 inputs) into
    ``out``: each outer index takes every input's block in turn — numpy's concatenate along the axis."""
    parts = [requantize_uint8(x, d.scale[k], d.bias[k], d.output_zero_point) if d.rescaled and d.rescaled[k] else x
             for k, x in enumerate(inputs)]
    np.concatenate(parts, axis=d.axis, out=out)


@kernel(BuiltinOperator.CONCATENATION, versions=(1, 2, 3, 4, 6))
class Concatenation(Kernel):
    name = "concatenation"

    def prepare(self, context, node):
        shapes = [context.shape(t) for t in node.inputs]
        dtypes = {context.dtype(t) for t in node.inputs}
        if len(dtypes) != 1:
            raise UnsupportedOpError(f"CONCATENATION (node {node.index}): inputs of different types {dtypes}")
        dt = context.expect_dtype(node, node.inputs[0], TYPES)
        if context.dtype(node.outputs[0]) != dt:
            raise UnsupportedOpError(f"CONCATENATION (node {node.index}): inputs are {dt} but the output is "
                                     f"{context.dtype(node.outputs[0])}; TFLite needs them equal")
        rank = len(shapes[0])
        if rank == 0:
            raise UnsupportedOpError(f"CONCATENATION (node {node.index}): scalar inputs cannot be concatenated")
        axis = normalize_axis(node, int(node.params["axis"]), rank)
        for s in shapes[1:]:
            if len(s) != rank or any(a != b for i, (a, b) in enumerate(zip(s, shapes[0])) if i != axis):
                raise UnsupportedOpError(f"CONCATENATION (node {node.index}): shapes {[list(x) for x in shapes]} "
                                         f"differ outside axis {axis}")
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        code = node.params.get("fused_activation_function", 0)
        lo, hi = activation_range(code)
        if code != 0:
            raise UnsupportedOpError(f"CONCATENATION (node {node.index}): fused activation {activation_name(code)}; "
                                     f"TFLite's kernel only accepts NONE")
        context.set_output(node.outputs[0], out, dt)
        if dt not in (U8, I8, I16):
            return ConcatenationData(axis, tuple(out), activation_name(code), lo, hi)
        so, zo = quant.tensor_scale_zp(context, node.outputs[0])
        scales, zps = [], []
        for t in node.inputs:
            si, zi = quant.tensor_scale_zp(context, t)
            scales.append(si)
            zps.append(zi)
            if dt == I8 and (np.float32(si) != np.float32(so) or zi != zo):
                raise UnsupportedOpError(f"CONCATENATION (node {node.index}): int8 input '{context.name(t)}' has "
                                         f"scale {si} / zero point {zi}, the output {so} / {zo}; TFLite's int8 "
                                         f"kernel requires them equal (no rescaling)")
            if dt == I16 and zi != 0:
                raise UnsupportedOpError(f"CONCATENATION (node {node.index}): int16 input '{context.name(t)}' has "
                                         f"zero point {zi}; TFLite's int16 kernel requires 0")
        if dt == I16 and zo != 0:
            raise UnsupportedOpError(f"CONCATENATION (node {node.index}): int16 output has zero point {zo}; TFLite's "
                                     f"int16 kernel requires 0")
        rescaled, sc, bi = [], [], []
        inverse = np.float32(1.0) / np.float32(so)
        for si, zi in zip(scales, zps):
            r = dt == U8 and not (zi == zo and np.float32(si) == np.float32(so))
            s = np.float32(np.float32(si) * inverse)
            rescaled.append(bool(r))
            sc.append(float(s) if r else 0.0)
            bi.append(float(np.float32(np.float32(-zi) * s)) if r else 0.0)
        return ConcatenationData(axis, tuple(out), activation_name(code), lo, hi, tuple(scales), tuple(zps), so, zo,
                                 tuple(rescaled), tuple(sc), tuple(bi))

    def invoke(self, context, node, d):
        t = context.tensors
        out = t[node.outputs[0]]
        concatenation([t[i] for i in node.inputs], d, out)
        if out.dtype.kind == "f" and clamps(d.output_activation_min, d.output_activation_max):
            apply_activation(out, d.output_activation_min, d.output_activation_max)

"""What ADD, SUB, MUL and DIV share: numpy broadcasting, TFLite's quantized arithmetic, the activation clamp.

Quantized arithmetic (``add.cc``, ``sub.cc``, ``mul.cc``) for int8, uint8, int16:

* ADD / SUB, general scales (``reference_integer_ops::Add``, ``reference_ops::Add`` / ``Sub``): both
  inputs move to a common fixed-point scale — ``left_shift`` 20 (8-bit) or 15 (int16), multipliers
  s_i / (2·max(s1, s2)) — are added (subtracted), requantized with 2·max(s1, s2) / (2^left_shift · s_out),
  + output zero point, clamped.  ADD computes 2·max in double, SUB in float32; ADD refuses an output
  multiplier ≥ 1 (TFLite aborts), SUB applies it with a rounding shift by a negative count (undefined in
  C: see :func:`add_sub_general`).
* int16 ADD / SUB with ``pot_scale_int16`` and power-of-two scales (the LSTM path): zero points 0, the
  smaller-scale input rounding-shifted right, a saturating int16 sum (difference), the clamp.  ADD's
  version does not broadcast (TFLite aborts; refused here), SUB's does.
* MUL (``reference_integer_ops::Mul``, ``reference_ops::Mul``): (x − zp1)·(y − zp2) requantized with
  s1·s2/s_out computed in float32; int16 × int16 → int8 / uint8: the Q0.15 product, >> 8 rounding.
* int16 tensors without quantization parameters are plain integers (ADD v5, MUL v7): wrap to int16.

Variant ``litert-x86`` (``Variant.neon_narrowing``): litert's optimized 8-bit ADD / MUL and int16 ADD run
vector loops (NEON through NEON_2_SSE) that narrow to int16 or round once where the reference rounds
twice; prepare marks the outputs they write (``vector_mask``, the policy ``quant.elementwise.vector_loop_mask``)
and :func:`with_vector_loop` takes those values from ``quant.elementwise``.  The speed layer:
``workbench/interpreter/fast/binary.py``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import UnsupportedOpError
from .. import quant
from ..quant.elementwise import add_8bit_neon, add_int16_neon, mul_8bit_neon, vector_loop_mask
from ..registry import Kernel, OpData, opdata
from ._binary_plain import integer_activation_range, prepare_plain
from ._common import F32, I8, I16, U8, activation_name, activation_range, apply_activation
from ._unary import TYPE_RANGE, require_zero_points


@opdata
class BinaryData(OpData):
    output_shape: tuple
    broadcast: bool
    activation: str
    output_activation_min: float
    output_activation_max: float


@opdata
class BinaryQuantizedData(OpData):
    """TFLite's ``ArithmeticParams`` for a quantized ADD / SUB / MUL (TFLM field names)."""

    output_shape: tuple
    broadcast: bool
    activation: str
    input1_offset: int             # −input1 zero point
    input2_offset: int
    output_offset: int             # +output zero point
    output_activation_min: int
    output_activation_max: int
    left_shift: int = 0            # ADD / SUB: 20 (8-bit) or 15 (int16)
    input1_multiplier: int = 0
    input1_shift: int = 0          # POT int16 ADD / SUB: log2(s1 / s_out) (≤ 0)
    input2_multiplier: int = 0
    input2_shift: int = 0
    output_multiplier: int = 0
    output_shift: int = 0
    real_input1_multiplier: float = 0.0
    real_input2_multiplier: float = 0.0
    real_output_multiplier: float = 0.0
    dtype: str = "int8"
    output_dtype: str = "int8"
    path: str = "general"          # "general" | "pot_int16" | "int16→8bit" | "plain int16"
    # the outputs a vector loop writes (quant.elementwise.vector_loop_mask), None: all the reference's
    vector_mask: object = dataclasses.field(default=None, repr=False)
    vector_scalar_broadcast: bool = False     # that loop is TFLite's scalar-broadcast one


@opdata
class BinaryInt8Data(BinaryQuantizedData):
    """The int8 case (kept as its own type: ``explain()`` works it out by hand)."""


def _clamp(v, d) -> np.ndarray:
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(d.output_dtype)


def float_binary(ufunc, a, b, d, out) -> None:
    """``reference_ops::Add`` / ``Sub`` / ``Mul`` / ``Div`` on float32 (and their broadcast versions):
    the IEEE operation into ``out``, then the activation clamp (inf / NaN silently, as TFLite)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        ufunc(a, b, out=out)
    apply_activation(out, d.output_activation_min, d.output_activation_max)


def add_sub_general(a, b, d, sign: int, vectorized: bool = False) -> np.ndarray:
    """The general path of ``reference_integer_ops::Add`` / ``reference_ops::Add`` (sign +1) and ``Sub``
    (sign −1): rescale both inputs (MultiplyByQuantizedMultiplierSmallerThanOneExp of v·2^left_shift),
    add, requantize, + output zero point, clamp.

    SUB's output multiplier may be ≥ 1 (output shift > 0); the final rounding shift then has a negative
    count, undefined in C.  litert's x86 build computes it two ways: its scalar loop's ``sar`` takes the
    count mod 32 (:func:`quant.rounding_divide_by_pot_x86`); the compiler's 4-lane vectorisation of the
    loop (``vectorized=True``; which outputs: ``quant.elementwise.sub_vector_mask``) leaves the sign:
    zero point + 1 where the high product is ≥ 0, − 1 below."""
    mb = quant.multiply_by_quantized_multiplier_array
    x = (np.asarray(a).astype(np.int64) + d.input1_offset) << d.left_shift
    y = (np.asarray(b).astype(np.int64) + d.input2_offset) << d.left_shift
    sx = mb(x, d.input1_multiplier, d.input1_shift)
    sy = mb(y, d.input2_multiplier, d.input2_shift)
    total = quant.srdhm_array(quant.wrap_bits(sx + sign * sy, 32), d.output_multiplier)
    if d.output_shift > 0 and vectorized:
        return _clamp(np.where(total >= 0, 1, -1) + d.output_offset, d)
    return _clamp(quant.rounding_divide_by_pot_x86(total, -d.output_shift) + d.output_offset, d)


def add_sub_pot_int16(a, b, d, sign: int) -> np.ndarray:
    """int16 ADD / SUB on power-of-two scales (``reference_ops::Add`` int16, ``Sub16``): shift the
    smaller-scale input right (rounding), add / subtract with int16 saturation, clamp."""
    x = quant.rounding_divide_by_pot_array(np.asarray(a).astype(np.int64), -d.input1_shift)
    y = quant.rounding_divide_by_pot_array(np.asarray(b).astype(np.int64), -d.input2_shift)
    return _clamp(np.clip(x + sign * y, -32768, 32767), d)


def mul_general(a, b, d) -> np.ndarray:
    """``reference_integer_ops::Mul`` / ``reference_ops::Mul``: (x − zp1)·(y − zp2) in int32,
    MultiplyByQuantizedMultiplier, + output zero point, clamp."""
    prod = (np.asarray(a).astype(np.int64) + d.input1_offset) * (np.asarray(b).astype(np.int64) + d.input2_offset)
    raw = quant.multiply_by_quantized_multiplier_array(quant.wrap_bits(prod, 32), d.output_multiplier,
                                                       d.output_shift) + d.output_offset
    return _clamp(raw, d)


def mul_int16_to_8bit(a, b, d) -> np.ndarray:
    """``reference_integer_ops::Mul`` int16 × int16 → int8 / uint8: Q0.15 product, >> 8 rounding."""
    p = quant.fp_srdhm(np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64), 16)
    r = quant.rounding_divide_by_pot_array(p, 8)
    r = np.clip(r, d.output_activation_min - d.output_offset, d.output_activation_max - d.output_offset)
    return (r + d.output_offset).astype(d.output_dtype)


def plain_int16(a, b, d, kind: str) -> np.ndarray:
    """int16 without quantization: the C expression wraps to int16, then the activation range."""
    a = np.asarray(a).astype(np.int64)
    b = np.asarray(b).astype(np.int64)
    return _clamp(quant.wrap_bits(a + b if kind == "add" else a * b, 16), d)


def vector_loop_values(kind: str, a, b, d) -> np.ndarray:
    """What the vector loop writes where ``d.vector_mask`` is set: SUB's compiler-vectorised loop, or
    litert's NEON ADD / MUL (``quant.elementwise``), clamped to the activation range."""
    if kind == "sub":
        return add_sub_general(a, b, d, -1, vectorized=True)
    if d.dtype == "int16":
        return _clamp(add_int16_neon(a, b, d), d)
    if kind == "add":
        return _clamp(add_8bit_neon(a, b, d, d.vector_scalar_broadcast), d)
    return _clamp(mul_8bit_neon(a, b, d, not (d.dtype == "uint8" and d.vector_scalar_broadcast)), d)


def with_vector_loop(kind: str, a, b, d, exact: np.ndarray) -> np.ndarray:
    """``exact`` (the reference arithmetic), with the vector loop's values where ``d.vector_mask`` says."""
    if d.vector_mask is None:
        return exact
    return np.where(d.vector_mask, vector_loop_values(kind, a, b, d), exact).astype(exact.dtype)


def has_scale(context, t: int) -> bool:
    q = context.tensor_meta(t).quantization
    return q is not None and len(tuple(q.scale or ())) > 0


def prepare_quantized(kernel, context, node, out, sa, sb, dt) -> BinaryQuantizedData:
    a, b, y = node.inputs[0], node.inputs[1], node.outputs[0]
    kind = kernel.int8_kind
    code = node.params.get("fused_activation_function", 0)
    out_dt = context.dtype(y)
    common = dict(output_shape=out, broadcast=sa != sb, activation=activation_name(code), dtype=str(dt))
    cls = BinaryInt8Data if dt == I8 else BinaryQuantizedData

    if dt == I16 and not has_scale(context, a):                  # plain integers
        if kind == "sub":
            raise UnsupportedOpError(f"SUB (node {node.index}): int16 inputs without quantization parameters; "
                                     f"TFLite's SUB only takes quantized int16")
        if out_dt != I16:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): int16 inputs with a {out_dt} output")
        lo, hi = integer_activation_range(code, I16)
        context.set_output(y, out, I16)
        return cls(**common, input1_offset=0, input2_offset=0, output_offset=0, output_activation_min=lo,
                   output_activation_max=hi, output_dtype="int16", path="plain int16")

    s1, z1 = quant.tensor_scale_zp(context, a)
    s2, z2 = quant.tensor_scale_zp(context, b)
    if kind == "mul" and dt == I16 and out_dt in (I8, U8):          # int16 × int16 → 8 bit
        so, zo = quant.tensor_scale_zp(context, y)
        lo, hi = quant.activation_range_quantized(code, so, zo, *TYPE_RANGE[out_dt])
        context.set_output(y, out, out_dt)
        return cls(**common, input1_offset=-z1, input2_offset=-z2, output_offset=zo, output_activation_min=lo,
                   output_activation_max=hi, output_dtype=str(out_dt), path="int16→8bit")
    if out_dt != dt:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): {dt} inputs with a {out_dt} output; "
                                 f"TFLite needs the output type of the inputs")
    so, zo = quant.tensor_scale_zp(context, y)
    lo, hi = quant.activation_range_quantized(code, so, zo, *TYPE_RANGE[dt])
    context.set_output(y, out, dt)
    common.update(input1_offset=-z1, input2_offset=-z2, output_offset=zo, output_activation_min=lo,
                  output_activation_max=hi, output_dtype=str(dt))
    if dt == I16:
        require_zero_points(node, "int16", ("input 1", z1), ("input 2", z2), ("output", zo))

    if kind == "mul":
        with np.errstate(over="ignore"):
            real = float(np.float32(np.float32(s1) * np.float32(s2)) / np.float32(so))   # float32, then widened
        m, sh = quant.checked_quantize_multiplier(node, "output multiplier (s1 · s2 / s_out, float32)", real)
        mask, scalar = vector_loop_mask(kind, str(dt), sa, sb, sh, context.variant.neon_narrowing)
        return cls(**common, output_multiplier=m, output_shift=sh, real_output_multiplier=real, vector_mask=mask,
                   vector_scalar_broadcast=scalar)

    if dt == I16 and node.params.get("pot_scale_int16", False):
        logs = [quant.checked_log2(s) for s in (s1, s2, so)]
        if all(ok for ok, _ in logs):
            sh1 = logs[0][1] - logs[2][1]
            sh2 = logs[1][1] - logs[2][1]
            if not (sh1 == 0 or sh2 == 0) or sh1 > 0 or sh2 > 0:
                raise UnsupportedOpError(f"{node.op_name} (node {node.index}): power-of-two int16 path with input "
                                         f"shifts {sh1}, {sh2}; TFLite needs one of them 0 and both ≤ 0")
            size = int(np.prod(out, dtype=np.int64))
            if kind == "add" and (int(np.prod(sa, dtype=np.int64)) != size or int(np.prod(sb, dtype=np.int64)) != size):
                raise UnsupportedOpError(f"ADD (node {node.index}): the power-of-two int16 path (pot_scale_int16) "
                                         f"does not broadcast ({list(sa)} and {list(sb)}); TFLite's kernel aborts")
            return cls(**common, input1_shift=sh1, input2_shift=sh2, path="pot_int16")

    left = 15 if dt == I16 else 20
    if kind == "add":
        twice_max = 2.0 * float(max(np.float32(s1), np.float32(s2)))
    else:
        with np.errstate(over="ignore"):
            twice_max = float(np.float32(2) * max(np.float32(s1), np.float32(s2)))
        if not np.isfinite(twice_max):
            raise UnsupportedOpError(f"SUB (node {node.index}): 2·max(input scales) overflows float32 ({s1:g}, "
                                     f"{s2:g}); TFLite's kernel aborts on it")
    r1 = float(np.float32(s1)) / twice_max
    r2 = float(np.float32(s2)) / twice_max
    ro = twice_max / float(np.float32((1 << left) * np.float32(so)))
    m1, sh1 = quant.quantize_multiplier_smaller_than_one_exp(r1)
    m2, sh2 = quant.quantize_multiplier_smaller_than_one_exp(r2)
    if (kind == "add" and not ro < 1.0) or ro == 1.0:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): output multiplier {ro:.6g} ≥ 1 (the output "
                                 f"scale is too small for the input scales); TFLite's kernel aborts on it")
    try:
        if ro < 1.0:
            mo, sho = quant.quantize_multiplier_smaller_than_one_exp(ro)
        else:           # SUB only; int16 was measured to follow the sign rule up to a shift of 32
            mo, sho = quant.checked_quantize_multiplier(node, "output multiplier", ro)
    except ValueError:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): output multiplier {ro:.6g} rounds to 1; "
                                 f"TFLite's kernel aborts on it") from None
    mask, scalar = vector_loop_mask(kind, str(dt), sa, sb, sho, context.variant.neon_narrowing)
    return cls(**common, left_shift=left, input1_multiplier=m1, input1_shift=sh1, input2_multiplier=m2,
               input2_shift=sh2, output_multiplier=mo, output_shift=sho, real_input1_multiplier=r1,
               real_input2_multiplier=r2, real_output_multiplier=ro, vector_mask=mask,
               vector_scalar_broadcast=scalar)


class BinaryKernel(Kernel):
    """Subclasses set ``ufunc`` (np.add, ...), ``dtypes`` (float32 and the ``plain`` types of
    ``_binary_plain``) and ``int8_kind`` ("add" | "sub" | "mul") with ``qtypes`` (the quantized types
    TFLite's kernel takes); their ``invoke`` switches on the OpData type."""

    ufunc = None
    dtypes = (F32,)
    plain = ()
    int8_kind = None
    qtypes = ()

    def prepare(self, context, node):
        a, b = node.inputs[0], node.inputs[1]
        dt = context.expect_dtype(node, a, tuple(self.dtypes) + tuple(self.qtypes), "input 0")
        if context.dtype(b) != dt:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): inputs have types {dt} and "
                                     f"{context.dtype(b)}")
        if dt in self.plain:
            return prepare_plain(self, context, node, dt)
        sa, sb = context.shape(a), context.shape(b)
        try:
            out = tuple(np.broadcast_shapes(sa, sb))
        except ValueError:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): shapes {list(sa)} and {list(sb)} do "
                                     f"not broadcast") from None
        if dt in tuple(np.dtype(q) for q in self.qtypes):
            return prepare_quantized(self, context, node, out, sa, sb, dt)
        code = node.params.get("fused_activation_function", 0)
        lo, hi = activation_range(code)
        context.set_output(node.outputs[0], out, dt)
        return BinaryData(out, sa != sb, activation_name(code), lo, hi)


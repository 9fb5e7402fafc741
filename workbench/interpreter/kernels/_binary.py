"""What ADD, SUB, MUL and DIV share: numpy broadcasting, then the fused activation clamp.

Quantized arithmetic (TFLITE_FACTS §4.6, §4.7; ``add.cc``, ``sub.cc``, ``mul.cc``), for int8,
uint8 and int16:

* ADD / SUB, general scales: both inputs are moved to a common fixed-point scale with
  ``left_shift`` = 20 (8-bit) or 15 (int16) and per-input multipliers
  (real = s_i / (2·max(s1, s2))), added (or subtracted), requantized to the output
  (real = 2·max(s1, s2) / (2^left_shift · s_out)), + output zero point, clamped.
  ADD computes the multipliers in double, SUB 2·max in float32; ADD refuses an output
  multiplier ≥ 1 (TFLite's ``QuantizeMultiplierSmallerThanOneExp`` aborts), SUB accepts it but
  still applies it with ``MultiplyByQuantizedMultiplierSmallerThanOneExp``, i.e. a rounding
  shift by a negative count — undefined in C.  litert's x86 build computes it two ways: its
  scalar loop takes the count mod 32 (:func:`quant.rounding_divide_by_pot_x86`), the compiler's
  4-lane vectorisation of the loop leaves the sign (output zero point + 1 where SRDHM(difference,
  multiplier) is ≥ 0, − 1 below); :func:`sub_vector_mask` says which outputs go which way.  The
  multiplier must stay below 2^31 (shift ≤ 31).
* int16 ADD / SUB with ``pot_scale_int16`` (the AddOptions / SubOptions default when the table is
  present) and power-of-two scales: the LSTM path.  Zero points 0; the input whose scale is
  smaller is rounding-shifted right by log2(s_out/s_i), added (SUB: subtracted) with int16
  saturation, clamped.  One input must already have the output's scale; ADD's version does not
  broadcast (litert aborts; this kernel refuses), SUB's does.  Without the option (or
  with scales that are not powers of two) int16 takes the general path (op version 3 / 5).
* MUL: (x − zp1)·(y − zp2) requantized with real = s1·s2/s_out computed in float32;
  int16 × int16 → int8 / uint8 (the LSTM path): the gemmlowp Q0.15 product, rounding-shifted
  right by 8, + output zero point, clamped (input zero points and the multiplier play no part).
* int16 tensors WITHOUT quantization parameters are plain integers (ADD v5, MUL v7):
  a + b / a·b wrap to int16, then the fused activation's integer range is applied.

Where litert's optimized uint8 / int8 ADD and MUL differ from the reference: their NEON loops
(compiled for x86 through NEON_2_SSE) narrow the requantized result to int16 before adding the
output zero point (in int16, wrapping) and saturating to the 8-bit type; the activation clamp
comes last.  ADD narrows by truncation (``vmovn``), MUL by saturation (``vqmovn``) except uint8's
scalar-broadcast loop, which truncates too.  When the result does not fit int16 — only with an
output scale far smaller than the inputs' — the value lands at the other end of the range
(e.g. 127 instead of −128); otherwise the narrowing changes nothing.  The loops take 16 (int8 ADD / MUL
elementwise, int8 MUL scalar broadcast) or 8 (the rest) values at a time; the remaining values
go through the exact scalar loop.  Which values go through a vector loop follows TFLite's
broadcast dispatch (``ProcessBroadcastShapes``: no broadcast → the whole tensor; "five-fold"
broadcasts → every innermost run; other broadcasts → the exact reference loop); see
:func:`neon_block_mask`.  The NEON ADD also scales the inputs differently: int8's
elementwise loop folds the input's rounding right shift into the first left shift (one rounding
instead of two); int8's scalar-broadcast loop and both uint8 loops shift right without rounding.
For uint8 that moves some outputs by one even at ordinary scales (227 of the 65536 pairs of the
``add_uint8_every_pair`` test).

int16 ADD on the general path runs a vector loop too when no broadcast is needed (equal shapes
after padding with leading 1s): ``AddElementwiseInt16`` takes 16 values at a time (the rest go
through the exact scalar loop) and, like int8's elementwise loop, folds each input's right shift
into the left shift: SRDHM(v·2^(15 + shift), m) rounds once where the reference's
SRDHM(v·2^15, m) followed by a rounding right shift rounds twice; with 15 + shift < 0 the value
is shifted right first, truncating.  The output stage is the reference one, clamped in int32.
That moves an output by one only where the reference's second rounding meets an exact tie that
the single rounding does not see and the sum then sits on a rounding boundary of the output —
rare (one of 2048 values of the int16 ADD in ``mobilenet_v3_block_aeq_a16w8``), but exactly
what litert writes (:func:`add_int16_vector`, :func:`int16_add_vector_mask`).  An int16 ADD
that broadcasts runs the reference (``BroadcastAdd6DSlow``).  SUB runs the reference kernel,
int16 too, and so does MUL for int16 (both checked against litert on exact ties of every
rounding step); litert's AVX2 int16 ADD loop (a different, truncating rescale) is not what its
x86 build runs.

The fast path for 8-bit inputs is a 256×256 table of every (a, b) pair, filled in prepare from the
numpy reference (a second table for ADD / MUL where the vector loops differ); int16 runs the numpy
arithmetic (ADD: the vector loop's and the reference's, chosen per output by ``vector_mask``).  ``invoke_reference`` always runs the numpy arithmetic.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import UnsupportedOpError
from ..registry import Kernel, OpData, opdata
from .. import quant
from ._common import F32, activation_name, activation_range, apply_activation
from ._unary import I8, I16, U8, TYPE_RANGE, all_values, bit_pattern, require_zero_points

QUANTIZED = (I8, U8, I16)


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
    table: object = dataclasses.field(default=None, repr=False)   # 8-bit inputs: [256·256] results
    vector_table: object = dataclasses.field(default=None, repr=False)   # 8-bit MUL: the NEON results
    vector_mask: object = dataclasses.field(default=None, repr=False)    # which outputs take the vector loop
    vector_scalar_broadcast: bool = False     # the vector loop is TFLite's scalar-broadcast one
    impl: str = "numpy"


@opdata
class BinaryInt8Data(BinaryQuantizedData):
    """The int8 case (kept as its own type: ``explain()`` works it out by hand)."""


def _clamp(v, d) -> np.ndarray:
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(d.output_dtype)


def add_sub_general(a, b, d, sign: int, vectorized: bool = False) -> np.ndarray:
    """reference ``AddElementwise`` / ``SubElementwise`` (and the broadcast versions).

    SUB's output multiplier may be ≥ 1 (output shift > 0); ``MultiplyByQuantizedMultiplierSmaller
    ThanOneExp`` then shifts right by a negative count, undefined in C.  What litert's x86 build
    makes of it depends on where the value is computed: the scalar loop's ``sar`` takes the count
    mod 32 (:func:`quant.rounding_divide_by_pot_x86`); the compiler's 4-lane vectorisation of the
    loop (``vectorized=True``, see :func:`sub_vector_mask`) shifts by the whole count, which leaves
    the sign: the output is the zero point + 1 where the high product is ≥ 0 and − 1 below."""
    mb = quant.multiply_by_quantized_multiplier_array
    x = (np.asarray(a).astype(np.int64) + d.input1_offset) << d.left_shift
    y = (np.asarray(b).astype(np.int64) + d.input2_offset) << d.left_shift
    sx = mb(x, d.input1_multiplier, d.input1_shift)
    sy = mb(y, d.input2_multiplier, d.input2_shift)
    total = quant.srdhm_array(quant.wrap_bits(sx + sign * sy, 32), d.output_multiplier)
    if d.output_shift > 0 and vectorized:
        return _clamp(np.where(total >= 0, 1, -1) + d.output_offset, d)
    raw = quant.rounding_divide_by_pot_x86(total, -d.output_shift) + d.output_offset
    return _clamp(raw, d)


# the lanes of the compiler's vectorisation of litert's reference SUB loops (SSE, int32 × 4)
SUB_LANES = 4


def sub_vector_mask(shape_a, shape_b, int16: bool):
    """Which outputs of a SUB litert computes in its compiler-vectorised loop (where only an output
    multiplier > 1 makes a difference).  Equal shapes (after padding with leading 1s): the whole
    tensor is one run.  A broadcast: none for uint8 / int8; for int16 every run of the trailing
    dimensions the two inputs share (their product; 1 when the last dimension is broadcast).  In
    each run the first ⌊run/4⌋·4 values are vectorised, the rest go through the scalar loop.
    Measured on ai-edge-litert 2.3.0 (tests/interpreter/quant/test_quantized_elementwise.py)."""
    n = max(len(shape_a), len(shape_b))
    ea = (1,) * (n - len(shape_a)) + tuple(shape_a)
    eb = (1,) * (n - len(shape_b)) + tuple(shape_b)
    out = tuple(max(x, y) for x, y in zip(ea, eb))
    size = int(np.prod(out, dtype=np.int64))
    if ea == eb:
        run = size
    elif not int16:
        return None
    else:
        run = 1
        for x, y in zip(reversed(ea), reversed(eb)):
            if x != y:
                break
            run *= x
    pos = np.arange(size, dtype=np.int64) % max(run, 1)
    return (pos < run // SUB_LANES * SUB_LANES).reshape(out)


def add_sub_int8(a, b, d, sign: int) -> np.ndarray:
    """Elementwise int8 ADD (sign +1) or SUB (sign −1), exactly as reference_integer_ops::Add."""
    return add_sub_general(a, b, d, sign)


def add_sub_pot_int16(a, b, d, sign: int) -> np.ndarray:
    """The power-of-two int16 path: shift the smaller-scale input, saturating add / subtract, clamp."""
    x = quant.rounding_divide_by_pot_array(np.asarray(a).astype(np.int64), -d.input1_shift)
    y = quant.rounding_divide_by_pot_array(np.asarray(b).astype(np.int64), -d.input2_shift)
    return _clamp(np.clip(x + sign * y, -32768, 32767), d)


def mul_general(a, b, d) -> np.ndarray:
    prod = (np.asarray(a).astype(np.int64) + d.input1_offset) * (np.asarray(b).astype(np.int64) + d.input2_offset)
    raw = quant.multiply_by_quantized_multiplier_array(quant.wrap_bits(prod, 32), d.output_multiplier,
                                                       d.output_shift) + d.output_offset
    return _clamp(raw, d)


mul_int8 = mul_general


def mul_8bit_vector(a, b, d, saturate16: bool = True) -> np.ndarray:
    """litert's NEON MUL for uint8 / int8: saturate (``saturate16``) or wrap the requantized product
    to int16, add the zero point wrapping in int16, saturate to the 8-bit type, activation clamp."""
    prod = (np.asarray(a).astype(np.int64) + d.input1_offset) * (np.asarray(b).astype(np.int64) + d.input2_offset)
    r = quant.multiply_by_quantized_multiplier_array(quant.wrap_bits(prod, 32), d.output_multiplier, d.output_shift)
    r16 = np.clip(r, -32768, 32767) if saturate16 else quant.wrap_bits(r, 16)
    v = quant.wrap_bits(r16 + d.output_offset, 16)
    lo, hi = TYPE_RANGE[np.dtype(d.output_dtype)]
    return _clamp(np.clip(v, lo, hi), d)


# (elementwise loop, scalar-broadcast loop) widths of litert's NEON 8-bit kernels
VECTOR_BLOCKS = {("add", I8): (16, 8), ("add", U8): (8, 8), ("mul", I8): (16, 16), ("mul", U8): (8, 8)}


def _vshl(x, n: int):
    """NEON ``vshl`` by a signed count: left for n ≥ 0, arithmetic (truncating) right otherwise."""
    return x << n if n >= 0 else x >> -n


def add_8bit_vector(a, b, d, scalar_broadcast: bool = False) -> np.ndarray:
    """litert's NEON ADD for uint8 / int8 (``AddElementwise`` / ``AddScalarBroadcast``): the input
    scaling's right shift truncates (uint8, and int8's scalar-broadcast loop) or is folded into the
    left shift (int8 elementwise); the sum is narrowed to int16 by truncation."""
    srdhm = quant.srdhm_array
    x = np.asarray(a).astype(np.int64) + d.input1_offset
    y = np.asarray(b).astype(np.int64) + d.input2_offset
    if scalar_broadcast or d.dtype == "uint8":   # truncating right shift after the multiply
        sx = srdhm(quant.wrap_bits(x << d.left_shift, 32), d.input1_multiplier) >> -d.input1_shift
        sy = srdhm(quant.wrap_bits(y << d.left_shift, 32), d.input2_multiplier) >> -d.input2_shift
    else:                                      # the input shift folded into the left shift (vshl)
        sx = srdhm(quant.wrap_bits(_vshl(x, d.left_shift + d.input1_shift), 32), d.input1_multiplier)
        sy = srdhm(quant.wrap_bits(_vshl(y, d.left_shift + d.input2_shift), 32), d.input2_multiplier)
    r = quant.rounding_divide_by_pot_array(srdhm(quant.wrap_bits(sx + sy, 32), d.output_multiplier),
                                           -d.output_shift)
    v = quant.wrap_bits(quant.wrap_bits(r, 16) + d.output_offset, 16)
    lo, hi = TYPE_RANGE[np.dtype(d.output_dtype)]
    return _clamp(np.clip(v, lo, hi), d)


def vector_8bit(kind: str, a, b, d, scalar_broadcast: bool) -> np.ndarray:
    if kind == "add":
        return add_8bit_vector(a, b, d, scalar_broadcast)
    return mul_8bit_vector(a, b, d, not (d.dtype == "uint8" and scalar_broadcast))


# litert's int16 ADD (general scales, no broadcast) takes this many values per vector-loop step
INT16_ADD_BLOCK = 16


def add_int16_vector(a, b, d) -> np.ndarray:
    """litert's vector loop of the general-scale int16 ADD (``AddElementwiseInt16``, NEON compiled
    for x86 through NEON_2_SSE).  Each input's rescale shifts by ``left_shift + input_shift`` in
    one go (``vshl``: left when ≥ 0, else an arithmetic right shift that truncates) and then takes
    one SRDHM — one rounding where the reference rounds twice (SRDHM, then a rounding right shift).
    The sum is requantized as in the reference, the zero point added and the clamp applied in int32;
    narrowing to int16 afterwards changes nothing."""
    srdhm = quant.srdhm_array
    x = np.asarray(a).astype(np.int64) + d.input1_offset
    y = np.asarray(b).astype(np.int64) + d.input2_offset
    sx = srdhm(quant.wrap_bits(_vshl(x, d.left_shift + d.input1_shift), 32), d.input1_multiplier)
    sy = srdhm(quant.wrap_bits(_vshl(y, d.left_shift + d.input2_shift), 32), d.input2_multiplier)
    r = quant.rounding_divide_by_pot_array(srdhm(quant.wrap_bits(sx + sy, 32), d.output_multiplier),
                                           -d.output_shift)
    return _clamp(r + d.output_offset, d)


def int16_add_vector_mask(shape_a, shape_b):
    """Which outputs litert's int16 ADD computes in its vector loop: with equal shapes (after
    padding the shorter one with leading 1s, as ``ProcessBroadcastShapes`` compares them) the first
    ⌊size/16⌋·16 values, the rest in the exact scalar loop; any broadcast runs the reference
    ``BroadcastAdd6DSlow`` (None)."""
    n = max(len(shape_a), len(shape_b))
    ea = (1,) * (n - len(shape_a)) + tuple(shape_a)
    eb = (1,) * (n - len(shape_b)) + tuple(shape_b)
    if ea != eb:
        return None
    size = int(np.prod(ea, dtype=np.int64))
    return (np.arange(size) < size // INT16_ADD_BLOCK * INT16_ADD_BLOCK).reshape(ea)


def neon_block_mask(shape_a, shape_b, block: int, scalar_block: int | None = None):
    """Which outputs TFLite's optimized 8-bit ADD / MUL compute in a vector loop (``block`` wide
    for the elementwise loop, ``scalar_block`` for the scalar-broadcast loop), and whether that
    loop is the scalar-broadcast one.

    ``ProcessBroadcastShapes`` decides: equal shapes → one elementwise run over the whole tensor;
    a broadcast that collapses to the "five-fold" pattern → elementwise runs of the innermost
    common size y4 (or scalar-broadcast runs of y3 when y4 = 1); anything else → the reference
    loop (None: no vector outputs).  In each run the first ⌊len/block⌋·block values are vector.
    """
    n = max(len(shape_a), len(shape_b))
    ea = (1,) * (n - len(shape_a)) + tuple(shape_a)
    eb = (1,) * (n - len(shape_b)) + tuple(shape_b)
    out = tuple(max(x, y) for x, y in zip(ea, eb))
    size = int(np.prod(out, dtype=np.int64))
    scalar = False
    if ea == eb:
        run = size
    else:
        first = None
        for i in range(n - 1, -1, -1):
            if ea[i] == eb[i]:
                continue
            if ea[i] == 1:
                first = True
            elif eb[i] == 1:
                first = False
            break
        if first is None:
            return None
        sa, sb = (ea, eb) if first else (eb, ea)
        y = [1, 1, 1, 1, 1]
        i = n - 1
        while i >= 0 and sa[i] == sb[i]:
            y[4] *= sb[i]
            i -= 1
        while i >= 0 and sa[i] == 1:
            y[3] *= sb[i]
            i -= 1
        while i >= 0 and sa[i] == sb[i]:
            y[2] *= sa[i]
            i -= 1
        while i >= 0 and sb[i] == 1:
            y[1] *= sa[i]
            i -= 1
        while i >= 0 and sa[i] == sb[i]:
            y[0] *= sb[i]
            i -= 1
        if i >= 0:
            return None
        run = y[4] if y[4] > 1 else y[3]
        scalar = y[4] == 1
        if scalar and scalar_block is not None:
            block = scalar_block
    pos = np.arange(size, dtype=np.int64) % max(run, 1)
    return (pos < run // block * block).reshape(out), scalar


def mul_int16_to_8bit(a, b, d) -> np.ndarray:
    """``reference_integer_ops::Mul`` int16 × int16 → int8 / uint8: Q0.15 product, >> 8 rounding."""
    p = quant.fp_srdhm(np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64), 16)
    r = quant.rounding_divide_by_pot_array(p, 8)
    r = np.clip(r, d.output_activation_min - d.output_offset, d.output_activation_max - d.output_offset)
    return (r + d.output_offset).astype(d.output_dtype)


def plain_int16(a, b, d, op: str) -> np.ndarray:
    """int16 without quantization: the C expression wraps to int16, then the activation range."""
    a = np.asarray(a).astype(np.int64)
    b = np.asarray(b).astype(np.int64)
    v = a + b if op == "add" else a * b
    return _clamp(quant.wrap_bits(v, 16), d)


def quantized_reference(kind: str, a, b, d) -> np.ndarray:
    """The numpy arithmetic of a quantized ADD / SUB / MUL (``kind``), on broadcastable arrays."""
    if d.path == "plain int16":
        return plain_int16(a, b, d, kind)
    if d.path == "pot_int16":
        return add_sub_pot_int16(a, b, d, 1 if kind == "add" else -1)
    if d.path == "int16→8bit":
        return mul_int16_to_8bit(a, b, d)
    if d.vector_mask is not None and kind == "add" and d.dtype == "int16":
        # no broadcast, and the vector loop takes a prefix: compute each part once
        n = int(np.count_nonzero(d.vector_mask))
        x, y = (np.asarray(v).reshape(-1) for v in np.broadcast_arrays(a, b))
        out = np.empty(x.size, np.dtype(d.output_dtype))
        out[:n] = add_int16_vector(x[:n], y[:n], d)
        out[n:] = add_sub_general(x[n:], y[n:], d, 1)
        return out.reshape(d.vector_mask.shape)
    exact = mul_general(a, b, d) if kind == "mul" else add_sub_general(a, b, d, 1 if kind == "add" else -1)
    if d.vector_mask is not None:
        if kind == "sub":
            vec = add_sub_general(a, b, d, -1, vectorized=True)
        else:
            vec = vector_8bit(kind, a, b, d, d.vector_scalar_broadcast)
        return np.where(d.vector_mask, np.broadcast_to(vec, exact.shape), exact).astype(exact.dtype)
    return exact


def pair_table(dtype, fn) -> np.ndarray:
    """``fn(a, b)`` for every pair of 8-bit values, at index (pattern(a) << 8) | pattern(b)."""
    v = all_values(dtype)
    return np.asarray(fn(np.repeat(v, 256), np.tile(v, 256)))


def pair_lookup(a: np.ndarray, b: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    ia = bit_pattern(a).astype(np.intp) << 8
    ib = bit_pattern(b).astype(np.intp)
    np.take(table, ia + ib, out=out)


def has_scale(context, t: int) -> bool:
    q = context.tensor_meta(t).quantization
    return q is not None and len(tuple(q.scale or ())) > 0


def integer_activation_range(code: int, dtype) -> tuple[int, int]:
    """``CalculateActivationRange<T>`` for integer T (plain, unquantized integers)."""
    lo, hi = TYPE_RANGE[np.dtype(dtype)]
    code = int(code)
    if code == 1:
        return 0, hi
    if code == 3:
        return 0, 6
    if code == 2:
        return -1, 1
    return lo, hi


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
        qmin, qmax = TYPE_RANGE[out_dt]
        lo, hi = quant.activation_range_quantized(code, so, zo, qmin, qmax)
        context.set_output(y, out, out_dt)
        return cls(**common, input1_offset=-z1, input2_offset=-z2, output_offset=zo, output_activation_min=lo,
                   output_activation_max=hi, output_dtype=str(out_dt), path="int16→8bit")
    if out_dt != dt:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): {dt} inputs with a {out_dt} output; "
                                 f"TFLite needs the output type of the inputs")
    so, zo = quant.tensor_scale_zp(context, y)
    qmin, qmax = TYPE_RANGE[dt]
    lo, hi = quant.activation_range_quantized(code, so, zo, qmin, qmax)
    context.set_output(y, out, dt)
    common.update(input1_offset=-z1, input2_offset=-z2, output_offset=zo, output_activation_min=lo,
                  output_activation_max=hi, output_dtype=str(dt))
    if dt == I16:
        require_zero_points(node, "int16", ("input 1", z1), ("input 2", z2), ("output", zo))

    if kind == "mul":
        with np.errstate(over="ignore"):
            real = float(np.float32(np.float32(s1) * np.float32(s2)) / np.float32(so))   # float32, then widened
        m, sh = quant.checked_quantize_multiplier(node, "output multiplier (s1 · s2 / s_out, float32)", real)
        return cls(**common, output_multiplier=m, output_shift=sh, real_output_multiplier=real)

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
    return cls(**common, left_shift=left, input1_multiplier=m1, input1_shift=sh1, input2_multiplier=m2,
               input2_shift=sh2, output_multiplier=mo, output_shift=sho, real_input1_multiplier=r1,
               real_input2_multiplier=r2, real_output_multiplier=ro)


# the name the int8-only version used
def prepare_int8(kernel, context, node, out, sa, sb) -> BinaryQuantizedData:
    return prepare_quantized(kernel, context, node, out, sa, sb, I8)


@opdata
class BinaryData(OpData):
    output_shape: tuple
    broadcast: bool
    activation: str
    output_activation_min: float
    output_activation_max: float


class BinaryKernel(Kernel):
    """Subclasses set ``ufunc`` (np.add, ...), ``dtypes`` (plain types) and ``int8_kind``
    ("add" | "sub" | "mul") with ``qtypes`` (the quantized types TFLite's kernel takes)."""

    ufunc = None
    dtypes = (F32,)
    int8_kind = None
    qtypes = ()

    def prepare(self, context, node):
        a, b = node.inputs[0], node.inputs[1]
        dt = context.expect_dtype(node, a, tuple(self.dtypes) + tuple(self.qtypes), "input 0")
        if context.dtype(b) != dt:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): inputs have types {dt} and "
                                     f"{context.dtype(b)}")
        sa, sb = context.shape(a), context.shape(b)
        try:
            out = tuple(np.broadcast_shapes(sa, sb))
        except ValueError:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): shapes {list(sa)} and {list(sb)} do "
                                     f"not broadcast") from None
        if dt in tuple(np.dtype(q) for q in self.qtypes):
            d = prepare_quantized(self, context, node, out, sa, sb, dt)
            if dt.itemsize == 1:
                kind = self.int8_kind
                d = dataclasses.replace(d, table=pair_table(dt, lambda x, y: quantized_reference(kind, x, y, d)),
                                        impl="table")
                if (kind, dt) in VECTOR_BLOCKS and d.path == "general":
                    blocks = neon_block_mask(sa, sb, *VECTOR_BLOCKS[(kind, dt)])
                    if blocks is not None and blocks[0].any():
                        mask, scalar = blocks
                        vec = pair_table(dt, lambda x, y: vector_8bit(kind, x, y, d, scalar))
                        if (vec != d.table).any():
                            d = dataclasses.replace(d, vector_table=vec, vector_mask=mask,
                                                    vector_scalar_broadcast=scalar)
            elif self.int8_kind == "add" and d.path == "general":
                mask = int16_add_vector_mask(sa, sb)
                if mask is not None and mask.any():
                    d = dataclasses.replace(d, vector_mask=mask)
            if self.int8_kind == "sub" and d.path == "general" and d.output_shift > 0:
                mask = sub_vector_mask(sa, sb, dt == I16)
                if mask is not None and mask.any():
                    d = dataclasses.replace(d, vector_mask=mask)
                    if d.table is not None:
                        d = dataclasses.replace(d, vector_table=pair_table(
                            dt, lambda x, y: add_sub_general(x, y, d, -1, vectorized=True)))
            return d
        code = node.params.get("fused_activation_function", 0)
        lo, hi = activation_range(code)
        if dt != F32 and code in (1, 2, 3):
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): fused activation on {dt} is not "
                                     f"implemented")
        context.set_output(node.outputs[0], out, dt)
        return BinaryData(out, sa != sb, activation_name(code), lo, hi)

    def invoke(self, context, node, d):
        t = context.tensors
        out = t[node.outputs[0]]
        a, b = t[node.inputs[0]], t[node.inputs[1]]
        if isinstance(d, BinaryQuantizedData):
            if d.table is not None:
                aa, bb = np.broadcast_arrays(a, b)
                pair_lookup(aa, bb, d.table, out)
                if d.vector_mask is not None:
                    vec = np.empty_like(out)
                    pair_lookup(aa, bb, d.vector_table, vec)
                    np.copyto(out, vec, where=d.vector_mask)
            else:
                out[...] = quantized_reference(self.int8_kind, a, b, d)
            return
        with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
            self.ufunc(a, b, out=out)
        apply_activation(out, d.output_activation_min, d.output_activation_max)

    def invoke_reference(self, context, node, d):
        t = context.tensors
        out = t[node.outputs[0]]
        a, b = t[node.inputs[0]], t[node.inputs[1]]
        if isinstance(d, BinaryQuantizedData):
            out[...] = quantized_reference(self.int8_kind, a, b, d)
            return
        with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
            self.ufunc(a, b, out=out)
        apply_activation(out, d.output_activation_min, d.output_activation_max)

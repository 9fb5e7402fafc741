"""The quantized elementwise case table of tests/interpreter/quant/test_quantized_elementwise.py.

Shared with the explain tests (tests/interpreter/explain/), which run the same cases.
"""

from __future__ import annotations

import zlib

import numpy as np

from helpers import quantized_cases
from workbench.interpreter import Interpreter
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import (
    AddOptions,
    DivOptions,
    GeluOptions,
    LeakyReluOptions,
    ModelBuilder,
    MulOptions,
    SoftmaxOptions,
    SubOptions,
)
from workbench.schema import BuiltinOperator as B
from workbench.versioning import update_versions

U8, I8, I16, I32, F32 = (np.dtype(t) for t in (np.uint8, np.int8, np.int16, np.int32, np.float32))


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(scale, zp, dim=0):
    return {"scale": scale, "zero_point": zp, "quantized_dimension": dim}


def random_ints(rng, dt, shape):
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dt)


def every_value(dt, rng, tail=37, lo=None):
    """Every value of an 8-bit type (or int16), then ``tail`` random ones (an odd total size)."""
    info = np.iinfo(dt)
    start = info.min if lo is None else lo
    v = np.arange(start, info.max + 1)
    return np.concatenate([v, rng.integers(start, info.max + 1, tail)]).astype(dt).reshape(1, -1)


def every_pair(dt, tail=13):
    """Every (a, b) pair of an 8-bit type, then ``tail`` more pairs (not a multiple of 8 or 16)."""
    info = np.iinfo(dt)
    v = np.arange(info.min, info.max + 1)
    a = np.concatenate([np.repeat(v, v.size), v[:tail]])
    b = np.concatenate([np.tile(v, v.size), v[7:7 + tail]])
    return a.astype(dt).reshape(1, -1), b.astype(dt).reshape(1, -1)


def unary(op, dt, qi, qo, options=None, out_dt=None, lo=None, shape=None):
    def build(name):
        rng = rng_for(name)
        x = every_value(dt, rng, lo=lo) if shape is None else random_ints(rng, dt, shape)
        if lo is not None and shape is not None:
            x = np.maximum(x, lo).astype(dt)
        b = ModelBuilder()
        t = b.input("x", x.shape, dt, quantization=None if qi is None else q(*qi))
        y = b.tensor("y", x.shape, out_dt or dt, quantization=None if qo is None else q(*qo))
        b.op(op, [t], [y], options)
        b.output(y)
        return b, {"x": x}
    return build


def binary(op, dt, sa, sb, qa, qb, qo, options=None, out_dt=None, b_dt=None, const_b=False, nonzero_b=None):
    """``sa`` None: every pair of an 8-bit type.  ``nonzero_b``: b avoids this raw value (DIV)."""
    def build(name):
        rng = rng_for(name)
        bdt = b_dt or dt
        if sa is None:
            a, bv = every_pair(dt)
        else:
            a, bv = random_ints(rng, dt, sa), random_ints(rng, bdt, sb)
        if nonzero_b is not None:
            bv = np.where(bv == nonzero_b, nonzero_b + (1 if nonzero_b < np.iinfo(bdt).max else -1), bv).astype(bdt)
        out = tuple(np.broadcast_shapes(a.shape, bv.shape))
        b = ModelBuilder()
        ta = b.input("a", a.shape, dt, quantization=None if qa is None else q(*qa))
        if const_b:
            tb = b.constant("b", bv, quantization=None if qb is None else q(*qb))
        else:
            tb = b.input("b", bv.shape, bdt, quantization=None if qb is None else q(*qb))
        y = b.tensor("y", out, out_dt or dt, quantization=None if qo is None else q(*qo))
        b.op(op, [ta, tb], [y], options)
        b.output(y)
        return b, ({"a": a} if const_b else {"a": a, "b": bv})
    return build


def scalar_broadcast_pairs(op, dt, qa, qb, qo, options=None, swap=False):
    """Every value of ``a`` (shape (256, 1)) against every value of ``b`` (shape (256, 259)): each
    row is one of litert's scalar-broadcast runs, with a tail."""
    def build(name):
        v = np.arange(np.iinfo(dt).min, np.iinfo(dt).max + 1)
        a = v.astype(dt).reshape(256, 1)
        bv = np.tile(np.concatenate([v, v[:3]]), (256, 1)).astype(dt)
        if swap:
            a, bv = bv, a
        b = ModelBuilder()
        ta = b.input("a", a.shape, dt, quantization=q(*qa))
        tb = b.input("b", bv.shape, dt, quantization=q(*qb))
        y = b.tensor("y", (256, 259), dt, quantization=q(*qo))
        b.op(op, [ta, tb], [y], options)
        b.output(y)
        return b, {"a": a, "b": bv}
    return build


def float_quantize(dt, shape, qo, per_channel_axis=None):
    def build(name):
        rng = rng_for(name)
        scale = float(np.max(qo[0]))
        xs = (rng.uniform(-1, 1, shape) * scale * (40000 if dt == I16 else 150)).astype(np.float32)
        flat = xs.reshape(-1)
        flat[:12] = ((np.arange(12) - 6 + 0.5) * np.float32(scale)).astype(np.float32)      # ties
        flat[-3:] = (np.array([-2.5, 2.5, 3.5]) * np.float32(scale)).astype(np.float32)      # ties in the tail
        b = ModelBuilder()
        x = b.input("x", shape, np.float32)
        y = b.tensor("y", shape, dt, quantization=q(*qo) if per_channel_axis is None else q(*qo, per_channel_axis))
        b.op(B.QUANTIZE, [x], [y])
        b.output(y)
        return b, {"x": xs}
    return build


def requantize(src, dst, qi, qo, n=203, ties=False):
    def build(name):
        rng = rng_for(name)
        if ties:                        # values whose requantization ends exactly at .5
            x = (np.resize(np.array([-2, -6, -10, 2, 6, -14]), n) + qi[1]).astype(src).reshape(1, n)
        elif src == I32:
            x = rng.integers(-300000, 300000, (1, n)).astype(src)
        else:
            x = random_ints(rng, src, (1, n))
        b = ModelBuilder()
        t = b.input("x", x.shape, src, quantization=q(*qi))
        y = b.tensor("y", x.shape, dst, quantization=q(*qo))
        b.op(B.QUANTIZE, [t], [y])
        b.output(y)
        return b, {"x": x}
    return build


def dequantize(dt, shape, qi):
    def build(name):
        x = random_ints(rng_for(name), dt, shape)
        b = ModelBuilder()
        t = b.input("x", shape, dt, quantization=q(*qi))
        y = b.tensor("y", shape)
        b.op(B.DEQUANTIZE, [t], [y])
        b.output(y)
        return b, {"x": x}
    return build


SM16 = (1 / 32768, 0)
RELU6 = Act.RELU6

CASES = {
    # --- the LUT family (uint8 / int8 / int16) -------------------------------------------------------
    "logistic_uint8": unary(B.LOGISTIC, U8, (0.05, 120), (1 / 256, 0)),
    "logistic_uint8_zp_ignored": unary(B.LOGISTIC, U8, (0.1, 3), (1 / 256, 10)),
    "logistic_int16_pot": unary(B.LOGISTIC, I16, (2 ** -12, 0), SM16),
    "logistic_int16_general": unary(B.LOGISTIC, I16, (0.0003, 0), SM16),
    "logistic_int16_coarse": unary(B.LOGISTIC, I16, (0.002, 0), SM16),
    "tanh_uint8": unary(B.TANH, U8, (0.03, 128), (1 / 128, 128)),
    "tanh_int16_pot": unary(B.TANH, I16, (2 ** -12, 0), SM16),
    "tanh_int16_pot_shift1": unary(B.TANH, I16, (2 ** -13, 0), SM16),
    "tanh_int16_general": unary(B.TANH, I16, (0.0007, 0), SM16),
    "elu_int8": unary(B.ELU, I8, (0.05, -10), (0.03, 20)),
    "gelu_uint8": unary(B.GELU, U8, (0.05, 128), (0.03, 20), GeluOptions(approximate=False)),
    "gelu_uint8_approximate": unary(B.GELU, U8, (0.05, 128), (0.03, 20), GeluOptions(approximate=True)),
    "gelu_int8": unary(B.GELU, I8, (0.04, -5), (0.025, -100), GeluOptions(approximate=False)),
    "gelu_int8_approximate": unary(B.GELU, I8, (0.04, -5), (0.025, -100), GeluOptions(approximate=True)),
    "gelu_int16": unary(B.GELU, I16, (0.0002, 5), (0.0001, -3), GeluOptions(approximate=False)),
    "gelu_int16_approximate": unary(B.GELU, I16, (0.0002, 0), (0.0001, 0), GeluOptions(approximate=True)),
    "exp_int8": unary(B.EXP, I8, (0.02, 0), (0.05, -128)),
    "exp_int16": unary(B.EXP, I16, (0.0002, 0), (0.0005, 0)),
    "log_int8": unary(B.LOG, I8, (0.05, -128), (0.04, 30)),
    "log_int16": unary(B.LOG, I16, (0.001, 0), (0.0004, 0)),
    "rsqrt_int8": unary(B.RSQRT, I8, (0.05, -10), (0.04, -128), lo=-10),
    "rsqrt_int8_tiny_scales": unary(B.RSQRT, I8, (0.001, -128), (0.2, 0)),
    "rsqrt_int16": unary(B.RSQRT, I16, (0.001, 0), (0.0004, 0), lo=0),
    "sqrt_int8": unary(B.SQRT, I8, (0.05, -10), (0.04, -128), lo=-10),
    "sqrt_int8_high_zero_point": unary(B.SQRT, I8, (0.013, 100), (0.02, 50), lo=100),
    "sqrt_int16": unary(B.SQRT, I16, (0.001, 0), (0.0004, 0), lo=0),
    # --- the RELU family --------------------------------------------------------------------------
    "relu_uint8": unary(B.RELU, U8, (0.05, 100), (0.03, 20)),
    "relu_int16": unary(B.RELU, I16, (0.001, 0), (0.0007, 0)),
    "relu_int16_multiplier_below_one": unary(B.RELU, I16, (0.0001, 0), (0.0003, 0)),
    "relu6_uint8": unary(B.RELU6, U8, (0.05, 255), (0.03, 0)),
    "relu6_int16": unary(B.RELU6, I16, (0.001, 0), (0.0007, 0)),
    "relu_n1_to_1_uint8": unary(B.RELU_N1_TO_1, U8, (0.05, 100), (0.03, 20)),
    "relu_n1_to_1_int8": unary(B.RELU_N1_TO_1, I8, (0.05, -10), (0.02, -128)),
    "relu_0_to_1_uint8": unary(B.RELU_0_TO_1, U8, (0.05, 100), (0.03, 20)),
    "relu_0_to_1_int8": unary(B.RELU_0_TO_1, I8, (0.05, 127), (0.004, -128)),
    "hard_swish_uint8": unary(B.HARD_SWISH, U8, (0.05, 100), (0.03, 40)),
    "hard_swish_uint8_wide": unary(B.HARD_SWISH, U8, (0.2, 20), (0.1, 0)),
    # --- LEAKY_RELU, ABS, NEG ----------------------------------------------------------------------
    "leaky_relu_uint8": unary(B.LEAKY_RELU, U8, (0.05, 100), (0.03, 120), LeakyReluOptions(alpha=0.2)),
    "leaky_relu_int8": unary(B.LEAKY_RELU, I8, (0.05, -10), (0.03, 5), LeakyReluOptions(alpha=0.2)),
    "leaky_relu_int8_alpha_above_one": unary(B.LEAKY_RELU, I8, (0.05, -10), (0.03, 5), LeakyReluOptions(alpha=1.7)),
    "leaky_relu_uint8_negative_alpha": unary(B.LEAKY_RELU, U8, (0.05, 100), (0.03, 120),
                                             LeakyReluOptions(alpha=-0.3)),
    "leaky_relu_int16": unary(B.LEAKY_RELU, I16, (0.001, 0), (0.0008, 0), LeakyReluOptions(alpha=0.2)),
    "leaky_relu_int16_negative_alpha": unary(B.LEAKY_RELU, I16, (0.001, 0), (0.0008, 0),
                                             LeakyReluOptions(alpha=-0.3)),
    "abs_int8": unary(B.ABS, I8, (0.05, -10), (0.04, -128)),
    "abs_int8_same_scale": unary(B.ABS, I8, (0.05, 3), (0.05, -100)),
    "abs_int16": unary(B.ABS, I16, (0.001, 0), (0.0004, 0)),
    "abs_int16_plain": unary(B.ABS, I16, None, None),
    "neg_int8": unary(B.NEG, I8, (0.1, 0), (0.1, 0)),
    "neg_int16": unary(B.NEG, I16, (0.1, 0), (0.1, 0)),
    # --- SOFTMAX / LOG_SOFTMAX ---------------------------------------------------------------------
    "softmax_uint8": unary(B.SOFTMAX, U8, (0.05, 128), (1 / 256, 0), SoftmaxOptions(beta=0.7), shape=(2, 3, 37)),
    "softmax_uint8_zero_point_ignored": unary(B.SOFTMAX, U8, (0.1, 5), (1 / 256, 10), SoftmaxOptions(beta=1.0),
                                              shape=(3, 20)),
    "softmax_uint8_to_int16": unary(B.SOFTMAX, U8, (0.05, 128), SM16, SoftmaxOptions(beta=1.0), out_dt=I16,
                                    shape=(2, 37)),
    "softmax_int8_to_int16": unary(B.SOFTMAX, I8, (0.1, 5), SM16, SoftmaxOptions(beta=1.0), out_dt=I16,
                                   shape=(3, 10)),
    "softmax_int8_to_int16_zp": unary(B.SOFTMAX, I8, (0.1, 5), (1 / 65536, -32768), SoftmaxOptions(beta=1.0),
                                      out_dt=I16, shape=(3, 10)),
    "softmax_int16": unary(B.SOFTMAX, I16, (0.001, 0), SM16, SoftmaxOptions(beta=1.0), shape=(3, 40)),
    "softmax_int16_beta_4d": unary(B.SOFTMAX, I16, (0.0003, 0), SM16, SoftmaxOptions(beta=0.8), shape=(2, 2, 3, 50)),
    "softmax_int16_fine": unary(B.SOFTMAX, I16, (0.00005, 0), SM16, SoftmaxOptions(beta=1.0), shape=(4, 17)),
    "log_softmax_uint8": unary(B.LOG_SOFTMAX, U8, (0.1, 100), (16 / 256, 255), shape=(3, 20)),
    "log_softmax_int8": unary(B.LOG_SOFTMAX, I8, (0.03, -20), (16 / 256, 127), shape=(2, 2, 57)),
    # --- QUANTIZE / DEQUANTIZE ----------------------------------------------------------------------
    "quantize_float_to_uint8": float_quantize(U8, (3, 111), (0.0173, 120)),
    "quantize_float_to_int16": float_quantize(I16, (3, 111), (0.00037, 0)),
    "quantize_float_to_int16_zp": float_quantize(I16, (2, 101), (0.00037, 33)),
    "quantize_float_per_channel_int8": float_quantize(I8, (3, 5),
                                                      ([0.01, 0.02, 0.015, 0.03, 0.05], [0, -3, 5, 0, 1]), 1),
    "quantize_float_per_channel_uint8": float_quantize(U8, (3, 5), ([0.01, 0.02, 0.015], [128, 3, 250]), 0),
    "quantize_float_per_channel_int16": float_quantize(I16, (3, 5), ([1e-4, 2e-4, 3e-4, 5e-5, 1e-3], [0] * 5), 1),
    "requantize_int8_to_uint8": requantize(I8, U8, (0.05, 4), (0.03, 130)),
    "requantize_int8_to_uint8_shift_only": requantize(I8, U8, (0.05, 4), (0.05, 132)),
    "requantize_uint8_to_uint8": requantize(U8, U8, (0.05, 4), (0.0213, 200)),
    "requantize_uint8_to_int8": requantize(U8, I8, (0.01, 28), (0.04, -100)),
    "requantize_int8_ties": requantize(I8, I8, (0.01, 0), (0.04, 0), n=19, ties=True),
    "requantize_uint8_ties": requantize(U8, U8, (0.01, 100), (0.04, 100), n=37, ties=True),
    "requantize_int16_to_int8": requantize(I16, I8, (0.001, 7), (0.05, 3)),
    "requantize_int16_to_int16": requantize(I16, I16, (0.001, 0), (0.0003, 0)),
    "requantize_int16_to_int32": requantize(I16, I32, (0.001, 0), (0.00001, 0)),
    "requantize_int32_to_int8": requantize(I32, I8, (0.001, 0), (0.5, 3)),
    "requantize_int32_to_int16": requantize(I32, I16, (0.001, 10), (0.02, 0)),
    "dequantize_uint8": dequantize(U8, (2, 165), (0.0371, 120)),
    "dequantize_int16": dequantize(I16, (2, 165), (0.000371, 0)),
    # --- ADD / SUB ---------------------------------------------------------------------------------
    "add_uint8_every_pair": binary(B.ADD, U8, None, None, (0.05, 3), (0.02, 200), (0.06, 128), AddOptions()),
    "add_uint8_broadcast_relu6": binary(B.ADD, U8, (2, 3, 8), (8,), (0.05, 3), (0.02, 200), (0.03, 0),
                                        AddOptions(fused_activation_function=RELU6)),
    "add_uint8_scalar_broadcast": binary(B.ADD, U8, (5, 40), (5, 1), (0.05, 0), (0.02, 255), (0.06, 128), AddOptions()),
    "add_uint8_int16_overflow": binary(B.ADD, U8, None, None, (0.05, 3), (0.02, 200), (2e-7, 4), AddOptions()),
    "add_uint8_overflow_scalar_broadcast": binary(B.ADD, U8, (1, 1), (3, 20), (0.05, 3), (0.02, 200), (2e-5, 4),
                                                  AddOptions()),
    "add_int8_int16_overflow": binary(B.ADD, I8, None, None, (0.05, 3), (0.02, -100), (3e-7, 4), AddOptions()),
    "add_int8_overflow_broadcast": binary(B.ADD, I8, (4, 1, 21), (1, 5, 21), (0.05, 3), (0.02, -100), (2e-5, 4),
                                          AddOptions()),
    "add_int8_overflow_scalar_broadcast": binary(B.ADD, I8, (3, 19), (1,), (0.05, 3), (0.02, -100), (2e-7, 4),
                                                 AddOptions()),
    "add_int8_scalar_broadcast_every_pair": scalar_broadcast_pairs(B.ADD, I8, (0.05, 3), (0.02, -100), (0.01, 4),
                                                                   AddOptions()),
    "add_uint8_scalar_broadcast_every_pair": scalar_broadcast_pairs(B.ADD, U8, (0.05, 3), (0.02, 200), (0.06, 128),
                                                                    AddOptions(), swap=True),
    "mul_uint8_scalar_broadcast_every_pair": scalar_broadcast_pairs(B.MUL, U8, (0.05, 3), (0.02, 200), (0.0002, 4),
                                                                    MulOptions()),
    "mul_int8_scalar_broadcast_every_pair": scalar_broadcast_pairs(B.MUL, I8, (0.05, 3), (0.02, -100), (0.0002, 4),
                                                                   MulOptions(), swap=True),
    "add_int16_general": binary(B.ADD, I16, (2, 3, 40), (2, 3, 40), (0.001, 0), (0.0007, 0), (0.0015, 0),
                                AddOptions(pot_scale_int16=False)),
    "add_int16_general_broadcast_relu": binary(B.ADD, I16, (3, 1000), (1000,), (0.0003, 0), (0.01, 0), (0.011, 0),
                                               AddOptions(pot_scale_int16=False, fused_activation_function=Act.RELU)),
    "add_int16_no_options": binary(B.ADD, I16, (4099,), (4099,), (0.01, 0), (0.01, 0), (0.00002, 0), None),
    "add_int16_pot": binary(B.ADD, I16, (2, 3, 40), (2, 3, 40), (2 ** -12, 0), (2 ** -14, 0), (2 ** -12, 0),
                            AddOptions(pot_scale_int16=True)),
    "add_int16_pot_option_general_scales": binary(B.ADD, I16, (2, 3, 40), (2, 3, 40), (0.001, 0), (0.0007, 0),
                                                  (0.0015, 0), AddOptions(pot_scale_int16=True)),
    "add_int16_plain_relu": binary(B.ADD, I16, (3, 40), (3, 40), None, None, None,
                                   AddOptions(fused_activation_function=Act.RELU)),
    "add_int16_plain_relu6": binary(B.ADD, I16, (3, 40), (40,), None, None, None,
                                    AddOptions(fused_activation_function=RELU6)),
    "sub_uint8_every_pair": binary(B.SUB, U8, None, None, (0.05, 3), (0.02, 200), (0.01, 4), SubOptions()),
    "sub_uint8_broadcast_relu6": binary(B.SUB, U8, (2, 3, 8), (8,), (0.05, 3), (0.02, 200), (0.03, 0),
                                        SubOptions(fused_activation_function=RELU6)),
    "sub_uint8_tiny_output_scale": binary(B.SUB, U8, None, None, (0.05, 3), (0.02, 200), (2e-7, 4), SubOptions()),
    "sub_int8_output_multiplier_above_one": binary(B.SUB, I8, None, None, (0.05, 3), (0.02, -7), (3.5e-8, 0),
                                                   SubOptions()),
    "sub_uint8_output_multiplier_above_one": binary(B.SUB, U8, (4, 8), (4, 8), (0.05, 3), (0.05, 200), (4e-8, 100),
                                                    SubOptions()),
    "sub_int16_output_multiplier_above_one": binary(B.SUB, I16, (3, 200), (200,), (0.001, 0), (0.001, 0),
                                                    (2e-8, 0), SubOptions(pot_scale_int16=False)),
    "sub_int16_general": binary(B.SUB, I16, (2, 3, 40), (2, 3, 40), (0.001, 0), (0.0007, 0), (0.0015, 0),
                                SubOptions(pot_scale_int16=False)),
    "sub_int16_general_broadcast": binary(B.SUB, I16, (3, 1000), (3, 1), (1e-5, 0), (3e-5, 0), (2e-5, 0),
                                          SubOptions(pot_scale_int16=False)),
    "sub_int16_pot": binary(B.SUB, I16, (2, 3, 40), (2, 3, 40), (2 ** -12, 0), (2 ** -14, 0), (2 ** -12, 0),
                            SubOptions(pot_scale_int16=True)),
    "sub_int16_pot_broadcast": binary(B.SUB, I16, (2, 3, 40), (3, 1), (2 ** -13, 0), (2 ** -11, 0), (2 ** -11, 0),
                                      SubOptions(pot_scale_int16=True)),
    # --- MUL ---------------------------------------------------------------------------------------
    "mul_uint8_every_pair": binary(B.MUL, U8, None, None, (0.05, 3), (0.02, 200), (0.0011, 4), MulOptions()),
    "mul_uint8_multiplier_above_one": binary(B.MUL, U8, None, None, (0.05, 3), (0.02, 200), (0.0002, 4),
                                             MulOptions()),
    "mul_uint8_broadcast_relu": binary(B.MUL, U8, (2, 4, 3), (1, 3), (0.05, 3), (0.02, 200), (0.0009, 30),
                                       MulOptions(fused_activation_function=Act.RELU)),
    "mul_uint8_overflow_scalar_broadcast": binary(B.MUL, U8, (5, 40), (5, 1), (0.05, 3), (0.02, 200), (0.0002, 4),
                                                  MulOptions()),
    "mul_uint8_overflow_fivefold": binary(B.MUL, U8, (2, 1, 3, 17), (2, 4, 1, 1), (0.05, 3), (0.02, 200),
                                          (0.0002, 4), MulOptions()),
    "mul_int8_multiplier_above_one": binary(B.MUL, I8, None, None, (0.05, 3), (0.02, -100), (0.0002, 4),
                                            MulOptions()),
    "mul_int8_overflow_broadcast": binary(B.MUL, I8, (2, 1, 3, 1, 19), (1, 4, 1, 5, 19), (0.05, 3), (0.02, -100),
                                          (0.0002, 4), MulOptions()),
    "mul_int16": binary(B.MUL, I16, (3, 40), (3, 40), (0.001, 0), (0.002, 0), (0.00003, 0), MulOptions()),
    "mul_int16_broadcast_n1_to_1": binary(B.MUL, I16, (3, 40), (40,), (0.001, 0), (0.002, 0), (0.00003, 0),
                                          MulOptions(fused_activation_function=Act.RELU_N1_TO_1)),
    "mul_int16_to_int8": binary(B.MUL, I16, (3, 40), (3, 40), (2 ** -15, 0), (2 ** -15, 0), (1 / 128, 5),
                                MulOptions(), out_dt=I8),
    "mul_int16_to_uint8_relu": binary(B.MUL, I16, (3, 40), (3, 40), (2 ** -15, 0), (2 ** -15, 0), (1 / 128, 130),
                                      MulOptions(fused_activation_function=Act.RELU), out_dt=U8),
    "mul_int16_plain": binary(B.MUL, I16, (3, 40), (3, 40), None, None, None, MulOptions()),
    "mul_int16_plain_relu": binary(B.MUL, I16, (3, 40), (40,), None, None, None,
                                   MulOptions(fused_activation_function=Act.RELU)),
    # --- DIV ---------------------------------------------------------------------------------------
    "div_uint8_every_pair": binary(B.DIV, U8, None, None, (0.05, 3), (0.05, 128), (0.5, 100), DivOptions(),
                                   nonzero_b=128),
    "div_uint8_broadcast_relu": binary(B.DIV, U8, (3, 40), (40,), (0.05, 3), (0.02, 128), (0.01, 100),
                                       DivOptions(fused_activation_function=Act.RELU), nonzero_b=128),
    "div_int8_every_pair": binary(B.DIV, I8, None, None, (0.05, 3), (0.05, -5), (0.5, -10), DivOptions(),
                                  nonzero_b=-5),
    "div_int8_multiplier_above_one": binary(B.DIV, I8, (3, 40), (3, 1), (0.5, 3), (0.01, -5), (0.2, -10),
                                            DivOptions(), nonzero_b=-5),
    "div_int16": binary(B.DIV, I16, (3, 40), (3, 40), (0.001, 0), (0.002, 0), (0.01, 0), DivOptions(), nonzero_b=0),
    "div_int16_asymmetric": binary(B.DIV, I16, (3, 40), (3, 40), (0.001, 10), (0.002, -20), (0.01, 5), DivOptions(),
                                   nonzero_b=-20),
    "div_int16_broadcast_relu6": binary(B.DIV, I16, (3, 40), (40,), (0.001, 0), (0.002, 0), (0.0001, 0),
                                        DivOptions(fused_activation_function=RELU6), nonzero_b=0),
    # --- MAXIMUM / MINIMUM / SQUARED_DIFFERENCE / PRELU ----------------------------------------------
    "maximum_uint8": binary(B.MAXIMUM, U8, (3, 40), (3, 40), (0.1, 0), (0.1, 0), (0.1, 0)),
    "maximum_int8_broadcast": binary(B.MAXIMUM, I8, (2, 3, 40), (3, 1), (0.1, 0), (0.1, 0), (0.1, 0)),
    "maximum_int16": binary(B.MAXIMUM, I16, (3, 40), (3, 40), (0.1, 0), (0.1, 0), (0.1, 0)),
    "minimum_uint8_broadcast": binary(B.MINIMUM, U8, (2, 3, 40), (3, 1), (0.1, 0), (0.1, 0), (0.1, 0)),
    "minimum_int8": binary(B.MINIMUM, I8, (3, 40), (3, 40), (0.1, 0), (0.1, 0), (0.1, 0)),
    "minimum_int16_broadcast": binary(B.MINIMUM, I16, (2, 3, 40), (40,), (0.1, 0), (0.1, 0), (0.1, 0)),
    "squared_difference_int8_every_pair": binary(B.SQUARED_DIFFERENCE, I8, None, None, (0.05, 3), (0.02, -100),
                                                 (0.1, -128)),
    "squared_difference_int8_broadcast": binary(B.SQUARED_DIFFERENCE, I8, (2, 3, 40), (3, 1), (0.01, 3),
                                                (0.03, -10), (0.001, 0)),
    "prelu_uint8_every_pair": binary(B.PRELU, U8, None, None, (0.05, 128), (0.01, 200), (0.04, 100)),
    "prelu_uint8_alpha_per_channel": binary(B.PRELU, U8, (2, 5, 5, 3), (3,), (0.05, 128), (0.01, 200), (0.04, 100),
                                            const_b=True),
    "prelu_int8_broadcast": binary(B.PRELU, I8, (2, 5, 5, 3), (1, 1, 3), (0.05, -5), (0.2, 60), (0.01, -10)),
    "prelu_int16_int8_alpha": binary(B.PRELU, I16, (2, 5, 5, 3), (2, 5, 5, 3), (0.05, 7), (0.01, 3), (0.06, -2),
                                     b_dt=I8),
    "prelu_int16_alpha_per_channel": binary(B.PRELU, I16, (2, 5, 5, 3), (3,), (0.05, 0), (0.01, 0), (0.06, 0),
                                            b_dt=I8, const_b=True),
}


def _round_div_pot(x, e: int):
    """round(x / 2^e), halves away from zero, and where x / 2^e was exactly k + ½: the sign of x
    there (−1 / +1), 0 elsewhere."""
    x = np.asarray(x, np.int64)
    if e <= 0:
        return x << -e, np.zeros(x.shape, np.int8)
    r = np.sign(x) * ((np.abs(x) + (1 << (e - 1))) >> e)
    return r, (np.sign(x) * ((x & ((1 << e) - 1)) == (1 << (e - 1)))).astype(np.int8)


def _high(v, m: int):
    """SRDHM: round(v · m / 2^31) with halves UP (its nudge 1 − 2^30 for negative products and the
    truncating division send −k − ½ to −k), with its ties as in :func:`_round_div_pot`."""
    p = np.asarray(v, np.int64) * m
    _, tie = _round_div_pot(p, 31)
    return (p + (1 << 30)) >> 31, tie


def _shift_left_or_truncate(v, n: int):
    """v · 2^n, or for n < 0 v >> −n (toward −∞), with the places where exactly ½ was cut off."""
    v = np.asarray(v, np.int64)
    if n >= 0:
        return v << n, np.zeros(v.shape, np.int8)
    return v >> -n, (np.sign(v) * ((v & ((1 << -n) - 1)) == (1 << (-n - 1)))).astype(np.int8)


DIFFER = "reference ≠ vector loop"


def tie_arithmetic(kind: str, d, x1, x2):
    """What the reference writes ("reference") and, for ADD / SUB on the general path, litert's int16
    vector loop ("vector"); and per rounding step where it met an exact tie (−1 / +1 by the sign of
    the value rounded), plus DIFFER where the two results part.  Arrays broadcast."""
    x1 = np.asarray(x1, np.int64)
    x2 = np.asarray(x2, np.int64)
    steps, out = {}, {}
    lo, hi = d.output_activation_min, d.output_activation_max
    if d.path == "pot_int16":
        a, steps["input 1 shift"] = _round_div_pot(x1, -d.input1_shift)
        b, steps["input 2 shift"] = _round_div_pot(x2, -d.input2_shift)
        out["reference"] = np.clip(np.clip(a + (b if kind == "add" else -b), -32768, 32767), lo, hi)
        return out, steps
    if d.path == "int16→8bit":
        h, steps["Q15 product"] = _round_div_pot(x1 * x2, 15)       # the 16-bit SRDHM
        r, steps["shift by 8"] = _round_div_pot(h, 8)
        out["reference"] = np.clip(r, lo - d.output_offset, hi - d.output_offset) + d.output_offset
        return out, steps
    if kind == "mul":
        h, steps["product high"] = _high((x1 + d.input1_offset) * (x2 + d.input2_offset), d.output_multiplier)
        r, steps["product shift"] = _round_div_pot(h, -d.output_shift)
        out["reference"] = np.clip(r + d.output_offset, lo, hi)
        return out, steps
    v1, v2 = x1 + d.input1_offset, x2 + d.input2_offset
    for how in ("reference", "vector"):
        scaled = []
        for k, (v, m, sh) in enumerate(((v1, d.input1_multiplier, d.input1_shift),
                                        (v2, d.input2_multiplier, d.input2_shift)), start=1):
            if how == "reference":
                h, steps[f"input {k} high"] = _high(v << d.left_shift, m)
                s, steps[f"input {k} shift"] = _round_div_pot(h, -sh)
            else:
                t, steps[f"vector input {k} truncation"] = _shift_left_or_truncate(v, d.left_shift + sh)
                s, steps[f"vector input {k} high"] = _high(t, m)
            scaled.append(s)
        total = scaled[0] + (scaled[1] if kind == "add" else -scaled[1])
        prefix = "" if how == "reference" else "vector "
        h, steps[prefix + "output high"] = _high(total, d.output_multiplier)
        r, steps[prefix + "output shift"] = _round_div_pot(h, -d.output_shift)
        out[how] = np.clip(r + d.output_offset, lo, hi)
    steps[DIFFER] = np.sign(out["reference"] - out["vector"]).astype(np.int8)
    return out, steps


def _pick(hit, rng, per_sign=2):
    """Up to ``per_sign`` seeded positions where ``hit`` is −1 and as many where it is +1."""
    chosen = []
    for side in (-1, 1):
        idx = np.flatnonzero(hit == side)
        chosen += rng.choice(idx, min(per_sign, idx.size), replace=False).tolist()
    return chosen


ALL_INT16 = np.arange(-32768, 32768, dtype=np.int64)


def search_tie_rows(kind, d, rng, rows=24, cols=48):
    """An x1 grid [rows, cols] and x2 [rows]: the x2 values chosen so that some x1 meets each tie
    (probed against 64 random x1), each row's x1 values meeting each tie against that row's x2."""
    probe = rng.integers(-32768, 32768, 64).reshape(-1, 1)
    _, steps = tie_arithmetic(kind, d, probe, ALL_INT16)
    ys = []
    for hit in steps.values():
        ys += [int(i) % ALL_INT16.size for i in _pick(hit, rng, 1)]
    ys = list(dict.fromkeys(ys))
    rng.shuffle(ys)
    ys = ALL_INT16[ys[:rows]].tolist() + rng.integers(-32768, 32768, max(0, rows - len(ys))).tolist()
    grid = np.empty((rows, cols), np.int64)
    for r, y in enumerate(ys):
        _, steps = tie_arithmetic(kind, d, ALL_INT16, y)
        picks = []
        for hit in steps.values():
            picks += _pick(hit, rng)
        picks = list(dict.fromkeys(picks))[:cols]
        grid[r, :len(picks)] = ALL_INT16[picks]
        grid[r, len(picks):] = rng.integers(-32768, 32768, cols - len(picks))
    return grid, np.asarray(ys, np.int64)


def _int16_binary_model(op, shape_a, shape_b, qa, qb, qo, options, out_dt=None):
    b = ModelBuilder()
    ta = b.input("a", shape_a, I16, quantization=q(*qa))
    tb = b.input("b", shape_b, I16, quantization=q(*qb))
    y = b.tensor("y", tuple(np.broadcast_shapes(shape_a, shape_b)), out_dt or I16, quantization=q(*qo))
    b.op(op, [ta, tb], [y], options)
    b.output(y)
    return b


KIND = {B.ADD: "add", B.SUB: "sub", B.MUL: "mul"}

TIE_TAIL = 13               # go through its scalar loop


def int16_ties(op, qa, qb, qo, options, layout="flat", out_dt=None):
    """``layout`` "flat": the searched pairs as one row of 16·k values (litert's vector loop) and
    TIE_TAIL more (its scalar loop) that meet every tie again; "broadcast": x1 [rows, cols] with x2
    [rows, 1]; "every value": all 65536 int16 values against a seeded permutation of them."""
    def build(name):
        rng = rng_for(name)
        if layout == "every value":
            a = np.concatenate([ALL_INT16, ALL_INT16[4:4 + TIE_TAIL]])
            bv = np.concatenate([rng.permutation(ALL_INT16), ALL_INT16[-TIE_TAIL:]])
        else:
            model = update_versions(_int16_binary_model(op, (4,), (4,), qa, qb, qo, options, out_dt).build())
            it = Interpreter(model=model)
            it.allocate_tensors()
            d = it.prepared()[0][2]
            grid, ys = search_tie_rows(KIND[op], d, rng)
            if layout == "broadcast":
                a, bv = grid, ys.reshape(-1, 1)
            else:
                a, bv = grid.reshape(-1), np.repeat(ys, grid.shape[1])
                _, steps = tie_arithmetic(KIND[op], d, a, bv)
                tail = []
                for hit in steps.values():
                    tail += _pick(hit, rng, 1)[:1]
                tail = list(dict.fromkeys(tail))[:TIE_TAIL]
                tail += rng.integers(0, a.size, TIE_TAIL - len(tail)).tolist()
                a, bv = np.concatenate([a, a[tail]]), np.concatenate([bv, bv[tail]])
        a, bv = a.astype(I16), bv.astype(I16)
        return _int16_binary_model(op, a.shape, bv.shape, qa, qb, qo, options, out_dt), {"a": a, "b": bv}
    return build


# Scales that leave exact ties reachable at every step.  s = 33·2^-17 against the output scale 2^-12
# gives the output multiplier 33·2^25 (ties where the sum has 2-adic valuation 5); the other input,
# 33·149797·2^-38, gets the multiplier 149797·2^13 with a right shift of 4 in the reference (ties
# where v·2^15 has valuation 2, in the vector loop where v·2^11 has valuation 6, behind it a shift
# tie); 33·149797·2^-52 gets the same multiplier with a shift of 18: litert's loop first shifts right
# by 3, truncating (a tie where exactly ½ is cut off).  33·1229·2^-45 gets 1229·2^20 with that shift:
# the vector loop's SRDHM meets ties there (v >> 3 of valuation 10), the reference's cannot.
S_WIDE, S_NARROW, S_OUT = 33 * 2.0 ** -17, 33 * 149797 * 2.0 ** -38, 2.0 ** -12
S_TINY, S_TINY_VECTOR_TIES = 33 * 149797 * 2.0 ** -52, 33 * 1229 * 2.0 ** -45
SAMPLE_ADD = (7.316399569390342e-05, 2.5244273274438456e-05, 5.4738251492381096e-05)   # a16w8 node 7
ADD_GENERAL, SUB_GENERAL = AddOptions(pot_scale_int16=False), SubOptions(pot_scale_int16=False)
MUL_SCALES = ((33 * 2.0 ** -15, 0), (2.0 ** -10, 0), (2.0 ** -6, 0))     # multiplier 33·2^25, shift −11

TIE_CASES = {
    "add_int16_ties_input2": int16_ties(B.ADD, (S_WIDE, 0), (S_NARROW, 0), (S_OUT, 0), ADD_GENERAL),
    "add_int16_ties_input1": int16_ties(B.ADD, (S_NARROW, 0), (S_WIDE, 0), (S_OUT, 0), ADD_GENERAL),
    "add_int16_ties_truncating_shift": int16_ties(B.ADD, (S_TINY_VECTOR_TIES, 0), (S_WIDE, 0), (S_OUT, 0),
                                                  ADD_GENERAL),
    "add_int16_ties_sample_scales": int16_ties(B.ADD, *((s, 0) for s in SAMPLE_ADD), ADD_GENERAL),
    "add_int16_ties_broadcast": int16_ties(B.ADD, (S_WIDE, 0), (S_NARROW, 0), (S_OUT, 0), ADD_GENERAL, "broadcast"),
    "add_int16_ties_pot": int16_ties(B.ADD, (2 ** -12, 0), (2 ** -15, 0), (2 ** -12, 0),
                                     AddOptions(pot_scale_int16=True), "every value"),
    "sub_int16_ties_input2": int16_ties(B.SUB, (S_WIDE, 0), (S_NARROW, 0), (S_OUT, 0), SUB_GENERAL),
    "sub_int16_ties_input1": int16_ties(B.SUB, (S_NARROW, 0), (S_WIDE, 0), (S_OUT, 0), SUB_GENERAL),
    "sub_int16_ties_truncating_shift": int16_ties(B.SUB, (S_WIDE, 0), (S_TINY, 0), (S_OUT, 0), SUB_GENERAL),
    "sub_int16_ties_sample_scales": int16_ties(B.SUB, *((s, 0) for s in SAMPLE_ADD), SUB_GENERAL),
    "sub_int16_ties_broadcast": int16_ties(B.SUB, (S_NARROW, 0), (S_WIDE, 0), (S_OUT, 0), SUB_GENERAL, "broadcast"),
    "sub_int16_ties_pot": int16_ties(B.SUB, (2 ** -15, 0), (2 ** -12, 0), (2 ** -12, 0),
                                     SubOptions(pot_scale_int16=True), "every value"),
    "mul_int16_ties": int16_ties(B.MUL, *MUL_SCALES, MulOptions()),
    "mul_int16_ties_broadcast": int16_ties(B.MUL, *MUL_SCALES, MulOptions(), "broadcast"),
    "mul_int16_to_int8_ties": int16_ties(B.MUL, (2 ** -15, 0), (2 ** -15, 0), (1 / 128, 5), MulOptions(), out_dt=I8),
}
# the same scales on 8-bit inputs (left shift 20), every pair: the reference's steps meet exact ties
# too (litert's 8-bit vector loops are emulated separately, see quant/elementwise.py)
TIE_CASES_8BIT = {
    "add_int8_every_pair_ties": binary(B.ADD, I8, None, None, (S_WIDE, 3), (S_NARROW, -7), (2.0 ** -12, 1),
                                       AddOptions()),
    "add_uint8_every_pair_ties": binary(B.ADD, U8, None, None, (S_NARROW, 130), (S_WIDE, 120), (2.0 ** -12, 128),
                                        AddOptions()),
    "sub_int8_every_pair_ties": binary(B.SUB, I8, None, None, (S_NARROW, 3), (S_WIDE, -7), (2.0 ** -12, 1),
                                       SubOptions()),
    "sub_uint8_every_pair_ties": binary(B.SUB, U8, None, None, (S_WIDE, 130), (S_NARROW, 120), (2.0 ** -12, 128),
                                        SubOptions()),
    # a 24-bit scale mantissa: the multiplier 9586981·2^7 lets the reference's first rounding meet ties
    "add_int8_every_pair_input_ties": binary(B.ADD, I8, None, None, (2.0 ** -12, 3), (9586981 * 2.0 ** -38, -7),
                                             (2.0 ** -12, 1), AddOptions()),
    "sub_uint8_every_pair_input_ties": binary(B.SUB, U8, None, None, (9586981 * 2.0 ** -38, 130), (2.0 ** -12, 120),
                                              (2.0 ** -12, 128), SubOptions()),
    "mul_int8_every_pair_ties": binary(B.MUL, I8, None, None, (33 * 2.0 ** -9, 3), (2.0 ** -7, -7), (2.0 ** -4, 1),
                                       MulOptions()),
    "mul_uint8_every_pair_ties": binary(B.MUL, U8, None, None, (33 * 2.0 ** -9, 130), (2.0 ** -7, 120),
                                        (2.0 ** -4, 128), MulOptions()),
}
CASES.update(TIE_CASES)
CASES.update(TIE_CASES_8BIT)

# parameters at the edge of what the kernels accept, bit-exact with litert: int16 LOGISTIC / TANH
# input scales whose multiplier makes the kernel's int32 product x·multiplier wrap; SUB output
# multipliers far above one (litert writes the zero point ± the sign); SOFTMAX with beta 0,
# negative or huge; LEAKY_RELU with alpha 0
EDGE_CASES = {
    "logistic_int16_wrapping_multiplier": unary(B.LOGISTIC, I16, (100.0, 0), SM16),
    "tanh_int16_wrapping_multiplier": unary(B.TANH, I16, (1e5, 0), SM16),
    "sub_int8_output_multiplier_2_pow_15": binary(B.SUB, I8, None, None, (0.05, 3), (0.05, -7),
                                                  (float(np.float32(0.1 / 2 ** 20 / (0.75 * 2 ** 15))), 2),
                                                  SubOptions()),
    "sub_int16_output_multiplier_2_pow_31": binary(B.SUB, I16, (3, 200), (200,), (0.001, 0), (0.001, 0),
                                                   (float(np.float32(0.002 / 2 ** 15 / (0.75 * 2 ** 31))), 0),
                                                   SubOptions(pot_scale_int16=False)),
    "sub_int16_output_multiplier_2_pow_15_runs_of_22": binary(
        B.SUB, I16, (2, 3, 22), (22,), (0.001, 0), (0.001, 0),
        (float(np.float32(0.002 / 2 ** 15 / (0.75 * 2 ** 15))), 0), SubOptions(pot_scale_int16=False)),
    "sub_int16_output_multiplier_2_pow_15_last_dim_broadcast": binary(
        B.SUB, I16, (3, 21), (3, 1), (0.001, 0), (0.001, 0),
        (float(np.float32(0.002 / 2 ** 15 / (0.75 * 2 ** 15))), 0), SubOptions(pot_scale_int16=False)),
    "sub_uint8_output_multiplier_2_pow_15_broadcast": binary(
        B.SUB, U8, (2, 3, 22), (22,), (0.05, 130), (0.05, 120),
        (float(np.float32(0.1 / 2 ** 20 / (0.75 * 2 ** 15))), 128),
        SubOptions()),
    "softmax_uint8_beta_zero": unary(B.SOFTMAX, U8, (0.05, 128), (1 / 256, 0), SoftmaxOptions(beta=0.0), shape=(3, 20)),
    "softmax_int8_beta_huge": unary(B.SOFTMAX, I8, (0.05, 3), (1 / 256, -128), SoftmaxOptions(beta=1e30),
                                    shape=(3, 20)),
    "softmax_int16_beta_negative": unary(B.SOFTMAX, I16, (0.001, 0), SM16, SoftmaxOptions(beta=-1.0), shape=(3, 20)),
    "leaky_relu_int8_alpha_zero": unary(B.LEAKY_RELU, I8, (0.05, -10), (0.03, 5), LeakyReluOptions(alpha=0.0)),
}
CASES.update(EDGE_CASES)


def build_case(name):
    return quantized_cases.build(CASES, name)

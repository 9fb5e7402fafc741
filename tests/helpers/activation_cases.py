"""One-op cases for the activation-like kernels (SOFTMAX, LOG_SOFTMAX, LOGISTIC, TANH, HARD_SWISH, GELU,
LEAKY_RELU, PRELU, L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION) in every type their kernels take,
for tests/interpreter/kernels/test_<op>.py.  Each table maps a case name to ``build(name) ->
(ModelBuilder, {input name: array})`` (what :class:`op_layers.OpLayers` runs)."""

from __future__ import annotations

import zlib

import numpy as np

from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    GeluOptions,
    L2NormOptions,
    LeakyReluOptions,
    LocalResponseNormalizationOptions,
    ModelBuilder,
    SoftmaxOptions,
)

F32, F16, U8, I8, I16 = np.float32, np.float16, np.uint8, np.int8, np.int16
SM16 = (1 / 32768, 0)                     # the int16 output of SOFTMAX / LOGISTIC / TANH
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, 3.4e38, -3.4e38, 1e-45, 5.0, 5.0, -7.5, 88.72283, -103.97208,
                    16.6355324, -16.6355324, 3.0, -3.0, 6.0, -6.0, 7.90738964], np.float32)


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(qp):
    return None if qp is None else {"scale": qp[0], "zero_point": qp[1]}


def every_value(dt, rng, tail=37) -> np.ndarray:
    """Every value of an integer type, then ``tail`` random ones (an odd total: vector loops and tails)."""
    info = np.iinfo(dt)
    v = np.arange(info.min, info.max + 1)
    return np.concatenate([v, rng.integers(info.min, info.max + 1, tail)]).astype(dt).reshape(1, -1)


def float_input(rng, shape, spread=4.0, specials=False) -> np.ndarray:
    x = (rng.standard_normal(shape) * spread).astype(np.float32)
    if specials:                          # the specials land in packets and in the n mod 4 tail
        flat = x.reshape(-1)
        flat[::5] = rng.choice(SPECIAL, flat[::5].shape)
        flat[-3:] = SPECIAL[[10, 12, 16]]
    return x


def unary(op, dt, qi=None, qo=None, options=None, shape=None, out_dt=None, spread=4.0, specials=False):
    """One input, one output: floats from N(0, spread²) (``specials`` mixes in ±inf, thresholds ...),
    integers every value of the type (``shape`` None) or random of ``shape``."""
    def build(name):
        rng = rng_for(name)
        if np.dtype(dt).kind == "f":
            x = float_input(rng, shape, spread, specials).astype(dt)
        elif shape is None:
            x = every_value(dt, rng)
        else:
            info = np.iinfo(dt)
            x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
        b = ModelBuilder()
        t = b.input("x", x.shape, dt, quantization=q(qi))
        y = b.tensor("y", x.shape, out_dt or dt, quantization=q(qo))
        b.op(op, [t], [y], options)
        b.output(y)
        return b, {"x": x}
    return build


def rows(op, dt, qi, qo, values, options=None, out_dt=None):
    """One input of the given rows (a list of lists) — inputs found to show a difference."""
    def build(name):
        x = np.array(values, dt)
        b = ModelBuilder()
        t = b.input("x", x.shape, dt, quantization=q(qi))
        y = b.tensor("y", x.shape, out_dt or dt, quantization=q(qo))
        b.op(op, [t], [y], options)
        b.output(y)
        return b, {"x": x}
    return build


def prelu(dt, x_shape, a_shape, qx=None, qa=None, qo=None, const_alpha=False):
    """PRELU: int16 inputs take an int8 alpha (the 16x8 scheme)."""
    def build(name):
        rng = rng_for(name)
        adt = I8 if dt is I16 else dt
        if np.dtype(dt).kind == "f":
            x = float_input(rng, x_shape)
            a = rng.uniform(-0.5, 1.5, a_shape).astype(np.float32)
        else:
            x = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, x_shape, endpoint=True).astype(dt)
            a = rng.integers(np.iinfo(adt).min, np.iinfo(adt).max, a_shape, endpoint=True).astype(adt)
        b = ModelBuilder()
        tx = b.input("x", x_shape, dt, quantization=q(qx))
        ta = b.constant("alpha", a, quantization=q(qa)) if const_alpha else \
            b.input("alpha", a_shape, adt, quantization=q(qa))
        y = b.tensor("y", x_shape, dt, quantization=q(qo))
        b.op(B.PRELU, [tx, ta], [y])
        b.output(y)
        return b, ({"x": x} if const_alpha else {"x": x, "alpha": a})
    return build


def sm(beta):
    return SoftmaxOptions(beta=beta)


SOFTMAX = {
    "float32_1d_beta1": unary(B.SOFTMAX, F32, options=sm(1.0), shape=(37,)),
    "float32_2d_beta037": unary(B.SOFTMAX, F32, options=sm(0.37), shape=(5, 13)),
    "float32_4d_specials": unary(B.SOFTMAX, F32, options=sm(1.0), shape=(2, 3, 1, 11), specials=True),
    "float32_rows_of_1000": unary(B.SOFTMAX, F32, options=sm(2.5), shape=(3, 1000), spread=10.0),
    "float32_64x37": unary(B.SOFTMAX, F32, options=sm(1.0), shape=(64, 37), spread=10.0),
    "float16_2d": unary(B.SOFTMAX, F16, options=sm(1.0), shape=(5, 13)),
    "uint8": unary(B.SOFTMAX, U8, (0.05, 128), (1 / 256, 0), sm(0.7), shape=(2, 3, 37)),
    "uint8_zero_point_ignored": unary(B.SOFTMAX, U8, (0.1, 5), (1 / 256, 10), sm(1.0), shape=(3, 20)),
    "uint8_to_int16": unary(B.SOFTMAX, U8, (0.05, 128), SM16, sm(1.0), shape=(2, 37), out_dt=I16),
    "int8": unary(B.SOFTMAX, I8, (0.1, 5), (1 / 256, -128), sm(1.0), shape=(4, 10)),
    "int8_beta_4d": unary(B.SOFTMAX, I8, (0.05, -3), (1 / 256, -128), sm(0.7), shape=(1, 2, 3, 37)),
    "int8_coarse": unary(B.SOFTMAX, I8, (0.4, 0), (1 / 256, -128), sm(1.0), shape=(6, 64)),
    "int8_to_int16": unary(B.SOFTMAX, I8, (0.1, 5), SM16, sm(1.0), shape=(3, 10), out_dt=I16),
    "int16": unary(B.SOFTMAX, I16, (0.001, 0), SM16, sm(1.0), shape=(3, 40)),
    "int16_beta_4d": unary(B.SOFTMAX, I16, (0.0003, 0), SM16, sm(0.8), shape=(2, 2, 3, 50)),
    # the float table rounds the largest value's probability to −1, the fixed-point kernel to 0
    "int8_table_vs_fixed_point": rows(B.SOFTMAX, I8, (0.004523576702922583, 0), (1 / 256, -128), [[28, -99, 125]],
                                      sm(1.0)),
}

LOG_SOFTMAX = {
    "float32_1d": unary(B.LOG_SOFTMAX, F32, shape=(37,)),
    "float32_2d": unary(B.LOG_SOFTMAX, F32, shape=(5, 13)),
    "float32_4d_specials": unary(B.LOG_SOFTMAX, F32, shape=(2, 3, 1, 11), specials=True),
    "float32_64x37": unary(B.LOG_SOFTMAX, F32, shape=(64, 37), spread=10.0),
    "uint8": unary(B.LOG_SOFTMAX, U8, (0.1, 100), (16 / 256, 255), shape=(3, 20)),
    "int8": unary(B.LOG_SOFTMAX, I8, (0.03, -20), (16 / 256, 127), shape=(2, 2, 57)),
    "int8_coarse": unary(B.LOG_SOFTMAX, I8, (0.3, 4), (16 / 256, 127), shape=(4, 33)),
    # −125 lies below the fixed-point kernel's diff_min (−128 there); the float table gives −124
    "int8_table_vs_fixed_point": rows(B.LOG_SOFTMAX, I8, (0.06271979957818985, 0), (16 / 256, 127),
                                      [[-125, 38, 33, 52, 124, 70, 45]]),
}

LOGISTIC = {
    "float32": unary(B.LOGISTIC, F32, shape=(3, 41), spread=8.0),
    "float32_specials": unary(B.LOGISTIC, F32, shape=(2, 39), specials=True),
    "uint8": unary(B.LOGISTIC, U8, (0.05, 120), (1 / 256, 0)),
    "uint8_zp_ignored": unary(B.LOGISTIC, U8, (0.1, 3), (1 / 256, 10)),
    "int8": unary(B.LOGISTIC, I8, (0.06, 10), (1 / 256, -128)),
    "int16_pot": unary(B.LOGISTIC, I16, (2 ** -12, 0), SM16),
    "int16_general": unary(B.LOGISTIC, I16, (0.0003, 0), SM16),
    "int16_coarse": unary(B.LOGISTIC, I16, (0.002, 0), SM16),
}

TANH = {
    "float32": unary(B.TANH, F32, shape=(3, 41), spread=4.0),
    "float32_specials": unary(B.TANH, F32, shape=(2, 39), specials=True),
    "uint8": unary(B.TANH, U8, (0.03, 128), (1 / 128, 128)),
    "int8": unary(B.TANH, I8, (0.03, -4), (1 / 128, 0)),
    "int16_pot": unary(B.TANH, I16, (2 ** -12, 0), SM16),
    "int16_pot_shift1": unary(B.TANH, I16, (2 ** -13, 0), SM16),
    "int16_general": unary(B.TANH, I16, (0.0007, 0), SM16),
}

HARD_SWISH = {
    "float32": unary(B.HARD_SWISH, F32, shape=(3, 41)),
    "float32_specials": unary(B.HARD_SWISH, F32, shape=(2, 39), specials=True),
    "uint8": unary(B.HARD_SWISH, U8, (0.05, 100), (0.03, 40)),
    "uint8_wide": unary(B.HARD_SWISH, U8, (0.2, 20), (0.1, 0)),
    "int8": unary(B.HARD_SWISH, I8, (0.05, -10), (0.03, -40)),
    "int8_small_range": unary(B.HARD_SWISH, I8, (0.01, 0), (0.006, -60)),
}

GELU = {f"{dt_name}{'_approximate' if a else ''}": fn(a) for a in (False, True) for dt_name, fn in {
    "float32": lambda a: unary(B.GELU, F32, options=GeluOptions(approximate=a), shape=(3, 41)),
    "float32_specials": lambda a: unary(B.GELU, F32, options=GeluOptions(approximate=a), shape=(2, 39),
                                        specials=True),
    "uint8": lambda a: unary(B.GELU, U8, (0.05, 128), (0.03, 20), GeluOptions(approximate=a)),
    "int8": lambda a: unary(B.GELU, I8, (0.04, -5), (0.025, -100), GeluOptions(approximate=a)),
    "int16": lambda a: unary(B.GELU, I16, (0.0002, 0), (0.0001, 0), GeluOptions(approximate=a)),
}.items()}

LEAKY_RELU = {
    "float32": unary(B.LEAKY_RELU, F32, options=LeakyReluOptions(alpha=0.2), shape=(3, 41), specials=True),
    "uint8": unary(B.LEAKY_RELU, U8, (0.05, 100), (0.03, 120), LeakyReluOptions(alpha=0.2)),
    "uint8_negative_alpha": unary(B.LEAKY_RELU, U8, (0.05, 100), (0.03, 120), LeakyReluOptions(alpha=-0.3)),
    "int8": unary(B.LEAKY_RELU, I8, (0.05, -10), (0.03, 5), LeakyReluOptions(alpha=0.2)),
    "int8_alpha_above_one": unary(B.LEAKY_RELU, I8, (0.05, -10), (0.03, 5), LeakyReluOptions(alpha=1.7)),
    "int16": unary(B.LEAKY_RELU, I16, (0.001, 0), (0.0008, 0), LeakyReluOptions(alpha=0.2)),
    "int16_negative_alpha": unary(B.LEAKY_RELU, I16, (0.001, 0), (0.0008, 0), LeakyReluOptions(alpha=-0.3)),
}

PRELU = {
    "float32_per_channel": prelu(F32, (2, 5, 5, 3), (3,)),
    "float32_same_shape": prelu(F32, (2, 4, 7), (2, 4, 7)),
    "uint8_per_channel": prelu(U8, (2, 5, 5, 3), (3,), (0.05, 128), (0.01, 200), (0.04, 100)),
    "uint8_const_alpha": prelu(U8, (1, 6, 6, 4), (1, 1, 4), (0.05, 128), (0.01, 200), (0.04, 100), True),
    "int8_broadcast": prelu(I8, (2, 5, 5, 3), (1, 1, 3), (0.05, -5), (0.2, 60), (0.01, -10)),
    "int8_same_shape": prelu(I8, (3, 4, 5), (3, 4, 5), (0.05, -5), (0.02, 3), (0.03, -10)),
    "int16_int8_alpha": prelu(I16, (2, 5, 5, 3), (2, 5, 5, 3), (0.05, 0), (0.01, 3), (0.06, 0)),
    "int16_per_channel": prelu(I16, (2, 5, 5, 3), (3,), (0.05, 0), (0.01, 0), (0.06, 0)),
}

L2_NORMALIZATION = {
    "float32_2d": unary(B.L2_NORMALIZATION, F32, options=L2NormOptions(), shape=(5, 13)),
    "float32_4d": unary(B.L2_NORMALIZATION, F32, options=L2NormOptions(), shape=(2, 3, 4, 37), spread=30.0),
    "float32_tiny": unary(B.L2_NORMALIZATION, F32, options=L2NormOptions(), shape=(4, 3), spread=1e-8),
    "uint8": unary(B.L2_NORMALIZATION, U8, (0.05, 128), (1 / 128, 128), L2NormOptions(), shape=(3, 20)),
    "int8": unary(B.L2_NORMALIZATION, I8, (0.05, -3), (1 / 128, 0), L2NormOptions(), shape=(2, 3, 37)),
}


def lrn(radius, bias, alpha, beta):
    return LocalResponseNormalizationOptions(radius=radius, bias=bias, alpha=alpha, beta=beta)


LOCAL_RESPONSE_NORMALIZATION = {           # beta 1 and 0.5: litert-x86's exact shortcuts
    "radius2_beta1": unary(B.LOCAL_RESPONSE_NORMALIZATION, F32, options=lrn(2, 1.0, 0.1, 1.0), shape=(1, 4, 5, 11)),
    "radius5_beta_half": unary(B.LOCAL_RESPONSE_NORMALIZATION, F32, options=lrn(5, 2.0, 1e-4, 0.5),
                               shape=(2, 3, 3, 32), spread=20.0),
    "radius0_beta_half": unary(B.LOCAL_RESPONSE_NORMALIZATION, F32, options=lrn(0, 0.5, 0.3, 0.5), shape=(1, 2, 2, 7)),
    "radius_beyond_channels_beta1": unary(B.LOCAL_RESPONSE_NORMALIZATION, F32, options=lrn(9, 1.0, 0.05, 1.0),
                                          shape=(1, 3, 2, 6)),
}
LRN_OTHER_BETAS = {                         # Eigen's vectorised pow on x86: not reproduced bit for bit
    "radius2_beta075": unary(B.LOCAL_RESPONSE_NORMALIZATION, F32, options=lrn(2, 1.0, 0.1, 0.75), shape=(1, 4, 5, 11)),
    "radius9_beta13": unary(B.LOCAL_RESPONSE_NORMALIZATION, F32, options=lrn(9, 1.0, 0.05, 1.3), shape=(1, 3, 2, 6)),
}

"""EXP: the teaching layer (kernels/exp.py, glibc's expf in numpy: kernels/_libm.py) and the speed layer
(fast/unary.py: numba's expf, value tables) compute the same bits; the default interpreter is bit-exact with
LiteRT's builtin kernels and the reference variant with its BUILTIN_REF kernels; float32 (a wide sweep,
specials and NaN payloads), int8 and int16. Also: the numpy formulations of the C library
(``_unary.libm_f32``: expf, logf, expm1f, sinf, cosf, tanhf) against the C library."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import F32, I8, I16, differing_bits, float_case, float_sweep, int_case, rng_for
from workbench.interpreter import quant
from workbench.interpreter.kernels import _unary
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": float_case(B.EXP),
    "float32_near_limits": float_case(B.EXP, lo=-110, hi=95, n=2001),
    "float32_tail3": float_case(B.EXP, n=1003, shape=None),
    "int8": int_case(B.EXP, I8, (0.02, 0), (0.05, -128)),
    "int8_wide": int_case(B.EXP, I8, (0.1, 10), (1.5, -100)),
    "int16": int_case(B.EXP, I16, (0.0002, 0), (0.0005, 0)),
}
LAYERS = OpLayers(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


def test_both_builds_compute_exp_alike():
    # TFLite's builtin EXP is reference_ops::Exp: one std::exp per element in both builds
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)


@pytest.mark.parametrize("name", ["expf", "logf", "expm1f", "sinf", "cosf", "tanhf"])
def test_numpy_formulation_is_the_c_library(name):
    """kernels/_libm.py computes the C library's bits (quant.libm_apply calls it through ctypes), and
    numpy's own float32 function does not (else the formulation would be needless)."""
    x = np.concatenate([float_sweep(rng_for(name), 60001), float_sweep(rng_for(name + "2"), 20001, -1e4, 1e4)])
    want = quant.libm_apply(name, x).view(np.uint32)
    assert np.array_equal(_unary.libm_f32(name, x).view(np.uint32), want)
    numpy_own = {"expf": np.exp, "logf": np.log, "expm1f": np.expm1, "sinf": np.sin, "cosf": np.cos, "tanhf": np.tanh}
    with np.errstate(all="ignore"):
        assert (numpy_own[name](x).astype(F32).view(np.uint32) != want).sum() > 0

"""COMPLEX_ABS, REAL and IMAG (one family: kernels/_complex.py): complex64 → float32, complex128 → float64.

The teaching layer (kernels/complex_abs.py, real.py, imag.py, glibc's hypotf / hypot in numpy:
kernels/_complex.py) and the speed layer (fast/complex.py: numba's hypot) compute the same bits, the default
interpreter is bit-exact with LiteRT's builtin kernels and the reference variant with LiteRT's BUILTIN_REF
kernels; every pairing of ±0, ±1, 1e±30, FLT_MAX, subnormals, ±inf, NaNs (a signalling one) and random
values over the whole range."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import C64, C128, complex_case, complex_values, differing_bits, rng_for
from workbench.interpreter.fast import complex as complex_fast
from workbench.interpreter.kernels import _complex
from workbench.schema import BuiltinOperator as B

CASES = {
    "complex_abs_complex64": complex_case(B.COMPLEX_ABS, C64),
    "complex_abs_complex128": complex_case(B.COMPLEX_ABS, C128),
    "real_complex64": complex_case(B.REAL, C64),
    "real_complex128": complex_case(B.REAL, C128),
    "imag_complex64": complex_case(B.IMAG, C64),
    "imag_complex128": complex_case(B.IMAG, C128),
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


def test_both_builds_agree():
    # complex_support.cc is one kernel for both builds: std::abs, std::real, std::imag
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)


@pytest.mark.parametrize("dtype", [C64, C128])
def test_python_loop_without_jit_calls_the_c_library(dtype):
    """What WORKBENCH_JIT=0 runs: the loop as Python, hypot through ctypes (the C library itself) — the
    same bits as the teaching layer's numpy formulation and the numba loop (moved here from
    tests/interpreter/test_complex_ops.py)."""
    part = np.float32 if dtype == C64 else np.float64
    z = complex_values(dtype, rng_for("nojit"), 20001)
    out = np.empty(z.size, part)
    complex_fast.hypot_loop.py_func(np.ascontiguousarray(z).view(part).reshape(-1, 2), out)
    bits = "u4" if dtype == C64 else "u8"
    assert np.array_equal(out.view(bits), _complex.complex_abs(z).view(bits))
    fast = np.empty(z.size, part)
    complex_fast.run_hypot(z, fast)
    assert np.array_equal(fast.view(bits), out.view(bits))

"""BATCH_MATMUL: the teaching layer (kernels/batch_matmul.py) and the speed layer (fast/batch_matmul.py)
compute the same bits under both variants, the default interpreter is bit-exact with LiteRT's builtin
kernels and the reference variant with LiteRT's BUILTIN_REF kernels — float32 (adj_x / adj_y,
broadcast batches, a constant rhs), int8 → int8 / int32, int16 × int16 / int8 → int16, hybrid.

The quantized and hybrid cases are those of test_quantized_int16_matrix and test_quantized_hybrid,
each built with its own name (the same data).  float32 cases: exact data (every summation order gives
the same float32) and random data, whose order matters (``Variant.float_matmul``).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from helpers import quantized_hybrid_cases as TH
from helpers import quantized_int16_matrix_cases as T16
from helpers.op_layers import OpLayers
from workbench.interpreter import Interpreter
from workbench.schema import BatchMatMulOptions, ModelBuilder
from workbench.schema import BuiltinOperator as B


def same_data(build, name):
    return lambda _: build(name)


def bmm_float(sa, sb, adj_x=False, adj_y=False, const_b=False, exact=True):
    def build(name):
        rng = np.random.default_rng(zlib.crc32(name.encode()))

        def values(shape, step):
            if exact:
                return (rng.integers(-16, 17, shape) * step).astype(np.float32)
            return rng.standard_normal(shape).astype(np.float32)
        am = (sa[-1], sa[-2]) if adj_x else (sa[-2], sa[-1])
        bm = (sb[-1], sb[-2]) if adj_y else (sb[-2], sb[-1])
        out = tuple(np.broadcast_shapes(sa[:-2], sb[:-2])) + (am[0], bm[1])
        b = ModelBuilder()
        a_t = b.input("a", sa, np.float32)
        feeds = {"a": values(sa, 0.25)}
        if const_b:
            b_t = b.constant("b", values(sb, 0.125))
        else:
            b_t = b.input("b", sb, np.float32)
            feeds["b"] = values(sb, 0.125)
        y = b.tensor("y", out, np.float32)
        b.op(B.BATCH_MATMUL, [a_t, b_t], [y], BatchMatMulOptions(adj_x=adj_x, adj_y=adj_y))
        b.output(y)
        return b, feeds
    return build


CASES = {
    "float_2d": bmm_float((3, 4), (4, 5)),
    "float_batched": bmm_float((2, 3, 40), (2, 40, 2)),
    "float_broadcast": bmm_float((2, 1, 3, 4), (3, 4, 5)),
    "float_adj_x": bmm_float((2, 4, 3), (2, 4, 5), adj_x=True),
    "float_adj_y_const": bmm_float((3, 4), (2, 5, 4), adj_y=True, const_b=True),
    "float_adj_both": bmm_float((1, 2, 4, 3), (2, 1, 5, 4), adj_x=True, adj_y=True),
    "float_rank5": bmm_float((2, 1, 2, 3, 16), (1, 2, 1, 16, 5)),
}
CASES.update({f"quantized_{n}": same_data(T16.CASES[n], n) for n in T16.CASES if n.startswith("bmm")})
CASES.update({f"hybrid_{n}": same_data(TH.CASES[n], n) for n in TH.CASES if n.startswith("bmm")})

ORDER_CASES = {
    "float_random_k200": bmm_float((2, 7, 200), (2, 200, 9), exact=False),
    "float_random_adj_broadcast": bmm_float((3, 1, 64, 7), (1, 4, 9, 64), adj_x=True, adj_y=True, exact=False),
}

LAYERS = OpLayers(CASES)
ORDER = OpLayers(ORDER_CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


@pytest.mark.parametrize("case", sorted(ORDER_CASES))
def test_random_float_layers_and_reference_variant(case):
    ORDER.check_layers(case)
    ORDER.check_reference_variant(case)
    # LiteRT's builtin BATCH_MATMUL is its reference kernel: the sequential loop is its order too
    from helpers.quantized_cases import assert_same

    assert_same(ORDER.run(case, reference=True, variant="reference"), ORDER.litert(case), case)


def test_random_float_order_differs_between_variants():
    # the litert-x86 variant takes numpy's BLAS product (faster; not LiteRT's sequential order)
    assert ORDER.differing_variants("float_random_k200") > 0


def test_quantized_builds_agree():
    # TFLite registers the reference kernel as the builtin one: no integer output differs
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES if not case.startswith("float"))


def test_speed_layer_paths_are_named_as_before():
    def kname(case):
        model, _ = LAYERS.build(case)
        it = Interpreter(model=model)
        it.allocate_tensors()
        return it.prepared()[0][1]

    assert kname("quantized_bmm8") == "batch_matmul/blas(float32, exact)"
    assert kname("quantized_bmm16") == "batch_matmul/blas(float64, exact)"
    assert kname("hybrid_bmm_symmetric") == "batch_matmul/quantize(numba)+blas(float32, exact)"
    assert kname("float_2d") == "batch_matmul"

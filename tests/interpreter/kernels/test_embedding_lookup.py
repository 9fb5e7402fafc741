"""EMBEDDING_LOOKUP: the teaching layer (kernels/embedding_lookup.py; no speed layer: one numpy gather)
is bit-exact with LiteRT's builtin kernels and, under the reference variant, with LiteRT's BUILTIN_REF
kernels — float32, int8, uint8 and int32 tables copied row by row, hybrid int8 / uint8 tables with a
float32 output, 2-D and 3-D tables, repeated ids."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from helpers.op_layers import OpLayers
from workbench.errors import WorkbenchError
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder


def lookup(table_shape, dtype, ids, out_dtype=None, scale=None):
    def build(name):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        if np.dtype(dtype).kind == "f":
            table = rng.standard_normal(table_shape).astype(dtype)
        else:
            info = np.iinfo(dtype)
            table = rng.integers(info.min, info.max, table_shape, endpoint=True).astype(dtype)
        qp = {"scale": scale, "zero_point": 0} if scale is not None else None
        b = ModelBuilder()
        i = b.input("ids", (len(ids),), np.int32)
        t = b.constant("table", table, quantization=qp)
        y = b.tensor("y", (len(ids),) + tuple(table_shape[1:]), out_dtype or dtype)
        b.op(B.EMBEDDING_LOOKUP, [i, t], [y])
        b.output(y)
        return b, {"ids": np.array(ids, np.int32)}
    return build


CASES = {
    "float32_2d": lookup((5, 4), np.float32, [3, 0, 3, 1]),
    "float32_3d_table": lookup((3, 2, 3), np.float32, [1, 2]),
    "int8_rows": lookup((7, 6), np.int8, [6, 0, 2, 2, 5]),
    "uint8_rows": lookup((4, 9), np.uint8, [3, 1]),
    "int32_rows": lookup((6, 5), np.int32, [0, 5, 4]),
    "hybrid_int8_to_float32": lookup((8, 5), np.int8, [7, 1, 1, 0], np.float32, 0.0371),
    "hybrid_uint8_read_as_int8": lookup((5, 8), np.uint8, [4, 2, 0], np.float32, 0.25),
    "hybrid_int8_3d_table": lookup((4, 3, 2), np.int8, [2, 3], np.float32, 1.5),
}
LAYERS = OpLayers(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_runs_in_both_modes(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


def test_both_builds_look_up_alike():
    # a copy (or one float32 product per value) rounds nothing that differs between TFLite's builds
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)


def test_an_id_out_of_bounds_is_an_error_naming_the_node():
    from workbench.interpreter import Interpreter

    model, _ = LAYERS.build("float32_2d")
    it = Interpreter(model=model)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.array([0, 5, 1, 1], np.int32))
    with pytest.raises(WorkbenchError, match="out of bounds"):
        it.invoke()

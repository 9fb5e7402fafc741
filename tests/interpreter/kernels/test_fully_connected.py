"""FULLY_CONNECTED: the teaching layer (kernels/fully_connected.py, _fc_hybrid.py, _fc_int4.py,
_fc_int16_or_sparse.py) and the speed layer (fast/fully_connected.py) compute the same bits under both variants,
the default interpreter is bit-exact with LiteRT's builtin kernels and the reference variant with
LiteRT's BUILTIN_REF kernels — float32, int8 (BLAS and VNNI paths), uint8, 16x8, hybrid (int8 and int4
weights, litert's 4-bit kernels), int16 weights (v7), sparse weights (v8).

The cases are those of the quantized test tables (test_quantized_ops, _uint8_matrix, _int16_matrix,
_hybrid, test_int4_weights, test_version_gaps), each built with its own name (so with the same data),
plus float32 cases here: exact ones (every summation order gives the same float32, so LiteRT's builtin
blocking is matched too) and random ones, whose order matters (``Variant.float_matmul``).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from helpers import int4_weights_cases as T4
from helpers import quantized_hybrid_cases as TH
from helpers import quantized_int16_matrix_cases as T16
from helpers import quantized_ops_cases as T8
from helpers import quantized_uint8_matrix_cases as TU
from helpers import version_gaps_cases as VG
from helpers.op_layers import OpLayers
from helpers.quantized_cases import assert_same
from helpers.quantized_ops_cases import fc_i8
from workbench.errors import WorkbenchError
from workbench.interpreter import Interpreter
from workbench.interpreter.fast import fully_connected as fast_fc
from workbench.perf import vnni
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import FullyConnectedOptions, ModelBuilder
from workbench.schema.types import tensor_data


def same_data(build, name):
    """A table's builder under its own case name (the name seeds the data)."""
    return lambda _: build(name)


class Built:
    """A ready model in the shape of a ModelBuilder (for test_version_gaps' (model, feeds) cases)."""

    def __init__(self, model):
        self.model = model

    def build(self):
        return self.model


def made(model_and_feeds):
    model, feeds = model_and_feeds
    sg = model.subgraphs[0]
    return lambda _: (Built(model), {sg.tensors[i].name: v for i, v in zip(sg.inputs, feeds)})


def fc_float(x_shape, units, act=Act.NONE, keep=False, bias=True, exact=True):
    """float32: exact data (multiples of 1/4 times multiples of 1/8: every partial sum is exact in
    float32, whatever the order) or standard-normal data."""
    def build(name):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        k = x_shape[-1]

        def values(shape, step, top):
            if exact:
                return (rng.integers(-top, top + 1, shape) * step).astype(np.float32)
            return rng.standard_normal(shape).astype(np.float32)
        b = ModelBuilder()
        x = b.input("x", x_shape, np.float32)
        ins = [x, b.constant("w", values((units, k), 0.125, 16))]
        if bias:
            ins.append(b.constant("bias", values(units, 0.5, 8)))
        out = tuple(x_shape[:-1]) + (units,) if keep else (int(np.prod(x_shape)) // k, units)
        y = b.tensor("y", out, np.float32)
        b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(fused_activation_function=act, keep_num_dims=keep))
        b.output(y)
        return b, {"x": values(x_shape, 0.25, 16)}
    return build


def int8_ties(per_channel):
    """int8 with power-of-two scales and every input value: acc · scale lands on halves, negative ones
    too, so ruy's ties-up shift and the reference kernel's C round disagree."""
    def build(name):
        b = ModelBuilder()
        w_s = [0.5, 0.25, 0.125] if per_channel else [0.5]
        x = b.input("x", (256, 1), np.int8, quantization=T8.q(0.5, 0))
        w = b.constant("w", np.array([[3], [-5], [7]], np.int8), quantization=T8.q(w_s, [0] * len(w_s), 0))
        y = b.tensor("y", (256, 3), np.int8, quantization=T8.q(1.0, 0))
        b.op(B.FULLY_CONNECTED, [x, w, -1], [y], FullyConnectedOptions())
        b.output(y)
        return b, {"x": np.arange(-128, 128, dtype=np.int8).reshape(256, 1)}
    return build


CASES = {
    "float_exact": fc_float((3, 10), 4, act=Act.RELU),
    "float_exact_flatten_no_bias": fc_float((2, 3, 8), 5, bias=False),
    "float_exact_keep_num_dims_relu6": fc_float((2, 3, 40), 7, act=Act.RELU6, keep=True),
    "float_exact_batch1_k96": fc_float((1, 96), 33, act=Act.RELU_N1_TO_1),
    "int8_ties_per_tensor": int8_ties(False),
    "int8_ties_per_channel": int8_ties(True),
    # products of at least vnni.MIN_MACS multiply-adds: the VNNI path on a CPU that has it
    "int8_vnni_no_bias": fc_i8((4, 256), 300, bias=False),
    "int8_vnni_7x300_relu": fc_i8((7, 300), 130, act=Act.RELU),
    "int8_vnni_keep_dims_per_channel": fc_i8((2, 5, 200), 300, keep=True, per_channel=True, in_zp=100),
}
for prefix, table, keys in (("int8", T8.CASES, "fc"), ("uint8", TU.CASES, "fc"), ("int16", T16.CASES, "fc16"),
                            ("hybrid", TH.CASES, "fc"), ("int4", T4.CASES, "fc")):
    CASES.update({f"{prefix}_{n}": same_data(table[n], n) for n in table if n.startswith(keys)})
CASES.update({n: made(VG.CASES[n]) for n in VG.CASES if n.startswith("fc_")})

# TFLite's reference build has no kernel for these (the reference variant refuses them; see below)
NO_REFERENCE_KERNEL = {"int16_fc16_int32_per_tensor_relu6", "int4_fc_blockwise_k128_none", "int4_fc_blockwise_k64_relu"}
BOTH = sorted(set(CASES) - NO_REFERENCE_KERNEL)

# random float32 data: the summation order shows (LiteRT's builtin blocks differ from numpy's BLAS)
ORDER_CASES = {
    "float_random_k300": fc_float((5, 300), 40, exact=False),
    "float_random_batch1_relu": fc_float((1, 1024), 65, act=Act.RELU, exact=False),
    "float_random_no_bias": fc_float((3, 2, 77), 9, bias=False, exact=False),
}

LAYERS = OpLayers(CASES)
ORDER = OpLayers(ORDER_CASES)


@pytest.mark.parametrize("case", BOTH)
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", BOTH)
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


@pytest.mark.parametrize("case", sorted(ORDER_CASES))
def test_random_float_layers_and_reference_variant(case):
    """The speed layer's BLAS product is the teaching layer's; its own dot products (``FloatDot``, a few
    rows on the kernel library) sum in another order: within float32 rounding of it."""
    model, _ = ORDER.build(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    if it.prepared()[0][1] == "fully_connected/dot(avx512)":
        for a, b in zip(ORDER.run(case, reference=True), ORDER.run(case)):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
        assert_same(ORDER.run(case, reference=True, variant="reference"), ORDER.run(case, variant="reference"),
                    f"{case} (teaching vs speed layer, variant reference)")
    else:
        ORDER.check_layers(case)
    ORDER.check_reference_variant(case)


@pytest.mark.parametrize("case", sorted(NO_REFERENCE_KERNEL))
def test_cases_without_a_reference_kernel_run_only_in_the_default_variant(case):
    from helpers.quantized_cases import assert_same

    assert_same(LAYERS.run(case, reference=True), LAYERS.run(case), f"{case} (teaching vs speed layer)")
    with pytest.raises(WorkbenchError, match="reads the bias as int64|blockwise quantization"):
        LAYERS.run(case, variant="reference")


def test_what_builtin_ref_does_without_a_reference_kernel():
    # blockwise int4 weights: BUILTIN_REF's EvalHybridDense reads no blockwise scales, every output is the
    # bias (then the fused activation, which the builtin blockwise kernel ignores)
    for case, low in (("int4_fc_blockwise_k128_none", -np.inf), ("int4_fc_blockwise_k64_relu", 0.0)):
        model, _ = LAYERS.build(case)
        bias = tensor_data(model, 0, model.subgraphs[0].operators[0].inputs[2])
        out = LAYERS.litert(case, "BUILTIN_REF")[0]
        assert (out == np.maximum(bias, np.float32(low))).all() and (out != LAYERS.litert(case)[0]).any(), case
    # 16x8, int32 bias, quantized_bias_type unset: BUILTIN_REF reads the bias as int64 (past its end)
    case = "int16_fc16_int32_per_tensor_relu6"
    assert (LAYERS.litert(case, "BUILTIN_REF")[0] != LAYERS.litert(case)[0]).any()


@pytest.mark.parametrize("case", [
    # ruy's last shift sends ties up, the reference kernel's C round in double away from zero
    "int8_ties_per_tensor", "int8_ties_per_channel", "uint8_fc_64", "int16_fc16_ties_ruy",
    # litert's 4-bit kernel (its own row quantization, nibbles w + 7) vs the int8 hybrid path
    "int4_fc4_k64_relu_batch3",
    # sparse float 1x4 blocks: four lane sums vs the dense loop
    "fc_sparse_float_1x4",
])
def test_the_variants_differ(case):
    assert LAYERS.differing_variants(case) > 0


def test_random_float_order_differs_between_variants():
    # numpy's BLAS blocks vs one float32 accumulator in k order (BUILTIN_REF's loop)
    assert ORDER.differing_variants("float_random_k300") > 0


@pytest.mark.parametrize("case", ["hybrid_fc_asymmetric", "hybrid_fc_symmetric", "fc_int16_weights_per_channel",
                                  "fc_sparse_int8_1x16", "int16_fc16_ties_double", "float_exact"])
def test_both_builds_agree(case):
    # one kernel in both builds (hybrid, int16 weights, sparse int8, the 16x8 reference kernel), or exact floats
    assert LAYERS.differing_variants(case) == 0


def test_speed_layer_paths_are_named_as_before():
    def kname(case, variant="litert-x86"):
        model, _ = LAYERS.build(case)
        it = Interpreter(model=model, variant=variant)
        it.allocate_tensors()
        return it.prepared()[0][1]

    few_rows = "fully_connected/dot(avx512)" if fast_fc._dot_function() else "fully_connected/blas"
    assert kname("float_exact") == few_rows
    five_rows, _ = ORDER.build("float_random_k300")     # more rows than FloatDot takes
    it = Interpreter(model=five_rows)
    it.allocate_tensors()
    assert it.prepared()[0][1] == "fully_connected/blas"
    assert kname("int8_fc_relu") == "fully_connected/blas(float32, exact)"
    assert ("vnni" in kname("int8_vnni_7x300_relu")) == vnni.available()
    assert kname("uint8_fc") == "fully_connected/blas(float32, exact)"
    assert kname("int16_fc16_big") == "fully_connected/blas(float64, exact)"
    assert kname("hybrid_fc_symmetric") == "fully_connected/quantize(numba)+blas(float32, exact)"
    assert kname("int4_fc_fallback_3_units").startswith("fully_connected/int4 weights (unpacked to int8), ")
    assert kname("int4_fc4_k64_relu_batch3").startswith("fully_connected/int4 weights, litert's 4-bit kernel")
    assert kname("fc_int16_weights_deep") == "fully_connected/blas(float64, exact)"
    assert kname("int4_fc_blockwise_k64_relu") == ("fully_connected/int4 weights, blockwise scales (block size 32), "
                                                   "litert's EvalBlockwise4Bit")
    assert kname("fc_sparse_float_1x4") == "fully_connected/stored weights (4 lanes)"
    # the reference variant: x86-only paths give way to the teaching layer
    assert kname("float_exact", "reference") == "fully_connected"
    assert kname("int8_fc_relu", "reference") == "fully_connected"
    assert kname("int4_fc4_k64_relu_batch3", "reference").startswith("fully_connected/int4 weights (unpacked")


def test_opdata_holds_tflite_facts_only():
    for case in ("float_exact", "int8_fc_per_channel", "uint8_fc", "int16_fc16_big", "hybrid_fc_asymmetric",
                 "int4_fc4_k64_relu_batch3", "fc_int16_weights_deep", "fc_sparse_float_1x4"):
        model, _ = LAYERS.build(case)
        it = Interpreter(model=model)
        it.allocate_tensors()
        fields = set(it.prepared()[0][2].as_dict())
        assert not fields & {"impl", "weights_t", "bias_folded", "cols", "acc", "rounding", "nibbles_t",
                             "dense_weights", "rows", "bias", "input_quantized"}, (case, fields)


@pytest.mark.parametrize("variant", ["litert-x86", "reference"])
@pytest.mark.parametrize("case", ["int8_ties_per_tensor", "int8_ties_per_channel", "int8_fc_relu", "uint8_fc_64",
                                  "int16_fc16_ties_ruy", "hybrid_fc_asymmetric"])
def test_explain_follows_the_variant(case, variant):
    """explain() works the element out with the rounding the node's variant applies (ties cases: the
    two variants give different outputs, and explain agrees with each)."""
    from workbench.interpreter.explain import explain

    model, inputs = LAYERS.build(case)
    it = Interpreter(model=model, variant=variant, keep_intermediates=True)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    size = it.get_tensor(it.get_output_details()[0]["index"]).size
    for k in range(0, size, max(1, size // 300)):
        e = explain(it, 0, k)
        assert e.agrees, repr(e)

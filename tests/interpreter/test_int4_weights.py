"""int4 (and int2) constant weights, as AI Edge Quantizer's wi4 recipes write them.

  * unpacking: TFLite packs two int4 values a byte (four int2), the first in the lowest bits, each
    sign-extended; the interpreter holds such constants unpacked as int8 (``Context.packed_bits``);
  * DEQUANTIZE of an int4 / int2 constant, per channel and per tensor;
  * hybrid FULLY_CONNECTED (litert's optimized 4-bit kernel, its int8 fallback, and the blockwise
    path), CONV_2D and DEPTHWISE_CONV_2D with int4 weights: tiny models built in code, each run by
    our fast kernels, by our references (``reference=True``) and by ai-edge-litert's builtin kernels in
    a child process — every float output bit equal.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import litert_runner, quantized_cases
from helpers.int4_weights_cases import CASES, _fc_blockwise_model, int4_constant, pack, q, rng_for, weights4
from helpers.quantized_cases import assert_same, litert_outputs, run_ours
from workbench.errors import WorkbenchError
from workbench.interpreter import Interpreter
from workbench.interpreter.context import unpack_packed_ints
from workbench.interpreter.kernels._fc_int4 import packed_nibbles
from workbench.schema import (
    ActivationFunctionType as Act,
)
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    DepthwiseConv2DOptions,
    ModelBuilder,
    Padding,
    TensorType,
)

# ------------------------------------------------------------------------------------------------
# unpacking


def test_unpack_int4_nibble_order_sign_and_odd_count():
    raw = bytes([0x10, 0x8F, 0x7E, 0x09])            # (0, 1) (-1, -8) (-2, 7) (-7, unused high nibble)
    got = unpack_packed_ints(raw, 7, 4)
    assert got.dtype == np.int8
    assert got.tolist() == [0, 1, -1, -8, -2, 7, -7]
    every = np.arange(-8, 8)
    assert unpack_packed_ints(pack(every), 16, 4).tolist() == every.tolist()


def test_unpack_int2_order_and_sign():
    raw = bytes([0b11_10_01_00, 0b00_00_00_01])       # 0, 1, -2, -1 | 1 (3 unused slots)
    assert unpack_packed_ints(raw, 5, 2).tolist() == [0, 1, -2, -1, 1]


def test_unpack_refuses_a_wrong_byte_count():
    with pytest.raises(WorkbenchError, match="bytes"):
        unpack_packed_ints(bytes(3), 7, 4)             # 7 int4 values need 4 bytes


def test_litert_4bit_packer_nibbles():
    w = np.zeros((1, 40), np.int8)
    w[0, 3] = -8          # among the first 16 of its chunk: acts as +8 alone
    w[0, 20] = -8         # among the last 16: spoils its partner 4 too
    w[0, 8] = -8          # first 16, 8 % 4 == 0: the SSE lane-shift carry spoils 8 + 18 = 26
    w[0, 33] = -8         # the tail chunk (K = 40, packed by the scalar code): no carry
    nib = packed_nibbles(w)
    expect = np.full(40, 7)
    expect[[3, 4, 20, 8, 26, 33]] = 15
    assert nib[0].tolist() == expect.tolist()


def _depthwise_model(x_shape, k, mult=1, act=Act.NONE, per_channel=True):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        co = x_shape[3] * mult
        x = b.input("x", x_shape, np.float32)
        ws = rng.uniform(0.01, 0.05, co) if per_channel else np.array([0.02])
        w = int4_constant(b, "w", weights4(rng, (1, k, k, co)), q(ws.tolist(), [0] * len(ws), 3))
        bias = b.constant("bias", rng.uniform(-0.3, 0.3, co).astype(np.float32))
        y = b.tensor("y", (x_shape[0], x_shape[1], x_shape[2], co), np.float32)
        b.op(B.DEPTHWISE_CONV_2D, [x, w, bias], [y], DepthwiseConv2DOptions(
            padding=Padding.SAME, stride_h=1, stride_w=1, depth_multiplier=mult, fused_activation_function=act))
        b.output(y)
        return b, {"x": rng.standard_normal(x_shape).astype(np.float32)}
    return build


def build_case(name):
    return quantized_cases.build(CASES, name)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_kernels_equal_references(case):
    model, inputs = build_case(case)
    assert_same(run_ours(model, inputs), run_ours(model, inputs, reference=True), case)


@pytest.fixture(scope="session")
def litert_int4_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_int4"), CASES, build_case, workers=2)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert(case, litert_int4_results):
    model, inputs = build_case(case)
    assert_same(run_ours(model, inputs), litert_outputs(litert_int4_results[case]), case)


# ------------------------------------------------------------------------------------------------
# what a learner sees, and what is refused


def _explained(case):
    model, _ = build_case(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    return it


def test_constant_is_held_unpacked_and_marked():
    it = _explained("fc4_k64_relu_batch3")
    ctx = it._sg(0).context
    w_t = next(t for t in range(len(ctx.meta)) if ctx.name(t) == "w")
    assert ctx.packed_bits(w_t) == 4 and ctx.dtype(w_t) == np.int8
    assert ctx.type_name(w_t) == "INT4"                       # the schema's type stays INT4
    assert ctx.value(w_t).shape == (8, 64)
    assert int(ctx.value(w_t).min()) >= -8 and int(ctx.value(w_t).max()) <= 7


@pytest.mark.parametrize("case, words", [
    ("fc4_k64_relu_batch3", "int4 weights, litert's 4-bit kernel"),
    ("fc_fallback_3_units", "int4 weights (unpacked to int8)"),
    ("fc_blockwise_k64_relu", "blockwise"),
    ("dequant_int4_per_tensor", "int4 (stored packed, unpacked to int8)"),
    ("conv_int4_3x3_same", "int4 weights (unpacked to int8)"),
])
def test_opdata_says_int4(case, words):
    """The kernel's label (the speed layer's path: how the weights are used) or its OpData says it."""
    it = _explained(case)
    _, kname, data, _ = it.prepared()[0]
    text = f"{kname} {data!r}"
    assert words in text, text


def test_int4_activation_is_refused_at_allocate():
    b = ModelBuilder()
    x = b.input("x", (2, 4), TensorType.INT4, quantization=q(0.1, 0))    # an int4 activation, no buffer
    y = b.tensor("y", (2, 4), np.float32)
    b.op(B.DEQUANTIZE, [x], [y], version=6)
    b.output(y)
    it = Interpreter(model=b.build())
    with pytest.raises(WorkbenchError, match="INT4"):
        it.allocate_tensors()


def test_blockwise_fallback_is_refused_clearly():
    model, _ = quantized_cases.build({"c": _fc_blockwise_model(1, 64, 3)}, "c")   # 3 units: not the 4-bit kernel
    it = Interpreter(model=model)
    with pytest.raises(WorkbenchError, match=r"blockwise quantization \(block size 32\)"):
        it.allocate_tensors()


def test_hybrid_depthwise_with_int4_filter_is_refused_as_litert_does():
    """litert 2.3: 'Type FLOAT32 with filter type INT4 not currently supported' at invoke."""
    model, _ = quantized_cases.build({"d": _depthwise_model((1, 5, 5, 4), 3)}, "d")
    with pytest.raises(WorkbenchError, match="int4 filter"):
        Interpreter(model=model).allocate_tensors()

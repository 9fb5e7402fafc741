"""Options parsing: schema defaults vs TFLite's zero-filled params, custom options."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from workbench import options
from workbench.options.custom import decode_custom, decode_flexbuffer
from workbench.schema import BuiltinOperator, Conv2DOptions, Padding, dump, load
from workbench.schema.builder import ModelBuilder


def conv_model(opts):
    b = ModelBuilder()
    x = b.input("x", [1, 5, 5, 1])
    w = b.constant("w", np.ones((1, 3, 3, 1), np.float32))
    y = b.tensor("y", [1, 5, 5, 1])
    b.op(BuiltinOperator.CONV_2D, [x, w, -1], [y], opts)
    b.output(y)
    return load(dump(b.build()))


def test_absent_options_table_means_zeros_in_tflite_but_defaults_in_the_schema():
    model = conv_model(None)
    o = options.parse(model, 0)
    assert o.table == "Conv2DOptions" and not o.table_present
    d = o.field("dilation_w_factor")
    assert d.value == 1 and d.state == "table absent" and d.runtime == 0 and d.differs_at_runtime
    assert o.field("padding").runtime == 0 and o.field("padding").differs_at_runtime  # kTfLitePaddingUnknown
    assert o.field("padding").runtime_name == "kTfLitePaddingUnknown"
    assert "zero-fills" in o.explain()


def test_present_table_marks_each_field_present_or_defaulted():
    model = conv_model(Conv2DOptions(padding=Padding.VALID, stride_w=2, stride_h=1))
    o = options.parse(model, 0)
    assert o.table_present and o.c_struct == "TfLiteConvParams"
    assert o.field("stride_w").state == "present" and o.stride_w == 2
    assert o.field("dilation_w_factor").state == "defaulted" and o.field("dilation_w_factor").runtime == 1
    assert o.field("padding").runtime == 2  # kTfLitePaddingValid
    assert not o.field("padding").differs_at_runtime  # renumbered, same meaning
    # an absent quantized_bias_type becomes kTfLiteFloat32 (1), not zero (flatbuffer_conversions.cc ConvertTensorType)
    assert o.field("quantized_bias_type").runtime == 1
    assert o.non_default() == {"padding": Padding.VALID, "stride_w": 2, "stride_h": 1}


def test_op_without_options_table():
    b = ModelBuilder()
    x = b.input("x", [4])
    y = b.tensor("y", [4])
    b.op(BuiltinOperator.RELU, [x], [y])
    b.output(y)
    o = options.parse(b.build(), 0)
    assert o.table is None and o.fields == ()


@pytest.mark.parametrize("code, table", [
    (BuiltinOperator.AVERAGE_POOL_2D, "Pool2DOptions"), (BuiltinOperator.MEAN, "ReducerOptions"),
    (BuiltinOperator.L2_NORMALIZATION, "L2NormOptions"), (BuiltinOperator.BATCH_MATMUL, "BatchMatMulOptions"),
    (BuiltinOperator.DEPTHWISE_CONV_2D, "DepthwiseConv2DOptions"), (BuiltinOperator.MAXIMUM, "MaximumMinimumOptions"),
    (BuiltinOperator.STABLEHLO_COMPOSITE, "StableHLOCompositeOptions"), (BuiltinOperator.RELU, None),
])
def test_options_table_for_each_op(code, table):
    got = options.options_table_for(code)
    assert (got[1] if got else None) == table


def test_raw_struct_custom_options_of_mediapipe_transpose_conv():
    raw = struct.pack("<iii", 1, 2, 2)
    c = decode_custom("Convolution2DTransposeBias", raw)
    assert c.format == "raw struct"
    assert c.value == {"padding": 1, "stride_width": 2, "stride_height": 2}


def test_flexbuffer_custom_options_decode():
    from flatbuffers import flexbuffers

    raw = flexbuffers.Dumps({"output_height": 16, "scale": 1.5, "idx": [1, 2, 3]})
    c = decode_custom("MyOp", raw)
    assert c.format == "flexbuffers"
    assert c.value == {"output_height": 16, "scale": 1.5, "idx": [1, 2, 3]}


@pytest.mark.parametrize("seed", range(200))
def test_garbage_custom_options_never_raise(seed):
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=int(rng.integers(0, 64)), dtype=np.uint8).tobytes()
    c = decode_custom("Garbage", raw)
    assert c.format in ("opaque", "flexbuffers", "none")


def test_flexbuffer_budget_stops_explosions():
    with pytest.raises(ValueError):
        decode_flexbuffer(b"\x01")


def test_every_corpus_operator_parses(corpus_paths):
    from workbench.schema import op_name

    seen = 0
    for name, path in corpus_paths.items():
        model = load(path)
        for s, sg in enumerate(model.subgraphs):
            for i, op in enumerate(sg.operators):
                o = options.parse(model, op)
                if o.table_present:
                    # the options table the op expects is the one the converter wrote
                    code = model.operator_codes[op.opcode_index]
                    expected = options.options_table_for(BuiltinOperator(code.builtin_code
                                                                         or code.deprecated_builtin_code))
                    assert expected is not None and expected[1] == o.table, (name, i, o.op)
                seen += 1
                assert o.op == op_name(model.operator_codes[op.opcode_index])
    assert seen > 1000


def test_parse_a_table_read_with_an_older_declaration():
    from workbench.versioning import walkthrough as w

    data = w.build_depthwise(dilation=2)
    model = load(data, declarations={"DepthwiseConv2DOptions": w.DEPTHWISE_V1})
    o = options.parse(model, 0)
    assert [f.name for f in o.fields] == ["padding", "stride_w", "stride_h", "depth_multiplier",
                                          "fused_activation_function"]
    assert o.params.origin.unknown_slots == (5, 6)  # the dilation fields this reader cannot see

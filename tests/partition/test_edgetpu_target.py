"""The edgetpu target's rules, each on what it is about, and the edgetpu strategy's cut and regions.

* the rank rule ("only the 3 innermost dimensions may be > 1") is about activations, not parameters;
* which ops need which dtypes: 8-bit activations; QUANTIZE only between 8-bit types; DEQUANTIZE,
  ARG_MAX refused for their output type; CAST and custom ops not supported; the int8 LSTM's INT16 cell state;
* resizes by power-of-two ratios only; no axis in the batch dimension; same dilation in x and y;
* the first cut: TFLite's greedy partitioning, first delegated subset; ``max_partitions`` models ``-a``;
* every refusal carries the compiler's status words and the failing constraint with its values.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench import Interpreter, dump
from workbench.partition import TargetError, compile, load_target, partition
from workbench.schema import (
    ArgMaxOptions,
    Conv2DOptions,
    FullyConnectedOptions,
    LeakyReluOptions,
    ModelBuilder,
    Padding,
    ReducerOptions,
    ResizeBilinearOptions,
    TensorType,
)
from workbench.schema import (
    BuiltinOperator as B,
)

Q = {"scale": 0.05, "zero_point": 3}
DTYPE = "Operation is working on an unsupported data type: "
LIMIT = "Operation is otherwise supported, but not mapped due to some unspecified limitation: "
RANK = "Tensor has unsupported rank (up to 3 innermost dimensions mapped): "
MORE = "More than one subgraph is not supported: "


def q8(b, name, shape, dtype=np.int8, **kw):
    return b.tensor(name, shape, dtype, quantization=Q, **kw)


def reasons(model, **knobs):
    return [p.reason for p in partition(model, "edgetpu", "edgetpu", **knobs).placements]


def one_op(op, in_shapes, out_shape, options=None, *, in_dtype=np.int8, out_dtype=np.int8, consts=(), **kw):
    """A model of one op: runtime inputs of ``in_shapes``, then the constant inputs ``consts``."""
    b = ModelBuilder()
    ins = [b.input(f"x{k}", s, in_dtype, quantization=Q) for k, s in enumerate(in_shapes)]
    ins += [b.constant(f"c{k}", c) if not isinstance(c, int) else c for k, c in enumerate(consts)]
    y = q8(b, "y", out_shape, out_dtype)
    b.op(op, ins, [y], options, **kw)
    b.output(y)
    return b.build()


# ------------------------------------------------------------------------------------------------
# the rank rule is about activations


def test_a_4d_filter_is_a_parameter_not_a_tensor_the_rank_rule_checks():
    b = ModelBuilder()
    x = b.input("x", [1, 8, 8, 3], np.int8, quantization=Q)
    w = b.constant("w", np.ones((32, 3, 3, 3), np.int8), quantization=Q)       # 32 > 1 outside the 3 innermost
    bias = b.constant("b", np.zeros(32, np.int32))
    y = q8(b, "y", [1, 8, 8, 32])
    b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1,
                                                     dilation_w_factor=1, dilation_h_factor=1))
    b.output(y)
    assert reasons(b.build()) == ["offloaded to edgetpu partition 0"]


def test_an_activation_with_a_batch_of_two_is_refused_with_the_rank_status():
    assert reasons(one_op(B.ADD, [[2, 4, 4, 3], [2, 4, 4, 3]], [2, 4, 4, 3])) == [
        RANK + "ADD: input 0 shape [2, 4, 4, 3] has a dimension > 1 outside the 3 innermost (limit)"]
    assert reasons(one_op(B.ADD, [[1, 1, 4, 4, 3]] * 2, [1, 1, 4, 4, 3]))[0].startswith("offloaded")
    assert reasons(one_op(B.RESHAPE, [[1, 8, 8, 3]], [2, 4, 8, 3], consts=[np.array([2, 4, 8, 3], np.int32)]))[0] \
        == RANK + "RESHAPE: output 0 shape [2, 4, 8, 3] has a dimension > 1 outside the 3 innermost (limit)"


# ------------------------------------------------------------------------------------------------
# which ops need which dtypes


def test_activations_must_be_8_bit():
    assert reasons(one_op(B.ADD, [[1, 4], [1, 4]], [1, 4], in_dtype=np.float32, out_dtype=np.float32)) == [
        DTYPE + "ADD: input 0 is FLOAT32, not in [INT8, UINT8]"]
    assert reasons(one_op(B.ADD, [[1, 4], [1, 4]], [1, 4], in_dtype=np.int16, out_dtype=np.int16)) == [
        DTYPE + "ADD: input 0 is INT16, not in [INT8, UINT8]"]
    assert reasons(one_op(B.ADD, [[1, 4], [1, 4]], [1, 4], in_dtype=np.uint8, out_dtype=np.uint8))[0].startswith(
        "offloaded")


@pytest.mark.parametrize("src, dst, mapped", [
    (np.int8, np.int8, True), (np.uint8, np.int8, True), (np.int8, np.uint8, True),
    (np.float32, np.int8, False), (np.float32, np.uint8, False)])
def test_quantize_is_mapped_between_8_bit_types_only(src, dst, mapped):
    # from float: the compiler logs "otherwise supported, but not mapped" (status_of), not a data type
    why = reasons(one_op(B.QUANTIZE, [[1, 8]], [1, 8], in_dtype=src, out_dtype=dst))[0]
    if mapped:
        assert why == "offloaded to edgetpu partition 0"
    else:
        assert why == (LIMIT + f"QUANTIZE: FLOAT32 → {np.dtype(dst).name.upper()} not among the type pairs it "
                       "takes (INT8 → INT8, INT8 → UINT8, UINT8 → INT8, UINT8 → UINT8)")


def test_dequantize_and_arg_max_are_known_but_their_outputs_are_not_8_bit():
    assert reasons(one_op(B.DEQUANTIZE, [[1, 8]], [1, 8], out_dtype=np.float32))[0].startswith(
        DTYPE + "DEQUANTIZE: INT8 → FLOAT32")
    m = one_op(B.ARG_MAX, [[1, 4, 4, 8]], [1, 4, 4], ArgMaxOptions(output_type=TensorType.INT64),
               out_dtype=np.int64, consts=[np.array(3, np.int32)])
    assert reasons(m) == [DTYPE + "ARG_MAX: output 0 is INT64, not in [INT8, UINT8]"]


def test_cast_and_custom_ops_are_not_supported():
    assert reasons(one_op(B.CAST, [[1, 8]], [1, 8], in_dtype=np.uint8, out_dtype=np.float32)) == [
        "Operation not supported: CAST"]
    assert reasons(one_op(B.CUSTOM, [[1, 8]], [1, 8], custom_code="PosenetDecoderOp")) == [
        "Operation not supported: PosenetDecoderOp (custom op)"]


def _lstm(cell_dtype, in_dtype=np.int8):
    b = ModelBuilder()
    x = b.input("x", [1, 28, 28], in_dtype, quantization=Q)
    w_in = [b.constant(f"wi{k}", np.ones((20, 28), np.int8), quantization=Q) for k in range(4)]
    w_rec = [b.constant(f"wr{k}", np.ones((20, 20), np.int8), quantization=Q) for k in range(4)]
    bias = [b.constant(f"b{k}", np.zeros(20, np.int32)) for k in range(4)]
    h = q8(b, "h", [1, 20], is_variable=True)
    c = b.tensor("c", [1, 20], cell_dtype, quantization={"scale": 2 ** -11, "zero_point": 0}, is_variable=True)
    y = q8(b, "y", [1, 28, 20])
    b.op(B.UNIDIRECTIONAL_SEQUENCE_LSTM, [x, *w_in, *w_rec, -1, -1, -1, *bias, -1, -1, h, c, -1, -1, -1, -1], [y])
    b.output(y)
    return b.build()


def test_the_int8_lstm_keeps_its_int16_cell_state():
    assert reasons(_lstm(np.int16)) == ["offloaded to edgetpu partition 0"]
    assert reasons(_lstm(np.int16, np.int16)) == [DTYPE + "UNIDIRECTIONAL_SEQUENCE_LSTM: input 0 is INT16, "
                                                          "not in [INT8, UINT8]"]
    assert reasons(_lstm(np.float32)) == [DTYPE + "UNIDIRECTIONAL_SEQUENCE_LSTM: input 19 is FLOAT32, not in [INT16]"]


# ------------------------------------------------------------------------------------------------
# per-op limits from the documented table


def _resize(op, hw_in, hw_out, **opts):
    options = ResizeBilinearOptions(**opts) if op == B.RESIZE_BILINEAR else None
    return one_op(op, [[1, *hw_in, 8]], [1, *hw_out, 8], options, consts=[np.array(hw_out, np.int32)])


@pytest.mark.parametrize("op", [B.RESIZE_BILINEAR, B.RESIZE_NEAREST_NEIGHBOR])
@pytest.mark.parametrize("hw_in, hw_out, ratio", [
    ((33, 33), (33, 33), None), ((6, 6), (12, 12), None), ((12, 24), (48, 96), None), ((16, 16), (8, 8), None),
    ((1, 1), (33, 33), "33"), ((33, 33), (513, 513), "15.55"), ((8, 8), (24, 24), "3"), ((9, 9), (3, 3), "1/3"),
    ((4, 4), (4, 6), "1.5")])
def test_resizes_by_a_power_of_two_only(op, hw_in, hw_out, ratio):
    why = reasons(_resize(op, hw_in, hw_out, align_corners=True))[0]
    if ratio is None:
        assert why == "offloaded to edgetpu partition 0"
    else:
        assert why == (LIMIT + f"{op.name} {hw_in[0]}x{hw_in[1]} → {hw_out[0]}x{hw_out[1]}: size ratio {ratio} is "
                       "not a power of two (1, 2, 4 …), so its interpolation weights are not exact in fixed point "
                       "(left on the CPU to avoid loss in precision)")


@pytest.mark.parametrize("axes, shape, expect", [
    ([1, 2], [1, 8, 8, 16], None),
    ([0], [1, 8, 8, 16], "MEAN: along axis 0 of a rank-4 tensor, outside the 3 innermost (the batch dimension)"),
    ([3], [1, 8, 8, 6], "MEAN: reduces the innermost axis of size 6, not a multiple of 4"),
    ([-1], [1, 8, 8, 8], None),
    ([0, 1], [8, 8, 16], None)])
def test_mean_not_over_the_batch_and_a_z_reduction_on_a_multiple_of_4(axes, shape, expect):
    out = [d for k, d in enumerate(shape) if k not in {a % len(shape) for a in axes}]
    m = one_op(B.MEAN, [shape], out, ReducerOptions(keep_dims=False), consts=[np.array(axes, np.int32)])
    assert reasons(m)[0] == ("offloaded to edgetpu partition 0" if expect is None else LIMIT + expect)


def test_pad_not_in_the_batch_dimension():
    ok = one_op(B.PAD, [[1, 8, 8, 3]], [1, 9, 9, 3], consts=[np.array([[0, 0], [0, 1], [0, 1], [0, 0]], np.int32)])
    assert reasons(ok)[0].startswith("offloaded")
    bad = one_op(B.PAD, [[1, 8, 8, 3]], [1, 9, 9, 3], consts=[np.array([[1, 0], [0, 0], [0, 0], [0, 0]], np.int32)])
    assert reasons(bad)[0] == LIMIT + ("PAD: along axis 0 of a rank-4 tensor, outside the 3 innermost "
                                       "(the batch dimension)")


def test_conv_dilation_is_the_same_in_x_and_y_and_fully_connected_outputs_one_dimension():
    b = ModelBuilder()
    x = b.input("x", [1, 8, 8, 3], np.int8, quantization=Q)
    w = b.constant("w", np.ones((4, 3, 3, 3), np.int8), quantization=Q)
    y = q8(b, "y", [1, 8, 8, 4])
    b.op(B.CONV_2D, [x, w, -1], [y], Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1,
                                                   dilation_w_factor=1, dilation_h_factor=2))
    b.output(y)
    assert reasons(b.build()) == [LIMIT + "CONV_2D: dilation 2x1 differs in y and x"]
    w = np.ones((10, 20), np.int8)
    flat = one_op(B.FULLY_CONNECTED, [[1, 20]], [1, 10], FullyConnectedOptions(), consts=[w])
    assert reasons(flat)[0].startswith("offloaded")
    kept = one_op(B.FULLY_CONNECTED, [[1, 5, 20]], [1, 5, 10], FullyConnectedOptions(keep_num_dims=True), consts=[w])
    assert reasons(kept) == [LIMIT + "FULLY_CONNECTED: output 0 shape [1, 5, 10] is not one-dimensional (only the "
                                     "innermost dimension may be > 1)"]


def test_concatenation_takes_a_constant_only_as_a_zero_padding():
    zeros = np.full((1, 4, 4, 2), Q["zero_point"], np.int8)
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 2], np.int8, quantization=Q)
    for k, c in enumerate((zeros, zeros + 1)):
        t = b.constant(f"c{k}", c, quantization=Q)
        y = q8(b, f"y{k}", [1, 4, 4, 4])
        b.op(B.CONCATENATION, [x, t], [y])
        b.output(y)
    assert reasons(b.build(), max_partitions=-1) == [
        "offloaded to edgetpu partition 0", LIMIT + "CONCATENATION: constant input 1 is not all zeros"]


# ------------------------------------------------------------------------------------------------
# the first cut and the regions


def _chain(kinds, dtype=np.int8):
    """x → one op per letter: A = ADD(t, t), M = MUL(t, t), L = LEAKY_RELU (not an Edge TPU op)."""
    b = ModelBuilder()
    t = b.input("x", [1, 4, 4, 2], dtype, quantization=Q)
    for k, kind in enumerate(kinds):
        y = q8(b, f"t{k}", [1, 4, 4, 2])
        if kind == "L":
            b.op(B.LEAKY_RELU, [t], [y], LeakyReluOptions(alpha=0.25))
        else:
            b.op(B.ADD if kind == "A" else B.MUL, [t, t], [y])
        t = y
    b.output(t)
    return b.build()


def test_a_supported_op_after_an_unsupported_one_stays_on_the_cpu():
    plan = partition(_chain("AMLAM"), "edgetpu", "edgetpu")
    assert [p.nodes for p in plan.partitions] == [(0, 1)]
    assert plan.placements[2].reason == "Operation not supported: LEAKY_RELU"
    assert plan.placements[3].reason == (MORE + "depends on node 2 (LEAKY_RELU), which stays on the CPU; the compiler "
                                         "makes one Edge TPU subgraph unless run with -a (max_partitions > 1 or < 0)")


def test_an_independent_branch_later_in_the_file_is_still_mapped():
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 2], np.int8, quantization=Q)
    t0, t1, t2, t3 = (q8(b, f"t{k}", [1, 4, 4, 2]) for k in range(4))
    b.op(B.ADD, [x, x], [t0])
    b.op(B.LEAKY_RELU, [t0], [t1], LeakyReluOptions(alpha=0.25))
    b.op(B.ADD, [t1, t1], [t2])        # waits for the CPU
    b.op(B.MUL, [x, t0], [t3])         # later in the file, but reads only mapped values
    b.output(t2, t3)
    plan = partition(b.build(), "edgetpu", "edgetpu")
    assert [p.nodes for p in plan.partitions] == [(0, 3)]
    assert plan.placements[2].reason.startswith(MORE + "depends on node 1 (LEAKY_RELU)")


def test_cpu_ops_at_the_start_do_not_stop_the_mapping():
    # a float input: QUANTIZE float → int8 runs on the CPU, everything after it is the one Edge TPU subgraph
    # (MoveNet's CAST + QUANTIZE at the input, then 98 ops mapped)
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 2], np.float32)
    t = q8(b, "q", [1, 4, 4, 2])
    b.op(B.QUANTIZE, [x], [t])
    for k in range(3):
        y = q8(b, f"t{k}", [1, 4, 4, 2])
        b.op(B.ADD, [t, t], [y])
        t = y
    b.output(t)
    plan = partition(b.build(), "edgetpu", "edgetpu")
    assert [p.nodes for p in plan.partitions] == [(1, 2, 3)]


def _run(model, x):
    it = Interpreter(model_content=dump(model))
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"]).copy()


def test_several_regions_model_the_compilers_a_flag():
    m = _chain("AMLAMLMA")            # unsupported ops at 2 and 5
    one = partition(m, "edgetpu", "edgetpu")
    assert [p.nodes for p in one.partitions] == [(0, 1)]
    every = partition(m, "edgetpu", "edgetpu", max_partitions=-1)
    assert [p.nodes for p in every.partitions] == [(0, 1), (3, 4), (6, 7)]
    assert [p.reason for p in every.placements if not p.on_target] == ["Operation not supported: LEAKY_RELU"] * 2
    two = partition(m, "edgetpu", "edgetpu", max_partitions=2)
    assert [p.nodes for p in two.partitions] == [(0, 1), (3, 4)]
    assert two.placements[6].reason == (MORE + "depends on node 5 (LEAKY_RELU), which stays on the CPU; "
                                        "max_partitions=2 Edge TPU subgraphs (-a) already made")
    x = np.arange(-16, 16, dtype=np.int8).reshape(1, 4, 4, 2)
    for plan in (one, two, every):     # each region one custom op; the compiled model computes the same
        c = compile(plan)
        assert sum(1 for op in c.subgraphs[0].operators) == len(plan.partitions) + 8 - plan.offloaded
        np.testing.assert_array_equal(_run(c, x), _run(m, x))


# ------------------------------------------------------------------------------------------------
# the target file


def test_status_words_and_new_constraints_are_validated(tmp_path):
    base = {"name": "x", "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1}}
    cases = [
        ({**base, "ops": {"ADD": {}}, "status": {"dtypes": "no"}}, "status.dtypes: unknown kind"),
        ({**base, "ops": {"LSTM": {"input_dtypes": {"19": ["INT17"]}}}}, "'INT17' is not a TensorType"),
        ({**base, "ops": {"PRELU": {"one_dimensional": ["alpha"]}}}, "ops.PRELU.one_dimensional: expected a list"),
        ({**base, "ops": {"MEAN": {"no_batch_axis": 1}}}, "ops.MEAN.no_batch_axis: expected true or false"),
        ({**base, "ops": {"QUANTIZE": {"status_of": {"dtype": "odd"}}}}, "ops.QUANTIZE.status_of: expected a table"),
    ]
    for doc, message in cases:
        p = tmp_path / "t.json"
        p.write_text(json.dumps(doc))
        with pytest.raises(TargetError, match=message.replace(".", r"\.")):
            load_target(str(p))


def test_the_shipped_target_documents_how_several_regions_are_modelled():
    t = load_target("edgetpu")
    assert "-a" in t.description and "max_partitions" in t.description
    assert set(t.status) == {"unsupported_op", "version", "dtype", "rank", "limitation"}

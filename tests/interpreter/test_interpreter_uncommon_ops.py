"""Ops real models use beyond the common vision set: SIGN, ATAN2, ADD_N, RANK, MATRIX_DIAG,
MATRIX_SET_DIAG, REVERSE_SEQUENCE, SEGMENT_SUM, UNSORTED_SEGMENT_{SUM,PROD,MAX,MIN}, SCATTER_ND,
EMBEDDING_LOOKUP, ONE_HOT, TOPK_V2, LOCAL_RESPONSE_NORMALIZATION, BROADCAST_ARGS, RIGHT_SHIFT,
BITWISE_XOR, UNIQUE, DYNAMIC_UPDATE_SLICE, SPARSE_TO_DENSE, BUCKETIZE, RFFT2D, NON_MAX_SUPPRESSION_V4/V5.

Each case is a one-op model built with ModelBuilder, versioned by the workbench's own rules, run by
our fast kernels, our references and ai-edge-litert's builtin kernels (child process): integer and
bool outputs must be equal, float outputs within max|ours - litert| <= 1e-5 * (max|litert| + 1).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from helpers import litert_runner
from workbench.errors import UnsupportedOpError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.schema import (
    BucketizeOptions,
    LocalResponseNormalizationOptions,
    ModelBuilder,
    OneHotOptions,
    ReverseSequenceOptions,
    SparseToDenseOptions,
    TensorType,
    UniqueOptions,
)
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.versioning import update_versions

F32, I32, I64, BOOL = np.float32, np.int32, np.int64, np.bool_
TOL = 1e-5


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def X(a):
    return ("x", np.asarray(a))


def C(a, dtype=None):
    return ("c", np.asarray(a, dtype))


def one_op(op, ins, outs, options=None):
    """ins: ("x", array) model inputs, ("c", array) constants, ("-",) absent; outs: (shape, dtype)."""
    b = ModelBuilder()
    ids, feed = [], {}
    for k, spec in enumerate(ins):
        if spec[0] == "-":
            ids.append(-1)
        elif spec[0] == "x":
            ids.append(b.input(f"in{k}", spec[1].shape, spec[1].dtype))
            feed[f"in{k}"] = spec[1]
        else:
            arr = np.array(spec[1])
            if arr.ndim == 0:
                le = arr.astype(arr.dtype.newbyteorder("<"))
                ids.append(b.tensor(f"c{k}", (), arr.dtype, buffer=b.add_buffer(le.tobytes())))
            else:
                ids.append(b.constant(f"c{k}", arr))
    out_ids = [b.tensor(f"out{k}", shape, dtype) for k, (shape, dtype) in enumerate(outs)]
    b.op(op, ids, out_ids, options)
    b.output(*out_ids)
    return b, feed


CASES = {}


def add(name, fn):
    CASES[name] = fn


def f32(rng, shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def ints(rng, shape, lo, hi, dtype=I32):
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


# -- elementwise --------------------------------------------------------------------------------
add("sign_f32", lambda r: one_op(B.SIGN, [X(np.concatenate([f32(r, (10,)), [0.0, -0.0, 3.0]]).astype(F32))],
                                 [((13,), F32)]))
add("sign_int32_v2", lambda r: one_op(B.SIGN, [X(ints(r, (3, 4), -5, 5))], [((3, 4), I32)]))
add("atan2", lambda r: one_op(B.ATAN2, [X(f32(r, (3, 5))), X(f32(r, (3, 5)))], [((3, 5), F32)]))
add("add_n_3", lambda r: one_op(B.ADD_N, [X(f32(r, (2, 3))), X(f32(r, (2, 3))), C(f32(r, (2, 3)))], [((2, 3), F32)]))
add("add_n_int32", lambda r: one_op(B.ADD_N, [X(ints(r, (4,), -99, 99)), X(ints(r, (4,), -99, 99))], [((4,), I32)]))
add("bitwise_xor", lambda r: one_op(B.BITWISE_XOR, [X(ints(r, (3, 4), -128, 127, np.int8)),
                                                    X(ints(r, (4,), -128, 127, np.int8))], [((3, 4), np.int8)]))
add("bitwise_xor_uint32", lambda r: one_op(B.BITWISE_XOR, [X(ints(r, (5,), 0, 2 ** 32 - 1, np.uint32)),
                                                           X(ints(r, (5,), 0, 2 ** 32 - 1, np.uint32))],
                                           [((5,), np.uint32)]))
add("right_shift_int32", lambda r: one_op(B.RIGHT_SHIFT, [X(ints(r, (3, 4), -10 ** 6, 10 ** 6)),
                                                          X(ints(r, (3, 4), 0, 31))], [((3, 4), I32)]))
add("right_shift_uint8", lambda r: one_op(B.RIGHT_SHIFT, [X(ints(r, (6,), 0, 255, np.uint8)),
                                                          X(ints(r, (6,), 0, 7, np.uint8))], [((6,), np.uint8)]))

# -- shapes and layout ------------------------------------------------------------------------------
add("rank", lambda r: one_op(B.RANK, [X(f32(r, (2, 3, 4)))], [((), I32)]))
add("matrix_diag", lambda r: one_op(B.MATRIX_DIAG, [X(f32(r, (2, 4)))], [((2, 4, 4), F32)]))
add("matrix_diag_int32", lambda r: one_op(B.MATRIX_DIAG, [X(ints(r, (3,), -9, 9))], [((3, 3), I32)]))
add("matrix_set_diag", lambda r: one_op(B.MATRIX_SET_DIAG, [X(f32(r, (2, 3, 5))), X(f32(r, (2, 3)))],
                                        [((2, 3, 5), F32)]))
add("reverse_sequence", lambda r: one_op(
    B.REVERSE_SEQUENCE, [X(f32(r, (3, 5, 2))), C(np.array([2, 5, 0], I32))], [((3, 5, 2), F32)],
    ReverseSequenceOptions(seq_dim=1, batch_dim=0)))
add("reverse_sequence_seq0_batch2", lambda r: one_op(
    B.REVERSE_SEQUENCE, [X(ints(r, (4, 2, 3), -9, 9)), C(np.array([4, 1, 3], I64))], [((4, 2, 3), I32)],
    ReverseSequenceOptions(seq_dim=0, batch_dim=2)))
add("broadcast_args", lambda r: one_op(B.BROADCAST_ARGS, [X(np.array([2, 1, 3], I32)), X(np.array([4, 1], I32))],
                                       [((3,), I32)]))
add("broadcast_args_int64", lambda r: one_op(B.BROADCAST_ARGS, [X(np.array([5], I64)), X(np.array([3, 1, 1], I64))],
                                             [((3,), I64)]))
add("dynamic_update_slice", lambda r: one_op(
    B.DYNAMIC_UPDATE_SLICE, [X(f32(r, (4, 5))), X(f32(r, (2, 3))), X(np.array([1, 4], I32))], [((4, 5), F32)]))
add("dynamic_update_slice_clamped_negative", lambda r: one_op(
    B.DYNAMIC_UPDATE_SLICE, [X(ints(r, (3, 4, 2), -9, 9)), X(ints(r, (2, 2, 2), 10, 20)),
                             X(np.array([-3, 9, 0], I32))], [((3, 4, 2), I32)]))
add("dynamic_update_slice_int64_index_v2", lambda r: one_op(
    B.DYNAMIC_UPDATE_SLICE, [X(f32(r, (6,))), X(f32(r, (2,))), X(np.array([3], I64))], [((6,), F32)]))

# -- gather / scatter -----------------------------------------------------------------------------
add("embedding_lookup", lambda r: one_op(B.EMBEDDING_LOOKUP, [X(np.array([3, 0, 3, 1], I32)), C(f32(r, (5, 4)))],
                                         [((4, 4), F32)]))
add("embedding_lookup_3d_table", lambda r: one_op(B.EMBEDDING_LOOKUP, [X(np.array([1, 2], I32)),
                                                                         C(f32(r, (3, 2, 3)))], [((2, 2, 3), F32)]))
add("scatter_nd", lambda r: one_op(B.SCATTER_ND, [X(np.array([[0, 1], [2, 3], [0, 1]], I32)), X(f32(r, (3,))),
                                                  C(np.array([3, 4], I32))], [((3, 4), F32)]))
add("scatter_nd_slices_int32", lambda r: one_op(
    B.SCATTER_ND, [X(np.array([[1], [3]], I32)), X(ints(r, (2, 2, 3), -9, 9)), C(np.array([4, 2, 3], I32))],
    [((4, 2, 3), I32)]))
add("one_hot", lambda r: one_op(B.ONE_HOT, [X(np.array([0, 2, -1, 5, 1], I32)), C(np.array(4, I32)),
                                            C(np.array(1.5, F32)), C(np.array(-0.5, F32))],
                                [((5, 4), F32)], OneHotOptions(axis=-1)))
add("one_hot_axis0_int64", lambda r: one_op(B.ONE_HOT, [X(np.array([[1, 0], [2, 2]], I64)), C(np.array(3, I32)),
                                                        C(np.array(7, I32)), C(np.array(0, I32))],
                                            [((3, 2, 2), I32)], OneHotOptions(axis=0)))
add("one_hot_bool", lambda r: one_op(B.ONE_HOT, [X(np.array([1, 0, 3], I32)), C(np.array(3, I32)),
                                                 C(np.array(True)), C(np.array(False))], [((3, 3), BOOL)],
                                     OneHotOptions(axis=-1)))
add("sparse_to_dense", lambda r: one_op(
    B.SPARSE_TO_DENSE, [C(np.array([[0, 1], [2, 0], [1, 3]], I32)), C(np.array([3, 4], I32)), X(f32(r, (3,))),
                        C(np.array(-1.0, F32))], [((3, 4), F32)], SparseToDenseOptions(validate_indices=False)))
add("sparse_to_dense_1d_scalar_value", lambda r: one_op(
    B.SPARSE_TO_DENSE, [C(np.array([4, 1], I64)), C(np.array([6], I64)), C(np.array(9, I32)), C(np.array(2, I32))],
    [((6,), I32)]))

# -- reductions by segment --------------------------------------------------------------------------
add("segment_sum", lambda r: one_op(B.SEGMENT_SUM, [X(f32(r, (6, 3))), C(np.array([0, 0, 1, 2, 2, 3], I32))],
                                    [((4, 3), F32)]))
add("segment_sum_int32", lambda r: one_op(B.SEGMENT_SUM, [X(ints(r, (4,), -9, 9)), C(np.array([0, 1, 1, 1], I32))],
                                          [((2,), I32)]))
for _kind in ("SUM", "PROD", "MAX", "MIN"):
    _op = B[f"UNSORTED_SEGMENT_{_kind}"]
    add(f"unsorted_segment_{_kind.lower()}", lambda r, _op=_op: one_op(
        _op, [X(f32(r, (5, 2))), X(np.array([2, 0, 2, 1, 0], I32)), C(np.array([4], I32))], [((4, 2), F32)]))
    add(f"unsorted_segment_{_kind.lower()}_int32_2d_ids", lambda r, _op=_op: one_op(
        _op, [X(ints(r, (2, 3, 2), -5, 5)), X(np.array([[0, 2, 0], [1, 2, 2]], I32)), C(np.array(3, I32))],
        [((3, 2), I32)]))

# -- selection --------------------------------------------------------------------------------------
add("topk", lambda r: one_op(B.TOPK_V2, [X(f32(r, (3, 8))), C(np.array(3, I32))], [((3, 3), F32), ((3, 3), I32)]))
add("topk_ties_int32", lambda r: one_op(B.TOPK_V2, [X(ints(r, (2, 10), 0, 3)), C(np.array([4], I32))],
                                        [((2, 4), I32), ((2, 4), I32)]))
add("topk_int8_v2", lambda r: one_op(B.TOPK_V2, [X(ints(r, (7,), -128, 127, np.int8)), C(np.array(7, I32))],
                                     [((7,), np.int8), ((7,), I32)]))
add("unique", lambda r: one_op(B.UNIQUE, [X(ints(r, (12,), -3, 3))], [((12,), I32), ((12,), I32)],
                               UniqueOptions(idx_out_type=TensorType.INT32)))
add("unique_f32_int64_index", lambda r: one_op(B.UNIQUE, [X(np.array([1.5, -2, 1.5, 0, 0, 7], F32))],
                                               [((6,), F32), ((6,), I64)],
                                               UniqueOptions(idx_out_type=TensorType.INT64)))
add("bucketize", lambda r: one_op(B.BUCKETIZE, [X(np.array([-5, 0, 0.5, 1, 2.5, 10, 3], F32))], [((7,), I32)],
                                  BucketizeOptions(boundaries=(0.0, 1.0, 2.5, 5.0))))
add("bucketize_int32", lambda r: one_op(B.BUCKETIZE, [X(ints(r, (3, 4), -10, 10))], [((3, 4), I32)],
                                        BucketizeOptions(boundaries=(-3.0, 0.0, 0.5, 7.0))))

def nms_case(version, n=30, max_out=8, iou=0.5, score=0.2, sigma=None, ties=False, flip=False):
    def build(r):
        yx = r.uniform(0, 1, (n, 2))
        hw = r.uniform(0.1, 0.4, (n, 2))
        boxes = np.concatenate([yx, yx + hw], axis=1).astype(F32)
        if flip:                                     # corners in the other order for some boxes
            boxes[::3] = boxes[::3][:, [2, 3, 0, 1]]
        scores = (r.integers(0, 6, n) / 5.0 if ties else r.uniform(0, 1, n)).astype(F32)
        ins = [X(boxes), X(scores), C(np.array(max_out, I32)), C(np.array(iou, F32)), C(np.array(score, F32))]
        if version == 4:
            return one_op(B.NON_MAX_SUPPRESSION_V4, ins, [((max_out,), I32), ((), I32)])
        ins.append(C(np.array(sigma, F32)))
        return one_op(B.NON_MAX_SUPPRESSION_V5, ins, [((max_out,), I32), ((max_out,), F32), ((), I32)])
    return build


add("nms_v4", nms_case(4))
add("nms_v4_ties_flipped_corners", nms_case(4, n=40, max_out=20, ties=True, flip=True, score=0.1))
add("nms_v4_few_candidates", nms_case(4, score=0.9, max_out=10))
add("nms_v5_hard", nms_case(5, sigma=0.0))
add("nms_v5_soft", nms_case(5, n=25, max_out=12, sigma=0.5, iou=0.9, score=0.05))
add("nms_v5_soft_ties", nms_case(5, n=25, max_out=25, sigma=0.3, iou=1.0, score=0.1, ties=True))

# -- signal / normalisation ---------------------------------------------------------------------------
add("local_response_normalization", lambda r: one_op(
    B.LOCAL_RESPONSE_NORMALIZATION, [X(f32(r, (1, 3, 3, 7)))], [((1, 3, 3, 7), F32)],
    LocalResponseNormalizationOptions(radius=2, bias=1.0, alpha=0.3, beta=0.75)))
add("rfft2d", lambda r: one_op(B.RFFT2D, [X(f32(r, (2, 4, 8))), C(np.array([4, 8], I32))],
                               [((2, 4, 5), np.complex64)]))
add("rfft2d_crop_and_pad", lambda r: one_op(B.RFFT2D, [X(f32(r, (6, 3))), C(np.array([4, 4], I32))],
                                            [((4, 3), np.complex64)]))


# ------------------------------------------------------------------------------------------------
# running


def build_case(name):
    builder, feed = CASES[name](rng_for(name))
    return update_versions(builder.build()), feed


def run_ours(model, feed, reference=False):
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    by_name = {d["name"]: d for d in it.get_input_details()}
    for name, value in feed.items():
        it.set_tensor(by_name[name]["index"], value)
    it.invoke()
    return [np.array(it.get_tensor(d["index"])) for d in it.get_output_details()]


def assert_same(ours, theirs, what=""):
    assert len(ours) == len(theirs), what
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape, f"{what} output {k}: shape {a.shape} vs {b.shape}"
        assert a.dtype == b.dtype, f"{what} output {k}: dtype {a.dtype} vs {b.dtype}"
        if a.dtype.kind in "fc":
            err = float(np.max(np.abs(a - b))) if a.size else 0.0
            assert err <= TOL * (float(np.max(np.abs(b))) + 1 if b.size else 1), f"{what} output {k}: error {err}"
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"{what} output {k}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_matches_reference_path(name):
    model, feed = build_case(name)
    assert_same(run_ours(model, feed), run_ours(model, feed, reference=True), name)


@pytest.fixture(scope="module")
def litert_extra(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_extra_ops"), CASES, build_case, workers=4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_litert(name, litert_extra):
    result = litert_extra[name]
    assert result.ok, result.describe()
    model, feed = build_case(name)
    theirs = [result.outputs[f"output_{k}"] for k in range(len(result.outputs))]
    assert_same(run_ours(model, feed), theirs, name)


def test_every_new_op_has_a_case():
    ops = {"SIGN", "ATAN2", "ADD_N", "RANK", "MATRIX_DIAG", "MATRIX_SET_DIAG", "REVERSE_SEQUENCE", "SEGMENT_SUM",
           "UNSORTED_SEGMENT_SUM", "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_MIN",
           "SCATTER_ND", "EMBEDDING_LOOKUP", "ONE_HOT", "TOPK_V2", "LOCAL_RESPONSE_NORMALIZATION", "BROADCAST_ARGS",
           "RIGHT_SHIFT", "BITWISE_XOR", "UNIQUE", "DYNAMIC_UPDATE_SLICE", "SPARSE_TO_DENSE", "BUCKETIZE", "RFFT2D",
           "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5"}
    seen = set()
    for name in CASES:
        model, _ = build_case(name)
        seen |= {B(c.builtin_code).name for c in model.operator_codes}
    assert ops <= seen, sorted(ops - seen)


# ------------------------------------------------------------------------------------------------
# semantics by hand, and errors


def run_one(op, ins, outs, options=None):
    builder, feed = one_op(op, ins, outs, options)
    return run_ours(update_versions(builder.build()), feed)


def test_topk_keeps_the_lower_index_first_on_ties():
    vals, idx = run_one(B.TOPK_V2, [X(np.array([1, 3, 3, 2, 3], I32)), C(np.array(4, I32))],
                        [((4,), I32), ((4,), I32)])
    assert vals.tolist() == [3, 3, 3, 2] and idx.tolist() == [1, 2, 4, 3]


def test_unique_keeps_first_appearance_order_and_is_dynamic():
    y, idx = run_one(B.UNIQUE, [X(np.array([5, 5, -1, 7, -1], I32))], [((5,), I32), ((5,), I32)],
                     UniqueOptions(idx_out_type=TensorType.INT32))
    assert y.tolist() == [5, -1, 7] and idx.tolist() == [0, 0, 1, 2, 1]


def test_segment_sum_with_run_time_ids_is_prepared_during_invoke():
    out, = run_one(B.SEGMENT_SUM, [X(np.array([1.0, 2.0, 4.0], F32)), X(np.array([0, 1, 1], I32))], [((1,), F32)])
    assert out.tolist() == [1.0, 6.0]
    with pytest.raises(WorkbenchError, match="start at 0"):
        run_one(B.SEGMENT_SUM, [X(np.array([1.0, 2.0], F32)), X(np.array([0, 2], I32))], [((1,), F32)])


def test_scatter_nd_adds_duplicates():
    out, = run_one(B.SCATTER_ND, [X(np.array([[1], [1], [0]], I32)), X(np.array([1.0, 2.0, 5.0], F32)),
                                  C(np.array([3], I32))], [((3,), F32)])
    assert out.tolist() == [5.0, 3.0, 0.0]


@pytest.mark.parametrize("op, ins, outs, match", [
    (B.EMBEDDING_LOOKUP, [X(np.array([0, 5], I32)), C(np.zeros((3, 2), F32))], [((2, 2), F32)], "out of bounds"),
    (B.SCATTER_ND, [X(np.array([[3]], I32)), X(np.ones(1, F32)), C(np.array([3], I32))], [((3,), F32)],
     "out of bounds"),
    (B.REVERSE_SEQUENCE, [X(np.zeros((2, 3), F32)), X(np.array([4, 1], I32))], [((2, 3), F32)], "seq_lengths"),
    (B.RIGHT_SHIFT, [X(np.array([8], I32)), X(np.array([32], I32))], [((1,), I32)], "shift counts"),
    (B.BROADCAST_ARGS, [X(np.array([2, 3], I32)), X(np.array([4], I32))], [((2,), I32)], "do not broadcast"),
])
def test_bad_values_are_named_run_time_errors(op, ins, outs, match):
    with pytest.raises(WorkbenchError, match=match):
        run_one(op, ins, outs, ReverseSequenceOptions(seq_dim=1, batch_dim=0) if op == B.REVERSE_SEQUENCE else None)


def test_bad_shapes_are_refused_at_allocate():
    with pytest.raises(UnsupportedOpError, match="same shape"):
        run_one(B.ATAN2, [X(np.zeros(3, F32)), X(np.zeros(1, F32))], [((3,), F32)])
    with pytest.raises(UnsupportedOpError, match="every input must be"):
        run_one(B.ADD_N, [X(np.zeros(3, F32)), X(np.zeros(2, F32))], [((3,), F32)])

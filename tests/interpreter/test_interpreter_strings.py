"""STRING tensors end to end: set_tensor / get_tensor / details as ai-edge-litert, constants decoded
from TFLite's packed string format, string tensors kept outside the memory plan, and the kernels
TFLite runs on strings (EQUAL / NOT_EQUAL v3, GATHER, SLICE v3, STRIDED_SLICE v5, FILL v2, SHAPE and
the data-movement ops) — every case run by our fast kernels, our references and litert's builtin
kernels (in a child process), all equal.

One litert quirk shapes the cases: its Python ``set_tensor`` mishandles a 0-d string array (the
scalar it stores is garbage bytes, so EQUAL("hey", "hey") is false), so scalar strings reach the
graph here through a RESHAPE of a [1] input.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from helpers.litert_batch import run_many
from helpers.litert_session import run_calls
from workbench import dump
from workbench.errors import KernelError, ModelError, TensorError, UnsupportedOpError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    GatherOptions,
    ModelBuilder,
    ReshapeOptions,
    ShapeOptions,
    SqueezeOptions,
    StridedSliceOptions,
    TensorType,
)
from workbench.schema.strings import pack_strings, string_array, unpack_strings
from workbench.versioning import update_versions

S = TensorType.STRING
ROOT = Path(__file__).resolve().parents[2]
STRING_OPS = ROOT / "sample_models" / "string_ops.tflite"
WORDS = np.array([[b"alpha", b"beta", b"gamma"], [b"", b"beta", b"\x00z\xff"]], dtype=object)


def strings(*values) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = list(values)
    return arr


def scalar_string(b: ModelBuilder, name: str) -> tuple[int, int]:
    """A scalar STRING tensor fed through RESHAPE of a [1] input (see the module docstring)."""
    x = b.input(name, (1,), S)
    r = b.tensor(name + "_scalar", (), S)
    b.op(B.RESHAPE, [x, b.constant(name + "_shape", np.zeros(0, np.int32))], [r], ReshapeOptions(new_shape=()))
    return x, r


def one_op(op, in_shapes, out_shape, out_type=S, consts=(), options=None):
    """op(string inputs of ``in_shapes``, constants) -> one output."""
    def build(b):
        ins = [b.input(f"x{k}", s, S) for k, s in enumerate(in_shapes)]
        ins += [b.constant(f"c{k}", c) for k, c in enumerate(consts)]
        o = b.tensor("out", out_shape, out_type)
        b.op(op, ins, [o], options)
        b.output(o)
    return build


def _scalar_fill(b):
    d = b.input("dims", (2,), np.int32)
    _, v = scalar_string(b, "value")
    o = b.tensor("out", (2, 3), S)
    b.op(B.FILL, [d, v], [o])
    b.output(o)


def _fill_const_value(b):
    d = b.input("dims", (3,), np.int64)
    o = b.tensor("out", (1, 2, 2), S)
    b.op(B.FILL, [d, b.constant("v", np.array(b"ab", dtype=object))], [o])
    b.output(o)


def _equal_scalar_input(b):
    x = b.input("x", (2, 3), S)
    _, v = scalar_string(b, "y")
    o = b.tensor("out", (2, 3), np.bool_)
    b.op(B.EQUAL, [x, v], [o])
    b.output(o)


def _gather_const_params(b):
    i = b.input("i", (2, 2), np.int32)
    o = b.tensor("out", (2, 2), S)
    b.op(B.GATHER, [b.constant("p", strings(b"a", b"", b"ccc", "ü")), i], [o], GatherOptions(axis=0))
    b.output(o)


def _two_outputs(b):
    """One string input used by two nodes, a string intermediate, a string and a bool output."""
    x = b.input("x", (2, 3), S)
    t = b.tensor("t", (3, 2), S)
    b.op(B.RESHAPE, [x, b.constant("s", np.array([3, 2], np.int32))], [t], ReshapeOptions(new_shape=(3, 2)))
    g = b.tensor("g", (3, 1), S)
    b.op(B.SLICE, [t, b.constant("b0", np.array([0, 1], np.int32)), b.constant("sz", np.array([3, 1], np.int32))],
         [g])
    e = b.tensor("e", (2, 3), np.bool_)
    b.op(B.NOT_EQUAL, [x, b.constant("k", np.array([[b"beta"]], dtype=object))], [e])
    b.output(g, e)


WORDS_U = np.array([["alpha", "bé", "gamma"], ["", "beta", "z"]])
INDEX = np.array([[2, 0], [1, 1]], np.int32)

# name -> (build(b), feeds)
CASES = {
    "equal_same_shape": (one_op(B.EQUAL, [(2, 3), (2, 3)], (2, 3), np.bool_),
                         [WORDS, np.array([[b"alpha", b"x", b"gamma"], [b"", b"bet", b"\x00z\xff"]], dtype=object)]),
    "not_equal_scalar_constant": (one_op(B.NOT_EQUAL, [(2, 3)], (2, 3), np.bool_,
                                         consts=[np.array(b"beta", dtype=object)]), [WORDS]),
    "equal_broadcast": (one_op(B.EQUAL, [(2, 1), (1, 3)], (2, 3), np.bool_),
                        [strings(b"a", b"b").reshape(2, 1), strings(b"b", b"a", b"").reshape(1, 3)]),
    "equal_rank5_broadcast": (one_op(B.EQUAL, [(2, 1, 2, 1, 2)], (2, 2, 2, 2, 2), np.bool_,
                                     consts=[np.array([b"p", b"q"] * 4, dtype=object).reshape(1, 2, 1, 2, 2)]),
                              [np.array([b"p", b"q", b"q", b"p"] * 2, dtype=object).reshape(2, 1, 2, 1, 2)]),
    "equal_unicode_input": (one_op(B.EQUAL, [(2, 3)], (2, 3), np.bool_,
                                   consts=[np.array([["alpha", "bé", "gam"]], dtype=object)]), [WORDS_U]),
    "equal_empty_tensor": (one_op(B.EQUAL, [(0, 3)], (0, 3), np.bool_, consts=[np.array(b"a", dtype=object)]),
                           [np.empty((0, 3), dtype=object)]),
    "equal_scalar_input": (_equal_scalar_input, [WORDS, strings(b"beta")]),
    "gather_vector_2d_indices": (one_op(B.GATHER, [(5,)], (2, 2), consts=[INDEX], options=GatherOptions(axis=0)),
                                 [strings(b"a", b"bb", b"", b"d\x00", b"e")]),
    "gather_int64_indices": (one_op(B.GATHER, [(3,)], (4,), consts=[np.array([2, 2, 0, 1], np.int64)],
                                    options=GatherOptions(axis=-1)), [strings(b"x", b"y", b"zz")]),
    "gather_int16_indices_v6": (one_op(B.GATHER, [(3,)], (2,), consts=[np.array([1, 0], np.int16)],
                                       options=GatherOptions()), [strings(b"x", b"y", b"zz")]),
    "gather_scalar_index": (one_op(B.GATHER, [(3,)], (), consts=[np.array(1, np.int32)], options=GatherOptions()),
                            [strings(b"x", b"yy", b"z")]),
    "gather_constant_params": (_gather_const_params, [INDEX % 4]),
    "slice_v3": (one_op(B.SLICE, [(2, 3)], (1, 2),
                        consts=[np.array([1, 1], np.int32), np.array([1, -1], np.int32)]), [WORDS]),
    "slice_int64_begin": (one_op(B.SLICE, [(2, 3)], (2, 1),
                                 consts=[np.array([0, 2], np.int64), np.array([2, 1], np.int64)]), [WORDS]),
    "strided_slice_v5": (one_op(B.STRIDED_SLICE, [(2, 3)], (2, 2), consts=[
        np.array([0, 1], np.int32), np.array([2, 3], np.int32), np.array([1, 1], np.int32)],
        options=StridedSliceOptions(begin_mask=1, end_mask=1)), [WORDS]),
    "strided_slice_reverse_shrink": (one_op(B.STRIDED_SLICE, [(2, 3)], (3,), consts=[
        np.array([1, -1], np.int32), np.array([2, -4], np.int32), np.array([1, -1], np.int32)],
        options=StridedSliceOptions(shrink_axis_mask=1)), [WORDS]),
    "fill_v2_runtime_dims": (_fill_const_value, [np.array([1, 2, 2], np.int64)]),
    "fill_v2_runtime_value": (_scalar_fill, [np.array([2, 3], np.int32), strings(b"hey")]),
    "shape_of_strings": (one_op(B.SHAPE, [(2, 3)], (2,), np.int32, options=ShapeOptions(out_type=TensorType.INT32)),
                         [WORDS]),
    "two_nodes_one_input": (_two_outputs, [WORDS]),
    # the data-movement kernels of another area, which must keep strings intact
    "reshape": (one_op(B.RESHAPE, [(2, 3)], (3, 2), consts=[np.array([3, 2], np.int32)],
                       options=ReshapeOptions(new_shape=(3, 2))), [WORDS]),
    "squeeze_v2": (one_op(B.SQUEEZE, [(1, 3)], (3,), options=SqueezeOptions(squeeze_dims=(0,))), [WORDS[:1]]),
    "expand_dims": (one_op(B.EXPAND_DIMS, [(2, 3)], (2, 1, 3), consts=[np.array([1], np.int32)]), [WORDS]),
    "tile_v2": (one_op(B.TILE, [(2, 3)], (4, 3), consts=[np.array([2, 1], np.int32)]), [WORDS]),
    "gather_nd_v2": (one_op(B.GATHER_ND, [(2, 3)], (2,), consts=[np.array([[0, 1], [1, 2]], np.int32)]), [WORDS]),
}

# TFLite refuses these (at prepare or invoke); so must we, with a workbench error
REFUSED = {
    "less_on_strings": (one_op(B.LESS, [(2, 3), (2, 3)], (2, 3), np.bool_), [WORDS, WORDS]),
    "greater_equal_on_strings": (one_op(B.GREATER_EQUAL, [(2, 3), (2, 3)], (2, 3), np.bool_), [WORDS, WORDS]),
    "gather_2d_string_params": (one_op(B.GATHER, [(2, 3)], (2, 2), consts=[np.array([1, 0], np.int32)],
                                       options=GatherOptions(axis=1)), [WORDS]),
    "cast_string_to_int": (one_op(B.CAST, [(2, 3)], (2, 3), np.int32), [WORDS]),
    "zeros_like_strings": (one_op(B.ZEROS_LIKE, [(2, 3)], (2, 3)), [WORDS]),
    "where_strings": (one_op(B.WHERE, [(2, 3)], (6, 2), np.int64), [WORDS]),
    "shape_without_options": (one_op(B.SHAPE, [(2, 3)], (2,), np.int32), [WORDS]),
    "gather_index_out_of_range": (one_op(B.GATHER, [(3,)], (1,), consts=[np.array([3], np.int32)],
                                         options=GatherOptions()), [strings(b"a", b"b", b"c")]),
    "gather_negative_index": (one_op(B.GATHER, [(3,)], (1,), consts=[np.array([-1], np.int32)],
                                     options=GatherOptions()), [strings(b"a", b"b", b"c")]),
}

TYPE_ERRORS = {   # what litert refuses with a run-time error, as we do
    "gather_index_out_of_range": KernelError, "gather_negative_index": KernelError,
}


def model_bytes(build) -> bytes:
    b = ModelBuilder()
    build(b)
    return dump(update_versions(b.build()))


def same(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return a.tolist() == b.tolist() if a.dtype == object else a.tobytes() == b.tobytes()


def ours(data: bytes, feeds, reference: bool = False) -> list:
    it = Interpreter(model_content=data, reference=reference)
    it.allocate_tensors()
    for d, v in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], v)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


@pytest.fixture(scope="module")
def litert():
    """litert's result of every case, in one batch of child processes."""
    names = list(CASES) + list(REFUSED)
    table = {**CASES, **REFUSED}
    models = {n: model_bytes(table[n][0]) for n in names}
    results = run_many([(models[n], table[n][1]) for n in names])
    return {n: (models[n], r) for n, r in zip(names, results)}


@pytest.mark.parametrize("name", list(CASES))
def test_string_case_equals_litert(name, litert):
    data, (status, theirs) = litert[name]
    assert status == "ok", f"litert: {theirs}"
    feeds = CASES[name][1]
    fast, ref = ours(data, feeds), ours(data, feeds, reference=True)
    assert len(fast) == len(theirs)
    for k, (a, r, t) in enumerate(zip(fast, ref, theirs)):
        assert same(a, t), f"output {k}: ours {a!r}, litert {t!r}"
        assert same(r, t), f"output {k} (reference): ours {r!r}, litert {t!r}"
        if t.dtype == object:
            assert all(type(v) is bytes for v in a.reshape(-1))


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_as_litert_refuses(name, litert):
    data, (status, msg) = litert[name]
    assert status in ("error", "crash"), f"litert ran it: {msg}"
    expected = TYPE_ERRORS.get(name, UnsupportedOpError)
    with pytest.raises(expected):
        ours(data, REFUSED[name][1])


def test_every_string_case_is_checked_against_a_version_we_register():
    """The converter's rules give these versions; each is registered (v3/v5/v2/v6 are new here)."""
    import workbench
    from workbench.interpreter.registry import BuiltinOpResolver

    resolver = BuiltinOpResolver()
    seen = set()
    for build, _ in CASES.values():
        m = workbench.load(model_bytes(build))
        for code in m.operator_codes:
            seen.add((int(code.builtin_code), code.version))
            assert (int(code.builtin_code), code.version) in resolver
    assert {(int(B.EQUAL), 3), (int(B.NOT_EQUAL), 3), (int(B.STRIDED_SLICE), 5), (int(B.SLICE), 3),
            (int(B.FILL), 2), (int(B.GATHER), 6), (int(B.SQUEEZE), 2), (int(B.TILE), 2)} <= seen


# ------------------------------------------------------------------------------------------------
# the sample model


CUSTOM = np.array([[b"alpha", b"beta", b"gamma", b"delta"], [b"x", b"e", b"", b"h"]])


@pytest.mark.parametrize("reference", [False, True])
def test_string_ops_sample_equals_litert(reference):
    data = STRING_OPS.read_bytes()
    theirs = run_calls(data, [("invoke", [CUSTOM]), ("invoke", [CUSTOM[::-1].copy()]), ("details",)])
    it = Interpreter(model_path=STRING_OPS, reference=reference)
    it.allocate_tensors()
    for k, feed in enumerate((CUSTOM, CUSTOM[::-1].copy())):
        it.set_tensor(it.get_input_details()[0]["index"], feed)
        it.invoke()
        mine = [it.get_tensor(d["index"]) for d in it.get_output_details()]
        assert all(same(a, b) for a, b in zip(mine, theirs[k])), (mine, theirs[k])
    # details: the dtype litert reports for every tensor, strings as np.bytes_
    for d, t in zip(it.get_tensor_details(), theirs[2]):
        assert d["dtype"] is t["dtype"], (d["name"], d["dtype"], t["dtype"])
        assert d["name"] == t["name"] and list(d["shape"]) == list(t["shape"])
    assert it.get_input_details()[0]["dtype"] is np.bytes_


def test_string_ops_sample_computes_what_it_says():
    it = Interpreter(model_path=STRING_OPS)
    it.allocate_tensors()
    it.set_tensor(0, CUSTOM)
    it.invoke()
    outs = sorted((it.get_tensor(d["index"]) for d in it.get_output_details()), key=lambda a: a.shape)
    assert [o.tolist() for o in outs] == [[[True, False], [False, False]], [True, False, False]]


def test_string_constants_read_as_litert_reads_them():
    """get_tensor of the model's constant strings, and of the string input after set_tensor."""
    code = STRING_OPS.read_bytes()
    it = Interpreter(model_content=code)
    it.allocate_tensors()
    it.set_tensor(0, CUSTOM)
    it.invoke()
    const = {d["index"]: it.get_tensor(d["index"]) for d in it.get_tensor_details()
             if d["dtype"] is np.bytes_ and d["name"].startswith("Const")}
    assert {k: v.tolist() for k, v in const.items()} == {2: b"beta", 3: b"e"}
    assert all(v.dtype == object and v.shape == () for v in const.values())
    got = it.get_tensor(0)
    assert got.dtype == object and got.tolist() == CUSTOM.tolist()


# ------------------------------------------------------------------------------------------------
# set_tensor / get_tensor


def _echo(shape):
    def build(b):
        x = b.input("x", shape, S)
        o = b.tensor("out", shape, S)
        b.op(B.RESHAPE, [x, b.constant("s", np.array(shape, np.int32))], [o], ReshapeOptions(new_shape=shape))
        b.output(o)
    return model_bytes(build)


FEEDS = {
    "bytes_S": np.array([b"a", b"b\x00c", b""]),
    "str_U": np.array(["a", "é€", ""]),
    "object_bytes": strings(b"a", b"b\x00", b"\xff"),
    "object_str_and_bytes": strings("a", b"b", "ç"),
    "object_numpy_scalars": strings(np.bytes_(b"n"), np.str_("s"), b"x"),
}


def test_set_tensor_takes_bytes_str_and_object_arrays_as_litert():
    data = _echo((3,))
    theirs = run_many([(data, [v]) for v in FEEDS.values()])
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    for (name, v), (status, out) in zip(FEEDS.items(), theirs):
        assert status == "ok", (name, out)
        it.set_tensor(0, v)
        it.invoke()
        mine = it.get_tensor(it.get_output_details()[0]["index"])
        assert same(mine, out[0]), (name, mine, out[0])
        assert same(it.get_tensor(0), out[0])
        assert all(type(x) is bytes for x in mine)


BAD_FEEDS = {
    "ints_in_object_array": strings(1, 2, 3),
    "none_in_object_array": strings(None, b"a", b"b"),
    "bytearray": strings(bytearray(b"a"), b"b", b"c"),
    "int32_array": np.array([1, 2, 3], np.int32),
    "float_array": np.zeros(3, np.float32),
    "wrong_shape": np.array([b"a", b"b"]),
    "wrong_rank": np.array([[b"a", b"b", b"c"]]),
}


def test_set_tensor_refuses_what_litert_refuses():
    data = _echo((3,))
    theirs = run_many([(data, [v]) for v in BAD_FEEDS.values()])
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    for (name, v), (status, msg) in zip(BAD_FEEDS.items(), theirs):
        assert status == "error" and "ValueError" in msg, (name, status, msg)
        with pytest.raises(TensorError) as info:       # a ValueError too, as litert's
            it.set_tensor(0, v)
        assert isinstance(info.value, ValueError)
        assert "tensor 0" in str(info.value)


def test_string_into_numeric_tensor_is_refused():
    b = ModelBuilder()
    x = b.input("x", (3,), np.float32)
    b.output(x)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    with pytest.raises(TensorError, match="wrong type"):
        it.set_tensor(0, np.array([b"a", b"b", b"c"]))


def test_get_tensor_returns_a_copy():
    it = Interpreter(model_content=_echo((2,)))
    it.allocate_tensors()
    it.set_tensor(0, np.array([b"a", b"b"]))
    it.invoke()
    got = it.get_tensor(1)
    got[0] = b"changed"
    assert it.get_tensor(1).tolist() == [b"a", b"b"]


def test_details_report_bytes_for_string_tensors():
    data = _echo((2, 2))
    theirs = run_calls(data, [("details",)])[0]
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    assert [d["dtype"] for d in it.get_tensor_details()] == [d["dtype"] for d in theirs]
    assert it.get_input_details()[0]["dtype"] is np.bytes_
    assert it.get_output_details()[0]["dtype"] is np.bytes_


# ------------------------------------------------------------------------------------------------
# memory: strings live outside the numeric memory plan


def test_string_tensors_are_not_in_the_memory_plan():
    it = Interpreter(model_path=STRING_OPS)
    it.allocate_tensors()
    ctx = it._sg(0).context
    planned = {a.tensor for a in it.arena_plan.allocations}
    string_ids = {d["index"] for d in it.get_tensor_details() if d["dtype"] is np.bytes_}
    assert string_ids and not planned & string_ids
    assert planned == {10, 12}                         # the two bool outputs
    for t in string_ids:
        assert ctx.tensors[t].dtype == object
        if not ctx.is_constant(t):
            assert all(v == b"" for v in ctx.tensors[t].reshape(-1))   # fresh tensors hold b""


def test_string_results_do_not_leak_between_invokes():
    data = model_bytes(CASES["two_nodes_one_input"][0])
    a = WORDS
    b = np.array([[b"q", b"r", b"s"], [b"t", b"u", b"beta"]], dtype=object)
    theirs = run_calls(data, [("invoke", [a]), ("invoke", [b]), ("invoke", [a])])
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    for feed, expect in zip((a, b, a), theirs):
        it.set_tensor(0, feed)
        it.invoke()
        mine = [it.get_tensor(d["index"]) for d in it.get_output_details()]
        assert all(same(m, e) for m, e in zip(mine, expect))


def test_resized_string_input_equals_litert():
    data = model_bytes(one_op(B.EQUAL, [(2,)], (2,), np.bool_, consts=[np.array(b"b", dtype=object)]))
    feeds = [strings(b"a", b"b"), strings(b"b", b"b", b"c", b"", b"b"), strings(b"b")]
    theirs = run_calls(data, [("invoke", [f]) for f in feeds])
    it = Interpreter(model_content=data)
    for feed, expect in zip(feeds, theirs):
        it.resize_tensor_input(0, feed.shape)
        it.allocate_tensors()
        it.set_tensor(0, feed)
        it.invoke()
        assert same(it.get_tensor(it.get_output_details()[0]["index"]), expect[0])


def test_dynamic_string_output_is_prepared_again_when_dims_change():
    data = model_bytes(_fill_const_value)
    feeds = [np.array([1, 2, 2], np.int64), np.array([3, 1, 1], np.int64), np.array([0, 4, 1], np.int64)]
    theirs = run_calls(data, [("invoke", [f]) for f in feeds])
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    for feed, expect in zip(feeds, theirs):
        it.set_tensor(0, feed)
        it.invoke()
        assert same(it.get_tensor(it.get_output_details()[0]["index"]), expect[0])
    assert it._sg(0).deferred_nodes == [0]


def test_steps_and_folding_carry_strings():
    it = Interpreter(model_content=model_bytes(_gather_const_params), keep_intermediates=True)
    it.allocate_tensors()
    it.set_tensor(0, INDEX % 4)
    events = list(it.steps())
    assert events[0].op == "GATHER" and events[0].outputs[0].tolist() == [[b"ccc", b"a"], [b"", b""]]
    assert "-> (string[2, 2])" in repr(events[0])     # a learner reads "string", not numpy's "object"
    # a GATHER of constants only is evaluated once while allocating; its output is a constant
    b = ModelBuilder()
    o = b.tensor("out", (2,), S)
    b.op(B.GATHER, [b.constant("p", strings(b"x", b"y")), b.constant("i", np.array([1, 1], np.int32))], [o],
         GatherOptions())
    e = b.tensor("e", (2,), np.bool_)
    b.op(B.EQUAL, [o, b.input("q", (2,), S)], [e], version=3)
    b.output(e)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    assert it.folded_nodes == [0]
    it.set_tensor(it.get_input_details()[0]["index"], strings(b"y", b"x"))
    it.invoke()
    assert it.get_tensor(it.get_output_details()[0]["index"]).tolist() == [True, False]


# ------------------------------------------------------------------------------------------------
# the packed string format


def test_pack_unpack_round_trip():
    values = [b"", b"a", b"\x00\x01", "é".encode(), b"x" * 300]
    raw = pack_strings(values)
    n = len(values)
    assert struct.unpack_from("<i", raw)[0] == n
    assert struct.unpack_from("<i", raw, 4)[0] == 4 * (n + 2)          # offset[0] = header size
    assert struct.unpack_from("<i", raw, 4 * (n + 1))[0] == len(raw)   # offset[n] = buffer length
    assert unpack_strings(raw, n) == values
    assert pack_strings(["é", b"b"]) == pack_strings([b"\xc3\xa9", b"b"])
    assert unpack_strings(pack_strings([]), 0) == []


def test_builder_writes_the_converters_bytes():
    """The sample model's constant "beta" is what the builder packs for b"beta"."""
    import workbench

    m = workbench.load(STRING_OPS)
    t = m.subgraphs[0].tensors[2]
    assert bytes(m.buffers[t.buffer].data) == pack_strings([b"beta"])
    b = ModelBuilder()
    c = b.constant("c", np.array([["x", "yz"]]))
    assert b.tensors[c].type == S and b.tensors[c].shape == (1, 2)
    assert bytes(b.buffers[b.tensors[c].buffer].data) == pack_strings([b"x", b"yz"])


def _header(n, *offsets):
    return struct.pack(f"<{1 + len(offsets)}i", n, *offsets)


MALFORMED = {
    "shorter_than_the_count": (b"\x01\x00", (1,), "at least 4 bytes"),
    "negative_count": (_header(-1, 0, 0), (1,), "string count is -1"),
    "header_past_the_end": (_header(3, 20, 21), (3,), "header of 20 bytes"),
    "count_differs_from_shape": (pack_strings([b"a", b"b"]), (3,), "holds 2 strings"),
    "offset_inside_header": (_header(1, 4, 12) + b"abcd", (1,), "inside the 12-byte header"),
    "decreasing_offsets": (_header(2, 16, 18, 17) + b"ab", (2,), r"below offset\[1\]"),
    "offset_past_the_end": (_header(1, 12, 40) + b"ab", (1,), "past the end"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_string_buffers_are_model_errors(name):
    raw, shape, message = MALFORMED[name]
    with pytest.raises(ModelError, match=message):
        unpack_strings(raw, int(np.prod(shape)))
    b = ModelBuilder()
    c = b.tensor("c", shape, S, buffer=b.add_buffer(raw))
    x = b.input("x", shape, S)
    o = b.tensor("o", shape, np.bool_)
    b.op(B.EQUAL, [x, c], [o], version=3)
    b.output(o)
    with pytest.raises(ModelError, match=message) as info:
        Interpreter(model_content=dump(b.build()))
    assert "tensors[0]" in str(info.value)


def test_string_array_conversion():
    assert string_array(np.array(["é"])).tolist() == ["é".encode()]
    assert string_array(np.array([b"a\x00"]), "v").tolist() == [b"a"]      # numpy drops trailing NULs of 'S'
    assert string_array(strings(b"a\x00")).tolist() == [b"a\x00"]            # object arrays keep them
    with pytest.raises(TensorError, match="bytes or str"):
        string_array(np.arange(3))


def test_invoke_node_takes_strings():
    it = Interpreter(model_content=model_bytes(CASES["equal_same_shape"][0]))
    it.allocate_tensors()
    (out,) = it.invoke_node(0, {0: np.array([["a", "b", "c"], ["d", "e", "f"]]),
                                1: np.array([["a", "x", "c"], ["d", "e", "y"]])})
    assert out.tolist() == [[True, False, True], [True, True, False]]


def test_workbench_errors_only_for_string_misuse():
    """A kernel that does not take strings says so (never a numpy TypeError)."""
    for op in (B.ADD, B.MUL, B.MAXIMUM, B.ABS, B.CONCATENATION):
        b = ModelBuilder()
        x = b.input("x", (2,), S)
        ins = [x, x] if op not in (B.ABS, B.CONCATENATION) else [x]
        o = b.tensor("o", (2,), S)
        b.op(op, ins, [o])
        b.output(o)
        it = Interpreter(model=b.build())
        try:
            it.allocate_tensors()
            it.set_tensor(0, strings(b"a", b"b"))
            it.invoke()
        except WorkbenchError:
            continue
        pytest.fail(f"{op.name} ran on strings")


def test_scalar_string_input_set_directly():
    """A 0-d string given to set_tensor is stored as given (litert stores garbage bytes for it, which is
    why the litert comparisons feed scalars through RESHAPE)."""
    data = model_bytes(one_op(B.EQUAL, [()], (), np.bool_, consts=[np.array(b"hey", dtype=object)]))
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    for value, expect in ((np.array(b"hey", dtype=object), True), (np.array("hey"), True), (np.array(b"he"), False)):
        it.set_tensor(0, value)
        it.invoke()
        assert it.get_tensor(0).tolist() == (b"hey" if expect else b"he")
        assert it.get_tensor(it.get_output_details()[0]["index"]).tolist() is expect

"""The dtype variants of the comparison, select, gather, cast, unpack, slice, strided-slice, fill and
where kernels: tiny one-op models (versions from the converter's rules), each run by our fast
kernel, our reference (``reference=True``) and ai-edge-litert's builtin kernels in a child process;
every output element equal (bit-exact, NaN payloads included).

What litert refuses (a type its kernel does not take, an int8 comparison without quantization,
which aborts it) we refuse with a workbench error; where TFLite's result is undefined (a quantized
comparison scale above 1, an unquantized int16 NOT_EQUAL, which writes nothing) we refuse too and
do not ask litert.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from helpers.litert_batch import run_many
from workbench import dump, load
from workbench.errors import UnsupportedOpError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.interpreter.registry import BuiltinOpResolver
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    GatherOptions,
    ModelBuilder,
    ShapeOptions,
    StridedSliceOptions,
    TensorType,
    UnpackOptions,
)
from workbench.versioning import update_versions

F16, F32, F64 = np.float16, np.float32, np.float64
I8, U8, I16, U16, I32, U32, I64 = np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64
BOOL, C64 = np.bool_, np.complex64
ALL = (F32, F16, F64, I8, U8, I16, U16, I32, U32, I64, BOOL, C64)
SHORT = {F32: "f32", F16: "f16", F64: "f64", I8: "i8", U8: "u8", I16: "i16", U16: "u16", I32: "i32", U32: "u32",
         I64: "i64", BOOL: "bool", C64: "c64"}


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def values(rng, dt, shape, small: bool = False) -> np.ndarray:
    """Values of ``dt`` that exercise it: the whole integer range (with repeats, so that equal pairs
    occur), floats with ties, -0.0, infinities and NaN."""
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt == BOOL:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = (max(info.min, -4), min(info.max, 4)) if small else (info.min, info.max)
        v = rng.integers(lo, hi, n, endpoint=True)
        v[: min(n, 2)] = (lo, hi)[: min(n, 2)]
        return v.astype(dt).reshape(shape)
    base = rng.integers(-6, 7, n) / 2.0
    if n >= 8 and not small:
        base[:5] = (np.nan, np.inf, -np.inf, -0.0, 0.0)
    if dt.kind == "c":
        return (base + 1j * rng.integers(-3, 4, n)).astype(dt).reshape(shape)
    return base.astype(dt).reshape(shape)


def q(scale, zp):
    return {"scale": scale, "zero_point": zp}


# ------------------------------------------------------------------------------------------------
# case builders: each returns (build(b), feeds)


def every_pair(op, dt, q1, q2):
    """Every value of int8/uint8 against every other: x [256, 1], y [1, 256] broadcast (65536 pairs)."""
    info = np.iinfo(dt)
    allv = np.arange(info.min, info.max + 1).astype(dt)

    def build(b):
        x = b.input("x", (256, 1), dt, quantization=q1)
        y = b.input("y", (1, 256), dt, quantization=q2)
        o = b.tensor("out", (256, 256), BOOL)
        b.op(op, [x, y], [o])
        b.output(o)
    return build, [allv.reshape(256, 1), allv.reshape(1, 256)]


def binary(op, dt, shapes=((3, 8), (3, 8)), q1=None, q2=None, name=""):
    rng = rng_for(name)

    def build(b):
        x = b.input("x", shapes[0], dt, quantization=q1)
        y = b.input("y", shapes[1], dt, quantization=q2)
        o = b.tensor("out", np.broadcast_shapes(*shapes), BOOL)
        b.op(op, [x, y], [o])
        b.output(o)
    x = values(rng, dt, shapes[0])
    y = values(rng, dt, shapes[1])
    if shapes[0] == shapes[1]:
        y.reshape(-1)[::3] = x.reshape(-1)[::3]       # equal pairs
    return build, [x, y]


def select(op, dt, cond_shape, shape, q1=None, q2=None, qo=None, out_shape=None, name="", version=1):
    rng = rng_for(name)

    def build(b):
        c = b.input("c", cond_shape, BOOL)
        x = b.input("x", shape, dt, quantization=q1)
        y = b.input("y", shape if op == B.SELECT else shape[1:], dt, quantization=q2)
        o = b.tensor("out", out_shape if out_shape is not None else
                     (shape if op == B.SELECT else np.broadcast_shapes(cond_shape, shape)), dt, quantization=qo)
        b.op(op, [c, x, y], [o], version=version)
        b.output(o)
    yshape = shape if op == B.SELECT else shape[1:]
    return build, [values(rng, BOOL, cond_shape), values(rng, dt, shape), values(rng, dt, yshape)]


def gather(dt, idx_dt, axis=0, batch_dims=0, qp=None, name=""):
    rng = rng_for(name)
    shape = (2, 5, 3)
    idx = rng.integers(0, shape[axis], (2, 4)).astype(idx_dt)

    def build(b):
        p = b.input("p", shape, dt, quantization=qp)
        i = b.input("i", idx.shape, idx_dt)
        out = shape[:axis] + idx.shape[batch_dims:] + shape[axis + 1:]
        o = b.tensor("out", out, dt, quantization=qp)
        b.op(B.GATHER, [p, i], [o], GatherOptions(axis=axis, batch_dims=batch_dims))
        b.output(o)
    return build, [values(rng, dt, shape), idx]


CAST_EDGES = {
    "f": [np.nan, np.inf, -np.inf, -0.0, 0.5, -0.5, 1.5, -2.7, 127.5, 128.0, -128.9, -129.0, 255.9, 256.0,
          32767.9, 32768.0, -32769.0, 65535.5, 65536.0, 2147483520.0, 2147483647.0, 2147483648.0, -2147483649.0,
          4294967040.0, 4294967296.0, 9.2233715e18, 9.223372036854775807e18, -9.3e18, 1e30, 65504.0, 65520.0,
          1.0000001, 6.1e-5, 3.0e-8],
}


def cast_input(dt) -> np.ndarray:
    dt = np.dtype(dt)
    if dt == BOOL:
        return np.array([True, False, True], bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = [info.min, info.max, 0, 1, info.max - 1, info.min + 1, 100, 255, 256, 65504, 65519, 65520,
             2 ** 24 + 1, 2 ** 31 - 1, 2 ** 53 + 1]
        return np.array([x for x in v if info.min <= x <= info.max], dt)
    edges = np.array(CAST_EDGES["f"], np.float64)
    if dt == C64:
        return (edges.astype(np.float32) + 1j * np.float32(-2.5)).astype(C64)
    with np.errstate(over="ignore"):
        return edges.astype(dt)


def cast(src, dst):
    x = cast_input(src)

    def build(b):
        i = b.input("x", x.shape, src)
        o = b.tensor("out", x.shape, dst)
        b.op(B.CAST, [i], [o])
        b.output(o)
    return build, [x]


def unpack(dt, axis, name=""):
    shape = (2, 3, 4)
    num = shape[axis]

    def build(b):
        x = b.input("x", shape, dt, quantization=q(0.1, 3) if dt in (I8, U8) else None)
        out = tuple(d for k, d in enumerate(shape) if k != axis % 3)
        outs = [b.tensor(f"o{k}", out, dt, quantization=q(0.1, 3) if dt in (I8, U8) else None) for k in range(num)]
        b.op(B.UNPACK, [x], outs, UnpackOptions(num=num, axis=axis))
        b.output(*outs)
    return build, [values(rng_for(name), dt, shape)]


def slice_(dt, rank=2, name=""):
    shape = (3, 4) if rank == 2 else (2, 1, 3, 2, 3)
    begin = [1, 1] if rank == 2 else [1, 0, 1, 0, 2]
    size = [2, -1] if rank == 2 else [1, 1, -1, 2, 1]

    def build(b):
        x = b.input("x", shape, dt)
        out = tuple(s if s >= 0 else d - bg for s, d, bg in zip(size, shape, begin))
        o = b.tensor("out", out, dt)
        b.op(B.SLICE, [x, b.constant("b", np.array(begin, np.int32)), b.constant("s", np.array(size, np.int32))], [o])
        b.output(o)
    return build, [values(rng_for(name), dt, shape)]


def strided(dt, begin, end, strides, out_shape, shape=(4, 5), name="", **masks):
    def build(b):
        x = b.input("x", shape, dt)
        o = b.tensor("out", out_shape, dt)
        b.op(B.STRIDED_SLICE, [x] + [b.constant(n, np.array(v, np.int32)) for n, v in
                                     (("b", begin), ("e", end), ("s", strides))], [o], StridedSliceOptions(**masks))
        b.output(o)
    return build, [values(rng_for(name), dt, shape)]


def fill(dt, name=""):
    v = values(rng_for(name), dt, (7,))[-1]

    def build(b):
        d = b.input("dims", (3,), I32)
        o = b.tensor("out", (2, 1, 3), dt)
        b.op(B.FILL, [d, b.constant("v", np.asarray(v, dt).reshape(()))], [o])
        b.output(o)
    return build, [np.array([2, 1, 3], I32)]


# ------------------------------------------------------------------------------------------------
# the cases


CMP = {B.EQUAL: "eq", B.NOT_EQUAL: "ne", B.LESS: "lt", B.LESS_EQUAL: "le", B.GREATER: "gt", B.GREATER_EQUAL: "ge"}
CASES: dict = {}
REFUSED: dict = {}      # name -> (build, feeds, what litert does: "error", "crash" or None = not asked)


def case(name, made):
    CASES[name] = made


def refused(name, made, litert="error"):
    REFUSED[name] = (*made, litert)


for op, tag in CMP.items():
    equality = op in (B.EQUAL, B.NOT_EQUAL)
    for dt in (F32, F16, I32, I64) + ((BOOL,) if equality else ()):
        n = f"{tag}_{SHORT[dt]}"
        case(n, binary(op, dt, name=n))
    n = f"{tag}_i32_broadcast_rank5"
    case(n, binary(op, I32, shapes=((2, 1, 3, 1, 2), (1, 2, 1, 2, 1)), name=n))
    for dt in (I8, U8):
        lo = -128 if dt == I8 else 0
        for k, (q1, q2) in enumerate([(q(0.5, 0), q(0.25, lo + 3)), (q(0.0625, lo + 100), q(0.0625, lo + 100)),
                                      (q(0.011, lo + 7), q(0.037, lo + 60)), (q(0.9999, lo + 1), q(1e-11, lo)),
                                      (q(0.1, lo + 5), q(0.1 * (1 + 2 ** -9), lo + 5)),
                                      (q(0.3, lo), q(0.7, lo + 200))]):
            n = f"{tag}_{SHORT[dt]}_rescaled_{k}"
            case(n, every_pair(op, dt, q1, q2))
        n = f"{tag}_{SHORT[dt]}_rescaled_broadcast"
        case(n, binary(op, dt, shapes=((4, 1, 8), (1, 3, 8)), q1=q(0.02, lo + 9), q2=q(0.03, lo + 2), name=n))
        n = f"{tag}_{SHORT[dt]}_unquantized"
        refused(n, binary(op, dt, name=n), "crash")
        n = f"{tag}_{SHORT[dt]}_scale_1"
        refused(n, binary(op, dt, q1=q(1.0, 0), q2=q(0.5, 0), name=n), "crash")
        n = f"{tag}_{SHORT[dt]}_scale_above_1"
        refused(n, binary(op, dt, q1=q(0.5, 0), q2=q(3.0, 0), name=n), None)
    n = f"{tag}_i16_rescaled_or_raw"
    case(n, binary(op, I16, q1=q(0.0003, 0), q2=q(0.0007, 0), name=n))
    if op != B.NOT_EQUAL:
        n = f"{tag}_i16_unquantized"
        case(n, binary(op, I16, name=n))
    for dt in (F64, U16, U32, C64) + (() if equality else (BOOL,)):
        n = f"{tag}_{SHORT[dt]}_refused"
        refused(n, binary(op, dt, name=n))
refused("ne_i16_unquantized", binary(B.NOT_EQUAL, I16, name="ne_i16_unquantized"), None)
case("eq_i16_zero_points", binary(B.EQUAL, I16, q1=q(0.25, 7), q2=q(0.5, -3), name="eq_i16_zero_points"))

for op in (B.SELECT, B.SELECT_V2):
    tag = "select" if op == B.SELECT else "select_v2"
    for dt in ALL:
        n = f"{tag}_{SHORT[dt]}"
        case(n, select(op, dt, (3, 4) if op == B.SELECT else (4,), (3, 4), name=n))
    n = f"{tag}_int8_scales_differ"
    case(n, select(op, I8, (3, 4), (3, 4), q1=q(0.1, 4), q2=q(0.7, -9), qo=q(0.3, 1), name=n))
    n = f"{tag}_uint8_scales_differ"
    case(n, select(op, U8, (3, 4), (3, 4), q1=q(0.1, 4), q2=q(0.7, 9), qo=q(0.3, 1), name=n))
    n = f"{tag}_one_element_keeps_declared_shape"
    case(n, select(op, F32, (), (1, 1), out_shape=(1,), name=n))
case("select_scalar_condition", select(B.SELECT, I16, (), (3, 4), name="select_scalar_condition"))
case("select_condition_per_row", select(B.SELECT, U32, (3,), (3, 4), name="select_condition_per_row"))
case("select_rank5", select(B.SELECT, I64, (2, 1, 2, 3, 2), (2, 1, 2, 3, 2), name="select_rank5"))
case("select_v2_rank6", select(B.SELECT_V2, F16, (1, 2, 1, 2, 1, 1), (3, 1, 2, 2, 1, 3), name="select_v2_rank6"))
# TFLite's op_version tests SELECT's input 0 -- the bool condition -- for int8 (v2) and uint32 (v4), so
# the converter never writes those versions (nor SELECT_V2 v2); litert registers them all
case("select_int8_v2", select(B.SELECT, I8, (3, 4), (3, 4), name="select_int8_v2", version=2))
case("select_uint32_v4", select(B.SELECT, U32, (3,), (3, 4), name="select_uint32_v4", version=4))
case("select_v2_uint32_v2", select(B.SELECT_V2, U32, (4,), (3, 4), name="select_v2_uint32_v2", version=2))
refused("select_v2_string", select(B.SELECT_V2, np.dtype(object), (2,), (2, 2), name="s"))

for dt in (F32, F16, I8, U8, I16, I32, I64, BOOL):
    for idx in (I16, I32, I64):
        n = f"gather_{SHORT[dt]}_{SHORT[idx]}"
        case(n, gather(dt, idx, axis=1, qp=q(0.1, 2) if dt in (I8, U8, I16) else None, name=n))
    n = f"gather_{SHORT[dt]}_batch_dims"
    case(n, gather(dt, I32, axis=1, batch_dims=1, name=n))
for dt in (F64, U16, U32, C64):
    refused(f"gather_{SHORT[dt]}_refused", gather(dt, I32, name=f"gather_{SHORT[dt]}"))

for src in ALL:
    for dst in ALL:
        case(f"cast_{SHORT[src]}_to_{SHORT[dst]}", cast(src, dst))

for dt in (F32, F16, I8, U8, I16, I32, BOOL):
    for axis in (0, 1, -1):
        n = f"unpack_{SHORT[dt]}_axis{axis}"
        case(n, unpack(dt, axis, name=n))
for dt in (I64, U32, F64, C64):
    refused(f"unpack_{SHORT[dt]}_refused", unpack(dt, 0, name="u"))

for dt in ALL:
    n = f"slice_{SHORT[dt]}"
    case(n, slice_(dt, name=n))
    n = f"strided_slice_{SHORT[dt]}"
    case(n, strided(dt, [3, 4], [0, 0], [-1, -2], (3, 2), name=n))
    n = f"fill_{SHORT[dt]}"
    case(n, fill(dt, name=n))
case("slice_rank5_v5", slice_(I8, rank=5, name="slice_rank5_v5"))
case("strided_slice_rank5_v4", strided(I16, [0, 0, 1, 0, 0], [2, 1, 3, 2, 3], [1, 1, 1, 1, 2], (2, 1, 2, 2, 2),
                                       shape=(2, 1, 3, 2, 3), name="strided_slice_rank5_v4"))
case("strided_slice_offset_v8", strided(U32, [1, 1], [2, 3], [1, 1], (2, 3), name="strided_slice_offset_v8",
                                        offset=True))
case("strided_slice_offset_begin_mask_v8", strided(I8, [1, 2], [2, 2], [1, 1], (2, 2),
                                                   name="strided_slice_offset_masks", offset=True, begin_mask=1))
refused("strided_slice_offset_stop_past_the_axis",
        strided(F32, [2], [10], [1], (8,), shape=(5,), name="o1", offset=True), None)    # litert reads outside
refused("strided_slice_offset_negative_stop", strided(F32, [1], [-3], [1], (0,), shape=(5,), name="o2", offset=True),
        "crash")
refused("strided_slice_offset_end_mask", strided(F32, [0], [0], [1], (0,), shape=(5,), name="o3", offset=True,
                                                 end_mask=1), "crash")
case("strided_slice_new_axis_ellipsis_v6", strided(BOOL, [0, 0, 1], [0, 0, 4], [1, 1, 2], (4, 1, 2),
                                                   name="strided_slice_v6", ellipsis_mask=1, new_axis_mask=2))


def zeros_like(dt):
    def build(b):
        x = b.input("x", (2, 3), dt)
        o = b.tensor("out", (2, 3), dt)
        b.op(B.ZEROS_LIKE, [x], [o])
        b.output(o)
    return build, [values(rng_for("zl"), dt, (2, 3))]


for dt in (F32, I32, I64):
    case(f"zeros_like_{SHORT[dt]}", zeros_like(dt))
for dt in (F16, I8, BOOL):
    refused(f"zeros_like_{SHORT[dt]}_refused", zeros_like(dt))


def _where_u32(b):
    x = b.input("x", (2, 3), U32)
    o = b.tensor("out", (6, 2), I64)
    b.op(B.WHERE, [x], [o])
    b.output(o)


case("where_u32_dynamic", (_where_u32, [np.array([[0, 7, 0], [2 ** 32 - 1, 0, 1]], U32)]))


def _shape_i64(b):
    x = b.input("x", (2, 0, 3), C64)
    o = b.tensor("out", (3,), I64)
    b.op(B.SHAPE, [x], [o], ShapeOptions(out_type=TensorType.INT64))
    b.output(o)


case("shape_int64_of_complex", (_shape_i64, [np.zeros((2, 0, 3), C64)]))


# ------------------------------------------------------------------------------------------------
# running them


def model_bytes(build) -> bytes:
    b = ModelBuilder()
    build(b)
    return dump(update_versions(b.build()))


def ours(data: bytes, feeds, reference: bool = False) -> list:
    it = Interpreter(model_content=data, reference=reference)
    it.allocate_tensors()
    for d, v in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], v)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


@pytest.fixture(scope="module")
def litert():
    names = list(CASES) + [n for n, r in REFUSED.items() if r[2] is not None]
    models = {n: model_bytes((CASES.get(n) or REFUSED[n])[0]) for n in CASES.keys() | REFUSED.keys()}
    feeds = {n: (CASES.get(n) or REFUSED[n])[1] for n in names}
    results = run_many([(models[n], feeds[n]) for n in names])
    return models, dict(zip(names, results))


@pytest.mark.parametrize("name", list(CASES))
def test_variant_equals_litert(name, litert):
    models, results = litert
    status, theirs = results[name]
    assert status == "ok", f"litert: {theirs}"
    feeds = CASES[name][1]
    for reference in (False, True):
        mine = ours(models[name], feeds, reference)
        assert len(mine) == len(theirs)
        for k, (a, t) in enumerate(zip(mine, theirs)):
            assert a.dtype == t.dtype and a.shape == t.shape, (k, a.dtype, a.shape, t.dtype, t.shape)
            if a.tobytes() != t.tobytes():
                bad = np.flatnonzero(a.reshape(-1).view(np.uint8) != t.reshape(-1).view(np.uint8))
                pytest.fail(f"output {k} ({'reference' if reference else 'fast'}): {a.size} elements, bytes "
                            f"differ at {bad[:8].tolist()}\nours   {a.reshape(-1)[:12]}\nlitert {t.reshape(-1)[:12]}\n"
                            f"inputs {[f.reshape(-1)[:12] for f in feeds]}")


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_variant(name, litert):
    models, results = litert
    _, feeds, expect = REFUSED[name]
    if expect is not None:
        status, msg = results[name]
        assert status == expect, f"litert: {status} {msg}"
    with pytest.raises(WorkbenchError) as info:
        ours(models[name], feeds)
    assert isinstance(info.value, (UnsupportedOpError, WorkbenchError))
    assert "node 0" in str(info.value)


def test_versions_are_registered_and_the_new_ones_exercised():
    resolver = BuiltinOpResolver()
    seen = set()
    for name, (build, _) in CASES.items():
        for code in load(model_bytes(build)).operator_codes:
            key = (B(code.builtin_code), code.version)
            seen.add(key)
            assert key in resolver, (name, key)
    wanted = {(B.EQUAL, 2), (B.EQUAL, 5), (B.NOT_EQUAL, 2), (B.NOT_EQUAL, 4), (B.LESS, 3), (B.GREATER_EQUAL, 3),
              (B.GREATER, 2), (B.LESS_EQUAL, 2), (B.SELECT, 2), (B.SELECT, 3), (B.SELECT, 4), (B.SELECT_V2, 2),
              (B.GATHER, 2), (B.GATHER, 3), (B.GATHER, 4), (B.GATHER, 5), (B.GATHER, 6), (B.CAST, 2), (B.CAST, 3),
              (B.CAST, 4), (B.CAST, 5), (B.UNPACK, 2), (B.UNPACK, 3), (B.UNPACK, 4), (B.UNPACK, 5), (B.SLICE, 2),
              (B.SLICE, 4), (B.SLICE, 5), (B.SLICE, 6), (B.STRIDED_SLICE, 2), (B.STRIDED_SLICE, 3),
              (B.STRIDED_SLICE, 4), (B.STRIDED_SLICE, 6), (B.STRIDED_SLICE, 7), (B.STRIDED_SLICE, 8), (B.FILL, 2),
              (B.FILL, 3), (B.FILL, 4), (B.WHERE, 2)}
    assert wanted <= seen, sorted(wanted - seen)


def test_unregistered_versions_fail_at_allocate():
    """CAST v6 (int4 -> float32) and GATHER v7 (int4 params) are not implemented: the registry says so."""
    for op, version in ((B.CAST, 6), (B.GATHER, 7), (B.SLICE, 7), (B.EQUAL, 6)):
        b = ModelBuilder()
        x = b.input("x", (2,), F32)
        o = b.tensor("o", (2,), F32)
        i = b.constant("i", np.array([0], I32))
        ins = {B.CAST: [x], B.GATHER: [x, i], B.SLICE: [x, i, b.constant("s", np.array([2], I32))],
               B.EQUAL: [x, x]}[op]
        b.op(op, ins, [o], version=version)
        b.output(o)
        it = Interpreter(model=b.build())
        with pytest.raises(UnsupportedOpError, match=f"{op.name} version {version} is not registered"):
            it.allocate_tensors()


def test_comparison_opdata_shows_the_rescaling():
    build, feeds = binary(B.LESS, I8, q1=q(0.5, 0), q2=q(0.25, -125), name="opdata")
    it = Interpreter(model_content=model_bytes(build))
    it.allocate_tensors()
    (node, kname, data, _), = it.prepared()
    assert kname == "less/lut" and data.rescaled and data.left_shift == 8
    assert (data.input1_offset, data.input1_multiplier, data.input1_shift) == (0, 1 << 30, 0)
    assert (data.input2_offset, data.input2_multiplier, data.input2_shift) == (125, 1 << 30, -1)
    assert "lut" not in repr(data).replace("impl='lut'", "")


def test_scaled_value_scalar_and_array_agree():
    """The comparison grid computed one Python int at a time equals the numpy array version."""
    from workbench.interpreter.kernels._compare import scaled_array, scaled_value
    from workbench.interpreter.quant import quantize_multiplier

    for dt in (I8, U8):
        info = np.iinfo(dt)
        every = np.arange(info.min, info.max + 1)
        for scale, zp in ((0.011, 7), (0.9999, -3), (1e-6, 100), (0.5, 0)):
            m, shift = quantize_multiplier(scale)
            fast = scaled_array(every, -zp, m, shift)
            assert fast.tolist() == [scaled_value(v, -zp, m, shift) for v in every]
    m, shift = quantize_multiplier(0.37)
    assert scaled_array(np.array([-32768, 32767, -2 ** 31 + 5]), 40000, m, shift).tolist() == \
        [scaled_value(v, 40000, m, shift) for v in (-32768, 32767, -2 ** 31 + 5)]


def test_cast_rule_in_opdata():
    it = Interpreter(model_content=model_bytes(cast(F32, I8)[0]))
    it.allocate_tensors()
    assert "saturate" in it.prepared()[0][2].rule

"""The interpreter fuzzer's bases, mutations and single-case runner
(tests/interpreter/test_interpreter_fuzz.py), shared with the delegate fuzz tests
(tests/delegate/test_delegate_fuzz.py) and the robustness tests."""

from __future__ import annotations

import dataclasses
import enum
import random
import signal
import time
import traceback
import types
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np

from helpers import schema_fuzz
from helpers.control_flow_models import if_model, scalar, while_growing_model, while_static_model
from helpers.dynamic_models import range_fill_model, reshape_runtime_model
from workbench import dump, load
from workbench.errors import WorkbenchError
from workbench.interpreter import Interpreter
from workbench.schema import (
    AddOptions,
    ConcatenationOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    GatherOptions,
    ModelBuilder,
    MulOptions,
    Padding,
    Pool2DOptions,
    ReducerOptions,
    ReshapeOptions,
    SoftmaxOptions,
    SplitOptions,
    StridedSliceOptions,
    TensorType,
    TransposeOptions,
)
from workbench.schema import BuiltinOperator as B
from workbench.schema.declare import FlatTable

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
CASE_SECONDS = 10.0     # a case takes milliseconds; only a hang gets near this
MAX_WHILE = 16          # WHILE iterations per node and invoke (a mutated cond may stay true, and a

MAX_ARENA_BYTES = 1 << 26   # invoke only models whose planned memory is small: big ones are slow, not wrong
MAX_INPUT_ELEMENTS = 1 << 20

F32 = np.float32


def conv_model():
    rng = np.random.default_rng(1)
    b = ModelBuilder()
    x = b.input("x", (1, 6, 6, 2))
    w = b.constant("w", rng.uniform(-1, 1, (3, 3, 3, 2)).astype(F32))
    bias = b.constant("bias", rng.uniform(-1, 1, (3,)).astype(F32))
    y = b.tensor("y", (1, 3, 3, 3))
    b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(padding=Padding.SAME, stride_w=2, stride_h=2,
                                                     fused_activation_function=1, dilation_w_factor=1,
                                                     dilation_h_factor=1))
    dw = b.constant("dw", rng.uniform(-1, 1, (1, 3, 3, 3)).astype(F32))
    db = b.constant("db", rng.uniform(-1, 1, (3,)).astype(F32))
    z = b.tensor("z", (1, 3, 3, 3))
    b.op(B.DEPTHWISE_CONV_2D, [y, dw, db], [z], DepthwiseConv2DOptions(
        padding=Padding.SAME, stride_w=1, stride_h=1, depth_multiplier=1, dilation_w_factor=1, dilation_h_factor=1))
    p = b.tensor("p", (1, 2, 2, 3))
    b.op(B.MAX_POOL_2D, [z, ], [p], Pool2DOptions(padding=Padding.VALID, stride_w=1, stride_h=1, filter_width=2,
                                                 filter_height=2))
    a = b.tensor("a", (1, 1, 1, 3))
    b.op(B.AVERAGE_POOL_2D, [p], [a], Pool2DOptions(padding=Padding.VALID, stride_w=2, stride_h=2, filter_width=2,
                                                   filter_height=2))
    r = b.tensor("r", (1, 3))
    b.op(B.RESHAPE, [a, b.constant("rs", np.array([1, 3], np.int32))], [r], ReshapeOptions(new_shape=(1, 3)))
    fw = b.constant("fw", rng.uniform(-1, 1, (4, 3)).astype(F32))
    f = b.tensor("f", (1, 4))
    b.op(B.FULLY_CONNECTED, [r, fw, -1], [f], FullyConnectedOptions())
    s = b.tensor("s", (1, 4))
    b.op(B.SOFTMAX, [f], [s], SoftmaxOptions(beta=1.0))
    b.output(s)
    return b.build()


def shapes_model():
    """Concat, strided slice, transpose, mean, gather, split, add/mul with broadcasting."""
    b = ModelBuilder()
    x = b.input("x", (2, 3, 4))
    k = b.input("k", (4,))
    c = b.tensor("c", (4, 3, 4))
    b.op(B.CONCATENATION, [x, x], [c], ConcatenationOptions(axis=0))
    s = b.tensor("s", (2, 3, 2))
    b.op(B.STRIDED_SLICE, [c, b.constant("b0", np.array([0, 0, 0], np.int32)),
                           b.constant("e0", np.array([4, 3, 4], np.int32)),
                           b.constant("st", np.array([2, 1, 2], np.int32))], [s], StridedSliceOptions())
    t = b.tensor("t", (2, 2, 3))
    b.op(B.TRANSPOSE, [s, b.constant("perm", np.array([0, 2, 1], np.int32))], [t], TransposeOptions())
    m = b.tensor("m", (2, 3))
    b.op(B.MEAN, [t, b.constant("ax", np.array([1], np.int32))], [m], ReducerOptions(keep_dims=False))
    g = b.tensor("g", (2, 2))
    b.op(B.GATHER, [m, b.constant("gi", np.array([2, 0], np.int32))], [g], GatherOptions(axis=1))
    ka = b.tensor("ka", (4,))
    b.op(B.MUL, [k, scalar(b, "two", 2.0, F32)], [ka], MulOptions())
    kr = b.tensor("kr", (2, 2))
    b.op(B.RESHAPE, [ka, b.constant("ks", np.array([2, 2], np.int32))], [kr], ReshapeOptions(new_shape=(2, 2)))
    y = b.tensor("y", (2, 2))
    b.op(B.ADD, [g, kr], [y], AddOptions())
    p0, p1 = b.tensor("p0", (1, 2)), b.tensor("p1", (1, 2))
    b.op(B.SPLIT, [b.constant("sax", np.array(0, np.int32)), y], [p0, p1], SplitOptions(num_splits=2))
    b.output(p0, p1)
    return b.build()


BUILT = {
    "conv": conv_model,
    "shapes": shapes_model,
    "while_static": while_static_model,
    "while_growing": while_growing_model,
    "if": lambda: if_model(False),
    "reshape_runtime": reshape_runtime_model,
    "range_fill": range_fill_model,
}
SAMPLE_NAMES = ("batch_matmul", "dilated_depthwise_float", "fc_variants_float", "float16_weights",
                "gather_batch_dims", "int8_cnn", "int8_float_io", "resize_half_pixel", "resource_variable",
                "strided_slice_masks", "transpose_conv", "while_loop", "string_ops", "int16x8_conv_fc")

# base → (model-level cases, byte-level cases) per run
SCALE = 6
BUILT_CASES = {"conv": (200, 60), "shapes": (200, 60), "while_static": (80, 30), "while_growing": (60, 20),
               "if": (60, 20), "reshape_runtime": (50, 20), "range_fill": (60, 20)}
SAMPLE_CASES = (25, 10)
BUILT_CASES = {k: (a * SCALE, b * SCALE) for k, (a, b) in BUILT_CASES.items()}
SAMPLE_CASES = (SAMPLE_CASES[0] * SCALE, SAMPLE_CASES[1] * SCALE)
CASES = {**BUILT_CASES, **{name: SAMPLE_CASES for name in SAMPLE_NAMES}}


@lru_cache(maxsize=None)
def base_model(name: str):
    if name in BUILT:
        return load(dump(BUILT[name]()))
    return load((SAMPLES / f"{name}.tflite").read_bytes())


@lru_cache(maxsize=None)
def base_bytes(name: str) -> bytes:
    if name in BUILT:
        return dump(BUILT[name]())
    return (SAMPLES / f"{name}.tflite").read_bytes()


# the schema fuzzer's hotspot finder, reading our bases (same code, other globals)
_hotspots = lru_cache(maxsize=None)(types.FunctionType(
    schema_fuzz.hotspots.__wrapped__.__code__, {**vars(schema_fuzz), "base_bytes": base_bytes}))


AWKWARD_INTS = (0, -1, -2, 1, 2, 3, 7, 99, -99, 1 << 16, 1 << 20, 2**31 - 1, -2**31, 255, 127, -128)
AWKWARD_DIMS = (0, 1, -1, -2, 2, 3, 5, 1 << 16, 1 << 24, 2**31 - 1, -2**31)


def _sg_index(rng, model) -> int:
    return rng.randrange(len(model.subgraphs))


def _replace_sg(model, s, sg):
    sgs = list(model.subgraphs)
    sgs[s] = sg
    return dataclasses.replace(model, subgraphs=tuple(sgs))


def _replace_tensor(model, s, t, **kw):
    sg = model.subgraphs[s]
    ts = list(sg.tensors)
    ts[t] = dataclasses.replace(ts[t], **kw)
    return _replace_sg(model, s, dataclasses.replace(sg, tensors=tuple(ts)))


def _replace_op(model, s, o, **kw):
    sg = model.subgraphs[s]
    ops = list(sg.operators)
    ops[o] = dataclasses.replace(ops[o], **kw)
    return _replace_sg(model, s, dataclasses.replace(sg, operators=tuple(ops)))


def _pick_tensor(rng, model):
    candidates = [(s, t) for s, sg in enumerate(model.subgraphs) for t in range(len(sg.tensors or ()))]
    return rng.choice(candidates) if candidates else None


def _pick_op(rng, model):
    candidates = [(s, o) for s, sg in enumerate(model.subgraphs) for o in range(len(sg.operators or ()))]
    return rng.choice(candidates) if candidates else None


def mm_shape(rng, model):
    pick = _pick_tensor(rng, model)
    if pick is None:
        return model, "no tensor"
    s, t = pick
    shape = list(model.subgraphs[s].tensors[t].shape or ())
    how = rng.randrange(5)
    if how == 0 and shape:
        i = rng.randrange(len(shape))
        shape[i] = rng.choice(AWKWARD_DIMS)
    elif how == 1 and shape:
        del shape[rng.randrange(len(shape))]
    elif how == 2:
        shape.insert(rng.randrange(len(shape) + 1), rng.choice((1, 2, 3, 0)))
    elif how == 3:
        shape = [rng.choice((1 << 16, 1 << 20, 2**31 - 1, 3)) for _ in range(rng.randint(2, 8))]   # overflow
    else:
        shape = [rng.choice((1, 2, 3, 4, 0)) for _ in range(rng.randint(0, 6))]
    return _replace_tensor(model, s, t, shape=tuple(shape)), f"tensor {s}:{t} shape={shape}"


def mm_dtype(rng, model):
    pick = _pick_tensor(rng, model)
    if pick is None:
        return model, "no tensor"
    s, t = pick
    new = rng.choice((0, 1, 2, 3, 4, 6, 7, 9, 10, 13, 14, 15, 16, 17)) if rng.random() < 0.9 else rng.randrange(40)
    try:
        new = TensorType(new)          # as load makes it; an unknown number stays an int
    except ValueError:
        pass
    return _replace_tensor(model, s, t, type=new), f"tensor {s}:{t} type={int(new)}"


def mm_buffer(rng, model):
    pick = _pick_tensor(rng, model)
    if pick is None:
        return model, "no tensor"
    s, t = pick
    n = len(model.buffers or ())
    buf = rng.choice((0, n, n + 5, -1, rng.randrange(max(n, 1))))
    return _replace_tensor(model, s, t, buffer=buf), f"tensor {s}:{t} buffer={buf}"


def mm_indices(rng, model):
    pick = _pick_op(rng, model)
    if pick is None:
        return model, "no operator"
    s, o = pick
    op = model.subgraphs[s].operators[o]
    n = len(model.subgraphs[s].tensors or ())
    field = rng.choice(("inputs", "inputs", "outputs"))
    idx = list(getattr(op, field) or ())
    how = rng.randrange(7)
    if how == 0 and idx:
        i = rng.randrange(len(idx))
        idx[i] = rng.choice((n, n + 1, 1000, -2, -1, -7, 2**31 - 1))
    elif how == 1 and idx:
        i = rng.randrange(len(idx))
        idx[i] = -1
    elif how == 2 and len(idx) >= 2:
        i, j = rng.sample(range(len(idx)), 2)
        idx[i], idx[j] = idx[j], idx[i]
    elif how == 3 and idx:
        idx[rng.randrange(len(idx))] = rng.choice(idx)                 # repeated
    elif how == 4 and idx:
        del idx[rng.randrange(len(idx))]
    elif how == 5 and n:
        idx.append(rng.randrange(n))
    elif n:
        i = rng.randrange(len(idx)) if idx else 0
        other = list(op.inputs or ()) + list(op.outputs or ())
        if idx:
            idx[i] = rng.choice(other) if other and rng.random() < 0.5 else rng.randrange(n)
    return _replace_op(model, s, o, **{field: tuple(idx)}), f"op {s}:{o} {field}={idx}"


def mm_io(rng, model):
    s = _sg_index(rng, model)
    sg = model.subgraphs[s]
    n = len(sg.tensors or ())
    field = rng.choice(("inputs", "outputs"))
    idx = list(getattr(sg, field) or ())
    how = rng.randrange(4)
    if how == 0 and idx:
        idx[rng.randrange(len(idx))] = rng.choice((n, -1, -3, 1000))
    elif how == 1 and idx:
        idx.append(rng.choice(idx))
    elif how == 2 and idx:
        del idx[rng.randrange(len(idx))]
    elif n:
        idx.append(rng.randrange(n))
    return _replace_sg(model, s, dataclasses.replace(sg, **{field: tuple(idx)})), f"subgraph {s} {field}={idx}"


def _int_fields(opts):
    out = []
    for f in dataclasses.fields(opts):
        v = getattr(opts, f.name)
        if isinstance(v, bool) or v is None:
            if isinstance(v, bool):
                out.append(f.name)
            continue
        if isinstance(v, (int, float, enum.IntEnum)) or (isinstance(v, tuple) and all(isinstance(x, int) for x in v)):
            out.append(f.name)
    return out


def mm_options(rng, model):
    ops = [(s, o) for s, sg in enumerate(model.subgraphs) for o, op in enumerate(sg.operators or ())
           if isinstance(op.builtin_options, FlatTable) and _int_fields(op.builtin_options)]
    if not ops:
        return mm_indices(rng, model)
    s, o = rng.choice(ops)
    op = model.subgraphs[s].operators[o]
    opts = op.builtin_options
    name = rng.choice(_int_fields(opts))
    old = getattr(opts, name)
    if isinstance(old, bool):
        new = not old
    elif isinstance(old, tuple):
        new = tuple(rng.choice(AWKWARD_INTS) for _ in range(rng.choice((0, len(old), len(old) + 1, 3))))
    elif isinstance(old, float):
        new = rng.choice((0.0, -1.0, float("nan"), float("inf"), 1e30, -0.0))
    else:
        new = rng.choice(AWKWARD_INTS)
        if isinstance(old, enum.IntEnum):
            try:
                new = type(old)(new)
            except ValueError:
                pass
    try:
        opts = dataclasses.replace(opts, **{name: new})
    except (TypeError, ValueError):
        return model, f"op {s}:{o} options.{name} refused {new!r}"
    return _replace_op(model, s, o, builtin_options=opts), f"op {s}:{o} options.{name}={new!r}"


def mm_opcode(rng, model):
    codes = list(model.operator_codes or ())
    if not codes:
        return model, "no opcodes"
    i = rng.randrange(len(codes))
    how = rng.randrange(3)
    if how == 0:
        v = rng.choice((0, -1, 2, 3, 5, 12, 99))
        codes[i] = dataclasses.replace(codes[i], version=v)
        what = f"version={v}"
    else:
        op = rng.choice(list(B)) if how == 1 else rng.choice([B(int(c.builtin_code)) for c in codes])
        codes[i] = dataclasses.replace(codes[i], builtin_code=op, deprecated_builtin_code=min(int(op), 127))
        what = f"op={op.name}"
    return dataclasses.replace(model, operator_codes=tuple(codes)), f"opcode {i} {what}"


def mm_opcode_index(rng, model):
    pick = _pick_op(rng, model)
    if pick is None:
        return model, "no operator"
    s, o = pick
    n = len(model.operator_codes or ())
    v = rng.choice((n, -1, rng.randrange(max(n, 1))))
    return _replace_op(model, s, o, opcode_index=v), f"op {s}:{o} opcode_index={v}"


def mm_constant(rng, model):
    """A constant tensor's buffer replaced by extreme values (shape arguments, axes, indices)."""
    consts = [(s, t) for s, sg in enumerate(model.subgraphs) for t, ten in enumerate(sg.tensors or ())
              if ten.buffer and ten.buffer < len(model.buffers or ()) and model.buffers[ten.buffer].data is not None
              and len(model.buffers[ten.buffer].data) <= 64]
    if not consts:
        return mm_shape(rng, model)
    s, t = rng.choice(consts)
    tensor = model.subgraphs[s].tensors[t]
    old = bytes(model.buffers[tensor.buffer].data)
    values = np.frombuffer(old[: len(old) // 4 * 4], "<i4").copy()
    if values.size:
        values[rng.randrange(values.size)] = rng.choice(AWKWARD_INTS)
    data = values.tobytes() + old[len(old) // 4 * 4:]
    bufs = list(model.buffers)
    bufs[tensor.buffer] = dataclasses.replace(bufs[tensor.buffer], data=data)
    return dataclasses.replace(model, buffers=tuple(bufs)), f"constant {s}:{t} values={values.tolist()[:8]}"


MODEL_MUTATORS = (mm_shape, mm_dtype, mm_buffer, mm_indices, mm_io, mm_options, mm_opcode, mm_opcode_index,
                  mm_constant)
MODEL_WEIGHTS = (4, 3, 1, 5, 2, 5, 2, 1, 3)


def mutate_model(name: str, seed: int):
    """(model, description, give the Model object?) for model-level case ``seed`` of base ``name``."""
    rng = random.Random(f"model/{name}/{seed}")
    model = base_model(name)
    steps = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        m, how = rng.choices(MODEL_MUTATORS, MODEL_WEIGHTS)[0](rng, model)
        model = m
        steps.append(how)
    return model, "; ".join(steps), rng.random() < 0.5


def mutate_bytes(name: str, seed: int) -> tuple[bytes, str]:
    rng = random.Random(f"bytes/{name}/{seed}")
    data = bytearray(base_bytes(name))
    spots = _hotspots(name)
    steps = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        if len(data) < 8:
            break
        steps.append(rng.choices(schema_fuzz.MUTATORS, schema_fuzz.WEIGHTS)[0](rng, data, spots))
    return bytes(data), "; ".join(steps)


def _random_value(rng: np.random.Generator, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min), -8), min(int(info.max), 8)
        return rng.integers(lo, hi + 1, shape).astype(dtype)
    if dtype.kind == "f":
        return rng.uniform(-4, 4, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
    if dtype.kind == "S":           # a STRING input (litert reports np.bytes_): short random byte strings
        words = [bytes(rng.integers(0, 256, int(rng.integers(0, 4))).astype(np.uint8))
                 for _ in range(int(np.prod(shape)))]
        arr = np.empty(len(words), dtype=object)
        arr[:] = words
        return arr.reshape(shape)
    return np.zeros(shape, dtype)


def exercise(case) -> str:
    """Run one case: 'rejected' (a workbench error), 'ran', or a non-workbench exception propagates."""
    kind, payload, seed = case
    try:
        if kind == "object":
            it = Interpreter(model=payload, max_while_iterations=MAX_WHILE)
        else:
            it = Interpreter(model_content=payload, max_while_iterations=MAX_WHILE)
        it.allocate_tensors()
        if it.arena_plan.size > MAX_ARENA_BYTES:
            return "skipped"
        rng = np.random.default_rng(seed)
        for d in it.get_input_details():
            shape = tuple(int(x) for x in d["shape"])
            if d["dtype"] is np.object_ or np.prod(shape, dtype=np.float64) > MAX_INPUT_ELEMENTS:
                return "skipped"
            it.set_tensor(d["index"], _random_value(rng, shape, d["dtype"]))
        it.invoke()
        for d in it.get_output_details():
            it.get_tensor(d["index"])
        return "ran"
    except WorkbenchError:
        return "rejected"


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` can swallow it."""


def _on_alarm(signum, frame):
    raise CaseTimeout(f"case took longer than {CASE_SECONDS} s")


def run_case(case) -> tuple[str, BaseException | None, str]:
    use_alarm = hasattr(signal, "setitimer")
    if use_alarm:
        try:
            old = signal.signal(signal.SIGALRM, _on_alarm)
        except ValueError:
            use_alarm = False
    start = time.perf_counter()
    try:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)      # numpy's "Mean of empty slice" & co.
            outcome = exercise(case)
        if time.perf_counter() - start > CASE_SECONDS:
            raise CaseTimeout(f"case took {time.perf_counter() - start:.1f} s")
        return outcome, None, ""
    except BaseException as exc:  # noqa: BLE001 - everything not allowed is a finding
        if isinstance(exc, KeyboardInterrupt):
            raise
        return "failed", exc, traceback.format_exc()
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def make_case(name: str, kind: str, seed: int):
    """(case, description).  kind 'model' or 'bytes'."""
    if kind == "bytes":
        data, how = mutate_bytes(name, seed)
        return ("bytes", data, seed), how
    model, how, as_object = mutate_model(name, seed)
    if not as_object:
        try:
            return ("bytes", dump(model), seed), how + " (dumped)"
        except WorkbenchError:
            pass          # dump refuses it: the interpreter gets the Model object
        except Exception as exc:  # noqa: BLE001 - dump must not raise anything else either
            return ("dump-failed", exc, seed), how
    return ("object", model, seed), how + " (Model object)"


def run_one(name: str, kind: str, seed: int):
    case, how = make_case(name, kind, seed)
    if case[0] == "dump-failed":
        exc = case[1]
        return "failed", exc, "".join(traceback.format_exception(exc)), how
    outcome, exc, tb = run_case(case)
    return outcome, exc, tb, how


def _format(failures) -> str:
    lines = [f"{len(failures)} interpreter fuzz case(s) raised something other than a WorkbenchError:"]
    for name, kind, seed, how, exc, tb in failures[:10]:
        lines.append(f"  {name} {kind} {seed} ({how}): {type(exc).__name__}: {exc}"[:400])
    name, kind, seed, how, exc, tb = failures[0]
    lines.append(f"reproduce: python tests/interpreter/test_interpreter_fuzz.py {name} {kind} {seed}\n\n"
                 f"first traceback:\n{tb}")
    return "\n".join(lines)

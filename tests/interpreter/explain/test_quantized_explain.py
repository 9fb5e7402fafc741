"""explain(): one output element worked out by hand equals what the kernel wrote.

Every op, type and recipe explain() supports is checked on the tiny one-op models of the kernel test
modules (int8 ops, 16x8 and int8 matrix ops, uint8 matrix ops, hybrid ops, uint8/int16 element-wise
ops, quantized data movement, the quantized sweep's regressions), at every output element up to a few
thousand per case; then every node of the sample models is walked at seeded positions.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

import numpy as np
import pytest

from helpers import litert_runner, quantized_cases
from helpers import quantized_ops_cases as ops
from workbench.interpreter import Interpreter
from workbench.interpreter import explain as explain_module
from workbench.interpreter.explain import DATA_MOVEMENT, Explanation, explain, explained_kinds
from workbench.interpreter.kernels._unary import LutData
from workbench.schema import AddOptions, ModelBuilder
from workbench.schema import BuiltinOperator as B
from workbench.versioning import update_versions

SAMPLES = Path(__file__).resolve().parents[3] / "sample_models"
MAX_POSITIONS = 1000          # per node: every element of a tiny model, a seeded sample of bigger ones
TIE_POSITIONS = 3000          # in a case built to meet exact ties (its name says "ties"): a wider sample


def add_case(name):
    rng = ops.rng_for(name)
    b = ModelBuilder()
    x = b.input("a", (2, 3, 5), np.int8, quantization=ops.q(0.05, 3))
    y = b.input("b", (5,), np.int8, quantization=ops.q(0.02, -7))
    o = b.tensor("y", (2, 3, 5), np.int8, quantization=ops.q(0.06, -1))
    b.op(B.ADD, [x, y], [o], AddOptions())
    b.output(o)
    return b, {"a": ops.qx(rng, (2, 3, 5)), "b": ops.qx(rng, (5,))}


# cases of these tests only, run with those of a case module (kept out of the shared table in tests/helpers/)
EXTRA_CASES = {"test_quantized_ops": {"add_broadcast_for_explain": add_case}}


def case_table(module: str) -> dict:
    """The cases of ``module`` (a test module's name; its table is tests/helpers/<name>_cases.py) and ours."""
    mod = importlib.import_module(f"helpers.{module.removeprefix('test_')}_cases")
    return {**mod.CASES, **EXTRA_CASES.get(module, {})}


@functools.lru_cache(maxsize=None)
def build_case(module: str, case: str):
    """The case's (model, inputs), built once in this module (the coverage test below builds every case
    again; some builders search for inputs that meet exact ties)."""
    return quantized_cases.build(case_table(module), case)


def run(model, inputs) -> Interpreter:
    it = Interpreter(model=model, keep_intermediates=True)
    it.allocate_tensors()
    by_name = {d["name"]: d for d in it.get_input_details()}
    for name, value in inputs.items():
        it.set_tensor(by_name[name]["index"], value)
    it.invoke()
    return it


def positions(size: int, seed: int, limit: int = MAX_POSITIONS):
    if size <= limit:
        return range(size)
    return sorted(set(np.random.default_rng(seed).choice(size, limit, replace=False).tolist()) | {0, size - 1})


def explain_everywhere(it: Interpreter, limit: int = MAX_POSITIONS) -> list[Explanation]:
    """explain() at every (or a seeded sample of) output element of every node; fails on a difference."""
    seen = []
    for node, *_ in it.prepared():
        if not node.outputs:
            continue
        out = it.get_tensor(node.outputs[0])
        for k in positions(out.size, node.index, limit):
            e = explain(it, node.index, k)
            assert e.agrees is not False, repr(e)
            seen.append(e)
    return seen


# ----------------------------------------------------------------------------------------------
# every case of the kernel test modules


CASE_MODULES = ("test_quantized_ops", "test_quantized_int16_matrix", "test_quantized_uint8_matrix",
                "test_quantized_hybrid", "test_quantized_elementwise", "test_quantized_shape_ops",
                "test_quantized_sweep_regressions")


def all_cases():
    out = []
    for name in CASE_MODULES:
        out += [pytest.param(name, case, id=f"{name.removeprefix('test_quantized_')}:{case}")
                for case in sorted(case_table(name))]
    return out


@pytest.mark.parametrize("module, case", all_cases())
def test_explain_equals_the_kernel_on_every_case(module, case):
    model, inputs = build_case(module, case)
    it = run(model, inputs)
    seen = explain_everywhere(it, TIE_POSITIONS if "ties" in case else MAX_POSITIONS)
    assert seen
    # a quantized node is explained with arithmetic (or as a copy / selection), never skipped
    for e in seen:
        if e.kind == "not quantized":
            node = it.prepared()[e.node][0]
            assert not any(explain_module._Work(it, e.node).is_quantized(t) for t in node.inputs + node.outputs
                           if t >= 0), repr(e)
        else:
            assert e.steps and e.recipe, repr(e)


TIES = {   # cases built so that requantization meets exact ties, and the rule the kernel applies there
    ("test_quantized_int16_matrix", "conv16_ties_int64"): "one rounding shift (ties up)",
    ("test_quantized_int16_matrix", "conv16_ties_int32"): "rounding shift (ties up)",
    ("test_quantized_int16_matrix", "conv16_ties_int32_grouped"): "rounding shift (ties away)",
    ("test_quantized_int16_matrix", "dw16_ties"): "one rounding shift (ties up)",
    ("test_quantized_int16_matrix", "fc16_ties_ruy"): "rounding shift (ties up)",
    ("test_quantized_int16_matrix", "tconv8_ties_11ch"): "rounding shift (ties away)",
    ("test_quantized_int16_matrix", "tconv16_ties_int64"): "one rounding shift (ties up)",
    ("test_quantized_int16_matrix", "bmm8_ties"): "rounding shift (ties away)",
    ("test_quantized_int16_matrix", "fc16_ties_double"): "round (C round)",
    ("test_quantized_elementwise", "requantize_int8_ties"): "rounding shift (ties up)",
    ("test_quantized_uint8_matrix", "conv_3x3_same"): "rounding shift (ties up)",
    ("test_quantized_uint8_matrix", "depthwise_3x3"): "rounding shift (ties away)",
    ("test_quantized_ops", "quantize_float_to_int8"): "round half to even",
}


@pytest.mark.parametrize("module, case", sorted(TIES))
def test_ties_are_shown_and_resolved_as_the_kernel_does(module, case):
    mod = importlib.import_module(f"helpers.{module.removeprefix('test_')}_cases")
    it = run(*mod.build_case(case))
    out = it.get_tensor(it.get_output_details()[0]["index"])
    ties = []
    for k in range(out.size):
        e = explain(it, 0, k)
        tie = [s for s in e.steps if "exact tie" in s.formula]
        if tie:
            assert e.agrees, repr(e)
            ties.append((e, tie[0]))
    assert ties, f"{case}: no exact tie among the explained elements"
    assert any(s.what == TIES[(module, case)] for _, s in ties), [s.what for _, s in ties][:5]


def test_fc16_double_recipe_rounds_in_double_and_sends_overflow_to_int32_min():
    mod = importlib.import_module("helpers.quantized_int16_matrix_cases")
    it = run(*mod.build_case("fc16_double_beyond_int32"))
    es = [explain(it, 0, k) for k in range(it.get_tensor(it.get_output_details()[0]["index"]).size)]
    assert all(e.agrees for e in es)
    assert all("round(acc · effective_scale) in double" in e.recipe for e in es)
    assert any(s.value == -(2 ** 31) and "INT32_MIN" in s.formula for e in es for s in e.steps)


def test_int32_recipe_shows_the_wrap_around():
    mod = importlib.import_module("helpers.quantized_int16_matrix_cases")
    it = run(*mod.build_case("conv16_wrap_int32"))
    es = [explain(it, 0, k) for k in range(it.get_tensor(it.get_output_details()[0]["index"]).size)]
    assert all(e.agrees for e in es)
    assert any(s.what == "int32 wrap-around" for e in es for s in e.steps)


def test_depthwise_int8_scalar_tail_rounds_away():
    """litert-x86 requantizes the last C·M % 8 channels of every pixel one by one: those ties go away from zero."""
    model, inputs = ops.build_case("depthwise_valid_5x5")
    it = run(model, inputs)
    d = it.prepared()[0][2]
    assert d.vector_channels < d.output_shape[3]           # a scalar tail
    e = explain(it, 0, (0, 0, 0, d.vector_channels))       # its first channel, in the first pixel
    assert e.agrees and any(s.what == "TFLite's scalar leftover loop" for s in e.steps)
    assert "rounding shift (ties away)" in [s.what for s in e.steps]


def test_hybrid_explanation_shows_the_run_time_quantization():
    mod = importlib.import_module("helpers.quantized_hybrid_cases")
    it = run(*mod.build_case("fc_asymmetric"))
    es = [explain(it, 0, k) for k in range(it.get_tensor(it.get_output_details()[0]["index"]).size)]
    e = next(e for e in es if any(s.what == "remove the zero point" for s in e.steps))   # a row with zero point ≠ 0
    whats = [s.what for s in e.steps]
    assert e.kind == "hybrid" and e.agrees and isinstance(e.by_hand, np.float32)
    for want in ("scaling factor", "zero point", "integer dot product", "remove the zero point", "product scale"):
        assert want in whats, whats
    assert abs(e.float_result - e.kernel) < 0.05 * max(1.0, abs(e.float_result))


def test_copy_names_the_source_and_padding_is_the_zero_point():
    model, inputs = ops.build_case("pad")
    it = run(model, inputs)
    x = inputs["x"]
    out = it.get_tensor(it.get_output_details()[0]["index"])
    before = [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]
    inner = explain(it, 0, (0, 2, 3, 1))             # paddings [[0, 0], [1, 2], [2, 1], [0, 0]]
    assert inner.kind == "copy" and inner.agrees and inner.kernel == int(x[0, 1, 1, 1])
    assert "input 0 'x'[0, 1, 1, 1]" in inner.steps[0].formula and "no arithmetic" in repr(inner)
    border = explain(it, 0, (0, 0, 0, 0))
    assert border.kind == "copy" and border.agrees and border.kernel == int(out[0, 0, 0, 0])
    assert "zero point" in border.steps[0].formula
    # the probe runs of the kernel leave the interpreter's tensors as they were
    assert all(np.array_equal(a, it.get_tensor(d["index"])) for a, d in zip(before, it.get_output_details()))


def test_copy_of_a_second_output():
    mod = importlib.import_module("helpers.quantized_shape_ops_cases")
    name = next(c for c in sorted(mod.CASES) if c.startswith("split") or c.startswith("unpack"))
    it = run(*mod.build_case(name))
    node = it.prepared()[0][0]
    out = it.get_tensor(node.outputs[1])
    e = explain(it, 0, out.size - 1, output=1)
    assert e.kind == "copy" and e.agrees and e.kernel == out.reshape(-1)[-1].item()


def test_a_float_node_is_not_quantized():
    it = Interpreter(model_path=SAMPLES / "hybrid_fc_conv.tflite", keep_intermediates=True)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], np.random.default_rng(0).uniform(-1, 1, d["shape"]).astype(np.float32))
    it.invoke()
    mean = next(n.index for n, *_ in it.prepared() if n.op_name == "MEAN")
    e = explain(it, mean, 0)
    assert e.kind == "not quantized" and e.by_hand is None and e.agrees is None
    assert "no quantized arithmetic" in repr(e)


def test_an_unknown_quantized_op_raises_naming_it(monkeypatch):
    model, inputs = ops.build_case("logistic")
    it = run(model, inputs)
    monkeypatch.delitem(explain_module._EXPLAINERS, LutData)
    with pytest.raises(NotImplementedError, match=r"LOGISTIC: no explainer is registered for its OpData class "
                                                  r"LutData \(workbench\.interpreter\.kernels\._unary\)"):
        explain(it, 0, 0)


def test_explainers_register_by_opdata_class():
    """The dispatch table is keyed by the OpData class objects; registering twice or a non-OpData refuses."""
    from workbench.errors import RegistrationError
    from workbench.interpreter.explain import explains
    from workbench.interpreter.explain.tables import _explain_lut
    from workbench.interpreter.registry import OpData

    assert all(isinstance(cls, type) and issubclass(cls, OpData) for cls in explain_module._EXPLAINERS)
    assert explain_module._EXPLAINERS[LutData] is _explain_lut
    with pytest.raises(RegistrationError, match=r"LutData \(workbench\.interpreter\.kernels\._unary\) is already "
                                                r"explained by _explain_lut"):
        explains(LutData)(lambda w: (0, 0.0))
    with pytest.raises(RegistrationError, match="OpData classes, not 'LutData'"):
        explains("LutData")


def test_bad_positions_and_nodes_are_refused():
    model, inputs = ops.build_case("fc_relu")
    it = run(model, inputs)
    with pytest.raises(IndexError, match="outside"):
        explain(it, 0, 12)
    with pytest.raises(IndexError, match="outside"):
        explain(it, 0, (3, 0))
    with pytest.raises(IndexError, match="does not exist"):
        explain(it, 5, 0)
    assert explain(it, 0, -1).output_index == (2, 3)


def test_every_explainer_is_exercised_by_the_cases():
    """Each OpData kind explain() claims to know appears in the case modules (so the big test covers it;
    the kinds only variant="reference" prepares — the fixed-point 8-bit SOFTMAX / LOG_SOFTMAX — are
    explained by test_explain_reference_variant.py)."""
    known = set(explained_kinds())
    met = set()
    for name in CASE_MODULES:
        for case in case_table(name):
            model, _ = build_case(name, case)
            for variant in ("litert-x86", "reference"):
                try:
                    it = Interpreter(model=model, variant=variant)
                    it.allocate_tensors()
                except Exception:         # cases that test refusals
                    continue
                met |= {type(d).__name__ for _, _, d, _ in it.prepared()}
    assert known <= met, sorted(known - met)


# ----------------------------------------------------------------------------------------------
# the walkthrough explanations (text and HTML)


@pytest.mark.parametrize("case", ["conv_3x3_same_relu", "conv_same_stride2_relu6", "depthwise_3x3_relu6",
                                  "depthwise_multiplier_3", "fc_relu", "fc_per_channel", "add_broadcast_for_explain"])
def test_explain_text_and_float_result(case):
    model, inputs = build_case("test_quantized_ops", case)
    it = run(model, inputs)
    out = it.get_tensor(it.get_output_details()[0]["index"])
    e = explain(it, 0, out.size - 1)
    text = repr(e)
    assert "clamp" in text and "by hand" in text and "(equal)" in text and "<table>" in e._repr_html_()
    # the int8 result is within one output step of the float computation (unless clamped at the type's ends)
    o_s = it.get_output_details()[0]["quantization"][0]
    if e.kernel not in (-128, 127):
        assert abs(e.dequantized - e.float_result) <= o_s * 1.01


def test_16x8_conv_shows_one_rounding_of_an_int64_sum():
    it = Interpreter(model_path=SAMPLES / "int16x8_conv_fc.tflite", keep_intermediates=True)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], np.random.default_rng(0).uniform(-1, 1, d["shape"]).astype(np.float32))
    it.invoke()
    conv = next(n.index for n, *_ in it.prepared() if n.op_name == "CONV_2D")
    e = explain(it, conv, 100)
    whats = [s.what for s in e.steps]
    assert e.agrees and whats[0] == "accumulate (int64)"
    assert "16-bit multiplier" in whats and "one rounding shift (ties up)" in whats
    assert "high multiply (SRDHM)" not in whats
    assert "one rounding, ties up" in e.recipe


# ----------------------------------------------------------------------------------------------
# whole sample models, every node


WALKED = {   # model → op names expected to be "not quantized" (float nodes in a quantized model)
    "mobilenet_v3_block_int8": set(), "efficientnet_block_int8": set(), "resnet_block_int8": set(),
    "ssd_head_int8": set(), "unet_tiny_int8": set(), "audio_conv1d_int8": set(), "int8_cnn": set(),
    "int8_float_io": set(), "transformer_tiny_int8": {"NEG", "REDUCE_PROD"},      # shape arithmetic in int32
    "int16x8_conv_fc": set(), "hybrid_fc_conv": {"MEAN"},
}


@pytest.mark.parametrize("name", sorted(WALKED))
def test_explain_walks_every_node_of_a_sample_model(name):
    it = Interpreter(model_path=SAMPLES / f"{name}.tflite", keep_intermediates=True)
    it.allocate_tensors()
    rng = np.random.default_rng(7)
    for d in it.get_input_details():
        it.set_tensor(d["index"], litert_runner.make_input(rng, d["dtype"], d["shape"]))
    it.invoke()
    kinds = {}
    for node, *_ in it.prepared():
        out = it.get_tensor(node.outputs[0])
        picks = {0, out.size - 1} | set(np.random.default_rng(node.index).integers(0, out.size, 6).tolist())
        for k in sorted(picks):
            e = explain(it, node.index, k)
            kinds.setdefault(node.op_name, set()).add(e.kind)
            if e.kind == "not quantized":
                assert node.op_name in WALKED[name], repr(e)
            else:
                assert e.agrees, repr(e)
    assert len(kinds) >= 3
    if name == "hybrid_fc_conv":
        assert kinds["CONV_2D"] == kinds["FULLY_CONNECTED"] == {"hybrid"}
    if name == "int16x8_conv_fc":
        assert kinds["RESHAPE"] == {"copy"} and kinds["CONV_2D"] == {"quantized"}


def test_explain_on_a_mobilenet_node():
    from helpers.shared_models import SHARED_MODELS
    path = SHARED_MODELS / "mobilenet_v1_a025_128_int8.tflite"
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared model directory is not on this machine)")
    it = Interpreter(model_path=path, keep_intermediates=True)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], np.random.default_rng(0).integers(-128, 128, d["shape"]).astype(np.int8))
    it.invoke()
    for node, *_ in it.prepared():
        for k in (0, 7, 999):
            out = it.get_tensor(node.outputs[0])
            assert explain(it, node.index, k % out.size).agrees is not False


def test_data_movement_ops_have_kernels():
    importlib.import_module("workbench.interpreter.kernels").load_all()      # registers every kernel
    from workbench.interpreter.registry import BUILTIN_KERNELS
    registered = {op.name for op, _ in BUILTIN_KERNELS}
    missing = [op for op in DATA_MOVEMENT if op not in registered]
    assert not missing, missing


def test_slice_select_and_unpack_are_traced_to_their_sources():
    """Data movement the case modules do not contain: SLICE, SELECT_V2 (a condition picks the input),
    UNPACK (three outputs)."""
    from workbench.schema import SelectV2Options, SliceOptions, UnpackOptions
    rng = ops.rng_for("slice_select_unpack")
    x_v, y_v = ops.qx(rng, (2, 3, 4)), ops.qx(rng, (2, 3, 4))
    c_v = rng.integers(0, 2, (3, 4)).astype(bool)
    b = ModelBuilder()
    qp = ops.q(0.05, 3)
    x = b.input("x", (2, 3, 4), np.int8, quantization=qp)
    y = b.input("y", (2, 3, 4), np.int8, quantization=qp)
    cond = b.input("cond", (3, 4), np.bool_)
    sl = b.tensor("slice", (1, 2, 3), np.int8, quantization=qp)
    begin = b.constant("begin", np.array([1, 1, 0], np.int32))
    size = b.constant("size", np.array([1, 2, 3], np.int32))
    b.op(B.SLICE, [x, begin, size], [sl], SliceOptions())
    sel = b.tensor("select", (2, 3, 4), np.int8, quantization=qp)
    b.op(B.SELECT_V2, [cond, x, y], [sel], SelectV2Options())
    parts = [b.tensor(f"part{k}", (2, 4), np.int8, quantization=qp) for k in range(3)]
    b.op(B.UNPACK, [y], parts, UnpackOptions(num=3, axis=1))
    for t in [sl, sel] + parts:
        b.output(t)
    it = run(update_versions(b.build()), {"x": x_v, "y": y_v, "cond": c_v})
    for k, src in enumerate(x_v[1, 1:3, 0:3].reshape(-1)):
        e = explain(it, 0, k)
        assert e.kind == "copy" and e.agrees and e.kernel == int(src) and "input 0 'x'" in e.steps[0].formula
    for pos in np.ndindex(2, 3, 4):
        e = explain(it, 1, pos)
        want = ("x", x_v) if c_v[pos[1:]] else ("y", y_v)
        assert e.agrees and e.kernel == int(want[1][pos]) and f"'{want[0]}'{list(pos)}" in e.steps[0].formula
    for k in range(3):
        for pos in np.ndindex(2, 4):
            e = explain(it, 2, pos, output=k)
            assert e.agrees and f"'y'[{pos[0]}, {k}, {pos[1]}]" in e.steps[0].formula

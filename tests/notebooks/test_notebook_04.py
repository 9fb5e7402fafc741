"""Notebook 04 (integer arithmetic): what the learner sees, and the views in workbench.viz.quant."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

import workbench
from helpers.notebook_runner import NOTEBOOK_DIR, outputs, texts
from workbench.interpreter import Interpreter
from workbench.interpreter import quant as Q
from workbench.schema import tensor_data
from workbench.viz import quant as vq
from workbench.viz.exercise import NONE, RIGHT, WRONG, Bank

PATH = NOTEBOOK_DIR / "04_integer_arithmetic.ipynb"
BANK = NOTEBOOK_DIR / "solutions" / "04_integer_arithmetic.md"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


@pytest.fixture
def nb04(executed):
    """Notebook 04, run headless once per process (tests/notebooks/conftest.py)."""
    return executed(PATH)


def test_notebook_04_code_cells_are_short_and_need_no_shared_models():
    nb = nbformat.read(PATH, as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert all(len(src.splitlines()) <= 8 for src in code)
    assert not any("shared" in src or "mobilenet" in src.lower() for src in code)


def test_notebook_04_asks_each_question_before_the_output_that_answers_it():
    """The input's zero point, the graph's zero point labels, the clamp line of explain() and the
    two builds' largest difference were once printed right above their questions."""
    code = [c.source for c in nbformat.read(PATH, as_version=4).cells if c.cell_type == "code"]

    def first(text: str) -> int:
        return next(i for i, src in enumerate(code) if text in src)

    assert first('ask("zero"') < first('inp["quantization"]')
    assert first('ask("relu-zero-point"') < first("with_overlay(")
    assert first('ask("relu-clamp"') < first("explain(it, 0")
    assert first('ask("two-builds-steps"') < next(i for i, src in enumerate(code) if src.strip() == "variants")


def test_notebook_04_prose_types_no_channel_ratio_and_the_run_prints_the_real_one(nb04):
    nb = nbformat.read(PATH, as_version=4)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert not re.search(r"\d+× smaller", prose)
    w = np.asarray(tensor_data(workbench.load(SAMPLES / "dilated_depthwise_float.tflite"), 0, 4))
    folded = w * np.geomspace(0.05, 2.0, w.shape[-1])
    amax = np.abs(folded).reshape(-1, folded.shape[-1]).max(axis=0)
    assert f"the largest channel is {amax.max() / amax.min():.0f}× the smallest" in texts(nb04)


def test_notebook_04_shows_each_step_and_agrees_with_the_kernel(nb04):
    text = texts(nb04)
    assert not [o for o in outputs(nb04) if o.output_type == "error"]
    assert "real 0.0 is exactly q = -128" in text                      # ReLU output zero point
    assert "quantize_multiplier(" in text and "relative error" in text
    assert "over 27 taps" in text and "(equal)" in text and "DIFFERENT" not in text
    assert "clamp(" in text
    assert "per-channel" in text and "×" in text
    assert "a tie: the reference kernels and TFLite's x86 kernels disagree by one" in text
    assert "land on an exact tie" in text and "ties up (ruy, x86)" in text
    assert "clipped" in text and "model output" in text
    data = [o.data for o in outputs(nb04) if o.output_type in ("execute_result", "display_data")]
    assert max(len(str(d.get("text/plain", ""))) for d in data) < 3000


def test_notebook_04_16x8_section_shows_the_int64_sum_and_one_rounding(nb04):
    nb = nbformat.read(PATH, as_version=4)
    heads = [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "markdown"]
    assert "## 6. 16-bit activations (16x8)" in heads
    assert (heads.index("## 6. 16-bit activations (16x8)") < heads.index("## What you learned")
            < heads.index("## Try next"))
    text = texts(nb04)
    assert "accumulate (int64)" in text and "16-bit multiplier" in text and "one rounding shift (ties up)" in text
    assert "one rounding, ties up" in text                     # the recipe line of the 16x8 explanation
    assert "high multiply (SRDHM)" in text                     # the int8 explanation of section 2, for contrast
    assert "'int64', 'int64', 4161409, 112358043, True" in text   # zero point 0, bias / recipe, the product sizes


def test_single_rounding_of_the_16x8_conv_differs_from_double_rounding_as_the_notebook_says():
    """What the section's last Reveal states: a few % one apart; the double rounding strays past half a step by a
    hair, the single rounding with its 16-bit multiplier further."""
    it = Interpreter(model_path=SAMPLES / "int16x8_conv_fc.tflite")
    it.allocate_tensors()
    c16 = it.prepared()[1][2]
    assert (c16.recipe, c16.bias_type, c16.input_zero_point, c16.output_zero_point) == ("int64", "int64", 0, 0)
    for ch in range(len(c16.output_multiplier)):
        m, s = int(c16.output_multiplier[ch]), int(c16.output_shift[ch])
        accs = np.arange(-2 ** 22, 2 ** 22, 37)
        single = Q.multiply_by_quantized_multiplier_int64_array(accs, m, s)
        double = Q.multiply_by_quantized_multiplier_array(accs, m, s)
        exact = accs * m * 2.0 ** (s - 31)
        assert 0.005 < (single != double).mean() < 0.1
        assert np.abs(single - double).max() == 1
        assert 0.5 < np.abs(double - exact).max() < 0.502 < np.abs(single - exact).max() < 0.7


def test_multiplier_view_reconstructs_the_real_multiplier():
    v = vq.multiplier_view(0.00223119174)
    assert (v.multiplier, v.shift) == Q.quantize_multiplier(0.00223119174)
    assert abs(v.represented - v.real) / v.real < 1e-9
    assert "<table" in v._repr_html_()


def test_find_tie_gives_an_accumulator_where_ties_away_and_ties_up_differ():
    m, s = 1226610629, -8
    x = vq.find_tie(m, s)
    v = vq.rounding_view(x, m, s)
    assert v.is_tie and v.reference == v.ruy - 1
    assert v.reference == Q.multiply_by_quantized_multiplier(x, m, s)
    assert v.ruy == Q.multiply_by_quantized_multiplier_ruy(x, m, s)
    assert not vq.rounding_view(1000, m, s).is_tie


def test_per_channel_weights_never_lose_to_per_tensor():
    w = np.random.default_rng(0).normal(size=(3, 3, 8)) * np.geomspace(0.01, 1, 8)
    e = vq.weight_error(w, axis=-1)
    assert e.per_channel_rms < e.per_tensor_rms / 2


def test_scale_view_range():
    v = vq.scale_view(0.5, -128)
    assert (v.lowest, v.highest) == (0.0, 127.5)


def test_rounding_census_kernel_matches_ties_up():
    it = Interpreter(model_path=SAMPLES / "int8_cnn.tflite", keep_intermediates=True)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], np.random.default_rng(0).integers(-128, 128, d["shape"], dtype=np.int8))
    it.invoke()
    c = vq.rounding_census(it, 3)
    assert c.ties > 0
    assert f"{c.elements}" in c.rows[1][1]                          # ties up: every output equal
    assert c.rows[0][1] == str(c.elements - c.ties)


def test_float_twin_first_conv_within_half_a_step():
    model = workbench.load(SAMPLES / "int8_cnn.tflite")
    x = np.random.default_rng(2).uniform(-1, 1, (1, 16, 16, 3))
    r = vq.float_vs_int8(model, x)
    assert np.abs(r.errors[0]).max() <= 0.51     # one rounding (+ the twin's float32 noise)
    assert np.abs(r.output_steps).max() <= 1.0


def test_float_vs_int8_refuses_a_model_with_quantize_nodes():
    with pytest.raises(ValueError, match="QUANTIZE"):
        vq.float_vs_int8(workbench.load(SAMPLES / "int8_float_io.tflite"), np.zeros((1, 6, 8)))


def test_notebook_04_two_builds_section_compares_the_variants(nb04):
    nb = nbformat.read(PATH, as_version=4)
    heads = [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "markdown"]
    assert (heads.index("## 6. 16-bit activations (16x8)")
            < heads.index("## 7. Two builds of TFLite, two int8 answers")
            < heads.index("## What you learned"))
    text = texts(nb04)
    assert "final_shift: 'ties-up' vs 'away'" in text
    assert "litert-x86 against reference:" in text and "starts here" in text
    assert "OpResolverType.BUILTIN_REF" in "\n".join(c.source for c in nb.cells)


def test_compare_variants_finds_where_a_difference_starts():
    model = workbench.load(SAMPLES / "int8_cnn.tflite")
    x = np.random.default_rng(1).integers(-128, 128, (1, 16, 16, 3)).astype(np.int8)
    census = vq.compare_variants(model, x)
    starts = [c for c in census.changed if c[5]]
    assert starts and all(c[4] == 1 for c in census.changed)          # one step, wherever they differ
    assert "DEPTHWISE_CONV_2D" in {c[1] for c in starts}              # depthwise chunks, ties up on x86
    assert vq.compare_variants(model, x, "reference", "reference").changed == ()


# ---------------------------------------------------------------------------------------------
# the coding task of section 4: requantize one output by hand


@pytest.fixture(scope="module")
def requantize_task():
    """The bank's exercise, asked with the notebook's data: node 0's accumulators for its input image."""
    it = Interpreter(model_path=SAMPLES / "int8_cnn.tflite", keep_intermediates=True)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    s, zp = d["quantization"]
    img = np.random.default_rng(1).uniform(-1, 1, d["shape"])
    it.set_tensor(d["index"], np.clip(Q.round_half_away(img / s) + zp, -128, 127).astype(np.int8))
    it.invoke()
    return Bank(BANK).ask("requantize-by-hand", acc=vq.accumulators(it, 0), conv=it.prepared()[0][2])


def test_requantize_task_accepts_the_bank_solution(requantize_task):
    assert requantize_task.task == "requantize"
    assert requantize_task.check(requantize_task.solution).status == RIGHT


def _round_once(acc, multiplier, shift):
    return round(acc * multiplier * 2.0 ** (shift - 31))


def _srdhm_ties_away(acc, multiplier, shift):
    x = acc * 2 ** max(shift, 0)
    high = (abs(x * multiplier) + 2 ** 30) >> 31
    return Q.rounding_divide_by_pot(high if x >= 0 else -high, max(-shift, 0))


def _float_result(acc, multiplier, shift):
    return acc * multiplier * 2.0 ** (shift - 31)


@pytest.mark.parametrize("mistake, says", [
    ("wrong", r"node 0's output \[[\d, ]+\] — gave -?\d+; TFLite's reference kernels give -?\d+"),
    (_round_once, r"gave -?\d+; TFLite's reference kernels give"),
    (_srdhm_ties_away, r"a tie of SRDHM"),
    (Q.multiply_by_quantized_multiplier_ruy, r"gave -?\d+; TFLite's reference kernels give"),
    (_float_result, r"return one integer"),
], ids=["last-step-rounds-down", "one-rounding", "srdhm-ties-away", "ties-up", "float"])
def test_requantize_task_names_the_first_input_a_mistake_gets_wrong(requantize_task, mistake, says):
    fn = requantize_task.wrong if mistake == "wrong" else mistake
    result = requantize_task.check(fn)
    assert result.status == WRONG
    assert re.search(r"requantize\(-?\d+, \d+, -?\d+\)", result.detail) and re.search(says, result.detail)


def test_requantize_task_stub_is_not_an_answer_and_a_crash_is_a_wrong_one(requantize_task):
    def stub(acc, multiplier, shift):
        raise NotImplementedError

    def crash(acc, multiplier, shift):
        return acc // 0

    assert requantize_task.check(stub).status == NONE
    assert requantize_task.check(crash).status == WRONG and "ZeroDivisionError" in requantize_task.check(crash).detail

"""explain() on the hybrid kernels the quantized sweep added: grouped hybrid CONV_2D and hybrid TRANSPOSE_CONV.

Every case of ``tests/interpreter/quant/test_quantized_sweep_regressions.py`` that runs one of these kernels
(found by its OpData, so cases added there later are covered too) and a few cases of this file is explained at every
output element; the hand computation must equal the kernel's float32 bit for bit.  The extra cases add a
depthwise-like grouped convolution with a channel multiplier, stride 2 and two images, a stride-2
transpose conv with SAME padding, one whose kernel is smaller than its stride (output elements that no
tap reaches), and an all-zero image.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import quantized_sweep_regressions_cases as sweep
from workbench.interpreter import Interpreter
from workbench.interpreter.explain import explain, explained_kinds
from workbench.interpreter.kernels import conv_2d, transpose_conv
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import Padding
from workbench.versioning import update_versions

S, V = Padding.SAME, Padding.VALID

EXTRA = {
    "grouped_depthwise_multiplier_2_stride2_n1to1": sweep.conv_grouped_hybrid(
        (2, 7, 7, 6), (12, 5, 5, 1), stride=(2, 2), act=Act.RELU_N1_TO_1),
    "grouped_2_groups_dilated_ties": sweep.conv_grouped_hybrid((1, 8, 7, 8), (6, 3, 3, 4), dilation=(2, 1), ties=True),
    "tconv_stride2_same_padding_two_images": sweep.tconv_hybrid((2, 4, 3, 6), (5, 4, 4, 6), (8, 6), (2, 2), S),
    "tconv_kernel_smaller_than_stride": sweep.tconv_hybrid((1, 3, 3, 4), (3, 2, 2, 4), (9, 9), (3, 3), V),
    "tconv_5x5_stride2_same_per_tensor_relu6": sweep.tconv_hybrid((1, 3, 4, 7), (4, 5, 5, 7), (6, 8), (2, 2), S,
                                                                  act=Act.RELU6, per_channel=False),
}
ZERO_IMAGE = "tconv_all_zero_image"


def build(name):
    if name == ZERO_IMAGE:
        model, inputs = build("tconv_stride2_same_padding_two_images")
        return model, {"x": np.zeros_like(inputs["x"])}
    if name in EXTRA:
        builder, inputs = EXTRA[name](name)
        if name == "tconv_stride2_same_padding_two_images":
            inputs["x"][1] += np.float32(1.5)          # a lopsided image: a zero point far from 0
        return update_versions(builder.build()), inputs
    return sweep.build_case(name)


def run(name, reference=False) -> Interpreter:
    model, inputs = build(name)
    it = Interpreter(model=model, keep_intermediates=True, reference=reference)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], inputs["x"])
    it.invoke()
    return it


def kind_of(name) -> str | None:
    """"grouped" / "tconv" for a case whose node 0 runs one of the two kernels, else None."""
    model, _ = build(name)
    try:
        it = Interpreter(model=model)
        it.allocate_tensors()
    except Exception:             # a case that tests a refusal
        return None
    d = it.prepared()[0][2]
    if type(d).__name__ == "TransposeConvHybridData":
        return "tconv"
    if type(d).__name__ == "Conv2DHybridData" and d.groups > 1:
        return "grouped"
    return None


CASES = {name: kind_of(name) for name in sorted(sweep.CASES) + sorted(EXTRA) + [ZERO_IMAGE]}
CASES = {name: kind for name, kind in CASES.items() if kind}


def test_the_cases_cover_both_kernels():
    assert "TransposeConvHybridData" in explained_kinds() and "Conv2DHybridData" in explained_kinds()
    kinds = list(CASES.values())
    assert kinds.count("grouped") >= 5 and kinds.count("tconv") >= 9, CASES
    assert "conv_grouped_hybrid_depthwise_7x7" in CASES and "tconv_hybrid_3x3_s2_same_per_channel" in CASES


@pytest.mark.parametrize("reference", [False, True], ids=["fast", "reference"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_explain_equals_the_kernel_at_every_element(name, reference):
    it = run(name, reference)
    out = it.get_tensor(it.get_output_details()[0]["index"])
    for k in range(out.size):
        e = explain(it, 0, k)
        assert e.kind == "hybrid" and isinstance(e.by_hand, np.float32), repr(e)
        assert e.agrees, repr(e)
        assert e.by_hand.tobytes() == out.reshape(-1)[k].tobytes()


def float_output(it, d, name):
    """The float op on the dequantized filter (the float kernels' numpy references)."""
    node = it.prepared()[0][0]
    if CASES[name] == "tconv":
        x, filt, b_t = it.get_tensor(node.input(2)), it.get_tensor(node.input(1)), node.input(3)
        f = filt.astype(np.float32) * np.asarray(d.filter_scale, np.float32)[:, None, None, None]
        bias = it.get_tensor(b_t) if b_t >= 0 else None
        return transpose_conv.transpose_conv_float(x, f, bias, d)
    x, filt, b_t = it.get_tensor(node.input(0)), it.get_tensor(node.input(1)), node.input(2)
    f = filt.astype(np.float32) * np.asarray(d.filter_scale, np.float32)[:, None, None, None]
    return conv_2d.conv_float(x, f, it.get_tensor(b_t) if b_t >= 0 else None, d)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float_result_is_the_float_op(name):
    it = run(name)
    d = it.prepared()[0][2]
    want = float_output(it, d, name).reshape(-1)
    out = it.get_tensor(it.get_output_details()[0]["index"]).reshape(-1)
    for k in range(0, out.size, 7):
        e = explain(it, 0, k)
        assert e.float_result == pytest.approx(float(want[k]), rel=1e-5, abs=1e-5), repr(e)


def tap_steps(e):
    return [s for s in e.steps if s.what.startswith("tap ")]


def test_tconv_shows_quantization_taps_in_litert_order_and_roundings():
    it = run("tconv_stride2_same_padding_two_images")
    d = it.prepared()[0][2]
    assert d.pad_top > 0 and d.pad_left > 0 and d.stride_h == 2
    out = it.get_tensor(it.get_output_details()[0]["index"])
    x = it.get_tensor(it.get_input_details()[0]["index"])
    ci = x.shape[3]
    pos = (1, 3, 2, 4)
    e = explain(it, 0, pos)
    whats = [s.what for s in e.steps]
    assert whats[:4] == ["image 1: range", "scaling factor", "zero point", "quantized row"]
    sf, zp = e.steps[1].value, e.steps[2].value
    assert isinstance(sf, np.float32) and isinstance(zp, int) and zp != 0
    # the taps: input pixels (iy, ix) with filter (oy + pad − 2·iy, ox + pad − 2·ix) inside the 4x4 filter
    want = [(iy, ix, ic) for iy in range(x.shape[1]) for ix in range(x.shape[2]) for ic in range(ci)
            if 0 <= pos[1] + d.pad_top - 2 * iy < 4 and 0 <= pos[2] + d.pad_left - 2 * ix < 4]
    taps = tap_steps(e)
    assert e.steps[4].what == "taps landing here" and e.steps[4].value == len(want) == len(taps) > ci
    got = [tuple(int(v) for v in s.what.split("x[")[1].split("]")[0].split(","))[1:] for s in taps]
    assert got == want                           # input row, input column, input channel
    # every tap: float32 product with the filter scale, then with the scaling factor, then a float32 sum
    total = np.float32(0)
    for s in taps:
        assert "float32(" in s.formula and str(sf) in s.formula
        assert s.value.dtype == np.float32
        total = s.value
    bias = [s for s in e.steps if s.what == "add bias"][0]
    assert bias.value == np.float32(total + it.get_tensor(it.prepared()[0][0].input(3))[pos[3]])
    assert e.steps[-1].what == "clamp" and e.agrees and e.by_hand == out[pos]


def test_tconv_one_int32_sum_scaled_once_would_differ():
    """The explanation shows the int32-sum shortcut next to the real tap-by-tap sum; on the 16-channel case
    it gives another float32 for many outputs, while the tap-by-tap sum always equals the kernel."""
    it = run("tconv_hybrid_3x3_no_bias_16_channels")
    out = it.get_tensor(it.get_output_details()[0]["index"])
    differ = 0
    for k in range(out.size):
        e = explain(it, 0, k)
        k_once = [s.what for s in e.steps].index("(not what runs) one sum")
        differ += e.steps[k_once].value != e.steps[k_once - 1].value
        assert e.agrees
    assert differ > out.size // 10


def test_tconv_many_taps_are_summarised_and_unreached_outputs_are_the_bias():
    it = run("tconv_hybrid_3x3_no_bias_16_channels")
    e = explain(it, 0, (0, 2, 2, 0))           # 2x2 input pixels × 16 channels = 64 taps
    assert e.steps[4].value == 64 and len(tap_steps(e)) < 64
    assert any(s.what.endswith("–64") for s in e.steps) and "no bias tensor" in repr(e) and e.agrees
    it = run("tconv_kernel_smaller_than_stride")
    node = it.prepared()[0][0]
    bias = it.get_tensor(node.input(3))
    e = explain(it, 0, (0, 2, 5, 1))            # row 2: 2·1 + ky = 2 has no ky in [0, 2) with stride 3
    assert [s.what for s in e.steps if s.what == "no tap lands here"] and not tap_steps(e)
    assert e.by_hand == bias[1] and e.agrees


def test_tconv_all_zero_image():
    it = run(ZERO_IMAGE)
    e = explain(it, 0, 5)
    assert e.steps[0].value == (0.0, 0.0) and e.agrees
    assert all(s.value == 0 for s in tap_steps(e))


def test_grouped_conv_reads_only_its_group():
    """Output channel c of a grouped convolution sums the input channels of its group only: zeroing every
    other channel (the image's min and max kept, so its quantization stays) leaves the integer sum alone."""
    name = "grouped_depthwise_multiplier_2_stride2_n1to1"      # 6 groups, 2 filters per group, 1 channel each
    model, inputs = build(name)
    it = run(name)
    pos = (1, 2, 1, 7)                                          # channel 7 → group 3 → input channel 3
    e = explain(it, 0, pos)
    group = [s for s in e.steps if s.what == "group"][0]
    assert group.value == 3 and "input channels 3–3" in group.formula
    x = inputs["x"].copy()
    keep = np.zeros(x[1].shape, bool)
    keep[..., 3] = True
    keep.reshape(-1)[[np.argmin(x[1]), np.argmax(x[1])]] = True
    x[1][~keep] = 0.0
    it2 = Interpreter(model=model, keep_intermediates=True)
    it2.allocate_tensors()
    it2.set_tensor(it2.get_input_details()[0]["index"], x)
    it2.invoke()
    e2 = explain(it2, 0, pos)
    same = ("scaling factor", "zero point", "integer sum")
    assert [s.value for s in e2.steps if s.what in same] == [s.value for s in e.steps if s.what in same]
    assert e2.agrees and e.agrees
    assert e.recipe.startswith("grouped hybrid CONV_2D (6 groups")


def test_grouped_explanation_text():
    it = run("conv_grouped_hybrid_depthwise_7x7")
    e = explain(it, 0, (0, 4, 4, 5))
    text = repr(e)
    assert "(equal)" in text and "group 5 of 12" in text and "<table>" in e._repr_html_()
    whats = [s.what for s in e.steps]
    # the kernel's float32 order: sum · filter scale first, then · scaling factor, + bias, clamp
    assert whats[-5:] == ["integer sum", "× filter scale", "× scaling factor", "add bias", "clamp"]

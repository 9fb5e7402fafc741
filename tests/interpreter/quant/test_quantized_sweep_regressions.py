"""Regressions found by the quantized real-model sweep (``dev/quantized_sweep.py``), as tiny one-op models.

Every case is run by our fast kernel, by our plain numpy reference (``reference=True``) and by
ai-edge-litert's builtin kernels (in a child process); float outputs are compared bit for bit (as
uint32 words), integer outputs for equality.

* hybrid TRANSPOSE_CONV (a dynamic-range ``Conv2DTranspose`` / ``Conv1DTranspose``: float32 input,
  int8 weights, float32 bias): refused before the sweep.  litert quantizes each image as one
  asymmetric row and adds every tap as its own float32 product, so an int32 sum scaled once would
  differ in the last bit for about half of the outputs; the cases below have several input
  channels and overlapping taps (kernel larger than the stride) so that the order of the float
  sums matters, and rows designed to quantize with scale 1 so that rounding ties occur.
* grouped hybrid CONV_2D (a dynamic-range ConvNeXt: Keras 3 writes its 7x7 depthwise as a Conv2D
  with groups = channels): refused before the sweep.  litert runs TFLite's reference
  ``HybridConvPerChannel``: asymmetric images, int32 sums per group, ``acc·scale[o]·sf`` in float32,
  + bias, ``min(max(v, lo), hi)``.  With one filter scale that kernel reads past the scale array, so
  the workbench refuses it (checked below).
* grouped int8 CONV_2D (``Conv2D(groups=2)`` quantized by the AI Edge Quantizer): off by one on
  about 1 value in 300.  litert runs grouped int8 convolutions through its reference kernel, whose
  last rounding shift sends ties away from zero, not up as ruy does; the cases below use power-of-two
  scales so that ties are frequent, and a plain (random-scale) case.
* float L2_NORMALIZATION (left in float by the AI Edge Quantizer inside int8 / int16 graphs, where a
  last-bit difference can flip the QUANTIZE after it): computed in float64 before, a third of the
  values one bit off.  litert adds the squares in float32 one at a time and divides.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import litert_runner
from helpers.quantized_cases import assert_same, litert_outputs, run_ours
from helpers.quantized_sweep_regressions_cases import CASES, build_case, conv_grouped_hybrid
from workbench.errors import UnsupportedOpError
from workbench.interpreter import Interpreter
from workbench.versioning import update_versions


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_kernels_equal_references(case):
    model, inputs = build_case(case)
    assert_same(run_ours(model, inputs), run_ours(model, inputs, reference=True), case)


@pytest.fixture(scope="session")
def litert_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_sweep"), CASES, build_case, workers=2)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bitwise_with_litert(case, litert_results):
    model, inputs = build_case(case)
    assert_same(run_ours(model, inputs), litert_outputs(litert_results[case]), case)


def test_hybrid_transpose_conv_sums_taps_in_float_not_once_in_int32():
    """The fact the kernel rests on: scaling one int32 sum per output (as hybrid CONV_2D does) would
    not give litert's bits here, so the tap-by-tap float order is really exercised."""
    from workbench.interpreter import quant
    model, inputs = build_case("tconv_hybrid_3x3_no_bias_16_channels")
    ours = run_ours(model, inputs)[0]
    it = Interpreter(model=model)
    it.allocate_tensors()
    d = it.prepared()[0][2]
    x = inputs["x"]
    qx, sf, zp = quant.asymmetric_quantize_rows(x.reshape(1, -1))
    w_t = next(t for t in model.subgraphs[0].tensors if t.name == "w")
    w = np.frombuffer(bytes(model.buffers[w_t.buffer].data), np.int8).reshape(12, 3, 3, 16)
    from workbench.interpreter.kernels.transpose_conv import transpose_conv_sums
    acc = transpose_conv_sums(qx.reshape(x.shape), w, d, int(zp[0]))
    once = ((acc.astype(np.float32) * d.filter_scale) * sf[0]).astype(np.float32)
    assert np.allclose(once, ours, rtol=1e-5, atol=1e-6)          # the same values ...
    assert int((once.view(np.uint32) != ours.view(np.uint32)).sum()) > ours.size // 10   # ... not the same bits


@pytest.mark.parametrize("scales", ["one", "equal"])
def test_grouped_hybrid_conv_with_one_scale_is_refused(scales):
    """TFLite's grouped hybrid kernel needs one scale per output channel (and distinct ones, or Prepare
    never sizes the input offsets): with a single scale its output is undefined."""
    builder, _ = conv_grouped_hybrid((1, 5, 5, 4), (4, 3, 3, 1), scales=scales)("grouped_one_scale")
    it = Interpreter(model=update_versions(builder.build()))
    with pytest.raises(UnsupportedOpError, match="grouped hybrid convolution"):
        it.allocate_tensors()


def test_grouped_int8_cases_really_contain_ties():
    """Round-half-up would give other values on these cases (so the test above can fail)."""
    import dataclasses
    for name in ("conv_grouped_int8_1x1_ties_away",):
        model, inputs = build_case(name)
        it = Interpreter(model=model)
        it.allocate_tensors()
        d = it.prepared()[0][2]
        assert d.groups > 1 and d.rounding == "away"
        want = run_ours(model, inputs, reference=True)[0]
        x = inputs["x"]
        w_t = next(t for t in model.subgraphs[0].tensors if t.name == "w")
        b_t = next(t for t in model.subgraphs[0].tensors if t.name == "bias")
        filt = np.frombuffer(bytes(model.buffers[w_t.buffer].data), np.int8).reshape(w_t.shape)
        bias = np.frombuffer(bytes(model.buffers[b_t.buffer].data), np.int32)
        from workbench.interpreter.kernels.conv_2d import conv_int8
        up = conv_int8(x, filt, bias, dataclasses.replace(d, rounding="up"))
        assert int((up != want).sum()) >= 3, name

"""MediaPipe's custom op ``Convolution2DTransposeBias`` (float32): inputs [input, weights OHWI, bias].

Its options are a raw ``TfLiteTransposeConvParams`` struct (padding: 1 SAME / 2 VALID, stride_w,
stride_h; see ``workbench.options.custom``).  Unlike TRANSPOSE_CONV it computes the output size:
  SAME:  pad = max(0, F - (in - 1) % S - 1), out = S * (in - 1) + F - pad, pad_before = pad // 2;
  VALID: pad = 0, out = S * (in - 1) + F
(facts from mediapipe/util/tflite/operations/transpose_conv_bias.cc).  The arithmetic is
TRANSPOSE_CONV's, so the kernel reuses it.
"""

from __future__ import annotations

from ...errors import UnsupportedOpError
from ..registry import kernel
from ._common import F32, PADDING_NAMES
from .transpose_conv import TransposeConvBase, check_shapes


@kernel("Convolution2DTransposeBias", versions=(1,), custom=True)
class Convolution2DTransposeBias(TransposeConvBase):
    name = "convolution_2d_transpose_bias"
    slots = (0, 1, 2)

    def prepare(self, context, node):
        if len(node.inputs) != 3 or node.input(2) < 0:
            raise UnsupportedOpError(f"Convolution2DTransposeBias (node {node.index}) needs 3 inputs")
        x_t, f_t, b_t = node.inputs
        (n, h, w, _), (co, kh, kw, _) = check_shapes(node, context, x_t, f_t, b_t)
        opts = node.custom.value if node.custom is not None and node.custom.format == "raw struct" else None
        if not opts:
            raise UnsupportedOpError(f"Convolution2DTransposeBias (node {node.index}): options are not the 12-byte "
                                     f"TfLiteTransposeConvParams struct")
        padding, sw, sh = int(opts["padding"]), int(opts["stride_width"]), int(opts["stride_height"])
        if sh <= 0 or sw <= 0:
            raise UnsupportedOpError(f"Convolution2DTransposeBias (node {node.index}): strides ({sh}, {sw})")
        pad_h = max(0, kh - (h - 1) % sh - 1) if padding == 1 else 0
        pad_w = max(0, kw - (w - 1) % sw - 1) if padding == 1 else 0
        out = (n, sh * (h - 1) + kh - pad_h, sw * (w - 1) + kw - pad_w, co)
        context.set_output(node.outputs[0], out, F32)
        return self.make_data(context, node, PADDING_NAMES.get(padding, str(padding)), sh, sw, pad_h // 2,
                              pad_w // 2, out, 0)

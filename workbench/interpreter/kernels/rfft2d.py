"""RFFT2D: the 2-D real-to-complex FFT over the last two axes (float32 in, complex64 out).

Input [..., H, W]; fft_length (int32 [2], a constant of powers of two) = (fh, fw): the input is
cropped or zero-padded to fh x fw, and the output is [..., fh, fw / 2 + 1] (the non-redundant
half of the spectrum).  numpy computes in float64 and rounds to complex64; TFLite's own FFT (Ooura's
rdft2d in double) can round differently, so results agree to float rounding.  One fact is copied:
TFLite writes the imaginary parts of the four self-conjugate bins ((0, 0), (0, fw/2), (fh/2, 0),
(fh/2, fw/2)) as zeros that its final sign flip makes −0.0, whatever the input."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I32
from ._elementwise import refuse

C64 = np.dtype(np.complex64)


@opdata
class Rfft2dData(OpData):
    fft_length: tuple
    output_shape: tuple


@kernel(BuiltinOperator.RFFT2D, versions=(1,))
class Rfft2d(Kernel):
    name = "rfft2d"

    def prepare(self, context, node):
        x, n_t = node.inputs[0], node.inputs[1]
        context.expect_dtype(node, x, (F32,), "input")
        context.expect_dtype(node, n_t, (I32,), "fft_length")
        shape = context.shape(x)
        if len(shape) < 2:
            refuse(node, f"input has shape {list(shape)}; needs rank >= 2")
        n = [int(v) for v in np.asarray(context.require_value(node, 1, "fft_length")).reshape(-1)]
        if len(n) != 2 or any(v <= 0 or v & (v - 1) for v in n):
            refuse(node, f"fft_length {n} must be two powers of two")
        out = tuple(shape[:-2]) + (n[0], n[1] // 2 + 1)
        context.set_output(node.outputs[0], out, C64)
        return Rfft2dData(tuple(n), out)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]].astype(np.float64)
        out = context.tensors[node.outputs[0]]
        with np.errstate(invalid="ignore", over="ignore"):
            out[...] = np.fft.rfft2(x, s=d.fft_length, axes=(-2, -1)).astype(C64)
        fh, fw = d.fft_length
        imag = out.imag                     # a view: the imaginary parts in place
        for row in {0, fh // 2}:
            for col in {0, fw // 2}:
                imag[..., row, col] = -0.0

"""im2col_rows (fast/conv_2d.py) against a plain numpy im2col of a zero-padded input, on small random
shapes: odd channel counts, stride 2, dilation along x and y, padding on every edge, windows wider than
the image."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.interpreter.fast import conv_2d as fast_conv

# (N, H, W, C), (KH, KW), stride, dilation, pad (top, left), output (OH, OW)
CASES = [((1, 9, 8, 3), (3, 3), (2, 2), (1, 1), (0, 0), (4, 3)),
         ((2, 7, 6, 5), (3, 3), (1, 1), (1, 1), (1, 1), (7, 6)),
         ((1, 8, 9, 1), (2, 3), (1, 2), (2, 2), (1, 2), (7, 5)),
         ((1, 5, 4, 7), (5, 5), (1, 1), (1, 1), (2, 2), (5, 4)),
         ((1, 3, 3, 2), (3, 5), (2, 1), (1, 1), (1, 3), (2, 4))]


def numpy_im2col(x, kh, kw, stride, dilation, pad, out_hw):
    n, h, w, c = x.shape
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    big = np.zeros((n, h + 2 * (kh * dh + pt), w + 2 * (kw * dw + pl), c), x.dtype)
    big[:, pt:pt + h, pl:pl + w] = x
    cols = np.zeros((n, oh, ow, kh, kw, c), x.dtype)
    for oy in range(oh):
        for ox in range(ow):
            for ky in range(kh):
                for kx in range(kw):
                    cols[:, oy, ox, ky, kx] = big[:, oy * sh + ky * dh, ox * sw + kx * dw]
    return cols


@pytest.mark.parametrize("shape,k,stride,dilation,pad,out_hw", CASES)
def test_im2col_rows_is_numpy_im2col(shape, k, stride, dilation, pad, out_hw):
    x = np.random.default_rng(shape[3]).standard_normal(shape).astype(np.float32) + 1
    want = numpy_im2col(x, *k, stride, dilation, pad, out_hw)
    got = np.full_like(want, np.nan)
    n, h, w, c = shape
    fast_conv.im2col_rows(x.reshape(n, h, w * c), got.reshape(n * out_hw[0] * out_hw[1], -1), c, *k, *out_hw, *stride,
                          *dilation, *pad, 0, n * out_hw[0])
    np.testing.assert_array_equal(got, want)

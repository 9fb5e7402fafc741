"""Numba kernels and BLAS fast paths against their plain numpy references, called directly."""

from __future__ import annotations

import itertools
import zlib
import os
import subprocess
import sys

import numpy as np
import pytest

from workbench.interpreter.fast import pool as fast_pool
from workbench.interpreter.kernels._pool import Pool2DData
from workbench.interpreter.kernels import average_pool_2d, conv_2d, depthwise_conv_2d, max_pool_2d, transpose_conv
from workbench.interpreter.kernels._common import FLOAT_MAX, out_size, pad_before

NO_CLAMP = (-FLOAT_MAX, FLOAT_MAX)


def geometry(h, w, kh, kw, stride, dilation, padding):
    code = 1 if padding == "SAME" else 2
    oh = out_size(code, h, kh, stride[0], dilation[0])
    ow = out_size(code, w, kw, stride[1], dilation[1])
    pt, _ = pad_before(stride[0], dilation[0], h, kh, oh)
    pl, _ = pad_before(stride[1], dilation[1], w, kw, ow)
    return oh, ow, pt, pl


def nonempty(x_shape, k, stride, dilation, padding) -> bool:
    oh, ow, _, _ = geometry(x_shape[1], x_shape[2], k[0], k[1], stride, dilation, padding)
    return oh > 0 and ow > 0


CONV_CASES = [case for case in itertools.product(
    [(1, 7, 6, 4), (2, 5, 9, 2)],            # input
    [(3, 3), (1, 1), (2, 5)],                # filter
    [(1, 1), (2, 2), (1, 3)],                # stride
    [(1, 1), (2, 1)],                        # dilation
    ["SAME", "VALID"],
    [1, 2],                                  # groups (input channels must divide)
) if case[0][3] % case[5] == 0 and nonempty(*case[:5])]


@pytest.mark.parametrize("x_shape,k,stride,dilation,padding,groups", CONV_CASES)
def test_conv_numba_and_im2col_match_reference(x_shape, k, stride, dilation, padding, groups):
    n, h, w, c = x_shape
    rng = np.random.default_rng(zlib.crc32(repr((x_shape, k, stride, dilation, padding, groups)).encode()))
    o = 2 * groups
    x = rng.standard_normal(x_shape).astype(np.float32)
    filt = rng.standard_normal((o, k[0], k[1], c // groups)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    oh, ow, pt, pl = geometry(h, w, k[0], k[1], stride, dilation, padding)
    assert oh > 0 and ow > 0
    act = (0.0, 6.0)
    ref = conv_2d.reference(x, filt, bias, stride, dilation, (pt, pl), (oh, ow), act)
    out = np.empty_like(ref)
    conv_2d.conv_numba(x, filt, bias, out, stride[0], stride[1], dilation[0], dilation[1], pt, pl,
                       np.float32(0), np.float32(6))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    if groups == 1:   # the im2col + BLAS path, as the kernel runs it
        src = np.zeros(conv_2d.padded_shape(x.shape, k[0], k[1], oh, ow, *stride, *dilation, pt, pl), np.float32)
        src[:, pt:pt + h, pl:pl + w] = x
        cols = np.empty((n * oh * ow, k[0] * k[1] * c), np.float32)
        view = conv_2d.im2col_view(src, oh, ow, k[0], k[1], *stride, *dilation)
        np.copyto(cols.reshape(view.shape), view)
        got = np.clip(cols @ conv_2d.filter_matrix(filt) + bias, *act).reshape(ref.shape)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("x_shape,k,stride,dilation,padding,mult", [case for case in itertools.product(
    [(1, 8, 7, 5), (2, 4, 9, 3)], [(3, 3), (5, 2)], [(1, 1), (2, 2)], [(1, 1), (2, 3)], ["SAME", "VALID"], [1, 2])
    if nonempty(*case[:5])])
def test_depthwise_numba_matches_reference(x_shape, k, stride, dilation, padding, mult):
    n, h, w, c = x_shape
    rng = np.random.default_rng(7)
    oh, ow, pt, pl = geometry(h, w, k[0], k[1], stride, dilation, padding)
    assert oh > 0 and ow > 0
    x = rng.standard_normal(x_shape).astype(np.float32)
    filt = rng.standard_normal((1, k[0], k[1], c * mult)).astype(np.float32)
    bias = rng.standard_normal(c * mult).astype(np.float32)
    ref = depthwise_conv_2d.reference(x, filt, bias, stride, dilation, (pt, pl), (oh, ow), NO_CLAMP)
    out = np.empty_like(ref)
    depthwise_conv_2d.depthwise_numba(x, filt[0], bias, out, *stride, *dilation, pt, pl,
                                      np.float32(-FLOAT_MAX), np.float32(FLOAT_MAX))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("x_shape,f,stride,padding", [case for case in itertools.product(
    [(1, 7, 8, 3), (2, 5, 5, 2)], [(2, 2), (3, 3), (1, 4)], [(1, 1), (2, 2), (3, 1)], ["SAME", "VALID"])
    if nonempty(case[0], case[1], case[2], (1, 1), case[3])])
def test_pool_numba_matches_reference(x_shape, f, stride, padding):
    n, h, w, c = x_shape
    oh, ow, pt, pl = geometry(h, w, f[0], f[1], stride, (1, 1), padding)
    assert oh > 0 and ow > 0
    x = np.random.default_rng(3).standard_normal(x_shape).astype(np.float32)
    d = Pool2DData(padding, stride[0], stride[1], f[0], f[1], pt, pl, (n, oh, ow, c), "NONE", -FLOAT_MAX, FLOAT_MAX)
    for teaching, fn in ((average_pool_2d.average_pool_float, fast_pool.average_pool_numba),
                         (max_pool_2d.max_pool_float, fast_pool.max_pool_numba)):
        ref = teaching(x, d)
        out = np.empty_like(ref)
        fn(x, out, f[0], f[1], stride[0], stride[1], pt, pl, np.float32(-FLOAT_MAX), np.float32(FLOAT_MAX))
        np.testing.assert_array_equal(out.view(np.uint32), ref.view(np.uint32), err_msg=teaching.__name__)


@pytest.mark.parametrize("x_shape,k,stride,pad", [((1, 4, 5, 3), (3, 3), (2, 2), (1, 1)),
                                                  ((2, 3, 3, 2), (4, 4), (2, 2), (1, 1)),
                                                  ((1, 5, 4, 3), (2, 3), (1, 2), (0, 1)),
                                                  ((1, 3, 3, 4), (3, 3), (3, 3), (0, 0))])
def test_transpose_conv_col2im_matches_reference(x_shape, k, stride, pad):
    n, h, w, ci = x_shape
    rng = np.random.default_rng(11)
    co = 3
    x = rng.standard_normal(x_shape).astype(np.float32)
    filt = rng.standard_normal((co, k[0], k[1], ci)).astype(np.float32)
    bias = rng.standard_normal(co).astype(np.float32)
    out_shape = (n, (h - 1) * stride[0] + k[0] - 2 * pad[0], (w - 1) * stride[1] + k[1] - 2 * pad[1], co)
    ref = transpose_conv.reference(x, filt, bias, stride, pad, out_shape, NO_CLAMP)
    cols = x.reshape(-1, ci) @ transpose_conv.weights_matrix(filt)
    out = np.empty(out_shape, np.float32)
    transpose_conv.col2im_numba(cols, out, h, w, k[0], k[1], stride[0], stride[1], pad[0], pad[1], bias,
                                np.float32(-FLOAT_MAX), np.float32(FLOAT_MAX))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_import_workbench_does_not_import_numba():
    code = "import sys, workbench, workbench.interpreter; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_workbench_jit_0_runs_kernels_as_python():
    code = ("import numpy as np, sys\n"
            "from workbench import config\n"
            "from workbench.interpreter.kernels import depthwise_conv_2d as d\n"
            "f = d.depthwise_numba.compile()\n"
            "x = np.ones((1, 3, 3, 2), np.float32); w = np.ones((3, 3, 2), np.float32)\n"
            "out = np.empty((1, 3, 3, 2), np.float32)\n"
            "d.depthwise_numba(x, w, np.zeros(2, np.float32), out, 1, 1, 1, 1, 1, 1, np.float32(-1e30), np.float32(1e30))\n"
            "print(config.JIT, f is d.depthwise_numba.py_func, 'numba' in sys.modules, out[0, 1, 1, 0], out[0, 0, 0, 0])\n")
    env = dict(os.environ, WORKBENCH_JIT="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == ["False", "True", "False", "9.0", "4.0"]

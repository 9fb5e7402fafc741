"""Numba kernels and BLAS fast paths against their plain numpy references, called directly."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

from workbench.interpreter.fast import pool as fast_pool
from workbench.interpreter.kernels import average_pool_2d, max_pool_2d
from workbench.interpreter.kernels._common import FLOAT_MAX, out_size, pad_before
from workbench.interpreter.kernels._pool import Pool2DData

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
        fn(x, out, f[0], f[1], stride[0], stride[1], pt, pl, np.float32(-FLOAT_MAX), np.float32(FLOAT_MAX),
           *((np.float32(-np.inf),) if fn is fast_pool.max_pool_numba else ()))
        np.testing.assert_array_equal(out.view(np.uint32), ref.view(np.uint32), err_msg=teaching.__name__)


def test_import_workbench_does_not_import_numba():
    code = "import sys, workbench, workbench.interpreter; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"

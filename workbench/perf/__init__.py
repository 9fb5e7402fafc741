"""The performance machinery under the interpreter's speed layer.

Nothing here knows what a model, a tensor or a kernel is; it imports only :mod:`workbench.config` and
:mod:`workbench.errors` (``tests/architecture/test_import_direction.py`` checks it):

``jit``          numba's ``njit``, lazily: the first call compiles the function, or finds it in the
                 precompiled library; ``run_rows`` splits a loop over ``num_threads`` threads;
``blas``         which BLAS numpy uses and how many threads it may take;
``vnni``         the AVX-512 VNNI int8 dot-product loops (built with llvmlite intrinsics);
``fgemm``        the library's C float convolution (``native/conv_f32.c``): its packed filter and lookup;
``depthwise``    the library's C depthwise loops, int8 and float (``native/depthwise.c``): the same;
``elementwise``  the library's C float ADD / SUB / MUL loop (``native/elementwise.c``): its lookup;
``precompiled``  the ahead-of-time kernel library: its fingerprint, lookup and status;
``build``        building that library from a workload the caller hands in (the command line runs
                 the sample and corpus models through the interpreter);
``aligned_zeros`` (here) arrays that start on a 64-byte cache line.

The teaching layer (``workbench/interpreter/kernels``) never imports this package; the speed layer
(``workbench/interpreter/fast``) does.
"""

import numpy as _np

CACHE_LINE = 64


def aligned_zeros(shape, dtype) -> _np.ndarray:
    """Zeros whose first byte starts a 64-byte cache line (numpy aligns large buffers to 16 bytes only):
    packed weights the kernels stream with 64-byte vector loads, none of which then straddles two lines."""
    dt = _np.dtype(dtype)
    n = int(_np.prod(shape, dtype=_np.int64)) * dt.itemsize
    raw = _np.zeros(n + CACHE_LINE, _np.uint8)
    start = (-raw.ctypes.data) % CACHE_LINE
    return raw[start:start + n].view(dt).reshape(shape)

"""The kernel library's own C loops answer their probes where they can run.

Each loop is looked up once per library with a probe of a pixel or a few values
(:func:`workbench.perf.precompiled.native`): a loop that computes a wrong value there is treated as
absent, and the speed layer falls back to numba or BLAS.  That same None is what every test of the loop
skips on (no library, or a CPU without AVX-512), so a loop broken in that way would turn its tests into
skips, not failures.  Here, where the library is in use on a CPU with the instructions the loops need,
each must be there."""

from __future__ import annotations

import pytest

from workbench.perf import depthwise, elementwise, fgemm, precompiled, vnni

NEEDS = {"avx512f", "avx512bw", "avx512vl", "avx512dq", "fma"}     # depthwise.c's check, the widest


@pytest.mark.parametrize("name, function", [
    ("conv_f32", fgemm.function),
    ("dw_f32", depthwise.float_function),
    ("dw_i8", depthwise.int8_function),
    ("binary_f32", elementwise.binary_function),
    ("sum_f32", elementwise.sum_function),
    ("softmax_f32", elementwise.softmax_function),
])
def test_each_c_loop_passes_its_probe_where_the_cpu_can_run_it(name, function):
    flags = vnni._cpuinfo_flags() or set()
    if precompiled.library() is None or not NEEDS <= flags:
        pytest.skip("no kernel library in use, or a CPU without AVX-512 (make kernels builds the library)")
    assert getattr(precompiled.library().module, name, None) is not None, f"{name} is not in the library"
    assert function() is not None, f"{name} is in the library but gave a wrong value for its probe"
